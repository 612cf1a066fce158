// SPDX-License-Identifier: GPL-2.0-only
/**
 * @file
 * Standalone check of the XRC base-station agent (XrcEnbAgent).
 *
 * One eNB (50 RBs by default, EPC, PF scheduler, Okumura-Hata path loss, RLC UM with an explicit
 * MaxTxBufferSize), one UE at a configurable distance, one or more bulk TCP (CUBIC) downloads from
 * remote hosts 15 ms (one way) behind the PGW, each host its own flow. Every `--printMs` the
 * program prints the agent's capacity estimate, each flow's explicit rate C_i, its delivered rate
 * (PacketSink), the RLC HoL delay and queue, and the feedback tags seen at the server (byte tag at
 * the server's IPv4 layer, packet tag at its TCP socket's "Rx" trace). A summary over the steady
 * state (from `--steadyFromS`) closes the output.
 *
 *   cellgym-xrc-agent-check --distance=100 --flows=1
 *   cellgym-xrc-agent-check --distance=300 --flows=2 --rlcBufferPkts=1000
 */

#include "cellgym-bs-tap-lte.h"
#include "xrc-enb-agent.h"
#include "xrc-feedback-tag.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/lte-module.h"
#include "ns3/lte-rlc-sdu-status-tag.h"
#include "ns3/mobility-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <vector>

using namespace ns3;

NS_LOG_COMPONENT_DEFINE("CellGymXrcAgentCheck");

namespace
{

constexpr double kEnbHeightM = 30.0;  //!< eNB antenna height (Okumura-Hata)
constexpr double kUeHeightM = 1.5;    //!< UE antenna height
constexpr uint16_t kBasePort = 10000; //!< UE port of flow 0

/// What the check records about one flow.
struct FlowProbe
{
    Ptr<PacketSink> sink;         //!< the flow's sink at the UE
    Ptr<BulkSendApplication> app; //!< the flow's sender
    uint64_t lastRxBytes{0};      //!< sink total at the previous print
    double rateSumMbps{0};        //!< sum of the agent's C_i sampled every ms in the interval
    uint32_t rateSamples{0};      //!< samples in that sum
    uint32_t acks{0};             //!< TCP segments received by the server (interval)
    uint32_t acksByteTag{0};      //!< of those, carrying the byte tag at the server's IP layer
    uint32_t acksPacketTag{0};    //!< of those, carrying the packet tag at the TCP socket
    uint32_t totalAcks{0};        //!< TCP segments received by the server (run)
    uint32_t totalByteTag{0};     //!< with the byte tag (run)
    uint32_t totalPacketTag{0};   //!< with the packet tag (run)
    XrcFeedbackTag lastTag;       //!< latest packet tag seen at the TCP socket
    double tagAgeSumMs{0};        //!< sum of (arrival - stamp) of the packet tags (run)
    // steady-state sums
    double ssRate{0};        //!< sum of interval-mean C_i
    double ssDelivered{0};   //!< sum of interval delivered rates
    uint32_t ssIntervals{0}; //!< intervals summed
};

/// Everything the periodic callbacks need.
struct Check
{
    Ptr<CellGymBsTap> tap;        //!< the base station's tap
    Ptr<XrcEnbAgent> agent;       //!< the agent under test
    std::vector<FlowProbe> flows; //!< one per flow
    Time printEvery;              //!< print interval
    double steadyFromS{2};        //!< steady state starts here
    double ssCapacity{0};         //!< sum of interval capacities in the steady state
    double ssHolMax{0};           //!< max HoL in the steady state, ms
    double ssHolSum{0};           //!< sum of interval-latest HoL values
    uint32_t ssIntervals{0};      //!< steady-state intervals
    uint32_t drops{0};            //!< agent's tail drops (run)
    uint32_t rawTxDrops{0};       //!< RLC TxDrop trace firings (run)
    uint32_t checkedTailDrops{0}; //!< of those, packets the RLC did not queue after all (run)
    std::ofstream csv;            //!< optional per-interval record
};

void
SampleRates(Check* c)
{
    for (uint32_t f = 0; f < c->flows.size(); ++f)
    {
        c->flows[f].rateSumMbps += c->agent->GetFlowRateMbps(f);
        c->flows[f].rateSamples += 1;
    }
    Simulator::Schedule(MilliSeconds(1), &SampleRates, c);
}

void
OnServerIpRx(FlowProbe* f, Ptr<const Packet> packet, Ptr<Ipv4> ipv4, uint32_t iface)
{
    Ipv4Header ip;
    packet->PeekHeader(ip);
    if (ip.GetProtocol() != 6)
    {
        return;
    }
    XrcFeedbackTag tag;
    f->acks += 1;
    f->totalAcks += 1;
    if (packet->FindFirstMatchingByteTag(tag))
    {
        f->acksByteTag += 1;
        f->totalByteTag += 1;
    }
}

void
OnServerTcpRx(FlowProbe* f,
              Ptr<const Packet> packet,
              const TcpHeader& header,
              Ptr<const TcpSocketBase> socket)
{
    XrcFeedbackTag tag;
    if (packet->PeekPacketTag(tag))
    {
        f->acksPacketTag += 1;
        f->totalPacketTag += 1;
        f->lastTag = tag;
        f->tagAgeSumMs += (Simulator::Now().GetSeconds() - tag.stampS) * 1e3;
    }
}

void
ConnectServerSocket(FlowProbe* f)
{
    Ptr<TcpSocketBase> socket = DynamicCast<TcpSocketBase>(f->app->GetSocket());
    NS_ABORT_MSG_IF(!socket, "the bulk sender has no TCP socket yet");
    socket->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnServerTcpRx, f));
}

