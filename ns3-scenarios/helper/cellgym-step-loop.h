// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_STEP_LOOP_H
#define CELLGYM_STEP_LOOP_H

#include "cellgym-agent-congestion-ops.h"
#include "cellgym-scenario-config.h"
#include "cellgym-sender-app.h"
#include "opengym-bridge.h"
#include "xrc-enb-agent.h"

#include "ns3/mobility-model.h"

#include <fstream>
#include <memory>
#include <vector>

namespace ns3
{

/**
 * @brief The environment's step loop: every step it observes the flows and UEs, records them,
 * and exchanges the observation for an action over the ns3-gym bridge (or applies
 * --fixedAction). Everything the step loop reads and writes.
 */
struct CellGymStepLoop
{
    double stepS{0.02};                                   //!< step interval
    double simTimeS{10};                                  //!< episode length
    uint32_t numUes{1};                                   //!< UEs
    std::vector<Ptr<CellGymSenderApp>> senders;           //!< per flow
    std::vector<Ptr<CellGymAgentCongestionOps>> agentOps; //!< per agent flow, in flow order
    std::vector<uint32_t> agentFlows;                     //!< flow ids of agent flows
    Ptr<XrcEnbAgent> agent;                               //!< the eNB agent
    std::vector<Ptr<MobilityModel>> ueMobility;           //!< per UE
    std::unique_ptr<cellgym::OpenGymBridge> bridge;       //!< null without the bridge
    std::vector<double>
        fixedAction;      //!< without the bridge: (cwnd_bytes, pacing_rate_mbps) or empty
    std::ofstream record; //!< CSV record (optional)
    /// The observation, filled in place every step: flows (F x 18, row-major), ues (U x 7), time.
    /// Declared flat on the wire ([F*18], [U*7], [1]): ns3-gym's client expects 1-D boxes.
    std::vector<cellgym::NamedBox> obs{
        {"flows", {}, {}, -1, 1e12}, {"ues", {}, {}, -1, 1e12}, {"time", {1}, {0}, -1, 1e12}};
    bool initialized{false}; //!< SimInitMsg sent
    uint64_t step{0};        //!< steps done

    /**
     * @brief Size the observation, open the record (--recordPath) and the bridge
     * (--openGymPort), take --fixedAction: what the loop needs once the flows are installed.
     * @param cfg the configuration
     */
    void Configure(const CellGymScenarioConfig& cfg);

    /**
     * @brief Schedule the first step at time 0 and the simulation's stop, 10 steps after
     * --simTime (the step at or after it stops the simulation first).
     */
    void Start();
};

} // namespace ns3

#endif // CELLGYM_STEP_LOOP_H
