// SPDX-License-Identifier: GPL-2.0-only
#include "tcp-pbe.h"

#include "cellgym-pbe-monitor.h"

#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("TcpPbe");
NS_OBJECT_ENSURE_REGISTERED(TcpPbe);

namespace
{
/// The fallback's bandwidth filter spans this many min RTTs (BBR's 10 rounds).
constexpr double kFilterRtts = 10.0;
} // namespace

TypeId
TcpPbe::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::TcpPbe")
              .SetParent<TcpCongestionOps>()
              .SetGroupName("CellGym")
              .AddConstructor<TcpPbe>()
              .AddAttribute("PacingGain",
                            "Pace at this times the rate the ACKs carry",
                            DoubleValue(1.0),
                            MakeDoubleAccessor(&TcpPbe::m_pacingGain),
                            MakeDoubleChecker<double>(0.0, 2.0))
              .AddAttribute("CwndGain",
                            "The window is the rate x min RTT x this",
                            DoubleValue(1.25),
                            MakeDoubleAccessor(&TcpPbe::m_cwndGain),
                            MakeDoubleChecker<double>(1.0, 4.0))
              .AddAttribute("MarginMs",
                            "The RTT may exceed what the rate explains by this much, ms",
                            DoubleValue(10.0),
                            MakeDoubleAccessor(&TcpPbe::m_marginMs),
                            MakeDoubleChecker<double>(0.0, 1000.0))
              .AddAttribute("HoldRtts",
                            "... for this many min RTTs before the BBR-like fallback",
                            DoubleValue(2.0),
                            MakeDoubleAccessor(&TcpPbe::m_holdRtts),
                            MakeDoubleChecker<double>(0.0, 100.0))
              .AddAttribute("ReturnShare",
                            "The fallback ends when its bandwidth reaches this share of the rate",
                            DoubleValue(0.9),
                            MakeDoubleAccessor(&TcpPbe::m_returnShare),
                            MakeDoubleChecker<double>(0.0, 2.0));
    return tid;
}

TcpPbe::TcpPbe()
    : m_bbr(CreateObject<TcpBbr>())
{
}

TcpPbe::TcpPbe(const TcpPbe& other)
    : TcpCongestionOps(other)
    , m_pacingGain(other.m_pacingGain)
    , m_cwndGain(other.m_cwndGain)
    , m_marginMs(other.m_marginMs)
    , m_holdRtts(other.m_holdRtts)
    , m_returnShare(other.m_returnShare)
    , m_bbr(CreateObject<TcpBbr>())
{
}

std::string
TcpPbe::GetName() const
{
    return "TcpPbe";
}

Ptr<TcpCongestionOps>
TcpPbe::Fork()
{
    return CopyObject<TcpPbe>(this);
}

CellGymExplicitSender::Pacing
TcpPbe::GetPacing() const
{
    return Pacing::ALL;
}

void
TcpPbe::ReadFeedback(Ptr<const Packet> ack)
{
    PbeRateTag tag;
    if (ack->PeekPacketTag(tag))
    {
        SetRate(tag.rateBps);
    }
}

void
TcpPbe::SetRate(double rateBps)
{
    if (rateBps > 0)
    {
        m_rateBps = rateBps;
    }
}

double
TcpPbe::GetRate() const
{
    return m_rateBps;
}

bool
TcpPbe::InFallback() const
{
    return m_fallback;
}

uint32_t
TcpPbe::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    return m_bbr->GetSsThresh(tcb, bytesInFlight);
}

void
TcpPbe::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    m_bbr->IncreaseWindow(tcb, segmentsAcked);
}

void
TcpPbe::PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt)
{
    m_bbr->PktsAcked(tcb, segmentsAcked, rtt);
}

void
TcpPbe::CongestionStateSet(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCongState_t newState)
{
    m_bbr->CongestionStateSet(tcb, newState);
}

void
TcpPbe::CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event)
{
    m_bbr->CwndEvent(tcb, event);
}