/// Cross-check of the agent's drop count, by another route: once the RLC call that fired TxDrop
/// has returned, a packet it queued anyway (PDCP discard timer) carries an LteRlcSduStatusTag.
void
JudgeTxDrop(Check* c, Ptr<const Packet> packet)
{
    LteRlcSduStatusTag status;
    if (!packet->PeekPacketTag(status))
    {
        c->checkedTailDrops += 1;
    }
}

void
OnRlcTxDrop(Check* c, Ptr<const Packet> packet)
{
    c->rawTxDrops += 1;
    Simulator::ScheduleNow(&JudgeTxDrop, c, packet);
}

void
ConnectRawDrops(Check* c)
{
    Config::ConnectWithoutContextFailSafe(
        "/NodeList/*/DeviceList/*/LteEnbRrc/UeMap/*/DataRadioBearerMap/*/LteRlc/TxDrop",
        MakeBoundCallback(&OnRlcTxDrop, c));
}

void
Print(Check* c)
{
    const double t = Simulator::Now().GetSeconds();
    const double dt = c->printEvery.GetSeconds();
    const XrcUeStepStats s = c->agent->TakeStepStats(0);
    c->drops += s.rlcDrops;
    const bool steady = t > c->steadyFromS + 1e-9;
    std::printf("%6.2f C=%6.2f tx=%6.2f hol=%4.0f holMax=%4.0f rlcB=%7.0f drops=%3u",
                t,
                s.capacityMbps,
                s.txMbps,
                s.holMs,
                s.holMaxMs,
                s.rlcBytes,
                s.rlcDrops);
    if (c->csv.is_open())
    {
        c->csv << t << "," << s.capacityMbps << "," << s.txMbps << "," << s.holMs << ","
               << s.holMaxMs << "," << s.rlcBytes << "," << s.rlcDrops;
    }
    for (uint32_t i = 0; i < c->flows.size(); ++i)
    {
        FlowProbe& f = c->flows[i];
        const uint64_t rx = f.sink->GetTotalRx();
        const double delivered = (rx - f.lastRxBytes) * 8.0 / dt / 1e6;
        f.lastRxBytes = rx;
        const double rate = f.rateSamples > 0 ? f.rateSumMbps / f.rateSamples : 0;
        std::printf(" | f%u Ci=%6.2f dlv=%6.2f tag(rate=%6.2f hol=%4.0f) acks=%3u byteTag=%3u "
                    "pktTag=%3u",
                    i,
                    rate,
                    delivered,
                    f.lastTag.rateMbps,
                    f.lastTag.holMs,
                    f.acks,
                    f.acksByteTag,
                    f.acksPacketTag);
        if (c->csv.is_open())
        {
            c->csv << "," << rate << "," << delivered << "," << f.lastTag.rateMbps << ","
                   << f.lastTag.holMs << "," << f.acks << "," << f.acksByteTag << ","
                   << f.acksPacketTag;
        }
        if (steady)
        {
            f.ssRate += rate;
            f.ssDelivered += delivered;
            f.ssIntervals += 1;
        }
        f.rateSumMbps = 0;
        f.rateSamples = 0;
        f.acks = f.acksByteTag = f.acksPacketTag = 0;
    }
    std::printf("\n");
    if (c->csv.is_open())
    {
        c->csv << "\n";
    }
    if (steady)
    {
        c->ssCapacity += s.capacityMbps;
        c->ssHolMax = std::max(c->ssHolMax, s.holMaxMs);
        c->ssHolSum += s.holMs;
        c->ssIntervals += 1;
    }
    Simulator::Schedule(c->printEvery, &Print, c);
}

