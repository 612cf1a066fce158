// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-ack-loss.h"

#include "cellgym-explicit-tags.h"

#include "ns3/ipv4-header.h"
#include "ns3/ppp-header.h"
#include "ns3/tcp-header.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CellGymAckLossModel);

TypeId
CellGymAckLossModel::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CellGymAckLossModel")
                            .SetParent<ErrorModel>()
                            .SetGroupName("CellGym")
                            .AddConstructor<CellGymAckLossModel>();
    return tid;
}

CellGymAckLossModel::CellGymAckLossModel()
    : m_draw(CreateObject<UniformRandomVariable>())
{
}

void
CellGymAckLossModel::Setup(double loss, int64_t stream)
{
    m_loss = loss;
    m_draw->SetStream(stream);
}

uint64_t
CellGymAckLossModel::GetSeen() const
{
    return m_seen;
}

uint64_t
CellGymAckLossModel::GetDropped() const
{
    return m_dropped;
}

bool
CellGymAckLossModel::IsAck(Ptr<const Packet> p)
{
    uint8_t first = 0;
    if (p->GetSize() < 1 || p->CopyData(&first, 1) != 1)
    {
        return false;
    }
    Ptr<Packet> copy = p->Copy();
    if ((first >> 4) != 4)
    {
        PppHeader ppp;
        copy->RemoveHeader(ppp);
    }
    Ipv4Header ip;
    if (copy->RemoveHeader(ip) == 0 || ip.GetProtocol() != 6)
    {
        return false;
    }
    TcpHeader tcp;
    if (copy->PeekHeader(tcp) == 0)
    {
        return false;
    }
    return (tcp.GetFlags() & TcpHeader::SYN) == 0;
}

bool
CellGymAckLossModel::DoCorrupt(Ptr<Packet> p)
{
    if (m_loss <= 0 || !IsAck(p))
    {
        return false;
    }
    ++m_seen;
    const bool lost = m_draw->GetValue() < m_loss;
    ExplicitFeedbackTag fb;
    if (p->PeekPacketTag(fb))
    {
        const double share = fb.xcpTotalBytes - m_xcpPrev;
        m_xcpPrev = fb.xcpTotalBytes;
        if (lost)
        {
            m_xcpLost += share;
        }
        else if (m_xcpLost != 0)
        {
            p->RemovePacketTag(fb);
            fb.xcpTotalBytes -= m_xcpLost;
            p->AddPacketTag(fb);
        }
    }
    if (lost)
    {
        ++m_dropped;
    }
    return lost;
}

void
CellGymAckLossModel::DoReset()
{
    m_seen = 0;
    m_dropped = 0;
}

} // namespace ns3
