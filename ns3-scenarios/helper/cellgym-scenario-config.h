// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_SCENARIO_CONFIG_H
#define CELLGYM_SCENARIO_CONFIG_H

#include "cellgym-draws.h"
#include "cellgym-explicit-router.h"
#include "cellgym-radio-cell.h"
#include "cellgym-scenario-options.h"
#include "cellgym-sender-app.h"
#include "cellgym-trace-link.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/// Upper bound of every action value on the wire (cwnd bytes, pacing Mbit/s).
constexpr double kCellGymActionHigh = 1e9;

/**
 * @brief The scenario program's command line, every value checked: one field per option
 * (docs/scenario-contract.md), plus what the checks derive from them (the flows, the
 * bottleneck's trace, the Pareto streams and what the run's draws must hold).
 */
struct CellGymScenarioConfig
{
    uint16_t openGymPort{0};   //!< ns3-gym bridge port (0: no bridge)
    uint64_t simSeed{1};       //!< RngRun (0 on the command line is taken as 1)
    double simTime{10};        //!< episode length, s
    uint32_t stepMs{20};       //!< step interval, ms
    std::string cellType;      //!< lte or nr
    RadioCellConfig radio;     //!< what the cell helper builds
    uint32_t numUes{1};        //!< UEs
    std::string mobility;      //!< static or random
    double mobilityPeriodS{2}; //!< period of the random moves, s
    double minDistance{100};   //!< random moves: lower end, m
    double maxDistance{380};   //!< random moves: upper end, m
    double serverDelayMs{15};  //!< one-way delay between each server and the PGW, ms

    double bottleneckMbps{0};              //!< wired bottleneck's rate (0: none)
    uint32_t bottleneckBufferPkts{100};    //!< its buffer, packets
    std::string bottleneckTrace;           //!< Mahimahi trace of the bottleneck (empty: none)
    MahimahiSchedule bottleneckSchedule;   //!< that trace's delivery opportunities
    std::string bottleneckQueue;           //!< droptail or red
    double redMinThPkts{5};                //!< RED: minimum threshold, packets
    double redMaxThPkts{15};               //!< RED: maximum threshold, packets
    double redMaxP{0.02};                  //!< RED: drop probability at the maximum
    double redWeight{0.002};               //!< RED: EWMA weight
    std::string bottleneckLogPath;         //!< the bottleneck's queue log (empty: none)
    std::string flowLogPath;               //!< the finished pareto flows' log (empty: none)
    std::string flowsSpec;                 //!< --flows as given
    std::vector<CellGymFlowConfig> flows;  //!< the flows, in flow order
    bool anyXcp{false};                    //!< some flow runs XCP or XCP-r
    bool anyRcp{false};                    //!< some flow runs RCP
    CellGymExplicitRouter::Knobs xcpKnobs; //!< XCP router's knobs
    CellGymExplicitRouter::Knobs rcpKnobs; //!< RCP router's knobs
    double ackLoss{0};                     //!< ACK loss probability on the reverse path
    uint32_t udpSources{0};                //!< ON/OFF UDP sources
    double udpRateMbps{10};                //!< their rate while on, Mbit/s
    double udpOnS{1};                      //!< their on period, s
    double udpOffS{1};                     //!< their off period, s
    double udpStartS{0};                   //!< their start, s
    std::string udpPeriods;                //!< fixed or exponential
    std::string recordPath;                //!< per-step CSV record (empty: none)
    std::string channelSource;             //!< distance or the capacity trace's source
    int recvTimeoutMs{600000};             //!< bridge receive timeout, ms (0: forever)
    std::vector<double> fixedAction;       //!< (cwnd_bytes, pacing_rate_mbps) or empty
    std::string drawsPath;                 //!< the run's draws file (empty: none)
    std::vector<int> streamOfFlow;         //!< per flow its Pareto stream (-1: none)
    CellGymDraws::Expect drawsExpect;      //!< what the draws must hold for this run

    /// @return whether the flows need XCP's or RCP's router
    bool HasExplicitRouter() const
    {
        return anyXcp || anyRcp;
    }

    /// @return the router kind the flows need (XCP when any flow runs XCP or XCP-r)
    CellGymExplicitRouter::Kind RouterKind() const
    {
        return anyXcp ? CellGymExplicitRouter::Kind::XCP : CellGymExplicitRouter::Kind::RCP;
    }

    /// @return the router knobs of RouterKind()
    const CellGymExplicitRouter::Knobs& RouterKnobs() const
    {
        return anyXcp ? xcpKnobs : rcpKnobs;
    }

    /// @return whether there is a wired bottleneck (a rate or a trace)
    bool HasWiredBottleneck() const
    {
        return bottleneckMbps > 0 || !bottleneckTrace.empty();
    }
};

/**
 * @brief Read and check the command line: every option is read as text and checked, so that a
 * bad value exits with status 2 and names the field and what it accepts; ns-3's own options
 * pass through to CommandLine. Exits with status 4 for --cellType=nr in a build without
 * 5G-LENA.
 * @param argc argument count
 * @param argv arguments
 * @param program the program's source file (__FILE__), which CommandLine names it after
 * @return the checked configuration
 */
CellGymScenarioConfig ParseScenarioConfig(int argc, char* argv[], const std::string& program);

/**
 * @brief The run's draws (--draws, cellgym/draws.py; the fast model takes the same), checked
 * against what this configuration needs of them.
 * @param cfg the configuration
 * @return the draws (none without --draws)
 */
CellGymDraws LoadScenarioDraws(const CellGymScenarioConfig& cfg);

} // namespace ns3

#endif // CELLGYM_SCENARIO_CONFIG_H
