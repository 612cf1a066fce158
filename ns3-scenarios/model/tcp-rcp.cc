// SPDX-License-Identifier: GPL-2.0-only
#include "tcp-rcp.h"

#include "cellgym-explicit-tags.h"

#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TcpRcp");
NS_OBJECT_ENSURE_REGISTERED(TcpRcp);

TypeId
TcpRcp::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TcpRcp")
                            .SetParent<TcpNewReno>()
                            .SetGroupName("CellGym")
                            .AddConstructor<TcpRcp>()
                            .AddAttribute("ReceiveWindowBytes",
                                          "The window once a rate paces the flow, bytes",
                                          UintegerValue(4194304),
                                          MakeUintegerAccessor(&TcpRcp::m_rwndBytes),
                                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

TcpRcp::TcpRcp() = default;

TcpRcp::TcpRcp(const TcpRcp& other)
    : TcpNewReno(other)
    , m_rwndBytes(other.m_rwndBytes)
{
}

std::string
TcpRcp::GetName() const
{
    return "TcpRcp";
}

Ptr<TcpCongestionOps>
TcpRcp::Fork()
{
    return CopyObject<TcpRcp>(this);
}

uint32_t
TcpRcp::GetHeaderBytes() const
{
    return kHeaderBytes;
}

CellGymExplicitSender::Pacing
TcpRcp::GetPacing() const
{
    return Pacing::AFTER_INITIAL_WINDOW;
}

void
TcpRcp::ReadFeedback(Ptr<const Packet> ack)
{
    ExplicitFeedbackTag tag;
    if (ack->PeekPacketTag(tag))
    {
        // The observation's fb_rate_mbps stays XRC's agent's rate, as in the fast model.
        SetFeedback(tag.rcpRateBps);
    }
}

void
TcpRcp::SetFeedback(double rateBps)
{
    if (rateBps > 0)
    {
        m_rateBps = rateBps;
    }
}

double
TcpRcp::GetRate() const
{
    return m_rateBps;
}

void
TcpRcp::Apply(Ptr<TcpSocketState> tcb, bool window) const
{
    if (m_rateBps <= 0)
    {
        return;
    }
    const DataRate rate(static_cast<uint64_t>(m_rateBps));
    // The maximum pacing rate caps ns-3's own cwnd / srtt pacing rate: the socket paces at R.
    tcb->m_maxPacingRate = rate;
    tcb->m_pacingRate = rate;
    if (!window)
    {
        return;
    }
    tcb->m_cWnd = std::max(m_rwndBytes, tcb->m_segmentSize);
}

void
TcpRcp::Init(Ptr<TcpSocketState> tcb)
{
    Apply(tcb, true); // the rate the SYN-ACK carried
}

uint32_t
TcpRcp::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    // No window cut on a loss: recovery repairs, the rate alone limits the flow.
    return std::max(tcb->m_cWnd.Get(), 2 * tcb->m_segmentSize);
}

void
TcpRcp::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    if (m_rateBps <= 0)
    {
        TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
        return;
    }
    Apply(tcb, true);
}

void
TcpRcp::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt)
{
    Apply(tcb, false); // every ACK, also in recovery: the rate it carried (not the window)
}

} // namespace ns3
