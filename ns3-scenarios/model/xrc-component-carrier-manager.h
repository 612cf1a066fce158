// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_XRC_COMPONENT_CARRIER_MANAGER_H
#define CELLGYM_XRC_COMPONENT_CARRIER_MANAGER_H

#include "ns3/no-op-component-carrier-manager.h"

#include <functional>

namespace ns3
{

/**
 * @brief A no-op component carrier manager that also reports every RLC buffer status.
 *
 * The RLC computes its head-of-line delay in `DoReportBufferStatus`, which has no trace; the
 * report reaches the component carrier manager on its way to the MAC. This subclass hands each
 * data-bearer report to a callback, then forwards it unchanged, so scheduling is not affected.
 */
class XrcComponentCarrierManager : public NoOpComponentCarrierManager
{
  public:
    /// Callback: rnti, lcid, tx queue bytes, tx queue HoL delay in ms.
    using ReportCallback = std::function<void(uint16_t, uint8_t, uint32_t, uint16_t)>;

    static TypeId GetTypeId();

    /// @brief Set the function that receives every buffer-status report.
    void SetReportCallback(ReportCallback cb);

  protected:
    void DoReportBufferStatus(LteMacSapProvider::ReportBufferStatusParameters params) override;

  private:
    ReportCallback m_report; //!< receiver of the reports
};

} // namespace ns3

#endif // CELLGYM_XRC_COMPONENT_CARRIER_MANAGER_H
