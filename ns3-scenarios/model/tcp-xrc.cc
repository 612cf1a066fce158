// SPDX-License-Identifier: GPL-2.0-only
#include "tcp-xrc.h"

#include "xrc-feedback-tag.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TcpXrc");
NS_OBJECT_ENSURE_REGISTERED(TcpXrc);

TypeId
TcpXrc::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::TcpXrc")
              .SetParent<TcpNewReno>()
              .SetGroupName("CellGym")
              .AddConstructor<TcpXrc>()
              .AddAttribute("BudgetMs",
                            "Queueing-delay budget, ms (XRC paper: 10 ms)",
                            DoubleValue(10.0),
                            MakeDoubleAccessor(&TcpXrc::m_budgetMs),
                            MakeDoubleChecker<double>(0.001))
              .AddAttribute("RampRtts",
                            "RTTs in which the window reaches twnd from below (paper: 2)",
                            DoubleValue(2.0),
                            MakeDoubleAccessor(&TcpXrc::m_rampRtts),
                            MakeDoubleChecker<double>(0.01))
              .AddAttribute("UnfairRtts",
                            "RTTs of high delay at twnd before the unfairness mode (paper: N = 10)",
                            UintegerValue(10),
                            MakeUintegerAccessor(&TcpXrc::m_unfairRtts),
                            MakeUintegerChecker<uint32_t>(1))
              .AddAttribute("UnfairAlpha",
                            "Window growth in the unfairness mode, segments per RTT",
                            DoubleValue(10.0),
                            MakeDoubleAccessor(&TcpXrc::m_unfairAlpha),
                            MakeDoubleChecker<double>(0.0));
    return tid;
}

TcpXrc::TcpXrc() = default;

TcpXrc::TcpXrc(const TcpXrc& other)
    : TcpNewReno(other)
    , m_budgetMs(other.m_budgetMs)
    , m_rampRtts(other.m_rampRtts)
    , m_unfairRtts(other.m_unfairRtts)
    , m_unfairAlpha(other.m_unfairAlpha)
{
}

std::string
TcpXrc::GetName() const
{
    return "TcpXrc";
}

Ptr<TcpCongestionOps>
TcpXrc::Fork()
{
    return CopyObject<TcpXrc>(this);
}

void
TcpXrc::ReadFeedback(Ptr<const Packet> ack)
{
    // The tag is read at the server's IP layer, before TCP processes the ACK that carries it.
    XrcFeedbackTag tag;
    if (ack->PeekPacketTag(tag))
    {
        SetFeedback(tag.rateMbps, tag.holMs);
    }
}

void
TcpXrc::SetFeedback(double rateMbps, double holMs)
{
    m_rateMbps = rateMbps;
    m_holMs = holMs;
    m_hasFeedback = m_hasFeedback || rateMbps > 0;
}

TcpXrc::Mode
TcpXrc::GetMode() const
{
    return m_mode;
}

double
TcpXrc::GetTargetWindow() const
{
    return m_twnd;
}

uint32_t
TcpXrc::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    return std::max(2 * tcb->m_segmentSize, bytesInFlight / 2);
}

void
TcpXrc::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt)
{
    // TcpSocketBase passes its smoothed RTT as `rtt`; the ACK's own sample is m_lastRtt, which
    // TcpSocketBase::EstimateRtt set from this ACK before calling PktsAcked (unset: a bare tcb).
    const Time sample = tcb->m_lastRtt.Get().IsStrictlyPositive() ? tcb->m_lastRtt.Get() : rtt;
    if (sample.IsStrictlyPositive())
    {
        const double sampleMs = sample.GetSeconds() * 1e3;
        m_rttSumMs += sampleMs;
        m_rttCount += 1;
        m_minRttMs = m_minRttMs > 0 ? std::min(m_minRttMs, sampleMs) : sampleMs;
    }
    // Equation 3 averages over a window of data: close the window once a congestion window's
    // worth of bytes has been acknowledged.
    m_windowAcked += segmentsAcked * tcb->m_segmentSize;
    if (m_windowAcked >= tcb->m_cWnd && m_rttCount > 0)
    {
        m_windowMeanMs = m_rttSumMs / m_rttCount;
        m_rttSumMs = 0;
        m_rttCount = 0;
        m_windowAcked = 0;
    }
}

void
TcpXrc::CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t newState)
{
    if (newState == TcpSocketState::CA_RECOVERY || newState == TcpSocketState::CA_LOSS)
    {
        // A loss ends the unfairness mode: the competitor has been made to back off, or we have.
        m_unfair = false;
        m_highDelayMs = 0;
        m_rampFrom = 0;
    }
}

