// SPDX-License-Identifier: GPL-2.0-only
// The scenario program's options (docs/scenario-contract.md): one table of their names,
// defaults and help, read as text and checked by name; the value checks that turn them into a
// CellGymScenarioConfig are in cellgym-scenario-config.cc.
#include "cellgym-scenario-options.h"

#include "ns3/core-module.h"

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace ns3
{

namespace
{

/// One option of the scenario program: its name, default and help text.
struct Option
{
    const char* name;         //!< --name
    const char* defaultValue; //!< the value without the option
    const char* help;         //!< help text, with the unit
};

/// The options, in the order --PrintHelp lists them.
const Option kOptions[] = {
    {"openGymPort", "0", "ns3-gym bridge port on 127.0.0.1 (0: run without the bridge)"},
    {"simSeed", "1", "RngRun, >= 1 (RngSeed is 1; 0 is ns3-gym's 'random' and is taken as 1)"},
    {"simTime", "10", "simulated duration, s: the episode ends at the first step at or after it"},
    {"stepMs", "20", "environment step interval, ms"},
    {"cellType", "lte", "lte (ns-3's LTE) or nr (5G-LENA, when built with it)"},
    {"rbs", "50", "LTE: downlink and uplink bandwidth in resource blocks: 25, 50, 75 or 100"},
    {"numerology", "1", "NR: numerology mu (subcarrier spacing 15 * 2^mu kHz), 0-4"},
    {"bandwidthMhz", "20", "NR: channel bandwidth, MHz"},
    {"frequencyGhz", "3.5", "NR: carrier frequency, GHz"},
    {"propagation", "umi", "NR: TR 38.901 scenario: umi (street canyon), uma, rma"},
    {"los", "los", "NR: line of sight: los, nlos or probabilistic (TR 38.901)"},
    {"scheduler", "pf", "NR: OFDMA scheduler: pf (proportional fair), rr (round robin)"},
    {"mcsTable", "64qam", "NR: MCS table: 64qam (table 1), 256qam (table 2)"},
    {"nrMacTrace",
     "0",
     "NR: 1 writes 5G-LENA's downlink MAC scheduling trace (NrDlMacStats.txt: every TB's slot, "
     "symbols, MCS and size) to the working directory; 2 also its uplink MAC trace, its PHY traces "
     "(RxPacketTrace.txt: every received TB's SINR, CQI, HARQ version and outcome) and "
     "CellGymNrCqi.txt, CellGymNrHarq.txt (every CQI report and HARQ feedback at the gNB) and "
     "CellGymNrBlockage.txt (FR2 blockage transitions); 3 also every control message at the MAC "
     "and PHY of both ends (SR, BSR, DCI, CQI, HARQ), for diagnosis"},
    {"numUes", "1", "number of UEs"},
    {"distances", "100", "initial UE distances, m, comma-separated (one value: all UEs)"},
    {"mobility", "static", "static, or random: each UE jumps to a uniform distance every period"},
    {"mobilityPeriodS", "2", "period of random distance changes, s"},
    {"minDistance", "100", "lower end of random distances, m"},
    {"maxDistance", "380", "upper end of random distances, m"},
    {"rlcBufferPkts", "128", "RLC UM transmit buffer, packets of 1500 B"},
    {"serverDelayMs", "15", "one-way delay between each server and the PGW, ms"},
    {"bottleneckMbps", "0", "wired bottleneck between the servers' router and the PGW (0: none)"},
    {"bottleneckBufferPkts", "100", "drop-tail buffer of the bottleneck, packets"},
    {"bottleneckTrace",
     "",
     "Mahimahi trace file: the bottleneck's delivery opportunities (one 1500-byte packet each, "
     "looped) instead of bottleneckMbps (empty: none)"},
    {"bottleneckQueue",
     "droptail",
     "the bottleneck's queue: droptail, or red (ns-3's RedQueueDisc, gentle, limit "
     "bottleneckBufferPkts; only with bottleneckMbps)"},
    {"redMinThPkts", "5", "RED: minimum threshold of the average queue, packets"},
    {"redMaxThPkts", "15", "RED: maximum threshold of the average queue, packets"},
    {"redMaxP", "0.02", "RED: drop probability at the maximum threshold (LInterm = 1 / redMaxP)"},
    {"redWeight", "0.002", "RED: EWMA weight of the average queue (QW)"},
    {"bottleneckLogPath",
     "",
     "write the bottleneck's queue every ms to this CSV file: t_s, queue_pkts (queue disc and "
     "device), RED's early_drops and forced_drops (cumulative; 0 with drop-tail; empty: none)"},
    {"flowLogPath",
     "",
     "write every finished pareto flow to this CSV file: cell, stream, slot, size_pkts, "
     "arrival_ms, start_ms, done_ms, fct_s (empty: none)"},
    {"flows",
     "ue=0,cca=cubic",
     "';'-separated flows, each 'key=value,...': ue, cca, traffic (bulk, video, short, pareto), "
     "start, stop, delay_ms, size_bytes, video_rate_mbps, video_on_s, video_period_s, "
     "ssthresh_segments, pareto_shape, pareto_mean_pkts, pareto_cutoff_pkts, pareto_iat_ms "
     "(docs/scenario-contract.md)"},
    {"activeTimeoutMs",
     "200",
     "XRC agent: a flow is active while its packets arrive closer than this"},
    {"xrcWindowTtis", "40", "XRC agent: capacity averaging window, TTIs"},
    {"xcpAlpha", "0.4", "XCP router: efficiency controller's alpha (per control interval)"},
    {"xcpBeta", "0.226", "XCP router: efficiency controller's beta (persistent queue, bytes)"},
    {"xcpShuffle", "0.1", "XCP router: share of the capacity shuffled per control interval"},
    {"rcpAlpha", "0.4", "RCP router: alpha of the rate update (spare capacity)"},
    {"rcpBeta", "0.226", "RCP router: beta of the rate update (queue)"},
    {"rcpUpdateMs", "0", "RCP router: update period, ms (0: every average RTT)"},
    {"ackLoss",
     "0",
     "probability that each ACK is lost between the bottleneck and its server, in [0, 1)"},
    {"udpSources", "0", "ON/OFF UDP sources through the wired bottleneck (0-256)"},
    {"udpRateMbps", "10", "rate of each UDP source while on, Mbit/s (IP bytes)"},
    {"udpOnS", "1", "on period of each UDP source, s (the mean when exponential)"},
    {"udpOffS", "1", "off period of each UDP source, s (likewise)"},
    {"udpPeriods",
     "fixed",
     "fixed (the sources switch together) or exponential (drawn per source)"},
    {"udpStartS", "0", "the UDP sources start, on, at this time, s"},
    {"channelSource",
     "distance",
     "distance (the channel model), or the trace source the scenario names (mahimahi, irish5g, "
     "synthetic): then --capacityTrace is required"},
    {"capacityTrace",
     "",
     "replay this capacity file (cellgym.traces.write_capacity_file, one value per TTI: 1 ms on "
     "LTE, the numerology's slot on NR) as the cell's capacity (docs/traces.md); empty: the "
     "channel's"},
    {"draws",
     "",
     "the run's random draws (cellgym.draws.write_draws_file for this scenario and --simSeed): "
     "flow start offsets, random moves, Pareto arrivals and sizes, exponential UDP periods; needed "
     "by --mobility=random, pareto flows and --udpPeriods=exponential; empty: flows start without "
     "offsets"},
    {"recordPath", "", "write every step's observation to this CSV file"},
    {"recvTimeoutMs", "600000", "bridge receive timeout, ms (0: wait forever)"},
    {"fixedAction",
     "",
     "without the bridge: 'cwnd_bytes,pacing_rate_mbps' applied to every agent flow at every step, "
     "as a constant policy would (empty: the agent flows keep NewReno)"},
};

/// Unknown options and bare arguments exit with status 2. ns-3's own (--PrintHelp, --help,
/// --version, --Print*, global values such as --RngRun, --ns3::Type::Attribute) pass through
/// to CommandLine. Returns the names given.
std::set<std::string>
CheckOptionNames(int argc, char* argv[], const OptionText& opt)
{
    std::set<std::string> given;
    for (int i = 1; i < argc; ++i)
    {
        std::string arg = argv[i];
        if (arg.rfind("--", 0) != 0)
        {
            std::cerr << "cellgym-lte: argument '" << arg
                      << "' is invalid: allowed only --name=value options" << std::endl;
            std::exit(2);
        }
        arg = arg.substr(2);
        const auto eq = arg.find('=');
        const std::string name = arg.substr(0, eq);
        given.insert(name);
        bool known = opt.count(name) > 0 || name == "help" || name == "version"
                     || name.rfind("Print", 0) == 0 || name.find("::") != std::string::npos;
        for (auto g = GlobalValue::Begin(); !known && g != GlobalValue::End(); ++g)
        {
            known = (*g)->GetName() == name;
        }
        if (!known)
        {
            BadArg(name,
                   eq == std::string::npos ? "" : arg.substr(eq + 1),
                   "an option listed by --PrintHelp");
        }
    }
    return given;
}

/// The options as text: the defaults, then the command line through ns-3's CommandLine, named
/// after the program's source file.
void
ReadCommandLine(int argc, char* argv[], const std::string& program, OptionText& opt)
{
    CommandLine cmd(program);
    cmd.Usage(
        "CellGym's cell: one LTE eNB (PF scheduler, Okumura-Hata urban path loss, RLC UM) or, with "
        "--cellType=nr, one 5G-LENA gNB (TR 38.901 channel, OFDMA PF/RR, RLC UM), UEs at "
        "given or random distances, and one TCP download per flow from its own server, observed "
        "every --stepMs and driven over the ns3-gym protocol (--openGymPort) or run alone. "
        "Every flow starts at max(start, 0.1 s) plus a random offset of 0-99 ms from --draws (the "
        "run's draws, as the fast model takes them), so that --simSeed (RngRun) gives independent "
        "replications of an otherwise deterministic static cell. Bad values exit with status 2. "
        "Contract: "
        "docs/scenario-contract.md.");
    for (const auto& o : kOptions)
    {
        cmd.AddValue(o.name, o.help, opt[o.name]);
    }
    cmd.Parse(argc, argv);
}

} // namespace

void
BadArg(const std::string& field, const std::string& value, const std::string& allowed)
{
    std::cerr << "cellgym-lte: --" << field << "=" << value << " is invalid: allowed " << allowed
              << std::endl;
    std::exit(2);
}

std::vector<std::string>
Split(const std::string& text, char sep)
{
    std::vector<std::string> out;
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, sep))
    {
        if (!item.empty())
        {
            out.push_back(item);
        }
    }
    return out;
}

double
ParseDouble(const std::string& field, const std::string& value, double low, double high)
{
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0' || !(v >= low && v <= high))
    {
        std::ostringstream allowed;
        allowed << "a number in [" << low << ", " << high << "]";
        BadArg(field, value, allowed.str());
    }
    return v;
}

uint64_t
ParseUint(const std::string& field, const std::string& value, uint64_t low, uint64_t high)
{
    char* end = nullptr;
    const bool digits
        = !value.empty() && value.find_first_not_of("0123456789") == std::string::npos;
    const unsigned long long v = digits ? std::strtoull(value.c_str(), &end, 10) : 0;
    if (!digits || *end != '\0' || v < low || v > high)
    {
        std::ostringstream allowed;
        allowed << "an integer in [" << low << ", " << high << "]";
        BadArg(field, value, allowed.str());
    }
    return v;
}

OptionText
ReadScenarioOptions(int argc,
                    char* argv[],
                    const std::string& program,
                    std::set<std::string>& given)
{
    OptionText opt;
    for (const auto& o : kOptions)
    {
        opt[o.name] = o.defaultValue;
    }
    given = CheckOptionNames(argc, argv, opt);
    ReadCommandLine(argc, argv, program, opt);
    return opt;
}

} // namespace ns3