/// The program's options (CommandLine).
struct CheckOptions
{
    double distance{100};         //!< UE distance from the eNB, m
    uint32_t numFlows{1};         //!< bulk CUBIC downloads
    double simTime{10};           //!< simulated time, s
    uint32_t rlcBufferPkts{128};  //!< RLC UM transmit buffer, 1500-B packets
    uint32_t rbs{50};             //!< bandwidth, RBs
    double serverDelayMs{15};     //!< one-way delay server <-> PGW, ms
    uint32_t printMs{100};        //!< print interval, ms
    uint32_t windowTtis{40};      //!< agent capacity window, TTIs
    double activeTimeoutMs{200};  //!< flow activity timeout, ms
    double steadyFromS{3};        //!< the summary averages intervals after this, s
    double secondFlowStartS{0.5}; //!< start of flows after the first, s
    double secondFlowStopS{0};    //!< stop of flows after the first, s (0: never)
    std::string csvPath;          //!< optional per-interval CSV file
    bool keyByPort{false};        //!< declare flows by UE address and port
    uint32_t sndBufKb{4096};      //!< TCP send buffer, KiB
};

/// The LTE cell under check: one eNB, one UE, EPC.
struct CheckCell
{
    Ptr<LteHelper> lte;              //!< LTE helper
    Ptr<PointToPointEpcHelper> epc;  //!< EPC helper (alive until the end)
    NodeContainer ueNodes;           //!< the UE
    NetDeviceContainer enbDevs;      //!< the eNB's device
    NetDeviceContainer ueDevs;       //!< the UE's device
    Ipv4InterfaceContainer ueIfaces; //!< the UE's address
    Ptr<NetDevice> s1u;              //!< the eNB's S1-U device
};

