// SPDX-License-Identifier: GPL-2.0-only
// CellGym's cell: one LTE eNB or (--cellType=nr) one 5G-LENA gNB with its core network, UEs, and
// TCP downloads from remote servers, stepped from Python over the ns3-gym protocol (or run alone
// with --openGymPort=0). The command line, the observation columns and the action are specified
// in docs/scenario-contract.md. main() only wires the helpers (helper/), in the order that fixes
// the run's trajectory: ns-3's object creation, random streams and scheduled events follow it.
//   cellgym-scenario-config.h  the options, checked into one configuration
//   cellgym-cell-helper.h      the cell, one helper per --cellType (LTE, NR)
//   cellgym-wired-helper.h     servers -> router -> (bottleneck) -> PGW, XCP's or RCP's router
//   cellgym-controller-helper.h  routers at the base station, XCP-r's receivers, PBE-CC
//   cellgym-flow-helper.h      the flows, their senders and sinks, the UDP sources
//   cellgym-step-loop.h        the observation and the action, every step
#include "cellgym-cell-helper.h"
#include "cellgym-controller-helper.h"
#include "cellgym-flow-helper.h"
#include "cellgym-scenario-config.h"
#include "cellgym-step-loop.h"
#include "cellgym-wired-helper.h"

#include "ns3/core-module.h"

using namespace ns3;

NS_LOG_COMPONENT_DEFINE("CellGymLte");

int
main(int argc, char* argv[])
{
    // -- the command line, checked; the run's draws (cellgym/draws.py; the fast model takes the
    // same) -----------------------------------------------------------------------------------
    const CellGymScenarioConfig cfg = ParseScenarioConfig(argc, argv, __FILE__);
    const CellGymDraws draws = LoadScenarioDraws(cfg);

    // -- randomness: RngSeed fixed, RngRun from the seed (replications) ------------------------
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(cfg.simSeed);
    CellGymFlowHelper::SetTcpDefaults();

    // -- the cell: base station, core network, UEs (cellgym-radio-cell.h) ---------------------
    const auto cellHelper = CellGymCellHelper::Create(cfg.cellType);
    RadioCell radio = cellHelper->Build(cfg.radio);
    CellGymStepLoop loop;
    loop.numUes = cfg.numUes;
    loop.ueMobility = radio.ueMobility;

    // -- wired side: servers -> router -> (bottleneck) -> PGW, and XCP's or RCP's router at the
    // bottleneck (docs/explicit-feedback.md) ----------------------------------------------------
    CellGymWiredSide wired;
    const CellGymWiredHelper wiredHelper(cfg);
    wiredHelper.Install(wired, radio.pgw);
    wiredHelper.InstallRouter(wired);

    // -- the base-station tap, XRC's agent its first subscriber -----------------------------------
    radio.installTap(radio);
    loop.agent = radio.agent;

    // -- without a wired bottleneck: XCP's or RCP's router per UE at the base station ----------
    const CellGymControllerHelper controllers(cfg);
    CellGymFlows flows;
    controllers.InstallBaseStationRouters(flows.ueRouters, wired, radio);

    // -- the flows, then the controllers that watch them at the UEs, then the cross traffic ----
    const CellGymFlowHelper flowHelper(cfg, draws);
    flowHelper.InstallFlows(flows, wired, radio, loop);
    controllers.InstallXcprReceivers(wired, radio);
    controllers.InstallPbe(radio);
    flowHelper.InstallUdpSources(flows, wired);
    CellGymFlowHelper::StartParetoStreams(flows);
    CellGymCellHelper::ScheduleMoves(radio, cfg, draws);

    // -- the step loop --------------------------------------------------------------------------
    loop.Configure(cfg);
    loop.Start();
    Simulator::Run();
    flowHelper.PrintSummary(flows, wired, loop);
    Simulator::Destroy();
    return 0;
}
