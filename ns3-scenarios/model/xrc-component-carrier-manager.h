// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_XRC_COMPONENT_CARRIER_MANAGER_H
#define CELLGYM_XRC_COMPONENT_CARRIER_MANAGER_H

#include "xrc-rlc-watch.h"

#include "ns3/no-op-component-carrier-manager.h"

namespace ns3
{

/**
 * @brief A no-op component carrier manager that also reports every RLC buffer status.
 *
 * The RLC computes its head-of-line delay in `DoReportBufferStatus`, which has no trace; the
 * report reaches the component carrier manager on its way to the MAC. This subclass hands each
 * data-bearer report to a callback, then forwards it unchanged, so scheduling is not affected.
 *
 * It also watches the transmit opportunities and PDUs it relays between the MAC and the RLC, to
 * tell when a buffer runs empty and how old its head of line is, at the simulator's resolution
 * (XrcRlcWatch, shared with NR's XrcBwpManagerGnb).
 */
class XrcComponentCarrierManager : public NoOpComponentCarrierManager
{
  public:
    /// Callback: rnti, lcid, tx queue bytes, tx queue HoL delay in ms.
    using ReportCallback = XrcRlcWatch::ReportCallback;
    /// Callback: rnti, lcid of a data bearer whose RLC transmit buffer has just run empty.
    using DrainCallback = XrcRlcWatch::DrainCallback;
    /// Callback: rnti, lcid, arrival instant of the bearer's new head of line (none: empty).
    using HeadCallback = XrcRlcWatch::HeadCallback;
    /// Callback: rnti, lcid, sojourn in the RLC of an SDU whose first byte has just left.
    using SojournCallback = XrcRlcWatch::SojournCallback;

    /// @brief Get the type ID.
    /// @return the object TypeId
    static TypeId GetTypeId();

    /// @brief Set the function that receives every buffer-status report.
    /// @param cb the receiver
    void SetReportCallback(ReportCallback cb);

    /// @brief Set the function told when a data bearer's RLC buffer runs empty.
    /// @param cb the receiver
    void SetDrainCallback(DrainCallback cb);

    /// @brief Set the function told every time a data bearer's head of line changes.
    /// @param cb the receiver
    void SetHeadCallback(HeadCallback cb);

    /// @brief Set the function told the RLC sojourn of every SDU as its first byte leaves (from
    /// the PDCP's timestamp; a diagnostic: unset, the PDUs' tags are not read).
    /// @param cb the receiver
    void SetSojournCallback(SojournCallback cb);

    /// @return the watch (its copies of the RLC transmit queues)
    const XrcRlcWatch& Watch() const;

  protected:
    void DoReportBufferStatus(LteMacSapProvider::ReportBufferStatusParameters params) override;
    void DoNotifyTxOpportunity(LteMacSapUser::TxOpportunityParameters txOpParams) override;
    void DoTransmitPdu(LteMacSapProvider::TransmitPduParameters params) override;

  private:
    XrcRlcWatch m_watch; //!< reports and buffer-empty events
};

} // namespace ns3

#endif // CELLGYM_XRC_COMPONENT_CARRIER_MANAGER_H
