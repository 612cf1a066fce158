// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_XRC_BWP_MANAGER_GNB_H
#define CELLGYM_XRC_BWP_MANAGER_GNB_H

#include "xrc-rlc-watch.h"

#include "ns3/bwp-manager-gnb.h"
#include "ns3/nr-gnb-net-device.h"

namespace ns3
{

/**
 * @brief 5G-LENA's gNB bandwidth-part manager, also reporting the RLC to XRC's agent.
 *
 * The NR counterpart of XrcComponentCarrierManager: every RLC buffer status report passes
 * `DoTransmitBufferStatusReport` on its way to the MAC, and every transmit opportunity and PDU
 * between MAC and RLC passes this manager; both go to an XrcRlcWatch, then on unchanged, so
 * scheduling is not affected.
 *
 * NrHelper creates a plain BwpManagerGnb; Replace() puts this one in its place on an installed
 * gNB (before any UE attaches), rewiring the RRC and MAC service access points as
 * NrHelper::InstallSingleGnbDevice does.
 */
class XrcBwpManagerGnb : public BwpManagerGnb
{
  public:
    /// @brief Get the type ID.
    /// @return the object TypeId
    static TypeId GetTypeId();

    /**
     * @brief Put a new XrcBwpManagerGnb (static BWP algorithm) in place of a gNB's manager.
     * @param gnb the gNB, installed by NrHelper, with no UE attached yet
     * @return the new manager
     */
    static Ptr<XrcBwpManagerGnb> Replace(Ptr<NrGnbNetDevice> gnb);

    /// @return the watch that receives the reports (set its callbacks)
    XrcRlcWatch& Watch();

  protected:
    void
    DoTransmitBufferStatusReport(NrMacSapProvider::BufferStatusReportParameters params) override;
    void DoNotifyTxOpportunity(NrMacSapUser::TxOpportunityParameters txOpParams) override;
    void DoTransmitPdu(NrMacSapProvider::TransmitPduParameters params) override;

  private:
    XrcRlcWatch m_watch; //!< reports and buffer-empty events
};

} // namespace ns3

#endif // CELLGYM_XRC_BWP_MANAGER_GNB_H
