// SPDX-License-Identifier: GPL-2.0-only
#include "tcp-constrate.h"

#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TcpConstRate");
NS_OBJECT_ENSURE_REGISTERED(TcpConstRate);

TypeId
TcpConstRate::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TcpConstRate")
                            .SetParent<TcpNewReno>()
                            .SetGroupName("CellGym")
                            .AddConstructor<TcpConstRate>()
                            .AddAttribute("RateBps",
                                          "The pacing rate, payload bit/s",
                                          UintegerValue(kRateBps),
                                          MakeUintegerAccessor(&TcpConstRate::m_rateBps),
                                          MakeUintegerChecker<uint64_t>(1))
                            .AddAttribute("ReceiveWindowBytes",
                                          "The window, bytes",
                                          UintegerValue(4194304),
                                          MakeUintegerAccessor(&TcpConstRate::m_rwndBytes),
                                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

TcpConstRate::TcpConstRate() = default;

TcpConstRate::TcpConstRate(const TcpConstRate& other)
    : TcpNewReno(other)
    , m_rateBps(other.m_rateBps)
    , m_rwndBytes(other.m_rwndBytes)
{
}

std::string
TcpConstRate::GetName() const
{
    return "TcpConstRate";
}

Ptr<TcpCongestionOps>
TcpConstRate::Fork()
{
    return CopyObject<TcpConstRate>(this);
}

CellGymExplicitSender::Pacing
TcpConstRate::GetPacing() const
{
    return Pacing::ALL;
}

void
TcpConstRate::ReadFeedback(Ptr<const Packet> ack)
{
}

void
TcpConstRate::Apply(Ptr<TcpSocketState> tcb, bool window) const
{
    const DataRate rate(m_rateBps);
    // The maximum pacing rate caps ns-3's own cwnd / srtt pacing rate: the socket paces at it.
    tcb->m_maxPacingRate = rate;
    tcb->m_pacingRate = rate;
    if (window)
    {
        tcb->m_cWnd = std::max(m_rwndBytes, tcb->m_segmentSize);
    }
}

void
TcpConstRate::Init(Ptr<TcpSocketState> tcb)
{
    Apply(tcb, true);
}

uint32_t
TcpConstRate::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    // No window cut on a loss: recovery repairs, the rate alone limits the flow.
    return std::max(tcb->m_cWnd.Get(), 2 * tcb->m_segmentSize);
}

void
TcpConstRate::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    Apply(tcb, true);
}

void
TcpConstRate::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt)
{
    Apply(tcb, false); // every ACK, also in recovery: the rate (not the window)
}

} // namespace ns3
