// SPDX-License-Identifier: GPL-2.0-only
// The environment's step loop (docs/scenario-contract.md): the observation columns, the record,
// the action from the bridge or --fixedAction.
#include "cellgym-step-loop.h"

#include "cellgym-version.h"

#include "ns3/core-module.h"

#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace ns3
{

namespace
{

/// Number of per-UE observation columns (docs/scenario-contract.md).
constexpr uint32_t kUeFields = 7;

const char* const kFlowFieldNames[] = {"fb_rate_mbps",
                                       "fb_hol_ms",
                                       "rtt_last_ms",
                                       "rtt_min_ms",
                                       "rtt_mean_ms",
                                       "rtt_samples",
                                       "cwnd_bytes",
                                       "ssthresh_bytes",
                                       "bytes_in_flight",
                                       "acked_bytes",
                                       "rx_bytes",
                                       "loss_events",
                                       "retx_segments",
                                       "pacing_rate_mbps",
                                       "active",
                                       "enb_rate_mbps",
                                       "sent_bytes",
                                       "fct_s"};
const char* const kUeFieldNames[]
    = {"capacity_mbps", "tx_mbps", "hol_ms", "hol_max_ms", "rlc_bytes", "rlc_drops", "distance_m"};

std::string
InfoJson(const CellGymStepLoop& cell, double t, bool first)
{
    std::ostringstream os;
    os << std::setprecision(9) << "{\"t\": " << t;
    if (first)
    {
        os << ", \"version\": \"" << cellgym::Version() << "\", \"flow_fields\": [";
        for (uint32_t i = 0; i < kFlowFields; ++i)
        {
            os << (i ? ", " : "") << '"' << kFlowFieldNames[i] << '"';
        }
        os << "], \"ue_fields\": [";
        for (uint32_t i = 0; i < kUeFields; ++i)
        {
            os << (i ? ", " : "") << '"' << kUeFieldNames[i] << '"';
        }
        os << "]";
    }
    os << "}";
    return os.str();
}

void
Observe(CellGymStepLoop& cell)
{
    const size_t numFlows = cell.senders.size();
    for (size_t f = 0; f < numFlows; ++f)
    {
        double* row = &cell.obs[0].data[f * kFlowFields];
        cell.senders[f]->TakeObservation(row);
        row[15] = cell.agent->GetFlowRateMbps(static_cast<uint32_t>(f));
    }
    for (uint32_t u = 0; u < cell.numUes; ++u)
    {
        const XrcUeStepStats s = cell.agent->TakeStepStats(u);
        double* row = &cell.obs[1].data[u * kUeFields];
        const Vector p = cell.ueMobility[u]->GetPosition();
        row[0] = s.capacityMbps;
        row[1] = s.txMbps;
        row[2] = s.holMs;
        row[3] = s.holMaxMs;
        row[4] = s.rlcBytes;
        row[5] = s.rlcDrops;
        row[6] = std::hypot(p.x, p.y);
    }
    cell.obs[2].data[0] = Simulator::Now().GetSeconds();
}

void
Record(CellGymStepLoop& cell)
{
    if (!cell.record.is_open())
    {
        return;
    }
    const double t = cell.obs[2].data[0];
    for (size_t f = 0; f < cell.senders.size(); ++f)
    {
        cell.record << t << ",flow," << f;
        for (uint32_t c = 0; c < kFlowFields; ++c)
        {
            cell.record << ',' << cell.obs[0].data[f * kFlowFields + c];
        }
        cell.record << '\n';
    }
    for (uint32_t u = 0; u < cell.numUes; ++u)
    {
        cell.record << t << ",ue," << u;
        for (uint32_t c = 0; c < kUeFields; ++c)
        {
            cell.record << ',' << cell.obs[1].data[u * kUeFields + c];
        }
        cell.record << '\n';
    }
}

/**
 * @brief Exit with status 2 and a message unless an action value is finite and inside the declared
 * action space [0, kCellGymActionHigh]; values outside it (1e15 Mbit/s, inf, NaN) would otherwise
 * reach ns-3's integer rate arithmetic.
 * @param field the value's name (docs/scenario-contract.md)
 * @param agent index of the agent flow
 * @param value the value received
 */
void
CheckActionValue(const char* field, size_t agent, double value)
{
    if (!std::isfinite(value) || value < 0 || value > kCellGymActionHigh)
    {
        std::cerr << "cellgym-lte: action[" << agent << "]." << field << "=" << value
                  << " is out of range: allowed [0, " << kCellGymActionHigh << "]" << std::endl;
        std::exit(2);
    }
}

void
StepEvent(CellGymStepLoop* cell)
{
    Observe(*cell);
    Record(*cell);
    const double t = Simulator::Now().GetSeconds();
    const bool over = t >= cell->simTimeS - 1e-9;
    if (cell->bridge)
    {
        if (!cell->initialized)
        {
            // Flat [2A]: (cwnd_bytes, pacing_rate_mbps) per agent flow. ns3-gym's client packs
            // an action as shape [len(action)] and cannot send a 2-D one.
            const auto actionLength = static_cast<uint32_t>(cell->agentFlows.size() * 2);
            cellgym::NamedBox act{"action", {actionLength}, {}, 0, kCellGymActionHigh};
            if (!cell->bridge->Init(cell->obs, act))
            {
                Simulator::Stop();
                return;
            }
        }
        const auto action
            = cell->bridge->Step(cell->obs, over, InfoJson(*cell, t, !cell->initialized));
        cell->initialized = true;
        if (action.stop || over)
        {
            Simulator::Stop();
            return;
        }
        const size_t expected = cell->agentFlows.size() * 2;
        if (action.data.size() != expected)
        {
            std::cerr << "cellgym-lte: the action has " << action.data.size()
                      << " values: expected " << expected << " (cwnd_bytes, pacing_rate_mbps per "
                      << "agent flow)" << std::endl;
            std::exit(2);
        }
        for (size_t a = 0; a < cell->agentOps.size(); ++a)
        {
            CheckActionValue("cwnd_bytes", a, action.data[2 * a]);
            CheckActionValue("pacing_rate_mbps", a, action.data[2 * a + 1]);
            cell->agentOps[a]->SetTarget(action.data[2 * a], action.data[2 * a + 1] * 1e6);
        }
    }
    else if (over)
    {
        Simulator::Stop();
        return;
    }
    else if (!cell->fixedAction.empty())
    {
        for (const auto& ops : cell->agentOps)
        {
            ops->SetTarget(cell->fixedAction[0], cell->fixedAction[1] * 1e6);
        }
    }
    ++cell->step;
    Simulator::Schedule(Seconds(cell->stepS), &StepEvent, cell);
}

} // namespace

void
CellGymStepLoop::Configure(const CellGymScenarioConfig& cfg)
{
    stepS = cfg.stepMs / 1000.0;
    simTimeS = cfg.simTime;
    const auto numFlows = static_cast<uint32_t>(cfg.flows.size());
    obs[0].shape = {numFlows * kFlowFields};
    obs[0].data.assign(numFlows * kFlowFields, 0.0);
    obs[1].shape = {cfg.numUes * kUeFields};
    obs[1].data.assign(cfg.numUes * kUeFields, 0.0);
    if (!cfg.recordPath.empty())
    {
        record.open(cfg.recordPath);
        if (!record)
        {
            BadArg("recordPath", cfg.recordPath, "a writable file path");
        }
        record << "t,kind,index";
        for (uint32_t c = 0; c < kFlowFields; ++c)
        {
            record << ',' << kFlowFieldNames[c];
        }
        record << '\n';
        record << std::setprecision(10);
    }
    if (cfg.openGymPort > 0)
    {
        bridge = std::make_unique<cellgym::OpenGymBridge>(cfg.openGymPort, cfg.recvTimeoutMs);
    }
    fixedAction = cfg.fixedAction;
}

void
CellGymStepLoop::Start()
{
    Simulator::Schedule(Seconds(0), &StepEvent, this);
    Simulator::Stop(Seconds(simTimeS + 10 * stepS));
}

} // namespace ns3