/// @return the options from the command line
CheckOptions
ParseOptions(int argc, char* argv[])
{
    CheckOptions o;
    CommandLine cmd(__FILE__);
    cmd.AddValue("distance", "UE distance from the eNB, m", o.distance);
    cmd.AddValue("flows", "bulk CUBIC downloads to the UE (each from its own server)", o.numFlows);
    cmd.AddValue("simTime", "simulated time, s", o.simTime);
    cmd.AddValue("rlcBufferPkts", "RLC UM transmit buffer, packets of 1500 B", o.rlcBufferPkts);
    cmd.AddValue("rbs", "downlink and uplink bandwidth, RBs", o.rbs);
    cmd.AddValue("serverDelayMs", "one-way delay server <-> PGW, ms", o.serverDelayMs);
    cmd.AddValue("printMs", "print interval, ms", o.printMs);
    cmd.AddValue("windowTtis", "agent capacity window, TTIs", o.windowTtis);
    cmd.AddValue("activeTimeoutMs", "agent flow activity timeout, ms", o.activeTimeoutMs);
    cmd.AddValue("steadyFromS", "the summary averages intervals after this time, s", o.steadyFromS);
    cmd.AddValue("secondFlowStartS", "start of flows after the first, s", o.secondFlowStartS);
    cmd.AddValue(
        "secondFlowStopS", "stop of flows after the first, s (0: never)", o.secondFlowStopS);
    cmd.AddValue("sndBufKb", "TCP send buffer, KiB (a stopped flow drains it first)", o.sndBufKb);
    cmd.AddValue("csv", "optional per-interval CSV file", o.csvPath);
    cmd.AddValue("keyByPort",
                 "declare flows to the agent by UE address and port, not by server address",
                 o.keyByPort);
    cmd.Parse(argc, argv);

    return o;
}

/// ns-3's defaults for the check: RLC UM, powers, CUBIC, TCP buffers.
void
ConfigureDefaults(const CheckOptions& o)
{
    Config::SetDefault("ns3::LteEnbRrc::EpsBearerToRlcMapping",
                       EnumValue(LteEnbRrc::RLC_UM_ALWAYS));
    Config::SetDefault("ns3::LteRlcUm::MaxTxBufferSize", UintegerValue(o.rlcBufferPkts * 1500));
    Config::SetDefault("ns3::LteUePhy::TxPower", DoubleValue(23.0));
    Config::SetDefault("ns3::LteEnbPhy::TxPower", DoubleValue(30.0));
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpCubic::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(o.sndBufKb * 1024));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 * 1024 * 1024));
}

/// The eNB and the UE at `distance`, attached, with their EPC; the eNB's S1-U device.
CheckCell
BuildCell(const CheckOptions& o)
{
    CheckCell c;
    c.lte = CreateObject<LteHelper>();
    c.epc = CreateObject<PointToPointEpcHelper>();
    Ptr<LteHelper> lte = c.lte;
    Ptr<PointToPointEpcHelper> epc = c.epc;
    lte->SetEpcHelper(epc);
    lte->SetSchedulerType("ns3::PfFfMacScheduler");
    lte->SetAttribute("PathlossModel", StringValue("ns3::OkumuraHataPropagationLossModel"));
    lte->SetEnbDeviceAttribute("DlBandwidth", UintegerValue(o.rbs));
    lte->SetEnbDeviceAttribute("UlBandwidth", UintegerValue(o.rbs));
    CellGymLteBsTap::ConfigureLteHelper(lte);

    NodeContainer enbNodes;
    enbNodes.Create(1);
    NodeContainer& ueNodes = c.ueNodes;
    ueNodes.Create(1);
    MobilityHelper mob;
    mob.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mob.Install(enbNodes);
    mob.Install(ueNodes);
    enbNodes.Get(0)->GetObject<MobilityModel>()->SetPosition(Vector(0, 0, kEnbHeightM));
    ueNodes.Get(0)->GetObject<MobilityModel>()->SetPosition(Vector(o.distance, 0, kUeHeightM));

    c.enbDevs = lte->InstallEnbDevice(enbNodes);
    c.ueDevs = lte->InstallUeDevice(ueNodes);
    InternetStackHelper internet;
    internet.Install(ueNodes);
    c.ueIfaces = epc->AssignUeIpv4Address(c.ueDevs);
    Ipv4StaticRoutingHelper routing;
    routing.GetStaticRouting(ueNodes.Get(0)->GetObject<Ipv4>())
        ->SetDefaultRoute(epc->GetUeDefaultGatewayAddress(), 1);
    lte->Attach(c.ueDevs, c.enbDevs.Get(0));

    // The eNB's first point-to-point device is its S1-U link.
    Ptr<Node> enbNode = enbNodes.Get(0);
    for (uint32_t i = 0; i < enbNode->GetNDevices() && !c.s1u; ++i)
    {
        if (DynamicCast<PointToPointNetDevice>(enbNode->GetDevice(i)))
        {
            c.s1u = enbNode->GetDevice(i);
        }
    }
    NS_ABORT_MSG_IF(!c.s1u, "no S1-U device on the eNB");
    return c;
}

