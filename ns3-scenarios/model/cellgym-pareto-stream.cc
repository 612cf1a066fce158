// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-pareto-stream.h"

#include "cellgym-sender-app.h"

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

void
CellGymParetoStream::Configure(uint32_t index,
                               const std::vector<double>& afterMs,
                               const std::vector<uint64_t>& sizePkts)
{
    m_index = index;
    m_afterMs = afterMs;
    m_sizePkts = sizePkts;
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

void
CellGymParetoStream::Start(Time first)
{
    m_first = first;
    if (!m_afterMs.empty())
    {
        const Time at = first + Seconds(m_afterMs[0] / 1e3);
        Simulator::Schedule(at - Simulator::Now(), &CellGymParetoStream::Arrive, this, size_t{0});
    }
}

void
CellGymParetoStream::Arrive(size_t i)
{
    m_waiting.push_back({m_sizePkts[i], Simulator::Now().GetSeconds() * 1e3});
    Dispatch();
    if (i + 1 < m_afterMs.size())
    {
        const Time next = m_first + Seconds(m_afterMs[i + 1] / 1e3);
        Simulator::Schedule(next - Simulator::Now(), &CellGymParetoStream::Arrive, this, i + 1);
    }
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
