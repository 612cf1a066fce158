// SPDX-License-Identifier: GPL-2.0-only
#include "xrc-component-carrier-manager.h"

#include "ns3/lte-pdcp-tag.h"

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
XrcComponentCarrierManager::SetHeadCallback(HeadCallback cb)
{
    m_watch.head = std::move(cb);
}

void
XrcComponentCarrierManager::SetSojournCallback(SojournCallback cb)
{
    m_watch.sojourn = std::move(cb);
}

const XrcRlcWatch&
XrcComponentCarrierManager::Watch() const
{
    return m_watch;
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
    if (m_watch.sojourn)
    {
        // The PDCP stamps each SDU (a byte tag on its header) as it hands it to the RLC.
        ByteTagIterator tags = params.pdu->GetByteTagIterator();
        while (tags.HasNext())
        {
            const ByteTagIterator::Item item = tags.Next();
            if (item.GetTypeId() == PdcpTag::GetTypeId())
            {
                PdcpTag stamp;
                item.GetTag(stamp);
                m_watch.SduLeft(params.rnti, params.lcid, stamp.GetSenderTimestamp());
            }
        }
    }
    NoOpComponentCarrierManager::DoTransmitPdu(params);
}

} // namespace ns3
