// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-explicit-router.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CellGymExplicitRouter");
NS_OBJECT_ENSURE_REGISTERED(CellGymExplicitRouter);

TypeId
CellGymExplicitRouter::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CellGymExplicitRouter")
                            .SetParent<Object>()
                            .SetGroupName("CellGym")
                            .AddConstructor<CellGymExplicitRouter>();
    return tid;
}

CellGymExplicitRouter::CellGymExplicitRouter() = default;

void
CellGymExplicitRouter::DoDispose()
{
    m_tick.Cancel();
    m_capacity = nullptr;
    m_queue = nullptr;
    Object::DoDispose();
}

void
CellGymExplicitRouter::Configure(Kind kind, const Knobs& knobs)
{
    m_kind = kind;
    m_knobs = knobs;
}

void
CellGymExplicitRouter::SetCapacityPerTick(bool perTick)
{
    m_perTick = perTick;
}

void
CellGymExplicitRouter::Start(std::function<double()> capacity, std::function<double()> queue)
{
    m_capacity = std::move(capacity);
    m_queue = std::move(queue);
    m_tick = Simulator::Schedule(MilliSeconds(1), &CellGymExplicitRouter::TickEvent, this);
}

void
CellGymExplicitRouter::TickEvent()
{
    Tick(m_capacity(), m_queue());
    m_tick = Simulator::Schedule(MilliSeconds(1), &CellGymExplicitRouter::TickEvent, this);
}

void
CellGymExplicitRouter::OnPacket(uint32_t flow, double wireBytes, const ExplicitHeaderTag* hdr)
{
    m_in += wireBytes;
    if (!hdr || hdr->segBytes <= 0)
    {
        return;
    }
    Flow& f = m_flows[flow];
    if (wireBytes > hdr->segBytes)
    {
        f.payloadShare = hdr->segBytes / wireBytes;
    }
    const double rttMs = hdr->rttS * 1e3;
    // The header's window in wire bytes: its segments as packets of this size.
    const double cwnd = hdr->cwndBytes / hdr->segBytes * wireBytes;
    if (rttMs <= 0 || cwnd <= 0)
    {
        return; // the first flight: no RTT yet, counted in y only
    }
    m_rttBytes += wireBytes;
    m_sumRs += rttMs * wireBytes;
    m_sumRsc += rttMs * wireBytes / cwnd;
    if (m_kind == Kind::XCP)
    {
        const double fb = m_xiP * rttMs * rttMs * wireBytes / cwnd - m_xiN * rttMs * wireBytes;
        f.fbBytes += fb * hdr->segBytes / wireBytes;
    }
}

void
CellGymExplicitRouter::Tick(double capBytesPerMs, double queueBytes)
{
    const double t = static_cast<double>(m_t);
    m_t += 1;
    if (m_d <= 0)
    {
        m_d = kFirstIntervalMs;
        m_start = t;
        m_qMin = queueBytes;
    }
    m_qMin = std::min(m_qMin, queueBytes);
    m_capAcc += m_perTick ? capBytesPerMs : 0.0;
    const double elapsed = t + 1.0 - m_start;
    double period = m_d;
    if (m_kind == Kind::RCP && m_knobs.rcpUpdateMs > 0)
    {
        period = m_knobs.rcpUpdateMs;
    }
    if (elapsed < period)
    {
        return;
    }
    const double d = std::max(m_rttBytes > 0 ? m_sumRs / m_rttBytes : m_d, 1.0);
    const double cap = m_perTick ? m_capAcc / elapsed : capBytesPerMs;
    const double y = m_in / elapsed;
    if (m_kind == Kind::XCP)
    {
        m_phi = m_knobs.alpha * d * (cap - y) - m_knobs.beta * m_qMin;
        const double h = std::max(0.0, m_knobs.shuffle * cap * d - std::abs(m_phi));
        const double rsc = m_sumRsc * d / elapsed;
        const double sized = m_rttBytes * d / elapsed;
        m_xiP = rsc > 0 ? (h + std::max(m_phi, 0.0)) / (d * rsc) : 0.0;
        m_xiN = sized > 0 ? (h + std::max(-m_phi, 0.0)) / (d * sized) : 0.0;
    }
    else if (cap > 0)
    {
        const double s = m_knobs.packetBytes;
        double r = m_rate > 0 ? m_rate : cap; // the first update starts from the capacity
        r *= 1.0
             + (elapsed / d) * (m_knobs.alpha * (cap - y) - m_knobs.beta * queueBytes / d) / cap;
        m_rate = std::min(std::max(r, s / d), std::max(cap, s / d));
    }
    m_d = d;
    m_start = t + 1.0;
    m_in = 0;
    m_rttBytes = 0;
    m_sumRs = 0;
    m_sumRsc = 0;
    m_qMin = queueBytes;
    m_capAcc = 0;
}

ExplicitFeedbackTag
CellGymExplicitRouter::FeedbackOf(uint32_t flow) const
{
    ExplicitFeedbackTag tag;
    auto it = m_flows.find(flow);
    const double share = it != m_flows.end() ? it->second.payloadShare : 1.0;
    tag.xcpTotalBytes = it != m_flows.end() ? it->second.fbBytes : 0.0;
    tag.rcpRateBps = m_rate * share * 8e3;
    return tag;
}

double
CellGymExplicitRouter::GetIntervalMs() const
{
    return m_d;
}

double
CellGymExplicitRouter::GetPhi() const
{
    return m_phi;
}

double
CellGymExplicitRouter::GetXiP() const
{
    return m_xiP;
}

double
CellGymExplicitRouter::GetXiN() const
{
    return m_xiN;
}

double
CellGymExplicitRouter::GetRate() const
{
    return m_rate;
}

} // namespace ns3
