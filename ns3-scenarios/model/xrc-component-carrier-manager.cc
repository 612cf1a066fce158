// SPDX-License-Identifier: GPL-2.0-only
#include "xrc-component-carrier-manager.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(XrcComponentCarrierManager);

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
    m_watch.report = std::move(cb);
}

void
XrcComponentCarrierManager::SetDrainCallback(DrainCallback cb)
{
    m_watch.drain = std::move(cb);
}

void
XrcComponentCarrierManager::DoReportBufferStatus(
    LteMacSapProvider::ReportBufferStatusParameters params)
{
    m_watch.Report(params.rnti, params.lcid, params.txQueueSize, params.txQueueHolDelay);
    NoOpComponentCarrierManager::DoReportBufferStatus(params);
}

void
XrcComponentCarrierManager::DoNotifyTxOpportunity(LteMacSapUser::TxOpportunityParameters txOpParams)
{
    m_watch.BeginTxOp(txOpParams.rnti, txOpParams.lcid);
    NoOpComponentCarrierManager::DoNotifyTxOpportunity(txOpParams);
    m_watch.EndTxOp(txOpParams.rnti, txOpParams.lcid, txOpParams.bytes);
}

void
XrcComponentCarrierManager::DoTransmitPdu(LteMacSapProvider::TransmitPduParameters params)
{
    m_watch.Pdu(params.rnti, params.lcid, params.pdu->GetSize());
    NoOpComponentCarrierManager::DoTransmitPdu(params);
}

} // namespace ns3
