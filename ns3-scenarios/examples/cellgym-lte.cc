// SPDX-License-Identifier: GPL-2.0-only
// CellGym's cell: one LTE eNB or (--cellType=nr) one 5G-LENA gNB with its core network, UEs, and
// TCP downloads from remote servers, stepped from Python over the ns3-gym protocol (or run alone
// with --openGymPort=0). The cells are built in model/cellgym-radio-cell.cc (LTE) and
// model/nr/cellgym-nr-cell.cc (NR); everything else here is shared. The command line, the
// observation columns and the action are specified in docs/scenario-contract.md.
#include "cellgym-ack-loss.h"
#include "cellgym-draws.h"
#include "cellgym-explicit-router.h"
#include "cellgym-pareto-stream.h"
#include "cellgym-pbe-monitor.h"
#include "cellgym-radio-cell.h"
#include "cellgym-sender-app.h"
#include "cellgym-trace-link.h"
#include "cellgym-udp-onoff.h"
#include "cellgym-version.h"
#include "cellgym-xcpr-receiver.h"
#include "opengym-bridge.h"
#include "xrc-enb-agent.h"
#include "xrc-feedback-tag.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

using namespace ns3;

NS_LOG_COMPONENT_DEFINE("CellGymLte");

namespace
{

constexpr uint32_t kUeFields = 7;
constexpr uint16_t kBasePort = 5000;
constexpr uint16_t kUdpBasePort = 9000; //!< the UDP sources' sinks (at the PGW): 9000 + source
constexpr double kUeHeightM = 1.5;
constexpr double kAttachS = 0.1;
//! Upper bound of every action value on the wire (cwnd bytes, pacing Mbit/s).
constexpr double kActionHigh = 1e9;

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

[[noreturn]] void
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
        CellGymFlowConfig f;
        f.flowId = static_cast<uint32_t>(i);
        const std::string where = "flows[" + std::to_string(i) + "].";
        for (const auto& kv : Split(items[i], ','))
        {
            const auto eq = kv.find('=');
            if (eq == std::string::npos)
            {
                BadArg("flows", items[i], "key=value items separated by commas");
            }
            const std::string key = kv.substr(0, eq);
            const std::string value = kv.substr(eq + 1);
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
            else if (key == "video_rate_mbps")
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
                f.ssthreshSegments
                    = static_cast<uint32_t>(ParseUint(where + key, value, 0, 1'000'000));
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
        flows.push_back(f);
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

/**
 * @brief Check the NR options (--cellType=nr) into cfg; with --cellType=lte, reject any NR option
 * given. Without 5G-LENA in the build, --cellType=nr exits with status 4 and says so.
 */
void
ParseNrOptions(std::map<std::string, std::string>& opt,
               const std::set<std::string>& given,
               const std::string& cellType,
               RadioCellConfig& cfg)
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

/// Everything the step loop reads and writes.
struct Cell
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
};

std::string
InfoJson(const Cell& cell, double t, bool first)
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
Observe(Cell& cell)
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
Record(Cell& cell)
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
 * action space [0, kActionHigh]; values outside it (1e15 Mbit/s, inf, NaN) would otherwise reach
 * ns-3's integer rate arithmetic.
 * @param field the value's name (docs/scenario-contract.md)
 * @param agent index of the agent flow
 * @param value the value received
 */
void
CheckActionValue(const char* field, size_t agent, double value)
{
    if (!std::isfinite(value) || value < 0 || value > kActionHigh)
    {
        std::cerr << "cellgym-lte: action[" << agent << "]." << field << "=" << value
                  << " is out of range: allowed [0, " << kActionHigh << "]" << std::endl;
        std::exit(2);
    }
}

void
StepEvent(Cell* cell)
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
            cellgym::NamedBox act{"action", {actionLength}, {}, 0, kActionHigh};
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

/// A random move: the UE goes to its next drawn distance (--draws), then waits a period.
void
MoveUe(Ptr<MobilityModel> mobility,
       const std::vector<double>* distances,
       size_t next,
       double angle,
       Time period)
{
    if (next >= distances->size())
    {
        return;
    }
    const double d = (*distances)[next];
    mobility->SetPosition(Vector(d * std::cos(angle), d * std::sin(angle), kUeHeightM));
    Simulator::Schedule(period, &MoveUe, mobility, distances, next + 1, angle, period);
}

/// XCP's or RCP's router at the wired bottleneck, with the flows it knows by server address.
struct WiredRouter
{
    Ptr<CellGymExplicitRouter> router;      //!< the router's rules
    std::map<Ipv4Address, uint32_t> flowOf; //!< server address -> flow
    std::set<uint32_t> xcprFlows;           //!< the XCP-r flows
    CellGymXcprPath xcpr;                   //!< XCP-r's header values beside the packets
};

/// A TCP ACK a UE's IP layer sends (its SendOutgoing trace): the flow it belongs to (its source
/// port less kBasePort) and its header; false for anything else.
bool
UeAckOf(const Ipv4Header& h, Ptr<const Packet> p, uint32_t& flow, TcpHeader& tcp)
{
    if (h.GetProtocol() != 6 || p->PeekHeader(tcp) == 0 || (tcp.GetFlags() & TcpHeader::ACK) == 0)
    {
        return false;
    }
    flow = tcp.GetSourcePort() - kBasePort;
    return true;
}

/// The TCP header of a packet with its IPv4 header (and PPP header, when hasPpp).
bool
PeekTcp(Ptr<const Packet> p, bool hasPpp, TcpHeader& tcp)
{
    Ptr<Packet> copy = p->Copy();
    if (hasPpp)
    {
        PppHeader ppp;
        copy->RemoveHeader(ppp);
    }
    Ipv4Header ip;
    copy->RemoveHeader(ip);
    return ip.GetProtocol() == 6 && copy->PeekHeader(tcp) > 0;
}

/// An XCP-r data segment passes the router: the values its header would carry on
/// (cellgym-xcpr-receiver.h).
void
RecordXcprData(WiredRouter* wr,
               uint32_t flow,
               const ExplicitHeaderTag& hdr,
               Ptr<const Packet> p,
               const TcpHeader& tcp)
{
    XcprHeaderTag flag;
    if (p->PeekPacketTag(flag))
    {
        wr->xcpr.OnRouterData(flow,
                              tcp.GetSequenceNumber().GetValue(),
                              wr->router->FeedbackOf(flow).xcpTotalBytes,
                              hdr.cwndBytes,
                              flag.epoch,
                              hdr.segBytes);
    }
}

/// The IPv4 header of a packet seen at a point-to-point device (with or without its PPP header):
/// false when it is not IPv4.
bool
PeekIpv4(Ptr<const Packet> p, Ipv4Header& ip, bool& hasPpp)
{
    uint8_t first = 0;
    if (p->GetSize() < 1 || p->CopyData(&first, 1) != 1)
    {
        return false;
    }
    Ptr<Packet> copy = p->Copy();
    hasPpp = (first >> 4) != 4;
    if (hasPpp)
    {
        PppHeader ppp;
        copy->RemoveHeader(ppp);
    }
    return copy->PeekHeader(ip) > 0;
}

/// A packet enters the bottleneck device (router -> PGW): it counts at the router.
void
OnBottleneckTx(WiredRouter* wr, Ptr<const Packet> p)
{
    Ipv4Header ip;
    bool hasPpp = false;
    if (!PeekIpv4(p, ip, hasPpp))
    {
        return;
    }
    const double wireBytes = p->GetSize() + (hasPpp ? 0 : 2); // 2: the PPP header
    auto it = wr->flowOf.find(ip.GetSource());
    ExplicitHeaderTag hdr;
    const bool hasHdr = it != wr->flowOf.end() && p->PeekPacketTag(hdr);
    wr->router->OnPacket(hasHdr ? it->second : 0, wireBytes, hasHdr ? &hdr : nullptr);
    TcpHeader tcp;
    if (hasHdr && wr->xcprFlows.count(it->second) > 0 && PeekTcp(p, hasPpp, tcp))
    {
        RecordXcprData(wr, it->second, hdr, p, tcp);
    }
}

/// Bytes a trace link's delivery opportunity carries (one packet of up to 1500 bytes).
constexpr double kTracePacketBytes = 1500;

/// A packet joins the trace link's queue disc: it counts at the router as one opportunity.
void
OnTraceLinkEnqueue(WiredRouter* wr, Ptr<const QueueDiscItem> item)
{
    Ptr<const Ipv4QueueDiscItem> ipItem = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (!ipItem)
    {
        return;
    }
    auto it = wr->flowOf.find(ipItem->GetHeader().GetSource());
    ExplicitHeaderTag hdr;
    const bool hasHdr = it != wr->flowOf.end() && item->GetPacket()->PeekPacketTag(hdr);
    wr->router->OnPacket(hasHdr ? it->second : 0, kTracePacketBytes, hasHdr ? &hdr : nullptr);
    TcpHeader tcp;
    if (hasHdr && wr->xcprFlows.count(it->second) > 0 && ipItem->GetHeader().GetProtocol() == 6
        && item->GetPacket()->PeekHeader(tcp) > 0)
    {
        RecordXcprData(wr, it->second, hdr, item->GetPacket(), tcp);
    }
}

/// An ACK reaches the router from the PGW: it carries its flow's feedback back to the sender.
void
OnBottleneckAck(WiredRouter* wr, Ptr<const Packet> p)
{
    Ipv4Header ip;
    bool hasPpp = false;
    if (!PeekIpv4(p, ip, hasPpp))
    {
        return;
    }
    auto it = wr->flowOf.find(ip.GetDestination());
    if (it != wr->flowOf.end() && ip.GetProtocol() == 6) // the flow's TCP ACKs
    {
        p->AddPacketTag(wr->router->FeedbackOf(it->second));
        TcpHeader tcp;
        XcprWindowTag window;
        if (wr->xcprFlows.count(it->second) > 0 && PeekTcp(p, hasPpp, tcp)
            && wr->xcpr.WindowOfAck(it->second, tcp.GetAckNumber().GetValue(), window))
        {
            p->AddPacketTag(window); // XCP-r: the receiver's window, on the ACK it sent
        }
    }
}

/// Every period: the bottleneck's queue (queue disc and device) and RED's drops so far, as CSV
/// (drop-tail: no queue disc, its drops are not counted here).
void
LogBottleneck(std::shared_ptr<std::ofstream> log,
              Ptr<QueueDisc> qdisc,
              Ptr<Queue<Packet>> device,
              Time period)
{
    uint64_t early = 0;
    uint64_t forced = 0;
    uint32_t queued = device->GetNPackets();
    if (qdisc)
    {
        const QueueDisc::Stats& st = qdisc->GetStats();
        early = st.GetNDroppedPackets(RedQueueDisc::UNFORCED_DROP);
        forced += st.GetNDroppedPackets(RedQueueDisc::FORCED_DROP)
                  + st.GetNDroppedPackets(QueueDisc::INTERNAL_QUEUE_DROP);
        queued += qdisc->GetNPackets();
    }
    *log << Simulator::Now().GetSeconds() << ',' << queued << ',' << early << ',' << forced << '\n';
    Simulator::Schedule(period, &LogBottleneck, log, qdisc, device, period);
}

void
OnSinkRx(Ptr<CellGymSenderApp> app, Ptr<const Packet> packet, const Address&)
{
    app->OnReceived(packet->GetSize());
}

} // namespace

