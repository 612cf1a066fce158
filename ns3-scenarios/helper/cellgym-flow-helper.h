// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_FLOW_HELPER_H
#define CELLGYM_FLOW_HELPER_H

#include "cellgym-ack-loss.h"
#include "cellgym-draws.h"
#include "cellgym-explicit-router.h"
#include "cellgym-pareto-stream.h"
#include "cellgym-radio-cell.h"
#include "cellgym-scenario-config.h"
#include "cellgym-step-loop.h"
#include "cellgym-udp-onoff.h"
#include "cellgym-wired-helper.h"

#include <fstream>
#include <memory>
#include <vector>

namespace ns3
{

/// The flows and cross traffic installed, with what must outlive the simulation (traces and
/// hooks hold pointers into it) and what the run's summary reports.
struct CellGymFlows
{
    std::vector<Ptr<CellGymExplicitRouter>> ueRouters;   //!< per UE at the base station
    std::vector<Ptr<CellGymParetoStream>> paretoStreams; //!< per Pareto stream
    std::vector<double> streamFirstS;                    //!< per stream: its first slot's start
    std::shared_ptr<std::ofstream> flowLog;              //!< finished pareto flows, or null
    std::vector<Ptr<CellGymAckLossModel>> ackLossModels; //!< per flow, with --ackLoss
    std::vector<Ptr<CellGymUdpOnOff>> udpApps;           //!< per UDP source
    std::vector<uint64_t> udpReceived;                   //!< per UDP source: bytes at its sink
};

/**
 * @brief Installs the flows (--flows: a server, its link, the UE's sink and the sender with its
 * congestion control), their Pareto streams, and the ON/OFF UDP sources; reports the run's
 * summary on stderr.
 */
class CellGymFlowHelper
{
  public:
    /**
     * @brief A helper for one scenario.
     * @param cfg the configuration (outlives the helper)
     * @param draws the run's draws (outlive the simulation)
     */
    CellGymFlowHelper(const CellGymScenarioConfig& cfg, const CellGymDraws& draws);

    /// @brief ns-3's TCP defaults for every flow (segment size, buffers, no ns-3 pacing).
    static void SetTcpDefaults();

    /**
     * @brief The Pareto streams' slots and the flow log (--flowLogPath), then every flow in
     * flow order: its server link, addresses and routes, the UE's sink, the sender, its start
     * and stop, the agent's and the router's view of it, the step loop's rows.
     * @param flows filled in place
     * @param wired the wired side
     * @param cell the cell (its UEs, agent, next random stream)
     * @param loop the step loop (its senders and agent flows)
     */
    void InstallFlows(CellGymFlows& flows,
                      CellGymWiredSide& wired,
                      RadioCell& cell,
                      CellGymStepLoop& loop) const;

    /**
     * @brief The ON/OFF UDP sources through the wired bottleneck, their sinks at the PGW.
     * @param flows filled in place
     * @param wired the wired side
     */
    void InstallUdpSources(CellGymFlows& flows, CellGymWiredSide& wired) const;

    /**
     * @brief Start every Pareto stream at its first slot's start.
     * @param flows the installed flows
     */
    static void StartParetoStreams(CellGymFlows& flows);

    /**
     * @brief After the run, on stderr: each flow's start, the ACKs lost, XCP's feedback, the
     * UDP sources' bytes.
     * @param flows the installed flows
     * @param wired the wired side
     * @param loop the step loop
     */
    void PrintSummary(const CellGymFlows& flows,
                      const CellGymWiredSide& wired,
                      const CellGymStepLoop& loop) const;

  private:
    /// @brief The Pareto streams (empty until their first slot) and the flow log.
    void PrepareParetoStreams(CellGymFlows& flows) const;

    /**
     * @brief One flow's server link: its delay, ACK loss, addresses and routes.
     * @param fc the flow
     * @param flows its ACK loss model joins these
     * @param wired the wired side
     * @param stream the next free random stream, advanced
     * @return the server's and the router's addresses on the link
     */
    Ipv4InterfaceContainer InstallServerLink(const CellGymFlowConfig& fc,
                                             CellGymFlows& flows,
                                             CellGymWiredSide& wired,
                                             int64_t& stream) const;

    /**
     * @brief One flow's sender's start (no earlier than the attach, plus the drawn offset),
     * its Pareto stream slot and its stop.
     * @param fc the flow
     * @param app its sender
     * @param flows the Pareto streams
     */
    void ScheduleSender(const CellGymFlowConfig& fc,
                        Ptr<CellGymSenderApp> app,
                        CellGymFlows& flows) const;

    const CellGymScenarioConfig& m_cfg; //!< the configuration
    const CellGymDraws& m_draws;        //!< the run's draws
};

} // namespace ns3

#endif // CELLGYM_FLOW_HELPER_H