bool
TcpPbe::HasCongControl() const
{
    return true;
}

double
TcpPbe::DeliveryBps(Time now, Time minRtt, uint64_t delivered)
{
    m_delivered.emplace_back(now, delivered);
    const Time span = minRtt * 2;
    while (m_delivered.size() > 1 && now - m_delivered[1].first >= span)
    {
        m_delivered.pop_front();
    }
    const auto& [t0, d0] = m_delivered.front();
    if (now - t0 >= span)
    {
        const double bps = static_cast<double>(delivered - d0) * 8.0 / (now - t0).GetSeconds();
        // A sliding-window maximum: a sample no larger than a newer one is never the largest
        // again, so the deque stays decreasing and its front is the maximum (O(1) per ACK).
        while (!m_rates.empty() && m_rates.back().second <= bps)
        {
            m_rates.pop_back();
        }
        m_rates.emplace_back(now, bps);
    }
    while (!m_rates.empty() && now - m_rates.front().first > minRtt * kFilterRtts)
    {
        m_rates.pop_front();
    }
    return m_rates.empty() ? 0.0 : std::max(0.0, m_rates.front().second);
}

void
TcpPbe::UpdateMode(Ptr<TcpSocketState> tcb, double btlBps)
{
    const Time now = Simulator::Now();
    if (m_fallback)
    {
        if (btlBps >= m_returnShare * m_rateBps)
        {
            m_fallback = false;
            m_since = Time(0);
        }
        return;
    }
    const double minRttS = tcb->m_minRtt.GetSeconds();
    const double explainedS
        = std::max(minRttS, static_cast<double>(tcb->m_bytesInFlight.Get()) * 8.0 / m_rateBps);
    const double lastS = tcb->m_lastRtt.Get().GetSeconds();
    if (lastS > 0 && (lastS - explainedS) * 1e3 > m_marginMs)
    {
        if (m_since.IsZero())
        {
            m_since = now;
        }
        else if ((now - m_since).GetSeconds() >= m_holdRtts * minRttS)
        {
            m_fallback = true;
            m_since = Time(0);
            m_fallbackStart = now;
        }
    }
    else
    {
        m_since = Time(0);
    }
}

void
TcpPbe::CongControl(Ptr<TcpSocketState> tcb,
                    const TcpRateOps::TcpRateConnection& rc,
                    const TcpRateOps::TcpRateSample& rs)
{
    m_bbr->CongControl(tcb, rc, rs);
    if (m_rateBps <= 0 || tcb->m_minRtt == Time::Max())
    {
        return; // BBR until the first estimate and RTT
    }
    const Time now = Simulator::Now();
    const double btl = DeliveryBps(now, tcb->m_minRtt, rc.m_delivered);
    UpdateMode(tcb, btl);
    double rateBps = m_pacingGain * m_rateBps;
    double windowBytes = m_cwndGain * m_rateBps / 8.0 * tcb->m_minRtt.GetSeconds();
    if (m_fallback)
    {
        if (btl <= 0)
        {
            return;
        }
        // BBR's probing on the path's delivery rate: one min RTT at 1.25, one at 0.75, six at 1;
        // the window twice the bandwidth-delay product.
        const auto phase = static_cast<int64_t>((now - m_fallbackStart).GetSeconds()
                                                / tcb->m_minRtt.GetSeconds())
                           % 8;
        rateBps = (phase == 0 ? 1.25 : phase == 1 ? 0.75 : 1.0) * btl;
        windowBytes = 2.0 * btl / 8.0 * tcb->m_minRtt.GetSeconds();
    }
    tcb->m_pacingRate = std::min(DataRate(static_cast<uint64_t>(rateBps)), tcb->m_maxPacingRate);
    if (tcb->m_congState == TcpSocketState::CA_OPEN)
    {
        tcb->m_cWnd = static_cast<uint32_t>(std::max(4.0 * tcb->m_segmentSize, windowBytes));
    }
}

} // namespace ns3