TcpXrc::Measures
TcpXrc::Measure(Ptr<const TcpSocketState> tcb, double elapsedMs)
{
    Measures m;
    m.elapsedMs = elapsedMs;
    m.seg = tcb->m_segmentSize;
    m.cwnd = tcb->m_cWnd;
    // RTT_min over the ACKs' samples; ns-3's m_minRtt (the smoothed RTT's minimum) adds the
    // handshake's sample and stands in before the first ACK sample.
    const double socketMinMs = tcb->m_minRtt.GetSeconds() * 1e3;
    m.minRttMs = m_minRttMs > 0 ? std::min(m_minRttMs, socketMinMs) : socketMinMs;
    m_twnd = m_rateMbps * 1e6 / 8 * m.minRttMs / 1e3;
    const double meanRttMs = m_windowMeanMs > 0 ? m_windowMeanMs
                             : m_rttCount > 0   ? m_rttSumMs / m_rttCount
                                                : m.minRttMs;
    m.e2eMs = std::max(0.0, meanRttMs - m.minRttMs);
    m.deltaMs = std::max(m.e2eMs, m_holMs);
    m.perSegment = m.seg * m.seg / m.cwnd; // one segment per RTT, per acknowledged segment
    return m;
}

bool
TcpXrc::InternetRule(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Measures& m)
{
    if (m_holMs <= m_budgetMs && m.e2eMs - m_holMs > m_budgetMs)
    {
        m_mode = Mode::INTERNET;
        m_unfair = false;
        m_highDelayMs = 0;
        TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
        return true;
    }
    return false;
}

bool
TcpXrc::SlowStartRule(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Measures& m)
{
    if (tcb->m_cWnd < tcb->m_ssThresh)
    {
        if (m.cwnd < m_twnd && m.deltaMs <= m_budgetMs)
        {
            m_mode = Mode::SLOW_START;
            TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
            return true;
        }
        tcb->m_ssThresh = tcb->m_cWnd; // slow start ends at twnd or at the budget
    }
    return false;
}

double
TcpXrc::OverBudgetRule(uint32_t segmentsAcked, const Measures& m)
{
    if (m.cwnd <= 1.05 * m_twnd && m_holMs > m_budgetMs)
    {
        m_highDelayMs += m.elapsedMs;
    }
    if (m_highDelayMs >= m_unfairRtts * m.minRttMs)
    {
        m_unfair = true;
    }
    m_rampFrom = 0;
    if (m_unfair)
    {
        m_mode = Mode::UNFAIR;
        return std::max(m.cwnd, m_twnd) + m_unfairAlpha * m.perSegment * segmentsAcked;
    }
    m_mode = Mode::RESET;
    return m_twnd;
}

double
TcpXrc::WithinBudgetRule(uint32_t segmentsAcked, const Measures& m)
{
    m_highDelayMs = 0;
    m_unfair = false;
    if (m.cwnd < m_twnd)
    {
        m_mode = Mode::RAMP;
        if (m_rampFrom <= 0)
        {
            m_rampFrom = m.cwnd;
        }
        // Close the gap (from where the ramp began) over RampRtts RTTs: about cwnd / seg
        // segments are acknowledged per RTT.
        const double step = (m_twnd - m_rampFrom) / m_rampRtts * m.seg / m.cwnd * segmentsAcked;
        return std::min(m_twnd, m.cwnd + std::max(step, m.perSegment * segmentsAcked));
    }
    m_mode = Mode::PROBE;
    m_rampFrom = 0;
    return m.cwnd + std::max(1.0, m.perSegment * segmentsAcked);
}

void
TcpXrc::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    const Time now = Simulator::Now();
    const double elapsedMs = m_updated ? (now - m_lastUpdate).GetSeconds() * 1e3 : 0.0;
    m_lastUpdate = now;
    m_updated = true;
    if (!m_hasFeedback || m_rateMbps <= 0 || tcb->m_minRtt == Time::Max() || segmentsAcked == 0)
    {
        m_mode = Mode::NO_FEEDBACK;
        TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
        return;
    }
    const Measures m = Measure(tcb, elapsedMs);
    if (InternetRule(tcb, segmentsAcked, m) || SlowStartRule(tcb, segmentsAcked, m))
    {
        return;
    }
    if (m_holMs <= m_budgetMs)
    {
        // The unfairness mode belongs to a cellular bottleneck (HoL above the budget): an
        // end-to-end delay over the budget with the RLC head within it (many UEs taking turns,
        // delayed ACKs) has no competitor to push back.
        m_highDelayMs = 0;
        m_unfair = false;
    }
    const double next = m.deltaMs > m_budgetMs ? OverBudgetRule(segmentsAcked, m)
                                               : WithinBudgetRule(segmentsAcked, m);
    tcb->m_cWnd = static_cast<uint32_t>(std::clamp(next, 2 * m.seg, 4e9));
}

} // namespace ns3
