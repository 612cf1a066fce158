// SPDX-License-Identifier: GPL-2.0-only
#include "tcp-xcp.h"

#include "cellgym-explicit-tags.h"

#include "ns3/log.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TcpXcp");
NS_OBJECT_ENSURE_REGISTERED(TcpXcp);

TypeId
TcpXcp::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TcpXcp")
                            .SetParent<TcpNewReno>()
                            .SetGroupName("CellGym")
                            .AddConstructor<TcpXcp>();
    return tid;
}

TcpXcp::TcpXcp() = default;

TcpXcp::TcpXcp(const TcpXcp& other)
    : TcpNewReno(other)
{
}

std::string
TcpXcp::GetName() const
{
    return "TcpXcp";
}

Ptr<TcpCongestionOps>
TcpXcp::Fork()
{
    return CopyObject<TcpXcp>(this);
}

uint32_t
TcpXcp::GetHeaderBytes() const
{
    return kHeaderBytes;
}

void
TcpXcp::ReadFeedback(Ptr<const Packet> ack)
{
    ExplicitFeedbackTag tag;
    if (ack->PeekPacketTag(tag))
    {
        SetFeedback(tag.xcpTotalBytes);
    }
}

void
TcpXcp::SetFeedback(double totalBytes)
{
    const double delta = totalBytes - m_seen;
    m_seen = totalBytes;
    if (m_open)
    {
        m_pending += delta;
    }
}

double
TcpXcp::GetPending() const
{
    return m_pending;
}

uint32_t
TcpXcp::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    return std::max(2 * tcb->m_segmentSize, bytesInFlight / 2);
}

void
TcpXcp::CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t newState)
{
    m_open = newState != TcpSocketState::CA_RECOVERY;
    if (!m_open)
    {
        m_pending = 0;
    }
}

void
TcpXcp::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    // No slow start and no additive increase: the router's feedback alone moves the window.
    const double next = std::floor(static_cast<double>(tcb->m_cWnd) + m_pending);
    m_pending = 0;
    tcb->m_cWnd = static_cast<uint32_t>(std::clamp(next, double(tcb->m_segmentSize), 4e9));
}

} // namespace ns3
