// SPDX-License-Identifier: GPL-2.0-only
#include "xrc-bwp-manager-gnb.h"

#include "ns3/bwp-manager-algorithm.h"
#include "ns3/nr-gnb-mac.h"
#include "ns3/nr-gnb-rrc.h"
#include "ns3/nr-pdcp-tag.h"
#include "ns3/pointer.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(XrcBwpManagerGnb);

TypeId
XrcBwpManagerGnb::GetTypeId()
{
    static TypeId tid = TypeId("ns3::XrcBwpManagerGnb")
                            .SetParent<BwpManagerGnb>()
                            .SetGroupName("CellGym")
                            .AddConstructor<XrcBwpManagerGnb>();
    return tid;
}

Ptr<XrcBwpManagerGnb>
XrcBwpManagerGnb::Replace(Ptr<NrGnbNetDevice> gnb)
{
    Ptr<XrcBwpManagerGnb> ccm = CreateObject<XrcBwpManagerGnb>();
    ccm->SetBwpManagerAlgorithm(CreateObject<BwpManagerAlgorithmStatic>());
    Ptr<NrGnbRrc> rrc = gnb->GetRrc();
    rrc->SetNrCcmRrcSapProvider(ccm->GetNrCcmRrcSapProvider());
    ccm->SetNrCcmRrcSapUser(rrc->GetNrCcmRrcSapUser());
    ccm->SetNumberOfComponentCarriers(static_cast<uint16_t>(gnb->GetCcMapSize()));
    rrc->SetNrMacSapProvider(ccm->GetNrMacSapProvider());
    for (uint32_t bwp = 0; bwp < gnb->GetCcMapSize(); ++bwp)
    {
        Ptr<NrGnbMac> mac = gnb->GetMac(static_cast<uint8_t>(bwp));
        mac->SetNrCcmMacSapUser(ccm->GetNrCcmMacSapUser());
        ccm->SetCcmMacSapProviders(static_cast<uint8_t>(bwp), mac->GetNrCcmMacSapProvider());
        ccm->SetMacSapProvider(static_cast<uint8_t>(bwp), mac->GetMacSapProvider());
    }
    gnb->SetAttribute("NrGnbComponentCarrierManager", PointerValue(ccm));
    return ccm;
}

XrcRlcWatch&
XrcBwpManagerGnb::Watch()
{
    return m_watch;
}

void
XrcBwpManagerGnb::DoTransmitBufferStatusReport(
    NrMacSapProvider::BufferStatusReportParameters params)
{
    m_watch.Report(params.rnti, params.lcid, params.txQueueSize, params.txQueueHolDelay);
    BwpManagerGnb::DoTransmitBufferStatusReport(params);
}

void
XrcBwpManagerGnb::DoNotifyTxOpportunity(NrMacSapUser::TxOpportunityParameters txOpParams)
{
    m_watch.BeginTxOp(txOpParams.rnti, txOpParams.lcid);
    BwpManagerGnb::DoNotifyTxOpportunity(txOpParams);
    m_watch.EndTxOp(txOpParams.rnti, txOpParams.lcid, txOpParams.bytes);
}

void
XrcBwpManagerGnb::DoTransmitPdu(NrMacSapProvider::TransmitPduParameters params)
{
    m_watch.Pdu(params.rnti, params.lcid, params.pdu->GetSize());
    if (m_watch.sojourn)
    {
        // The PDCP stamps each SDU (a byte tag on its header) as it hands it to the RLC.
        ByteTagIterator tags = params.pdu->GetByteTagIterator();
        while (tags.HasNext())
        {
            const ByteTagIterator::Item item = tags.Next();
            if (item.GetTypeId() == NrPdcpTag::GetTypeId())
            {
                NrPdcpTag stamp;
                item.GetTag(stamp);
                m_watch.SduLeft(params.rnti, params.lcid, stamp.GetSenderTimestamp());
            }
        }
    }
    BwpManagerGnb::DoTransmitPdu(params);
}

} // namespace ns3
