// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-pareto-stream.h"

#include "cellgym-sender-app.h"

#include "ns3/double.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CellGymParetoStream);

TypeId
CellGymParetoStream::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CellGymParetoStream")
                            .SetParent<Object>()
                            .SetGroupName("CellGym")
                            .AddConstructor<CellGymParetoStream>();
    return tid;
}

double
CellGymParetoStream::BoundedMean(double low, double high, double shape)
{
    const double a = shape;
    const double norm = 1.0 - std::pow(low / high, a);
    return std::pow(low, a) / norm * a / (a - 1.0)
           * (std::pow(low, 1.0 - a) - std::pow(high, 1.0 - a));
}

void
CellGymParetoStream::Configure(
    uint32_t index, double shape, double meanPkts, double cutoffPkts, double iatMs)
{
    m_index = index;
    m_shape = shape;
    m_high = cutoffPkts;
    // L by bisection: the bounded mean grows with L.
    double lo = 1e-9;
    double hi = meanPkts;
    for (int i = 0; i < 200; ++i)
    {
        const double mid = 0.5 * (lo + hi);
        if (BoundedMean(mid, m_high, m_shape) < meanPkts)
        {
            lo = mid;
        }
        else
        {
            hi = mid;
        }
    }
    m_low = 0.5 * (lo + hi);
    m_tail = 1.0 - std::pow(m_low / m_high, m_shape);
    m_iat = CreateObject<ExponentialRandomVariable>();
    m_iat->SetAttribute("Mean", DoubleValue(iatMs));
    m_iat->SetAttribute("Bound", DoubleValue(0.0));
    m_uniform = CreateObject<UniformRandomVariable>();
}

int64_t
CellGymParetoStream::AssignStreams(int64_t stream)
{
    m_iat->SetStream(stream);
    m_uniform->SetStream(stream + 1);
    return 2;
}

void
CellGymParetoStream::AddSlot(Ptr<CellGymSenderApp> app)
{
    app->SetParetoSlot(this, static_cast<uint32_t>(m_slots.size()));
    m_slots.push_back(app);
    m_busy.push_back(false);
    m_current.emplace_back();
}

void
CellGymParetoStream::SetLog(std::shared_ptr<std::ostream> out)
{
    m_log = std::move(out);
}

const std::vector<CellGymParetoStream::Record>&
CellGymParetoStream::Finished() const
{
    return m_finished;
}

double
CellGymParetoStream::Low() const
{
    return m_low;
}

uint64_t
CellGymParetoStream::SizeOf(double u) const
{
    const double x = m_low / std::pow(1.0 - u * m_tail, 1.0 / m_shape);
    return static_cast<uint64_t>(std::max(std::nearbyint(x), 1.0));
}

void
CellGymParetoStream::Start(Time first)
{
    const Time at = first + Seconds(m_iat->GetValue() / 1e3);
    Simulator::Schedule(at - Simulator::Now(), &CellGymParetoStream::Arrive, this);
}

void
CellGymParetoStream::Arrive()
{
    m_waiting.push_back({SizeOf(m_uniform->GetValue()), Simulator::Now().GetSeconds() * 1e3});
    Dispatch();
    Simulator::Schedule(Seconds(m_iat->GetValue() / 1e3), &CellGymParetoStream::Arrive, this);
}

void
CellGymParetoStream::Dispatch()
{
    for (uint32_t s = 0; s < m_slots.size() && !m_waiting.empty(); ++s)
    {
        if (m_busy[s] || !m_slots[s]->ParetoReady())
        {
            continue;
        }
        const Pending p = m_waiting.front();
        m_waiting.pop_front();
        m_busy[s] = true;
        Record& r = m_current[s];
        r.stream = m_index;
        r.slot = m_slots[s]->FlowId();
        r.sizePkts = p.sizePkts;
        r.arrivalMs = p.arrivalMs;
        r.startMs = Simulator::Now().GetSeconds() * 1e3;
        r.doneMs = -1;
        m_slots[s]->BeginParetoFlow(p.sizePkts);
    }
}

double
CellGymParetoStream::OnFlowDone(uint32_t slot)
{
    Record& r = m_current[slot];
    r.doneMs = Simulator::Now().GetSeconds() * 1e3;
    m_finished.push_back(r);
    if (m_log)
    {
        *m_log << 0 << ',' << r.stream << ',' << r.slot << ',' << r.sizePkts << ',' << r.arrivalMs
               << ',' << r.startMs << ',' << r.doneMs << ',' << (r.doneMs - r.arrivalMs) / 1e3
               << '\n';
    }
    return (r.doneMs - r.arrivalMs) / 1e3;
}

void
CellGymParetoStream::OnSlotFree(uint32_t slot)
{
    m_busy[slot] = false;
    // Not from within the socket's own callback: the next flow starts a moment later.
    Simulator::ScheduleNow(&CellGymParetoStream::Dispatch, this);
}

} // namespace ns3
