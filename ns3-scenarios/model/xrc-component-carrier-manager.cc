// SPDX-License-Identifier: GPL-2.0-only
#include "xrc-component-carrier-manager.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(XrcComponentCarrierManager);

namespace
{
/// Data radio bearers start at LCID 3 (1 and 2 are signalling bearers).
constexpr uint8_t kFirstDrbLcid = 3;
/// An RLC UM with data left may leave up to 2 bytes of an opportunity unused (fixed header
/// without room for data); allow a little more for length indicators.
constexpr uint32_t kRlcSlackBytes = 4;
} // namespace

TypeId
XrcComponentCarrierManager::GetTypeId()
{
    static TypeId tid = TypeId("ns3::XrcComponentCarrierManager")
                            .SetParent<NoOpComponentCarrierManager>()
                            .SetGroupName("CellGym")
                            .AddConstructor<XrcComponentCarrierManager>();
    return tid;
}

void
XrcComponentCarrierManager::SetReportCallback(ReportCallback cb)
{
    m_report = std::move(cb);
}

void
XrcComponentCarrierManager::SetDrainCallback(DrainCallback cb)
{
    m_drain = std::move(cb);
}

void
XrcComponentCarrierManager::DoReportBufferStatus(
    LteMacSapProvider::ReportBufferStatusParameters params)
{
    if (m_report && params.lcid >= kFirstDrbLcid)
    {
        m_report(params.rnti, params.lcid, params.txQueueSize, params.txQueueHolDelay);
    }
    NoOpComponentCarrierManager::DoReportBufferStatus(params);
}

void
XrcComponentCarrierManager::DoNotifyTxOpportunity(LteMacSapUser::TxOpportunityParameters txOpParams)
{
    // The RLC answers synchronously: its PDU passes DoTransmitPdu before this call returns.
    m_inTxOp = true;
    m_txOpRnti = txOpParams.rnti;
    m_txOpLcid = txOpParams.lcid;
    m_txOpSent = 0;
    NoOpComponentCarrierManager::DoNotifyTxOpportunity(txOpParams);
    m_inTxOp = false;
    // An opportunity of 2 bytes or less is refused whatever the buffer holds.
    if (m_drain && txOpParams.lcid >= kFirstDrbLcid && txOpParams.bytes > 2
        && m_txOpSent + kRlcSlackBytes < txOpParams.bytes)
    {
        m_drain(txOpParams.rnti, txOpParams.lcid);
    }
}

void
XrcComponentCarrierManager::DoTransmitPdu(LteMacSapProvider::TransmitPduParameters params)
{
    if (m_inTxOp && params.rnti == m_txOpRnti && params.lcid == m_txOpLcid)
    {
        m_txOpSent += params.pdu->GetSize();
    }
    NoOpComponentCarrierManager::DoTransmitPdu(params);
}

} // namespace ns3