int
main(int argc, char* argv[])
{
    // Every option is read as text and checked here, so that a bad value exits with status 2 and
    // names the field and what it accepts (ns-3's CommandLine would exit 1 on a malformed number).
    std::map<std::string, std::string> opt{
        {"openGymPort", "0"},
        {"simSeed", "1"},
        {"simTime", "10"},
        {"stepMs", "20"},
        {"cellType", "lte"},
        {"rbs", "50"},
        {"numerology", "1"},
        {"bandwidthMhz", "20"},
        {"frequencyGhz", "3.5"},
        {"propagation", "umi"},
        {"los", "probabilistic"},
        {"scheduler", "pf"},
        {"mcsTable", "64qam"},
        {"nrMacTrace", "0"},
        {"numUes", "1"},
        {"distances", "100"},
        {"mobility", "static"},
        {"mobilityPeriodS", "2"},
        {"minDistance", "100"},
        {"maxDistance", "380"},
        {"rlcBufferPkts", "128"},
        {"serverDelayMs", "15"},
        {"bottleneckMbps", "0"},
        {"bottleneckBufferPkts", "100"},
        {"bottleneckTrace", ""},
        {"bottleneckQueue", "droptail"},
        {"redMinThPkts", "5"},
        {"redMaxThPkts", "15"},
        {"redMaxP", "0.02"},
        {"redWeight", "0.002"},
        {"bottleneckLogPath", ""},
        {"flowLogPath", ""},
        {"flows", "ue=0,cca=cubic"},
        {"activeTimeoutMs", "200"},
        {"xrcWindowTtis", "40"},
        {"xcpAlpha", "0.4"},
        {"xcpBeta", "0.226"},
        {"xcpShuffle", "0.1"},
        {"rcpAlpha", "0.4"},
        {"rcpBeta", "0.226"},
        {"rcpUpdateMs", "0"},
        {"ackLoss", "0"},
        {"udpSources", "0"},
        {"udpRateMbps", "10"},
        {"udpOnS", "1"},
        {"udpOffS", "1"},
        {"udpPeriods", "fixed"},
        {"udpStartS", "0"},
        {"capacityTrace", ""},
        {"channelSource", "distance"},
        {"draws", ""},
        {"recordPath", ""},
        {"recvTimeoutMs", "600000"},
        {"fixedAction", ""},
    };
    const std::vector<std::pair<std::string, std::string>> help{
        {"openGymPort", "ns3-gym bridge port on 127.0.0.1 (0: run without the bridge)"},
        {"simSeed", "RngRun, >= 1 (RngSeed is 1; 0 is ns3-gym's 'random' and is taken as 1)"},
        {"simTime", "simulated duration, s: the episode ends at the first step at or after it"},
        {"stepMs", "environment step interval, ms"},
        {"cellType", "lte (ns-3's LTE) or nr (5G-LENA, when built with it)"},
        {"rbs", "LTE: downlink and uplink bandwidth in resource blocks: 25, 50, 75 or 100"},
        {"numerology", "NR: numerology mu (subcarrier spacing 15 * 2^mu kHz), 0-4"},
        {"bandwidthMhz", "NR: channel bandwidth, MHz"},
        {"frequencyGhz", "NR: carrier frequency, GHz"},
        {"propagation", "NR: TR 38.901 scenario: umi (street canyon), uma, rma"},
        {"los", "NR: line of sight: probabilistic (TR 38.901), los, nlos"},
        {"scheduler", "NR: OFDMA scheduler: pf (proportional fair), rr (round robin)"},
        {"mcsTable", "NR: MCS table: 64qam (table 1), 256qam (table 2)"},
        {"nrMacTrace",
         "NR: 1 writes 5G-LENA's downlink MAC scheduling trace (NrDlMacStats.txt: every TB's "
         "slot, symbols, MCS and size) to the working directory; 2 also its uplink MAC trace, "
         "its PHY traces (RxPacketTrace.txt: every received TB's SINR, CQI, HARQ version and "
         "outcome) and CellGymNrCqi.txt, CellGymNrHarq.txt (every CQI report and HARQ "
         "feedback at the gNB) and CellGymNrBlockage.txt (FR2 blockage transitions); 3 also "
         "every control message at the MAC and PHY of both ends (SR, BSR, DCI, CQI, HARQ), for "
         "diagnosis"},
        {"numUes", "number of UEs"},
        {"distances", "initial UE distances, m, comma-separated (one value: all UEs)"},
        {"mobility", "static, or random: each UE jumps to a uniform distance every period"},
        {"mobilityPeriodS", "period of random distance changes, s"},
        {"minDistance", "lower end of random distances, m"},
        {"maxDistance", "upper end of random distances, m"},
        {"rlcBufferPkts", "RLC UM transmit buffer, packets of 1500 B"},
        {"serverDelayMs", "one-way delay between each server and the PGW, ms"},
        {"bottleneckMbps", "wired bottleneck between the servers' router and the PGW (0: none)"},
        {"bottleneckBufferPkts", "drop-tail buffer of the bottleneck, packets"},
        {"bottleneckTrace",
         "Mahimahi trace file: the bottleneck's delivery opportunities (one 1500-byte packet "
         "each, looped) instead of bottleneckMbps (empty: none)"},
        {"bottleneckQueue",
         "the bottleneck's queue: droptail, or red (ns-3's RedQueueDisc, gentle, limit "
         "bottleneckBufferPkts; only with bottleneckMbps)"},
        {"redMinThPkts", "RED: minimum threshold of the average queue, packets"},
        {"redMaxThPkts", "RED: maximum threshold of the average queue, packets"},
        {"redMaxP", "RED: drop probability at the maximum threshold (LInterm = 1 / redMaxP)"},
        {"redWeight", "RED: EWMA weight of the average queue (QW)"},
        {"bottleneckLogPath",
         "write the bottleneck's queue every ms to this CSV file: t_s, queue_pkts (queue disc "
         "and device), RED's early_drops and forced_drops (cumulative; 0 with drop-tail; "
         "empty: none)"},
        {"flowLogPath",
         "write every finished pareto flow to this CSV file: cell, stream, slot, size_pkts, "
         "arrival_ms, start_ms, done_ms, fct_s (empty: none)"},
        {"flows",
         "';'-separated flows, each 'key=value,...': ue, cca, traffic (bulk, video, short, "
         "pareto), start, stop, delay_ms, size_bytes, video_rate_mbps, video_on_s, "
         "video_period_s, ssthresh_segments, pareto_shape, pareto_mean_pkts, "
         "pareto_cutoff_pkts, pareto_iat_ms (docs/scenario-contract.md)"},
        {"activeTimeoutMs",
         "XRC agent: a flow is active while its packets arrive closer than this"},
        {"xrcWindowTtis", "XRC agent: capacity averaging window, TTIs"},
        {"xcpAlpha", "XCP router: efficiency controller's alpha (per control interval)"},
        {"xcpBeta", "XCP router: efficiency controller's beta (persistent queue, bytes)"},
        {"xcpShuffle", "XCP router: share of the capacity shuffled per control interval"},
        {"rcpAlpha", "RCP router: alpha of the rate update (spare capacity)"},
        {"rcpBeta", "RCP router: beta of the rate update (queue)"},
        {"rcpUpdateMs", "RCP router: update period, ms (0: every average RTT)"},
        {"ackLoss",
         "probability that each ACK is lost between the bottleneck and its server, in [0, 1)"},
        {"udpSources", "ON/OFF UDP sources through the wired bottleneck (0-256)"},
        {"udpRateMbps", "rate of each UDP source while on, Mbit/s (IP bytes)"},
        {"udpOnS", "on period of each UDP source, s (the mean when exponential)"},
        {"udpOffS", "off period of each UDP source, s (likewise)"},
        {"udpPeriods", "fixed (the sources switch together) or exponential (drawn per source)"},
        {"udpStartS", "the UDP sources start, on, at this time, s"},
        {"channelSource",
         "distance (the channel model), or the trace source the scenario names (mahimahi, "
         "irish5g, synthetic): then --capacityTrace is required"},
        {"capacityTrace",
         "replay this capacity file (cellgym.traces.write_capacity_file, one value per TTI: "
         "1 ms on LTE, the numerology's slot on NR) as the cell's capacity (docs/traces.md); "
         "empty: the channel's"},
        {"draws",
         "the run's random draws (cellgym.draws.write_draws_file for this scenario and "
         "--simSeed): flow start offsets, random moves, Pareto arrivals and sizes, exponential "
         "UDP periods; needed by --mobility=random, pareto flows and --udpPeriods=exponential; "
         "empty: flows start without offsets"},
        {"recordPath", "write every step's observation to this CSV file"},
        {"recvTimeoutMs", "bridge receive timeout, ms (0: wait forever)"},
        {"fixedAction",
         "without the bridge: 'cwnd_bytes,pacing_rate_mbps' applied to every agent flow at every "
         "step, as a constant policy would (empty: the agent flows keep NewReno)"},
    };

    // Unknown options: exit 2 as well. ns-3's own (--PrintHelp, --help, --version, --Print*,
    // global values such as --RngRun, --ns3::Type::Attribute) pass through to CommandLine.
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

    CommandLine cmd(__FILE__);
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
    for (const auto& [name, text] : help)
    {
        cmd.AddValue(name, text, opt[name]);
    }
    cmd.Parse(argc, argv);

    // -- validation ---------------------------------------------------------------------------
    auto uintOpt = [&opt](const std::string& name, uint64_t low, uint64_t high)
    {
        return ParseUint(name, opt[name], low, high);
    };
    auto doubleOpt = [&opt](const std::string& name, double low, double high)
    {
        return ParseDouble(name, opt[name], low, high);
    };
    const auto openGymPort = static_cast<uint16_t>(uintOpt("openGymPort", 0, 65535));
    uint64_t simSeed = uintOpt("simSeed", 0, 1'000'000'000'000ULL);
    const double simTime = doubleOpt("simTime", 0.001, 1e6);
    const auto stepMs = static_cast<uint32_t>(uintOpt("stepMs", 1, 100'000));
    const std::string cellType = opt["cellType"];
    if (cellType != "lte" && cellType != "nr")
    {
        BadArg("cellType", cellType, "lte, nr");
    }
    const auto rbs = static_cast<uint32_t>(uintOpt("rbs", 25, 100));
    if (rbs != 25 && rbs != 50 && rbs != 75 && rbs != 100)
    {
        BadArg("rbs", opt["rbs"], "25, 50, 75, 100");
    }
    RadioCellConfig radioCfg;
    radioCfg.rbs = rbs;
    ParseNrOptions(opt, given, cellType, radioCfg);
    const auto numUes = static_cast<uint32_t>(uintOpt("numUes", 1, 256));
    const std::string distances = opt["distances"];
    const std::string mobility = opt["mobility"];
    if (mobility != "static" && mobility != "random")
    {
        BadArg("mobility", mobility, "static, random");
    }
    const double mobilityPeriodS = doubleOpt("mobilityPeriodS", 0.001, 1e6);
    const double minDistance = doubleOpt("minDistance", 1, 600);
    const double maxDistance = doubleOpt("maxDistance", minDistance, 600);
    const auto rlcBufferPkts = static_cast<uint32_t>(uintOpt("rlcBufferPkts", 1, 1'000'000));
    const double serverDelayMs = doubleOpt("serverDelayMs", 0, 10'000);
    const double bottleneckMbps = doubleOpt("bottleneckMbps", 0, 1e6);
    const auto bottleneckBufferPkts
        = static_cast<uint32_t>(uintOpt("bottleneckBufferPkts", 1, 100'000'000));
    const std::string bottleneckTrace = opt["bottleneckTrace"];
    MahimahiSchedule bottleneckSchedule;
    if (!bottleneckTrace.empty())
    {
        if (bottleneckMbps > 0)
        {
            BadArg("bottleneckTrace", bottleneckTrace, "only with --bottleneckMbps=0");
        }
        std::string error;
        bottleneckSchedule = ReadMahimahiSchedule(bottleneckTrace, error);
        if (bottleneckSchedule.total == 0)
        {
            BadArg("bottleneckTrace", bottleneckTrace, "a Mahimahi trace file (" + error + ")");
        }
    }
    const std::string bottleneckQueue = opt["bottleneckQueue"];
    if (bottleneckQueue != "droptail" && bottleneckQueue != "red")
    {
        BadArg("bottleneckQueue", bottleneckQueue, "droptail, red");
    }
    if (bottleneckQueue == "red" && bottleneckMbps <= 0)
    {
        BadArg("bottleneckQueue", bottleneckQueue, "red only with --bottleneckMbps > 0");
    }
    const double redMinThPkts = doubleOpt("redMinThPkts", 0, 1e6);
    const double redMaxThPkts = doubleOpt("redMaxThPkts", redMinThPkts, 1e6);
    const double redMaxP = doubleOpt("redMaxP", 1e-6, 1);
    const double redWeight = doubleOpt("redWeight", 1e-6, 1);
    const std::string bottleneckLogPath = opt["bottleneckLogPath"];
    const std::string flowsSpec = opt["flows"];
    const double activeTimeoutMs = doubleOpt("activeTimeoutMs", 1, 1e6);
    const auto xrcWindowTtis = static_cast<uint32_t>(uintOpt("xrcWindowTtis", 1, 100'000));
    CellGymExplicitRouter::Knobs xcpKnobs;
    xcpKnobs.alpha = doubleOpt("xcpAlpha", 1e-9, 1);
    xcpKnobs.beta = doubleOpt("xcpBeta", 0, 2);
    xcpKnobs.shuffle = doubleOpt("xcpShuffle", 0, 1);
    CellGymExplicitRouter::Knobs rcpKnobs;
    rcpKnobs.alpha = doubleOpt("rcpAlpha", 1e-9, 1);
    rcpKnobs.beta = doubleOpt("rcpBeta", 0, 2);
    rcpKnobs.rcpUpdateMs = doubleOpt("rcpUpdateMs", 0, 10'000);
    const double ackLoss = doubleOpt("ackLoss", 0, 0.999999);
    const auto udpSources = static_cast<uint32_t>(uintOpt("udpSources", 0, 256));
    const double udpRateMbps = doubleOpt("udpRateMbps", 0, 100'000);
    const double udpOnS = doubleOpt("udpOnS", 0.001, 1e6);
    const double udpOffS = doubleOpt("udpOffS", 0, 1e6);
    const double udpStartS = doubleOpt("udpStartS", 0, 1e6);
    const std::string udpPeriods = opt["udpPeriods"];
    if (udpPeriods != "fixed" && udpPeriods != "exponential")
    {
        BadArg("udpPeriods", udpPeriods, "fixed, exponential");
    }
    const std::string recordPath = opt["recordPath"];
    const std::string capacityTrace = opt["capacityTrace"];
    const std::string channelSource = opt["channelSource"];
    if (channelSource != "distance" && channelSource != "mahimahi" && channelSource != "irish5g"
        && channelSource != "synthetic")
    {
        BadArg("channelSource", channelSource, "distance, mahimahi, irish5g, synthetic");
    }
    if ((channelSource == "distance") != capacityTrace.empty())
    {
        BadArg("capacityTrace",
               capacityTrace,
               "a capacity file exactly when --channelSource is a trace source (now '"
                   + channelSource + "')");
    }
    const auto recvTimeoutMs = static_cast<int>(uintOpt("recvTimeoutMs", 0, 2'000'000'000));

    if (simSeed == 0)
    {
        std::cerr << "cellgym-lte: --simSeed=0 (ns3-gym's 'random') is taken as RngRun 1"
                  << std::endl;
        simSeed = 1;
    }
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
    const auto flowConfigs = ParseFlows(flowsSpec, numUes);

    // -- the run's draws (cellgym/draws.py; the fast model takes the same) ---------------------
    CellGymDraws::Expect drawsExpect;
    const std::vector<int> streamOfFlow = ParetoStreamOfFlows(flowConfigs, drawsExpect.streams);
    drawsExpect.rngRun = simSeed;
    drawsExpect.numFlows = static_cast<uint32_t>(flowConfigs.size());
    drawsExpect.numUes = numUes;
    drawsExpect.moves = mobility == "random"
                            ? static_cast<uint32_t>(std::floor(simTime / mobilityPeriodS + 1e-9))
                            : 0;
    drawsExpect.periodS = mobilityPeriodS;
    drawsExpect.minDistance = minDistance;
    drawsExpect.maxDistance = maxDistance;
    drawsExpect.udpExpSources = udpPeriods == "exponential" ? udpSources : 0;
    for (int k : streamOfFlow)
    {
        drawsExpect.paretoFlows.push_back(k >= 0);
    }
    const CellGymDraws draws = opt["draws"].empty() ? CellGymDraws::None()
                                                    : CellGymDraws::Load(opt["draws"], drawsExpect);
    draws.Needed(drawsExpect);

    // -- randomness: RngSeed fixed, RngRun from the seed (replications) ------------------------
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(simSeed);

    // -- defaults -------------------------------------------------------------------------------
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 * 1024 * 1024));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 * 1024 * 1024));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(false));

    // -- the cell: base station, core network, UEs (cellgym-radio-cell.h) ---------------------
    radioCfg.numUes = numUes;
    radioCfg.distances = ueDistances;
    radioCfg.rlcBufferPkts = rlcBufferPkts;
    radioCfg.xrcWindowTtis = xrcWindowTtis;
    radioCfg.activeTimeoutMs = activeTimeoutMs;
    radioCfg.capacityTrace = capacityTrace;
    RadioCell radio = cellType == "nr" ? BuildNrCell(radioCfg) : BuildLteCell(radioCfg);
    Ptr<Node> pgw = radio.pgw;
    NodeContainer& ueNodes = radio.ueNodes;
    Ipv4InterfaceContainer& ueIfaces = radio.ueIfaces;
    int64_t& stream = radio.stream;
    const std::vector<double>& angles = radio.angles;
    Cell cell;
    cell.numUes = numUes;
    cell.ueMobility = radio.ueMobility;
    InternetStackHelper internet;
    Ipv4StaticRoutingHelper routing;

    // -- wired side: servers -> router -> (bottleneck) -> PGW ----------------------------------
    NodeContainer router;
    router.Create(1);
    NodeContainer servers;
    servers.Create(flowConfigs.size());
    internet.Install(router);
    internet.Install(servers);

    PointToPointHelper core;
    core.SetDeviceAttribute(
        "DataRate",
        DataRateValue(DataRate(bottleneckMbps > 0 ? static_cast<uint64_t>(bottleneckMbps * 1e6)
                                                  : 100'000'000'000ULL)));
    core.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
    if (bottleneckMbps > 0)
    {
        // Drop-tail: the device queue is the buffer. RED: the queue disc is, and the device
        // holds the one packet being serialised.
        const uint32_t devicePkts = bottleneckQueue == "red" ? 1 : bottleneckBufferPkts;
        core.SetQueue("ns3::DropTailQueue<Packet>",
                      "MaxSize",
                      QueueSizeValue(QueueSize(std::to_string(devicePkts) + "p")));
    }
    NetDeviceContainer coreDevs = core.Install(router.Get(0), pgw);
    Ipv4AddressHelper addr;
    addr.SetBase("10.255.0.0", "255.255.255.252");
    Ipv4InterfaceContainer coreIfaces = addr.Assign(coreDevs);
    if (bottleneckMbps > 0)
    {
        // The drop-tail device queue is the bottleneck's buffer: remove the queue disc that
        // address assignment put in front of it.
        TrafficControlHelper().Uninstall(coreDevs.Get(0));
    }
    Ptr<QueueDisc> redQueue;
    if (bottleneckQueue == "red")
    {
        // RED (docs/xcp-rcp-fct/README.md): ns-3's RedQueueDisc with the scenario's
        // thresholds, gentle, count-spread drops without RED's extra wait (as the fast model),
        // 1500-byte mean packets, its idle decay at the link's rate.
        TrafficControlHelper tch;
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize",
                             QueueSizeValue(QueueSize(std::to_string(bottleneckBufferPkts) + "p")),
                             "MinTh",
                             DoubleValue(redMinThPkts),
                             "MaxTh",
                             DoubleValue(redMaxThPkts),
                             "LInterm",
                             DoubleValue(1.0 / redMaxP),
                             "QW",
                             DoubleValue(redWeight),
                             "Gentle",
                             BooleanValue(true),
                             "Wait",
                             BooleanValue(false),
                             "MeanPktSize",
                             UintegerValue(1500),
                             "LinkBandwidth",
                             DataRateValue(DataRate(static_cast<uint64_t>(bottleneckMbps * 1e6))),
                             "LinkDelay",
                             TimeValue(Seconds(0)));
        redQueue = tch.Install(coreDevs.Get(0)).Get(0);
    }
    if (!bottleneckLogPath.empty() && bottleneckMbps > 0)
    {
        auto log = std::make_shared<std::ofstream>(bottleneckLogPath);
        if (!*log)
        {
            BadArg("bottleneckLogPath", bottleneckLogPath, "a writable file path");
        }
        *log << "t_s,queue_pkts,early_drops,forced_drops\n";
        Ptr<Queue<Packet>> devQueue
            = DynamicCast<PointToPointNetDevice>(coreDevs.Get(0))->GetQueue();
        Simulator::Schedule(
            MilliSeconds(1), &LogBottleneck, log, redQueue, devQueue, MilliSeconds(1));
    }
    if (!bottleneckTrace.empty())
    {
        // The trace-driven link: a queue disc that releases packets to the fast router -> PGW
        // device only at the trace's delivery opportunities (cellgym-trace-link.h).
        TrafficControlHelper().Uninstall(coreDevs.Get(0));
        TrafficControlHelper tch;
        tch.SetRootQueueDisc("ns3::CellGymTraceQueueDisc",
                             "MaxSize",
                             QueueSizeValue(QueueSize(std::to_string(bottleneckBufferPkts) + "p")));
        QueueDiscContainer qdiscs = tch.Install(coreDevs.Get(0));
        DynamicCast<CellGymTraceQueueDisc>(qdiscs.Get(0))->SetSchedule(bottleneckSchedule);
    }
    Ptr<Ipv4StaticRouting> routerRouting
        = routing.GetStaticRouting(router.Get(0)->GetObject<Ipv4>());
    routerRouting->AddNetworkRouteTo(
        Ipv4Address("7.0.0.0"), Ipv4Mask("255.0.0.0"), coreIfaces.GetAddress(1), 1);
    routing.GetStaticRouting(pgw->GetObject<Ipv4>())
        ->AddNetworkRouteTo(Ipv4Address("1.0.0.0"),
                            Ipv4Mask("255.0.0.0"),
                            coreIfaces.GetAddress(0),
                            pgw->GetObject<Ipv4>()->GetInterfaceForDevice(coreDevs.Get(1)));

    // -- XCP's or RCP's router at the wired bottleneck (docs/explicit-feedback.md) -------------
    const bool anyXcp = std::any_of(flowConfigs.begin(),
                                    flowConfigs.end(),
                                    [](const auto& f)
                                    {
                                        return f.cca == "xcp" || f.cca == "xcpr";
                                    });
    const bool anyRcp = std::any_of(flowConfigs.begin(),
                                    flowConfigs.end(),
                                    [](const auto& f)
                                    {
                                        return f.cca == "rcp";
                                    });
    if (anyXcp && anyRcp)
    {
        BadArg("flows",
               flowsSpec,
               "XCP and RCP flows cannot share the bottleneck: all xcp or all rcp");
    }
    WiredRouter wiredRouter;
    for (const auto& fc : flowConfigs)
    {
        if (fc.cca == "xcpr")
        {
            wiredRouter.xcprFlows.insert(fc.flowId);
        }
    }
    const auto knobs = anyXcp ? xcpKnobs : rcpKnobs;
    const auto kind = anyXcp ? CellGymExplicitRouter::Kind::XCP : CellGymExplicitRouter::Kind::RCP;
    if ((anyXcp || anyRcp) && bottleneckMbps > 0)
    {
        wiredRouter.router = CreateObject<CellGymExplicitRouter>();
        wiredRouter.router->Configure(kind, knobs);
        Ptr<PointToPointNetDevice> bnDev = DynamicCast<PointToPointNetDevice>(coreDevs.Get(0));
        Ptr<Queue<Packet>> bnQueue = bnDev->GetQueue();
        const double capBytesPerMs = bottleneckMbps * 1e6 / 8 / 1e3;
        wiredRouter.router->Start(
            [capBytesPerMs]()
            {
                return capBytesPerMs;
            },
            [bnQueue, redQueue]()
            {
                const uint32_t qd = redQueue ? redQueue->GetNBytes() : 0;
                return static_cast<double>(bnQueue->GetNBytes() + qd);
            });
        bnDev->TraceConnectWithoutContext("MacTx",
                                          MakeBoundCallback(&OnBottleneckTx, &wiredRouter));
        bnDev->TraceConnectWithoutContext("PhyRxEnd",
                                          MakeBoundCallback(&OnBottleneckAck, &wiredRouter));
    }
    if ((anyXcp || anyRcp) && !bottleneckTrace.empty())
    {
        // The trace-driven link: packets count as they join its queue disc, each one delivery
        // opportunity (kTracePacketBytes); the capacity is the opportunities of each ms.
        wiredRouter.router = CreateObject<CellGymExplicitRouter>();
        wiredRouter.router->Configure(kind, knobs);
        wiredRouter.router->SetCapacityPerTick(true);
        Ptr<QueueDisc> qdisc = coreDevs.Get(0)
                                   ->GetNode()
                                   ->GetObject<TrafficControlLayer>()
                                   ->GetRootQueueDiscOnDevice(coreDevs.Get(0));
        const auto perMs = bottleneckSchedule.perMs;
        wiredRouter.router->Start(
            [perMs]()
            {
                // The tick that ends now covers the ms before it.
                const auto ms = static_cast<uint64_t>(Simulator::Now().GetMilliSeconds() - 1);
                return static_cast<double>(perMs[ms % perMs.size()]) * kTracePacketBytes;
            },
            [qdisc]()
            {
                return static_cast<double>(qdisc->GetNPackets()) * kTracePacketBytes;
            });
        qdisc->TraceConnectWithoutContext("Enqueue",
                                          MakeBoundCallback(&OnTraceLinkEnqueue, &wiredRouter));
        coreDevs.Get(0)->TraceConnectWithoutContext(
            "PhyRxEnd", MakeBoundCallback(&OnBottleneckAck, &wiredRouter));
    }

    // -- the XRC agent ----------------------------------------------------------------------------
    radio.installAgent(radio);
    cell.agent = radio.agent;

    // -- without a wired bottleneck: XCP's or RCP's router per UE at the base station, its queue
    // the UE's RLC buffer, its capacity the XRC agent's estimate (docs/explicit-feedback.md) ---
    std::vector<Ptr<CellGymExplicitRouter>> ueRouters;
    if ((anyXcp || anyRcp) && bottleneckMbps <= 0 && bottleneckTrace.empty())
    {
        std::vector<uint32_t> ueOfFlow(flowConfigs.size(), 0);
        for (const auto& fc : flowConfigs)
        {
            ueOfFlow[fc.flowId] = fc.ue;
        }
        Ptr<XrcEnbAgent> agent = cell.agent;
        for (uint32_t u = 0; u < numUes; ++u)
        {
            Ptr<CellGymExplicitRouter> r = CreateObject<CellGymExplicitRouter>();
            r->Configure(kind, knobs);
            r->Start(
                [agent, u]()
                {
                    return agent->GetCapacityBytesPerMs(u);
                },
                [agent, u]()
                {
                    return agent->GetRlcBytes(u);
                });
            ueRouters.push_back(r);
        }
        agent->AddPacketHooks(
            [&ueRouters, ueOfFlow, &wiredRouter](uint32_t flow, double bytes, Ptr<const Packet> p)
            {
                ExplicitHeaderTag hdr;
                const bool hasHdr = p->PeekPacketTag(hdr);
                ueRouters[ueOfFlow[flow]]->OnPacket(flow, bytes, hasHdr ? &hdr : nullptr);
                // XCP-r: the values its header would carry on to the UE (cellgym-xcpr-receiver.h).
                XcprHeaderTag flag;
                TcpHeader tcp;
                if (hasHdr && wiredRouter.xcprFlows.count(flow) > 0 && p->PeekPacketTag(flag)
                    && CellGymXcprPath::InnerTcp(p, tcp))
                {
                    wiredRouter.xcpr.OnRouterData(
                        flow,
                        tcp.GetSequenceNumber().GetValue(),
                        ueRouters[ueOfFlow[flow]]->FeedbackOf(flow).xcpTotalBytes,
                        hdr.cwndBytes,
                        flag.epoch,
                        hdr.segBytes);
                }
            },
            [&ueRouters, ueOfFlow, &wiredRouter](uint32_t flow, Ptr<const Packet> p)
            {
                ExplicitFeedbackTag old;
                if (!p->PeekPacketTag(old))
                {
                    p->AddPacketTag(ueRouters[ueOfFlow[flow]]->FeedbackOf(flow));
                }
                TcpHeader tcp;
                XcprWindowTag window;
                if (wiredRouter.xcprFlows.count(flow) > 0 && !p->PeekPacketTag(window)
                    && CellGymXcprPath::InnerTcp(p, tcp)
                    && wiredRouter.xcpr.WindowOfAck(flow, tcp.GetAckNumber().GetValue(), window))
                {
                    p->AddPacketTag(window); // XCP-r: the receiver's window, on the ACK it sent
                }
            });
    }

    // -- Pareto flow streams: the pareto flows with the same ue, cca, delay and pareto_* values
    // are the slots of one stream (cellgym-pareto-stream.h) --------------------------------------
    std::vector<Ptr<CellGymParetoStream>> paretoStreams(drawsExpect.streams);
    std::vector<double> streamFirstS(drawsExpect.streams, 1e300);
    std::shared_ptr<std::ofstream> flowLog;
    if (!opt["flowLogPath"].empty())
    {
        flowLog = std::make_shared<std::ofstream>(opt["flowLogPath"]);
        if (!*flowLog)
        {
            BadArg("flowLogPath", opt["flowLogPath"], "a writable file path");
        }
        *flowLog << "cell,stream,slot,size_pkts,arrival_ms,start_ms,done_ms,fct_s\n";
        *flowLog << std::setprecision(10);
    }

    // -- flows ------------------------------------------------------------------------------------
    std::vector<Ptr<CellGymAckLossModel>> ackLossModels;
    for (const auto& fc : flowConfigs)
    {
        Ptr<Node> server = servers.Get(fc.flowId);
        PointToPointHelper link;
        link.SetDeviceAttribute("DataRate", DataRateValue(DataRate("100Gbps")));
        link.SetChannelAttribute(
            "Delay",
            TimeValue(MicroSeconds(static_cast<int64_t>((serverDelayMs + fc.delayMs) * 1000))));
        NetDeviceContainer devs = link.Install(server, router.Get(0));
        if (ackLoss > 0)
        {
            // The reverse path's ACK loss, after the router (docs/xcp-r.md "ns-3").
            Ptr<CellGymAckLossModel> loss = CreateObject<CellGymAckLossModel>();
            loss->Setup(ackLoss, stream++);
            devs.Get(0)->SetAttribute("ReceiveErrorModel", PointerValue(loss));
            ackLossModels.push_back(loss);
        }
        std::ostringstream base;
        base << "1." << (fc.flowId / 250) << "." << (fc.flowId % 250) << ".0";
        addr.SetBase(base.str().c_str(), "255.255.255.252");
        Ipv4InterfaceContainer ifaces = addr.Assign(devs);
        routing.GetStaticRouting(server->GetObject<Ipv4>())
            ->SetDefaultRoute(ifaces.GetAddress(1), 1);
        routerRouting->AddHostRouteTo(
            ifaces.GetAddress(0),
            ifaces.GetAddress(0),
            router.Get(0)->GetObject<Ipv4>()->GetInterfaceForDevice(devs.Get(1)));

        const uint16_t port = kBasePort + fc.flowId;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sink = sinkHelper.Install(ueNodes.Get(fc.ue));
        sink.Start(Seconds(0));

        Ptr<CellGymSenderApp> app = CreateObject<CellGymSenderApp>();
        app->Setup(fc, InetSocketAddress(ueIfaces.GetAddress(fc.ue), port));
        server->AddApplication(app);
        // A UE's attach and bearer set-up take tens of ms: data sent earlier is lost and the
        // SYN waits 3 s for its retry. Flows therefore start no earlier than kAttachS.
        // The start offset is the run's draw (--draws; 0 for a pareto slot).
        double start = std::max(fc.startS, kAttachS) + draws.StartOffsetS(fc.flowId);
        if (const int k = streamOfFlow[fc.flowId]; k >= 0)
        {
            // A slot is ready at the stream's start; the arrivals are the randomness.
            if (!paretoStreams[k])
            {
                const auto& arrivals = draws.ParetoStream(k);
                paretoStreams[k] = CreateObject<CellGymParetoStream>();
                paretoStreams[k]->Configure(k, arrivals.afterMs, arrivals.sizePkts);
                paretoStreams[k]->SetLog(flowLog);
            }
            paretoStreams[k]->AddSlot(app);
            streamFirstS[k] = std::min(streamFirstS[k], start);
        }
        app->SetStartTime(Seconds(start));
        if (fc.stopS >= 0)
        {
            app->SetStopTime(Seconds(std::max(fc.stopS, start)));
        }
        sink.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSinkRx, app));
        cell.agent->AddFlow(fc.flowId, fc.ue, ifaces.GetAddress(0));
        wiredRouter.flowOf[ifaces.GetAddress(0)] = fc.flowId;
        cell.senders.push_back(app);
        if (fc.cca == "agent")
        {
            cell.agentFlows.push_back(fc.flowId);
            cell.agentOps.push_back(app->GetAgentOps());
        }
    }

    // -- XCP-r's receivers: the UEs' IP layers read the data segments and send the ACKs -------
    if (!wiredRouter.xcprFlows.empty())
    {
        for (uint32_t u = 0; u < numUes; ++u)
        {
            Ptr<Ipv4L3Protocol> ip = ueNodes.Get(u)->GetObject<Ipv4L3Protocol>();
            ip->TraceConnectWithoutContext(
                "LocalDeliver",
                Callback<void, const Ipv4Header&, Ptr<const Packet>, uint32_t>(
                    [&wiredRouter](const Ipv4Header& h, Ptr<const Packet> p, uint32_t)
                    {
                        TcpHeader tcp;
                        if (h.GetProtocol() != 6 || p->PeekHeader(tcp) == 0)
                        {
                            return;
                        }
                        const uint32_t flow = tcp.GetDestinationPort() - kBasePort;
                        if (wiredRouter.xcprFlows.count(flow) > 0
                            && p->GetSize() > tcp.GetSerializedSize())
                        {
                            wiredRouter.xcpr.OnReceiverData(flow,
                                                            tcp.GetSequenceNumber().GetValue());
                        }
                    }));
            ip->TraceConnectWithoutContext(
                "SendOutgoing",
                Callback<void, const Ipv4Header&, Ptr<const Packet>, uint32_t>(
                    [&wiredRouter](const Ipv4Header& h, Ptr<const Packet> p, uint32_t)
                    {
                        uint32_t flow = 0;
                        TcpHeader tcp;
                        if (UeAckOf(h, p, flow, tcp) && wiredRouter.xcprFlows.count(flow) > 0)
                        {
                            wiredRouter.xcpr.OnReceiverAck(flow, tcp.GetAckNumber().GetValue());
                        }
                    }));
        }
    }

    // -- PBE-CC: every UE's monitor decodes the scheduler's allocations of each TTI (the XRC
    // agent's view of them); the UE stamps its rate on the ACKs it sends, and the base station
    // puts it on them as they leave for the server (cellgym-pbe-monitor.h) ---------------------
    std::set<uint32_t> pbeFlows;
    for (const auto& fc : flowConfigs)
    {
        if (fc.cca == "pbecc")
        {
            pbeFlows.insert(fc.flowId);
        }
    }
    std::shared_ptr<CellGymPbeMonitor> pbeMonitor;
    if (!pbeFlows.empty())
    {
        PbeMonitorKnobs pk;
        pk.slotsPerMs = 1e-3 / cell.agent->GetTti().GetSeconds();
        pbeMonitor = std::make_shared<CellGymPbeMonitor>(numUes, pk);
        auto allocs = std::make_shared<std::vector<PbeSlotAllocation>>(numUes);
        cell.agent->SetTtiHook(
            [pbeMonitor, allocs](const std::vector<XrcEnbAgent::TtiAllocation>& tti, double usable)
            {
                for (size_t u = 0; u < tti.size(); ++u)
                {
                    (*allocs)[u] = PbeSlotAllocation{
                        tti[u].newRbs, tti[u].newBytes, tti[u].retxRbs, tti[u].fullBytes};
                }
                pbeMonitor->OnSlot(*allocs, usable);
            });
        Ptr<XrcEnbAgent> agent = cell.agent;
        for (uint32_t u = 0; u < numUes; ++u)
        {
            ueNodes.Get(u)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
                "SendOutgoing",
                Callback<void, const Ipv4Header&, Ptr<const Packet>, uint32_t>(
                    [pbeMonitor, agent, pbeFlows](
                        const Ipv4Header& h, Ptr<const Packet> p, uint32_t)
                    {
                        uint32_t flow = 0;
                        TcpHeader tcp;
                        if (UeAckOf(h, p, flow, tcp) && pbeFlows.count(flow) > 0)
                        {
                            const double bps = pbeMonitor->FlowRateBps(
                                agent->GetFlowUe(flow), agent->GetUeActiveFlows(flow));
                            pbeMonitor->OnUeAck(flow, tcp.GetAckNumber().GetValue(), bps);
                        }
                    }));
        }
        agent->AddPacketHooks(
            nullptr,
            [pbeMonitor, pbeFlows](uint32_t flow, Ptr<const Packet> p)
            {
                TcpHeader tcp;
                PbeRateTag tag;
                if (pbeFlows.count(flow) > 0 && !p->PeekPacketTag(tag)
                    && CellGymXcprPath::InnerTcp(p, tcp)
                    && pbeMonitor->RateOfAck(flow, tcp.GetAckNumber().GetValue(), tag.rateBps))
                {
                    p->AddPacketTag(tag);
                }
            });
    }

    // -- ON/OFF UDP sources through the wired bottleneck, their sinks at the PGW (beyond it) ---
    std::vector<Ptr<CellGymUdpOnOff>> udpApps;
    std::vector<uint64_t> udpReceived(udpSources, 0);
    if (udpSources > 0 && bottleneckMbps <= 0 && bottleneckTrace.empty())
    {
        BadArg("udpSources",
               std::to_string(udpSources),
               "0 without a wired bottleneck (--bottleneckMbps or --bottleneckTrace)");
    }
    for (uint32_t k = 0; k < udpSources; ++k)
    {
        Ptr<Node> src = CreateObject<Node>();
        internet.Install(src);
        PointToPointHelper link;
        link.SetDeviceAttribute("DataRate", DataRateValue(DataRate("100Gbps")));
        link.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
        NetDeviceContainer devs = link.Install(src, router.Get(0));
        std::ostringstream base;
        base << "2." << (k / 250) << "." << (k % 250) << ".0";
        addr.SetBase(base.str().c_str(), "255.255.255.252");
        Ipv4InterfaceContainer ifaces = addr.Assign(devs);
        routing.GetStaticRouting(src->GetObject<Ipv4>())->SetDefaultRoute(ifaces.GetAddress(1), 1);
        const uint16_t port = kUdpBasePort + k;
        PacketSinkHelper sinkHelper("ns3::UdpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sink = sinkHelper.Install(pgw);
        sink.Start(Seconds(0));
        sink.Get(0)->TraceConnectWithoutContext(
            "Rx",
            Callback<void, Ptr<const Packet>, const Address&>(
                [&udpReceived, k](Ptr<const Packet> p, const Address&)
                {
                    udpReceived[k] += p->GetSize() + 28; // + the UDP and IP headers
                }));
        Ptr<CellGymUdpOnOff> app = CreateObject<CellGymUdpOnOff>();
        app->Setup(InetSocketAddress(coreIfaces.GetAddress(1), port),
                   udpRateMbps,
                   udpOnS,
                   udpOffS,
                   udpPeriods == "exponential" ? draws.UdpPeriods(k) : std::vector<double>{});
        src->AddApplication(app);
        app->SetStartTime(Seconds(udpStartS));
        udpApps.push_back(app);
    }

    for (size_t i = 0; i < paretoStreams.size(); ++i)
    {
        paretoStreams[i]->Start(Seconds(streamFirstS[i]));
    }

    if (mobility == "random")
    {
        // Each UE moves to its drawn distances (--draws) every period.
        for (uint32_t u = 0; u < numUes; ++u)
        {
            Simulator::Schedule(Seconds(mobilityPeriodS),
                                &MoveUe,
                                cell.ueMobility[u],
                                &draws.Moves(u),
                                size_t{0},
                                angles[u],
                                Seconds(mobilityPeriodS));
        }
    }

    // -- the step loop --------------------------------------------------------------------------
    cell.stepS = stepMs / 1000.0;
    cell.simTimeS = simTime;
    cell.obs[0].shape = {static_cast<uint32_t>(flowConfigs.size()) * kFlowFields};
    cell.obs[0].data.assign(flowConfigs.size() * kFlowFields, 0.0);
    cell.obs[1].shape = {numUes * kUeFields};
    cell.obs[1].data.assign(numUes * kUeFields, 0.0);
    if (!recordPath.empty())
    {
        cell.record.open(recordPath);
        if (!cell.record)
        {
            BadArg("recordPath", recordPath, "a writable file path");
        }
        cell.record << "t,kind,index";
        for (uint32_t c = 0; c < kFlowFields; ++c)
        {
            cell.record << ',' << kFlowFieldNames[c];
        }
        cell.record << '\n';
        cell.record << std::setprecision(10);
    }
    if (openGymPort > 0)
    {
        cell.bridge = std::make_unique<cellgym::OpenGymBridge>(openGymPort, recvTimeoutMs);
    }
    if (!opt["fixedAction"].empty())
    {
        const std::string text = opt["fixedAction"];
        const auto comma = text.find(',');
        if (comma == std::string::npos || openGymPort > 0)
        {
            BadArg("fixedAction",
                   text,
                   "'cwnd_bytes,pacing_rate_mbps', only without the bridge (--openGymPort=0)");
        }
        cell.fixedAction = {ParseDouble("fixedAction", text.substr(0, comma), 0, kActionHigh),
                            ParseDouble("fixedAction", text.substr(comma + 1), 0, kActionHigh)};
    }
    Simulator::Schedule(Seconds(0), &StepEvent, &cell);
    Simulator::Stop(Seconds(simTime + 10 * cell.stepS));
    Simulator::Run();
    // When each flow's application started (the drawn offset applied; cellgym.draws).
    for (const auto& app : cell.senders)
    {
        std::cerr << "cellgym-lte: flow_start flow=" << app->FlowId()
                  << " start_s=" << std::setprecision(12) << app->StartedAtS() << '\n';
    }
    // What the reverse path lost and what the UDP sources sent and got through (on stderr).
    if (!ackLossModels.empty())
    {
        uint64_t seen = 0;
        uint64_t dropped = 0;
        for (const auto& m : ackLossModels)
        {
            seen += m->GetSeen();
            dropped += m->GetDropped();
        }
        std::cerr << "cellgym-lte: ack_loss acks=" << seen << " dropped=" << dropped << '\n';
    }
    if (wiredRouter.router && anyXcp)
    {
        // The feedback the router handed each flow (payload bytes; the ACKs' running total).
        for (const auto& [server, flow] : wiredRouter.flowOf)
        {
            std::cerr << "cellgym-lte: xcp_feedback flow=" << flow
                      << " total_bytes=" << wiredRouter.router->FeedbackOf(flow).xcpTotalBytes
                      << '\n';
        }
    }
    for (uint32_t k = 0; k < udpApps.size(); ++k)
    {
        std::cerr << "cellgym-lte: udp source=" << k << " on_s=" << udpApps[k]->GetOnSeconds()
                  << " sent_bytes=" << udpApps[k]->GetSentBytes()
                  << " received_bytes=" << udpReceived[k] << '\n';
    }
    Simulator::Destroy();
    return 0;
}
