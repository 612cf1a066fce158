// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-agent-congestion-ops.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CellGymAgentCongestionOps");
NS_OBJECT_ENSURE_REGISTERED(CellGymAgentCongestionOps);

TypeId
CellGymAgentCongestionOps::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CellGymAgentCongestionOps")
                            .SetParent<TcpNewReno>()
                            .SetGroupName("CellGym")
                            .AddConstructor<CellGymAgentCongestionOps>();
    return tid;
}

CellGymAgentCongestionOps::CellGymAgentCongestionOps() = default;

CellGymAgentCongestionOps::CellGymAgentCongestionOps(const CellGymAgentCongestionOps& other)
    : TcpNewReno(other)
    , m_cwndBytes(other.m_cwndBytes)
    , m_pacingBps(other.m_pacingBps)
    , m_sendTrigger(other.m_sendTrigger)
{
}

std::string
CellGymAgentCongestionOps::GetName() const
{
    return "CellGymAgent";
}

void
CellGymAgentCongestionOps::Init(Ptr<TcpSocketState> tcb)
{
    m_tcb = tcb;
    Apply(tcb);
}

uint32_t
CellGymAgentCongestionOps::GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight)
{
    return std::max(2 * tcb->m_segmentSize, bytesInFlight / 2);
}

void
CellGymAgentCongestionOps::IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked)
{
    // Before the first command NewReno runs; after an RTO (CA_LOSS) the standard slow start up to
    // ssthresh rebuilds the window until the loss is repaired and the commanded window returns.
    if (m_cwndBytes <= 0 || tcb->m_congState == TcpSocketState::CA_LOSS)
    {
        TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
    }
    Apply(tcb);
}

void
CellGymAgentCongestionOps::CongestionStateSet(Ptr<TcpSocketState> tcb,
                                              const TcpSocketState::TcpCongState_t newState)
{
    if (newState == TcpSocketState::CA_OPEN && m_cwndBytes > 0)
    {
        // Recovery is over: return to the commanded window on the next ACK.
        Simulator::ScheduleNow(&CellGymAgentCongestionOps::Apply, this, tcb);
    }
}

Ptr<TcpCongestionOps>
CellGymAgentCongestionOps::Fork()
{
    return CopyObject<CellGymAgentCongestionOps>(this);
}

void
CellGymAgentCongestionOps::SetTarget(double cwndBytes, double pacingBps)
{
    m_cwndBytes = std::max(cwndBytes, 1.0);
    m_pacingBps = std::max(pacingBps, 0.0);
    if (!m_tcb)
    {
        return;
    }
    Apply(m_tcb);
    // The window is in effect now, as the twin's sender has it: if it opened room, send into it
    // at once instead of waiting for the next ACK.
    const auto state = m_tcb->m_congState.Get();
    if (!m_sendTrigger.IsNull()
        && (state == TcpSocketState::CA_OPEN || state == TcpSocketState::CA_DISORDER)
        && m_tcb->m_cWnd.Get() > m_tcb->m_bytesInFlight.Get())
    {
        m_sendTrigger();
    }
}

void
CellGymAgentCongestionOps::SetSendTrigger(Callback<void> trigger)
{
    m_sendTrigger = trigger;
}

void
CellGymAgentCongestionOps::Apply(Ptr<TcpSocketState> tcb)
{
    if (m_cwndBytes <= 0)
    {
        return;
    }
    if (!m_savedPacing)
    {
        m_savedPacing = true;
        m_defaultMaxPacingRate = tcb->m_maxPacingRate;
        m_defaultSsRatio = tcb->m_pacingSsRatio;
        m_defaultCaRatio = tcb->m_pacingCaRatio;
    }
    if (m_pacingBps > 0)
    {
        // TcpSocketBase::UpdatePacingRate() runs after every ACK and sets the rate to
        // min(factor * max(cwnd, in flight) / srtt, MaxPacingRate). With the largest factors
        // (655x) and the commanded rate as the cap, it keeps the commanded rate unless the window
        // alone would send 655 times slower, when pacing does not matter.
        const DataRate rate(static_cast<uint64_t>(m_pacingBps));
        tcb->m_pacing = true;
        tcb->m_maxPacingRate = rate;
        tcb->m_pacingSsRatio = std::numeric_limits<uint16_t>::max();
        tcb->m_pacingCaRatio = std::numeric_limits<uint16_t>::max();
        if (tcb->m_pacingRate.Get() != rate)
        {
            tcb->m_pacingRate = rate;
        }
    }
    else if (tcb->m_pacing)
    {
        tcb->m_pacing = false;
        tcb->m_maxPacingRate = m_defaultMaxPacingRate;
        tcb->m_pacingSsRatio = m_defaultSsRatio;
        tcb->m_pacingCaRatio = m_defaultCaRatio;
        tcb->m_pacingRate = DataRate(0);
    }
    const auto state = tcb->m_congState.Get();
    if (state == TcpSocketState::CA_OPEN || state == TcpSocketState::CA_DISORDER)
    {
        const double seg = tcb->m_segmentSize;
        const auto cwnd = static_cast<uint32_t>(std::clamp(m_cwndBytes, seg, 4e9));
        if (tcb->m_cWnd.Get() != cwnd)
        {
            tcb->m_cWnd = cwnd;
        }
        // Keep the socket out of slow start: the policy owns the window.
        if (tcb->m_ssThresh.Get() > cwnd)
        {
            tcb->m_ssThresh = cwnd;
        }
    }
}

} // namespace ns3
