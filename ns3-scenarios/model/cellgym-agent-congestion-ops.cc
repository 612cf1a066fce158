// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-agent-congestion-ops.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

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
    if (m_cwndBytes <= 0)
    {
        TcpNewReno::IncreaseWindow(tcb, segmentsAcked);
        return;
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
    if (m_tcb)
    {
        Apply(m_tcb);
    }
}

void
CellGymAgentCongestionOps::Apply(Ptr<TcpSocketState> tcb) const
{
    if (m_cwndBytes <= 0)
    {
        return;
    }
    tcb->m_pacing = m_pacingBps > 0;
    if (m_pacingBps > 0)
    {
        tcb->m_pacingRate = DataRate(static_cast<uint64_t>(m_pacingBps));
        tcb->m_maxPacingRate = DataRate(static_cast<uint64_t>(std::max(m_pacingBps, 1e12)));
    }
    const auto state = tcb->m_congState.Get();
    if (state == TcpSocketState::CA_OPEN || state == TcpSocketState::CA_DISORDER)
    {
        const double seg = tcb->m_segmentSize;
        tcb->m_cWnd = static_cast<uint32_t>(std::clamp(m_cwndBytes, seg, 4e9));
        // Keep the socket out of slow start: the policy owns the window.
        tcb->m_ssThresh = std::min<uint32_t>(tcb->m_cWnd, tcb->m_ssThresh);
    }
}

} // namespace ns3
