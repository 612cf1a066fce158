// SPDX-License-Identifier: GPL-2.0-only
#include "tcp-xcpr.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(XcprHeaderTag);
NS_OBJECT_ENSURE_REGISTERED(XcprWindowTag);
NS_OBJECT_ENSURE_REGISTERED(TcpXcpr);

TypeId
XcprHeaderTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::XcprHeaderTag")
                            .SetParent<Tag>()
                            .SetGroupName("CellGym")
                            .AddConstructor<XcprHeaderTag>();
    return tid;
}

TypeId
XcprHeaderTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
XcprHeaderTag::GetSerializedSize() const
{
    return sizeof(uint32_t);
}

void
XcprHeaderTag::Serialize(TagBuffer i) const
{
    i.WriteU32(epoch);
}

void
XcprHeaderTag::Deserialize(TagBuffer i)
{
    epoch = i.ReadU32();
}

void
XcprHeaderTag::Print(std::ostream& os) const
{
    os << "epoch=" << epoch;
}

TypeId
XcprWindowTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::XcprWindowTag")
                            .SetParent<Tag>()
                            .SetGroupName("CellGym")
                            .AddConstructor<XcprWindowTag>();
    return tid;
}

TypeId
XcprWindowTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
XcprWindowTag::GetSerializedSize() const
{
    return sizeof(double) + sizeof(uint32_t);
}

void
XcprWindowTag::Serialize(TagBuffer i) const
{
    i.WriteDouble(cwndBytes);
    i.WriteU32(epoch);
}

void
XcprWindowTag::Deserialize(TagBuffer i)
{
    cwndBytes = i.ReadDouble();
    epoch = i.ReadU32();
}

void
XcprWindowTag::Print(std::ostream& os) const
{
    os << "cwnd'=" << cwndBytes << "B epoch=" << epoch;
}

TypeId
TcpXcpr::GetTypeId()
{
    static TypeId tid = TypeId("ns3::TcpXcpr")
                            .SetParent<TcpNewReno>()
                            .SetGroupName("CellGym")
                            .AddConstructor<TcpXcpr>();
    return tid;
}

TcpXcpr::TcpXcpr() = default;

TcpXcpr::TcpXcpr(const TcpXcpr& other)
    : TcpNewReno(other)
    , m_resets(other.m_resets)
    , m_window(other.m_window)
    , m_recovery(other.m_recovery)
    , m_loss(other.m_loss)
{
}

std::string
TcpXcpr::GetName() const
{
    return "TcpXcpr";
}

Ptr<TcpCongestionOps>
TcpXcpr::Fork()
{
    return CopyObject<TcpXcpr>(this);
}

uint32_t
TcpXcpr::GetHeaderEpoch() const
{
    return m_resets + 1;
}

double
TcpXcpr::GetPendingWindow() const
{
    return m_window;
}

uint32_t
TcpXcpr::GetHeaderBytes() const
{
    return kHeaderBytes;
}

void
TcpXcpr::ReadFeedback(Ptr<const Packet> ack)
{
    XcprWindowTag window;
    if (ack->PeekPacketTag(window))
    {
        SetWindow(window.cwndBytes, window.epoch);
    }
}

void
TcpXcpr::TagSegment(Ptr<const Packet> segment)
{
    XcprHeaderTag flag; // the reset count + 1 (the congestion flag)
    flag.epoch = GetHeaderEpoch();
    segment->AddPacketTag(flag);
}

void
TcpXcpr::SetWindow(double cwndBytes, uint32_t epoch)
{
    // After a timeout, the windows of the count just before it: the receiver's cwnd' unchanged.
    const bool synced = epoch == GetHeaderEpoch() || (m_loss && epoch + 1 == GetHeaderEpoch());
    if (m_recovery || !synced || cwndBytes <= 0)
    {
        return; // in recovery, or computed before the sender's latest reset
    }
    m_window = cwndBytes;
}

uint32_t
TcpXcpr::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    return std::max(2 * tcb->m_segmentSize, bytesInFlight / 2);
}

void
TcpXcpr::CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t newState)
{
    const bool reset = newState == TcpSocketState::CA_RECOVERY
                       || newState == TcpSocketState::CA_LOSS
                       || (m_recovery && newState == TcpSocketState::CA_OPEN);
    m_recovery = newState == TcpSocketState::CA_RECOVERY;
    m_loss = newState == TcpSocketState::CA_LOSS;
    if (reset)
    {
        m_resets += 1; // the congestion flag: the receiver resynchronises to the header
        m_window = 0;
    }
}

void
TcpXcpr::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    // No slow start and no additive increase: the window the ACKs carry is the window.
    if (m_recovery || m_window <= 0)
    {
        return;
    }
    const double next = std::floor(std::clamp(m_window, double(tcb->m_segmentSize), 4e9));
    m_window = 0;
    tcb->m_cWnd = static_cast<uint32_t>(next);
}

} // namespace ns3