/// The tap on the eNB and the agent on the tap.
void
InstallAgent(Check& check, const CheckCell& c, const CheckOptions& o)
{
    check.printEvery = MilliSeconds(o.printMs);
    check.steadyFromS = o.steadyFromS;
    check.tap = CreateObject<CellGymBsTap>();
    check.tap->SetActiveTimeoutMs(o.activeTimeoutMs);
    check.agent = CreateObject<XrcEnbAgent>();
    check.agent->SetWindowTtis(o.windowTtis);
    check.agent->SetMaxRlcBytes(o.rlcBufferPkts * 1500);
    check.agent->Attach(check.tap);
    CellGymLteBsTap::Install(check.tap, c.enbDevs.Get(0), c.s1u, static_cast<uint16_t>(o.rbs));
    CellGymLteBsTap::AddUe(check.tap, c.ueDevs.Get(0));
    check.flows.resize(o.numFlows);
}

/// One server per flow, its bulk sender and the UE's sink; each flow declared to the tap.
void
InstallFlows(Check& check, const CheckCell& c, const CheckOptions& o)
{
    Ptr<Node> pgw = c.epc->GetPgwNode();
    InternetStackHelper internet;
    Ipv4StaticRoutingHelper routing;
    NodeContainer servers;
    servers.Create(o.numFlows);
    internet.Install(servers);
    Ipv4AddressHelper addr;
    for (uint32_t f = 0; f < o.numFlows; ++f)
    {
        PointToPointHelper link;
        link.SetDeviceAttribute("DataRate", DataRateValue(DataRate("100Gbps")));
        link.SetChannelAttribute(
            "Delay", TimeValue(MicroSeconds(static_cast<int64_t>(o.serverDelayMs * 1000))));
        NetDeviceContainer devs = link.Install(servers.Get(f), pgw);
        std::string base = "1.0." + std::to_string(f) + ".0";
        addr.SetBase(base.c_str(), "255.255.255.0");
        Ipv4InterfaceContainer ifaces = addr.Assign(devs);
        routing.GetStaticRouting(servers.Get(f)->GetObject<Ipv4>())
            ->AddNetworkRouteTo(Ipv4Address("7.0.0.0"), Ipv4Mask("255.0.0.0"), 1);

        const uint16_t port = kBasePort + f;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sink = sinkHelper.Install(c.ueNodes.Get(0));
        sink.Start(Seconds(0));
        BulkSendHelper bulk("ns3::TcpSocketFactory",
                            InetSocketAddress(c.ueIfaces.GetAddress(0), port));
        bulk.SetAttribute("MaxBytes", UintegerValue(0));
        ApplicationContainer sender = bulk.Install(servers.Get(f));
        const double start = f == 0 ? 0.2 : o.secondFlowStartS;
        sender.Start(Seconds(start));
        if (f > 0 && o.secondFlowStopS > 0)
        {
            sender.Stop(Seconds(o.secondFlowStopS));
        }

        FlowProbe& probe = check.flows[f];
        probe.sink = DynamicCast<PacketSink>(sink.Get(0));
        probe.app = DynamicCast<BulkSendApplication>(sender.Get(0));
        servers.Get(f)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
            "Rx", MakeBoundCallback(&OnServerIpRx, &probe));
        Simulator::Schedule(Seconds(start) + MicroSeconds(1), &ConnectServerSocket, &probe);
        if (o.keyByPort)
        {
            check.tap->AddFlow(f, 0, c.ueIfaces.GetAddress(0), port);
        }
        else
        {
            check.tap->AddFlow(f, 0, ifaces.GetAddress(0));
        }
    }
}

