// SPDX-License-Identifier: GPL-2.0-only
// The scenario program's configuration (docs/scenario-contract.md): the checks that turn the
// options (cellgym-scenario-options.cc) into a CellGymScenarioConfig, in the order the program
// always made them, so that the first bad value is the one reported.
#include "cellgym-scenario-config.h"

#include "cellgym-scenario-options.h"

#include "ns3/core-module.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace ns3
{

namespace
{

/// A flow's key for its sender: ue, cca, traffic, times, delay, size; false for another key.
bool
ParseFlowSenderKey(const std::string& where,
                   const std::string& key,
                   const std::string& value,
                   uint32_t numUes,
                   CellGymFlowConfig& f)
{
    if (key == "ue")
    {
        f.ue = static_cast<uint32_t>(ParseUint(where + key, value, 0, numUes - 1));
    }
    else if (key == "cca")
    {
        if (!CellGymSenderApp::MakeCca(value))
        {
            BadArg(where + key, value, CellGymSenderApp::CcaNames());
        }
        f.cca = value;
    }
    else if (key == "traffic")
    {
        if (value != "bulk" && value != "video" && value != "short" && value != "pareto")
        {
            BadArg(where + key, value, "bulk, video, short, pareto");
        }
        f.traffic = value;
    }
    else if (key == "start")
    {
        f.startS = ParseDouble(where + key, value, 0, 1e6);
    }
    else if (key == "stop")
    {
        f.stopS = ParseDouble(where + key, value, 0, 1e6);
    }
    else if (key == "delay_ms")
    {
        f.delayMs = ParseDouble(where + key, value, 0, 1e4);
    }
    else if (key == "size_bytes")
    {
        f.sizeBytes = ParseUint(where + key, value, 1, 1'000'000'000'000ULL);
    }
    else
    {
        return false;
    }
    return true;
}

/// A flow's key for its traffic model: video, ssthresh, pareto; false for another key.
bool
ParseFlowTrafficKey(const std::string& where,
                    const std::string& key,
                    const std::string& value,
                    CellGymFlowConfig& f)
{
    if (key == "video_rate_mbps")
    {
        f.videoRateMbps = ParseDouble(where + key, value, 0.001, 1e4);
    }
    else if (key == "video_on_s")
    {
        f.videoOnS = ParseDouble(where + key, value, 0, 1e6);
    }
    else if (key == "video_period_s")
    {
        f.videoPeriodS = ParseDouble(where + key, value, 0.001, 1e6);
    }
    else if (key == "ssthresh_segments")
    {
        f.ssthreshSegments = static_cast<uint32_t>(ParseUint(where + key, value, 0, 1'000'000));
    }
    else if (key == "pareto_shape")
    {
        f.paretoShape = ParseDouble(where + key, value, 1.01, 10);
    }
    else if (key == "pareto_mean_pkts")
    {
        f.paretoMeanPkts = ParseDouble(where + key, value, 1, 1e6);
    }
    else if (key == "pareto_cutoff_pkts")
    {
        f.paretoCutoffPkts = ParseDouble(where + key, value, 1, 1e7);
    }
    else if (key == "pareto_iat_ms")
    {
        f.paretoIatMs = ParseDouble(where + key, value, 0.01, 1e6);
    }
    else
    {
        return false;
    }
    return true;
}

/// One item of --flows ('key=value,...'), checked.
CellGymFlowConfig
ParseFlow(const std::string& item, size_t i, uint32_t numUes)
{
    CellGymFlowConfig f;
    f.flowId = static_cast<uint32_t>(i);
    const std::string where = "flows[" + std::to_string(i) + "].";
    for (const auto& kv : Split(item, ','))
    {
        const auto eq = kv.find('=');
        if (eq == std::string::npos)
        {
            BadArg("flows", item, "key=value items separated by commas");
        }
        const std::string key = kv.substr(0, eq);
        const std::string value = kv.substr(eq + 1);
        if (!ParseFlowSenderKey(where, key, value, numUes, f)
            && !ParseFlowTrafficKey(where, key, value, f))
        {
            BadArg(where + key,
                   value,
                   "keys ue, cca, traffic, start, stop, delay_ms, size_bytes, "
                   "video_rate_mbps, video_on_s, video_period_s, ssthresh_segments, "
                   "pareto_shape, pareto_mean_pkts, pareto_cutoff_pkts, pareto_iat_ms");
        }
    }
    if (f.traffic == "pareto" && f.paretoCutoffPkts <= f.paretoMeanPkts)
    {
        BadArg(where + "pareto_cutoff_pkts",
               std::to_string(f.paretoCutoffPkts),
               "a cut-off above pareto_mean_pkts");
    }
    if (f.traffic == "short" && f.sizeBytes == 0)
    {
        BadArg(where + "size_bytes", "0", "a size >= 1 for a short flow");
    }
    if (f.stopS >= 0 && f.stopS < f.startS)
    {
        BadArg(where + "stop", std::to_string(f.stopS), "a time >= start");
    }
    return f;
}

std::vector<CellGymFlowConfig>
ParseFlows(const std::string& spec, uint32_t numUes)
{
    std::vector<CellGymFlowConfig> flows;
    const auto items = Split(spec, ';');
    if (items.empty())
    {
        BadArg("flows", spec, "at least one flow, e.g. ue=0,cca=cubic");
    }
    for (size_t i = 0; i < items.size(); ++i)
    {
        flows.push_back(ParseFlow(items[i], i, numUes));
    }
    return flows;
}

/**
 * @brief The Pareto stream of each flow (-1: not a pareto slot): the pareto flows with the same
 * ue, cca, delay and pareto_* values are the slots of one stream, numbered by their first flow
 * (as cellgym.draws.pareto_streams).
 * @param flows the flows
 * @param count set to the number of streams
 * @return per flow its stream
 */
std::vector<int>
ParetoStreamOfFlows(const std::vector<CellGymFlowConfig>& flows, uint32_t& count)
{
    std::map<std::tuple<uint32_t, std::string, double, double, double, double, double>, int> of;
    std::vector<int> out;
    for (const auto& fc : flows)
    {
        if (fc.traffic != "pareto")
        {
            out.push_back(-1);
            continue;
        }
        const auto key = std::make_tuple(fc.ue,
                                         fc.cca,
                                         fc.delayMs,
                                         fc.paretoShape,
                                         fc.paretoMeanPkts,
                                         fc.paretoCutoffPkts,
                                         fc.paretoIatMs);
        auto it = of.find(key);
        if (it == of.end())
        {
            it = of.emplace(key, static_cast<int>(of.size())).first;
        }
        out.push_back(it->second);
    }
    count = static_cast<uint32_t>(of.size());
    return out;
}

/// With --cellType=lte, reject any NR option given; with nr, reject --rbs, and exit with status
/// 4 when the build has no 5G-LENA.
void
CheckCellTypeOptions(OptionText& opt,
                     const std::set<std::string>& given,
                     const std::string& cellType)
{
    const char* const nrOptions[] = {"numerology",
                                     "bandwidthMhz",
                                     "frequencyGhz",
                                     "propagation",
                                     "los",
                                     "scheduler",
                                     "mcsTable",
                                     "nrMacTrace"};
    if (cellType == "lte")
    {
        for (const char* name : nrOptions)
        {
            if (given.count(name) > 0)
            {
                BadArg(name, opt[name], "only with --cellType=nr");
            }
        }
        return;
    }
    if (given.count("rbs") > 0)
    {
        BadArg("rbs", opt["rbs"], "only with --cellType=lte (NR: --bandwidthMhz)");
    }
#ifndef CELLGYM_HAVE_NR
    std::cerr << "cellgym-lte: --cellType=nr is not available: this build has no 5G-LENA (the "
                 "NR module). `make setup` builds it once (scripts/build-nr.sh, from "
                 "../shared/third-party/nr-5g-lena-v4.0.tar.gz or a clone of "
                 "https://gitlab.com/cttc-lena/nr) and says why when it cannot; then rebuild "
                 "ns3-scenarios with -DCELLGYM_NR_DIR=<its output>."
              << std::endl;
    std::exit(4);
#endif
}

/**
 * @brief Check the NR options (--cellType=nr) into cfg; with --cellType=lte, reject any NR option
 * given. Without 5G-LENA in the build, --cellType=nr exits with status 4 and says so.
 */
void
ParseNrOptions(OptionText& opt,
               const std::set<std::string>& given,
               const std::string& cellType,
               RadioCellConfig& cfg)
{
    CheckCellTypeOptions(opt, given, cellType);
    if (cellType == "lte")
    {
        return;
    }
    cfg.numerology = static_cast<uint32_t>(ParseUint("numerology", opt["numerology"], 0, 4));
    cfg.frequencyGhz = ParseDouble("frequencyGhz", opt["frequencyGhz"], 0.5, 100);
    cfg.bandwidthMhz = ParseDouble("bandwidthMhz", opt["bandwidthMhz"], 1, 400);
    const double rbKhz = 12 * 15.0 * (1 << cfg.numerology);
    if (cfg.bandwidthMhz * 1e3 / rbKhz < 11)
    {
        std::ostringstream allowed;
        allowed << "at least 11 resource blocks of " << rbKhz << " kHz at numerology "
                << cfg.numerology << ": >= " << 11 * rbKhz / 1e3 << " MHz";
        BadArg("bandwidthMhz", opt["bandwidthMhz"], allowed.str());
    }
    const std::pair<const char*, std::vector<std::string>> choices[] = {
        {"propagation", {"umi", "uma", "rma"}},
        {"los", {"probabilistic", "los", "nlos"}},
        {"scheduler", {"pf", "rr"}},
        {"mcsTable", {"64qam", "256qam"}},
    };
    for (const auto& [name, allowed] : choices)
    {
        if (std::find(allowed.begin(), allowed.end(), opt[name]) == allowed.end())
        {
            std::string list;
            for (const auto& a : allowed)
            {
                list += (list.empty() ? "" : ", ") + a;
            }
            BadArg(name, opt[name], list);
        }
    }
    cfg.propagation = opt["propagation"];
    cfg.los = opt["los"];
    cfg.scheduler = opt["scheduler"];
    cfg.mcsTable = opt["mcsTable"];
    cfg.nrMacTrace = static_cast<uint32_t>(ParseUint("nrMacTrace", opt["nrMacTrace"], 0, 3));
}

/// The bridge, the run and the cell: --openGymPort to --serverDelayMs.
void
ParseCellOptions(OptionText& opt, const std::set<std::string>& given, CellGymScenarioConfig& c)
{
    auto uintOpt = [&opt](const std::string& name, uint64_t low, uint64_t high)
    {
        return ParseUint(name, opt[name], low, high);
    };
    auto doubleOpt = [&opt](const std::string& name, double low, double high)
    {
        return ParseDouble(name, opt[name], low, high);
    };
    c.openGymPort = static_cast<uint16_t>(uintOpt("openGymPort", 0, 65535));
    c.simSeed = uintOpt("simSeed", 0, 1'000'000'000'000ULL);
    c.simTime = doubleOpt("simTime", 0.001, 1e6);
    c.stepMs = static_cast<uint32_t>(uintOpt("stepMs", 1, 10'000));
    c.cellType = opt["cellType"];
    if (c.cellType != "lte" && c.cellType != "nr")
    {
        BadArg("cellType", c.cellType, "lte, nr");
    }
    const auto rbs = static_cast<uint32_t>(uintOpt("rbs", 25, 100));
    if (rbs != 25 && rbs != 50 && rbs != 75 && rbs != 100)
    {
        BadArg("rbs", opt["rbs"], "25, 50, 75, 100");
    }
    c.radio.rbs = rbs;
    ParseNrOptions(opt, given, c.cellType, c.radio);
    c.numUes = static_cast<uint32_t>(uintOpt("numUes", 1, 256));
    c.mobility = opt["mobility"];
    if (c.mobility != "static" && c.mobility != "random")
    {
        BadArg("mobility", c.mobility, "static, random");
    }
    c.mobilityPeriodS = doubleOpt("mobilityPeriodS", 0.01, 1e6);
    c.minDistance = doubleOpt("minDistance", 1, 600);
    c.maxDistance = doubleOpt("maxDistance", c.minDistance, 600);
    c.radio.rlcBufferPkts = static_cast<uint32_t>(uintOpt("rlcBufferPkts", 1, 1'000'000));
    c.serverDelayMs = doubleOpt("serverDelayMs", 0, 10'000);
}

/// The wired bottleneck: --bottleneckMbps to --bottleneckLogPath.
void
ParseBottleneckOptions(OptionText& opt, CellGymScenarioConfig& c)
{
    c.bottleneckMbps = ParseDouble("bottleneckMbps", opt["bottleneckMbps"], 0, 1e6);
    c.bottleneckBufferPkts = static_cast<uint32_t>(
        ParseUint("bottleneckBufferPkts", opt["bottleneckBufferPkts"], 1, 1'000'000));
    c.bottleneckTrace = opt["bottleneckTrace"];
    if (!c.bottleneckTrace.empty())
    {
        if (c.bottleneckMbps > 0)
        {
            BadArg("bottleneckTrace", c.bottleneckTrace, "only with --bottleneckMbps=0");
        }
        std::string error;
        c.bottleneckSchedule = ReadMahimahiSchedule(c.bottleneckTrace, error);
        if (c.bottleneckSchedule.total == 0)
        {
            BadArg("bottleneckTrace", c.bottleneckTrace, "a Mahimahi trace file (" + error + ")");
        }
    }
    c.bottleneckQueue = opt["bottleneckQueue"];
    if (c.bottleneckQueue != "droptail" && c.bottleneckQueue != "red")
    {
        BadArg("bottleneckQueue", c.bottleneckQueue, "droptail, red");
    }
    if (c.bottleneckQueue == "red" && c.bottleneckMbps <= 0)
    {
        BadArg("bottleneckQueue", c.bottleneckQueue, "red only with --bottleneckMbps > 0");
    }
    c.redMinThPkts = ParseDouble("redMinThPkts", opt["redMinThPkts"], 0, 1e6);
    c.redMaxThPkts = ParseDouble("redMaxThPkts", opt["redMaxThPkts"], c.redMinThPkts, 1e6);
    c.redMaxP = ParseDouble("redMaxP", opt["redMaxP"], 1e-6, 1);
    c.redWeight = ParseDouble("redWeight", opt["redWeight"], 1e-6, 1);
    c.bottleneckLogPath = opt["bottleneckLogPath"];
}

/// The controllers and the cross traffic: --activeTimeoutMs to --udpPeriods.
void
ParseControllerOptions(OptionText& opt, CellGymScenarioConfig& c)
{
    auto doubleOpt = [&opt](const std::string& name, double low, double high)
    {
        return ParseDouble(name, opt[name], low, high);
    };
    c.radio.activeTimeoutMs = doubleOpt("activeTimeoutMs", 1, 1e5);
    c.radio.xrcWindowTtis
        = static_cast<uint32_t>(ParseUint("xrcWindowTtis", opt["xrcWindowTtis"], 1, 10'000));
    c.xcpKnobs.alpha = doubleOpt("xcpAlpha", 1e-9, 1);
    c.xcpKnobs.beta = doubleOpt("xcpBeta", 0, 2);
    c.xcpKnobs.shuffle = doubleOpt("xcpShuffle", 0, 1);
    c.rcpKnobs.alpha = doubleOpt("rcpAlpha", 1e-9, 1);
    c.rcpKnobs.beta = doubleOpt("rcpBeta", 0, 2);
    c.rcpKnobs.rcpUpdateMs = doubleOpt("rcpUpdateMs", 0, 10'000);
    c.ackLoss = doubleOpt("ackLoss", 0, 0.999999);
    c.udpSources = static_cast<uint32_t>(ParseUint("udpSources", opt["udpSources"], 0, 256));
    c.udpRateMbps = doubleOpt("udpRateMbps", 0, 100'000);
    c.udpOnS = doubleOpt("udpOnS", 0.001, 1e6);
    c.udpOffS = doubleOpt("udpOffS", 0, 1e6);
    c.udpStartS = doubleOpt("udpStartS", 0, 1e6);
    c.udpPeriods = opt["udpPeriods"];
    if (c.udpPeriods != "fixed" && c.udpPeriods != "exponential")
    {
        BadArg("udpPeriods", c.udpPeriods, "fixed, exponential");
    }
}

/// The record, the capacity trace and the bridge's timeout: --recordPath to --recvTimeoutMs.
void
ParseTraceOptions(OptionText& opt, CellGymScenarioConfig& c)
{
    c.recordPath = opt["recordPath"];
    c.radio.capacityTrace = opt["capacityTrace"];
    c.channelSource = opt["channelSource"];
    if (c.channelSource != "distance" && c.channelSource != "mahimahi"
        && c.channelSource != "irish5g" && c.channelSource != "synthetic")
    {
        BadArg("channelSource", c.channelSource, "distance, mahimahi, irish5g, synthetic");
    }
    if ((c.channelSource == "distance") != c.radio.capacityTrace.empty())
    {
        BadArg("capacityTrace",
               c.radio.capacityTrace,
               "a capacity file exactly when --channelSource is a trace source (now '"
                   + c.channelSource + "')");
    }
    c.recvTimeoutMs
        = static_cast<int>(ParseUint("recvTimeoutMs", opt["recvTimeoutMs"], 0, 2'000'000'000));
}

/// The UEs' initial distances (--distances: one value, or one per UE).
std::vector<double>
ParseDistances(const std::string& distances, uint32_t numUes)
{
    std::vector<double> ueDistances;
    for (const auto& d : Split(distances, ','))
    {
        ueDistances.push_back(ParseDouble("distances", d, 1, 600));
    }
    if (ueDistances.size() == 1)
    {
        ueDistances.assign(numUes, ueDistances[0]);
    }
    if (ueDistances.size() != numUes)
    {
        BadArg("distances", distances, "one value or numUes values, each in [1, 600] m");
    }
    return ueDistances;
}

/// The checks across options: XCP and RCP, UDP sources, --fixedAction.
void
CheckCombinations(OptionText& opt, CellGymScenarioConfig& c)
{
    for (const auto& f : c.flows)
    {
        c.anyXcp = c.anyXcp || f.cca == "xcp" || f.cca == "xcpr";
        c.anyRcp = c.anyRcp || f.cca == "rcp";
    }
    if (c.anyXcp && c.anyRcp)
    {
        BadArg("flows",
               c.flowsSpec,
               "XCP and RCP flows cannot share the bottleneck: all xcp or all rcp");
    }
    if (c.udpSources > 0 && !c.HasWiredBottleneck())
    {
        BadArg("udpSources",
               std::to_string(c.udpSources),
               "0 without a wired bottleneck (--bottleneckMbps or --bottleneckTrace)");
    }
    if (!opt["fixedAction"].empty())
    {
        const std::string text = opt["fixedAction"];
        const auto comma = text.find(',');
        if (comma == std::string::npos || c.openGymPort > 0)
        {
            BadArg("fixedAction",
                   text,
                   "'cwnd_bytes,pacing_rate_mbps', only without the bridge (--openGymPort=0)");
        }
        const double high = kCellGymActionHigh;
        c.fixedAction = {ParseDouble("fixedAction", text.substr(0, comma), 0, high),
                         ParseDouble("fixedAction", text.substr(comma + 1), 0, high)};
    }
}

/// What the run's draws must hold (cellgym/draws.py): flows, UEs, moves, Pareto streams.
void
FillDrawsExpect(CellGymScenarioConfig& c)
{
    CellGymDraws::Expect& e = c.drawsExpect;
    c.streamOfFlow = ParetoStreamOfFlows(c.flows, e.streams);
    e.rngRun = c.simSeed;
    e.numFlows = static_cast<uint32_t>(c.flows.size());
    e.numUes = c.numUes;
    e.moves = c.mobility == "random"
                  ? static_cast<uint32_t>(std::floor(c.simTime / c.mobilityPeriodS + 1e-9))
                  : 0;
    e.periodS = c.mobilityPeriodS;
    e.minDistance = c.minDistance;
    e.maxDistance = c.maxDistance;
    e.udpExpSources = c.udpPeriods == "exponential" ? c.udpSources : 0;
    for (int k : c.streamOfFlow)
    {
        e.paretoFlows.push_back(k >= 0);
    }
}

} // namespace

CellGymScenarioConfig
ParseScenarioConfig(int argc, char* argv[], const std::string& program)
{
    std::set<std::string> given;
    OptionText opt = ReadScenarioOptions(argc, argv, program, given);

    CellGymScenarioConfig c;
    ParseCellOptions(opt, given, c);
    ParseBottleneckOptions(opt, c);
    c.flowLogPath = opt["flowLogPath"];
    c.flowsSpec = opt["flows"];
    ParseControllerOptions(opt, c);
    ParseTraceOptions(opt, c);
    if (c.simSeed == 0)
    {
        std::cerr << "cellgym-lte: --simSeed=0 (ns3-gym's 'random') is taken as RngRun 1"
                  << std::endl;
        c.simSeed = 1;
    }
    c.radio.numUes = c.numUes;
    c.radio.distances = ParseDistances(opt["distances"], c.numUes);
    c.flows = ParseFlows(c.flowsSpec, c.numUes);
    c.drawsPath = opt["draws"];
    FillDrawsExpect(c);
    CheckCombinations(opt, c);
    return c;
}

CellGymDraws
LoadScenarioDraws(const CellGymScenarioConfig& cfg)
{
    const CellGymDraws draws = cfg.drawsPath.empty()
                                   ? CellGymDraws::None()
                                   : CellGymDraws::Load(cfg.drawsPath, cfg.drawsExpect);
    draws.Needed(cfg.drawsExpect);
    return draws;
}

} // namespace ns3