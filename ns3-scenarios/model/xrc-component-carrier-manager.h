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
 *
 * The RLC reports only when a PDCP PDU arrives and every 10 ms while its buffer is not empty, so
 * the last report of a buffer that drains is stale (non-zero). This class therefore also watches
 * the transmit opportunities it relays from the MAC to the RLC: when the RLC answers one with
 * less than the opportunity minus the RLC's few bytes of slack, its buffer has run empty, and
 * the drain callback fires.
 */
class XrcComponentCarrierManager : public NoOpComponentCarrierManager
{
  public:
    /// Callback: rnti, lcid, tx queue bytes, tx queue HoL delay in ms.
    using ReportCallback = std::function<void(uint16_t, uint8_t, uint32_t, uint16_t)>;
    /// Callback: rnti, lcid of a data bearer whose RLC transmit buffer has just run empty.
    using DrainCallback = std::function<void(uint16_t, uint8_t)>;

    /// @brief Get the type ID.
    /// @return the object TypeId
    static TypeId GetTypeId();

    /// @brief Set the function that receives every buffer-status report.
    /// @param cb the receiver
    void SetReportCallback(ReportCallback cb);

    /// @brief Set the function told when a data bearer's RLC buffer runs empty.
    /// @param cb the receiver
    void SetDrainCallback(DrainCallback cb);

  protected:
    void DoReportBufferStatus(LteMacSapProvider::ReportBufferStatusParameters params) override;
    void DoNotifyTxOpportunity(LteMacSapUser::TxOpportunityParameters txOpParams) override;
    void DoTransmitPdu(LteMacSapProvider::TransmitPduParameters params) override;

  private:
    ReportCallback m_report; //!< receiver of the reports
    DrainCallback m_drain;   //!< receiver of buffer-empty events
    bool m_inTxOp{false};    //!< a transmit opportunity is being relayed to the RLC
    uint16_t m_txOpRnti{0};  //!< RNTI of that opportunity
    uint8_t m_txOpLcid{0};   //!< LCID of that opportunity
    uint32_t m_txOpSent{0};  //!< PDU bytes the RLC sent in answer to it
};

} // namespace ns3

#endif // CELLGYM_XRC_COMPONENT_CARRIER_MANAGER_H