/// The CSV file's header, if one is asked for.
void
OpenCsv(Check& check, const CheckOptions& o)
{
    if (!o.csvPath.empty())
    {
        check.csv.open(o.csvPath);
        check.csv << "t,capacity_mbps,tx_mbps,hol_ms,hol_max_ms,rlc_bytes,rlc_drops";
        for (uint32_t f = 0; f < o.numFlows; ++f)
        {
            check.csv << ",f" << f << "_rate,f" << f << "_delivered,f" << f << "_tag_rate,f" << f
                      << "_tag_hol,f" << f << "_acks,f" << f << "_byte_tag,f" << f << "_pkt_tag";
        }
        check.csv << "\n";
    }
}

/// The steady state's means, per flow and in all.
void
PrintSummary(const Check& check, const CheckOptions& o)
{
    // -- summary ----------------------------------------------------------------------------------
    const double n = std::max(1u, check.ssIntervals);
    std::printf("# steady state (t > %.1f s, %u intervals): capacity %.2f Mbit/s, HoL mean %.1f "
                "ms, HoL max %.0f ms, tail drops %u (cross-check %u; RLC TxDrop trace: %u)\n",
                o.steadyFromS,
                check.ssIntervals,
                check.ssCapacity / n,
                check.ssHolSum / n,
                check.ssHolMax,
                check.drops,
                check.checkedTailDrops,
                check.rawTxDrops);
    double sumRate = 0;
    double sumDelivered = 0;
    for (uint32_t f = 0; f < o.numFlows; ++f)
    {
        const FlowProbe& p = check.flows[f];
        const double m = std::max(1u, p.ssIntervals);
        sumRate += p.ssRate / m;
        sumDelivered += p.ssDelivered / m;
        std::printf(
            "# flow %u: C_i %.2f Mbit/s (C/C_i %.2f), delivered %.2f Mbit/s "
            "(C_i/delivered %.3f); server ACKs %u, byte tag %u, packet tag %u, mean tag age "
            "%.1f ms\n",
            f,
            p.ssRate / m,
            check.ssCapacity / n / std::max(1e-9, p.ssRate / m),
            p.ssDelivered / m,
            p.ssRate / m / std::max(1e-9, p.ssDelivered / m),
            p.totalAcks,
            p.totalByteTag,
            p.totalPacketTag,
            p.totalPacketTag > 0 ? p.tagAgeSumMs / p.totalPacketTag : 0.0);
    }
    std::printf("# all flows: sum C_i %.2f, delivered %.2f Mbit/s\n", sumRate, sumDelivered);
}

} // namespace

int
main(int argc, char* argv[])
{
    const CheckOptions o = ParseOptions(argc, argv);
    ConfigureDefaults(o);
    const CheckCell cell = BuildCell(o);
    Check check;
    InstallAgent(check, cell, o);
    InstallFlows(check, cell, o);
    OpenCsv(check, o);
    std::printf("# distance=%.0f m flows=%u rlcBuffer=%u pkts rbs=%u window=%u TTIs\n",
                o.distance,
                o.numFlows,
                o.rlcBufferPkts,
                o.rbs,
                o.windowTtis);
    Simulator::Schedule(MilliSeconds(1), &SampleRates, &check);
    Simulator::Schedule(check.printEvery, &Print, &check);
    Simulator::Schedule(MilliSeconds(150), &ConnectRawDrops, &check);
    Simulator::Stop(Seconds(o.simTime) + MicroSeconds(1));
    Simulator::Run();

    PrintSummary(check, o);
    Simulator::Destroy();
    return 0;
}
