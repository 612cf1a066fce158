// SPDX-License-Identifier: GPL-2.0-only
// The flows (--flows), their Pareto streams, the ON/OFF UDP sources and the run's summary.
#include "cellgym-flow-helper.h"

#include "cellgym-controller-helper.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace ns3
{

namespace
{

constexpr uint16_t kUdpBasePort = 9000; //!< the UDP sources' sinks (at the PGW): 9000 + source
constexpr double kAttachS = 0.1;        //!< flows start no earlier than the UEs' attach, s

void
OnSinkRx(Ptr<CellGymSenderApp> app, Ptr<const Packet> packet, const Address&)
{
    app->OnReceived(packet->GetSize());
}

} // namespace

CellGymFlowHelper::CellGymFlowHelper(const CellGymScenarioConfig& cfg, const CellGymDraws& draws)
    : m_cfg(cfg)
    , m_draws(draws)
{
}

void
CellGymFlowHelper::SetTcpDefaults()
{
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 * 1024 * 1024));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 * 1024 * 1024));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(false));
}

void
CellGymFlowHelper::PrepareParetoStreams(CellGymFlows& flows) const
{
    // The pareto flows with the same ue, cca, delay and pareto_* values are the slots of one
    // stream (cellgym-pareto-stream.h).
    flows.paretoStreams.resize(m_cfg.drawsExpect.streams);
    flows.streamFirstS.assign(m_cfg.drawsExpect.streams, 1e300);
    if (!m_cfg.flowLogPath.empty())
    {
        flows.flowLog = std::make_shared<std::ofstream>(m_cfg.flowLogPath);
        if (!*flows.flowLog)
        {
            BadArg("flowLogPath", m_cfg.flowLogPath, "a writable file path");
        }
        *flows.flowLog << "cell,stream,slot,size_pkts,arrival_ms,start_ms,done_ms,fct_s\n";
        *flows.flowLog << std::setprecision(10);
    }
}

Ipv4InterfaceContainer
CellGymFlowHelper::InstallServerLink(const CellGymFlowConfig& fc,
                                     CellGymFlows& flows,
                                     CellGymWiredSide& wired,
                                     int64_t& stream) const
{
    Ptr<Node> server = wired.servers.Get(fc.flowId);
    PointToPointHelper link;
    link.SetDeviceAttribute("DataRate", DataRateValue(DataRate("100Gbps")));
    link.SetChannelAttribute(
        "Delay",
        TimeValue(MicroSeconds(static_cast<int64_t>((m_cfg.serverDelayMs + fc.delayMs) * 1000))));
    NetDeviceContainer devs = link.Install(server, wired.router.Get(0));
    if (m_cfg.ackLoss > 0)
    {
        // The reverse path's ACK loss, after the router (docs/xcp-r.md "ns-3").
        Ptr<CellGymAckLossModel> loss = CreateObject<CellGymAckLossModel>();
        loss->Setup(m_cfg.ackLoss, stream++);
        devs.Get(0)->SetAttribute("ReceiveErrorModel", PointerValue(loss));
        flows.ackLossModels.push_back(loss);
    }
    std::ostringstream base;
    base << "1." << (fc.flowId / 250) << "." << (fc.flowId % 250) << ".0";
    wired.addr.SetBase(base.str().c_str(), "255.255.255.252");
    Ipv4InterfaceContainer ifaces = wired.addr.Assign(devs);
    wired.routing.GetStaticRouting(server->GetObject<Ipv4>())
        ->SetDefaultRoute(ifaces.GetAddress(1), 1);
    wired.routerRouting->AddHostRouteTo(
        ifaces.GetAddress(0),
        ifaces.GetAddress(0),
        wired.router.Get(0)->GetObject<Ipv4>()->GetInterfaceForDevice(devs.Get(1)));
    return ifaces;
}

void
CellGymFlowHelper::ScheduleSender(const CellGymFlowConfig& fc,
                                  Ptr<CellGymSenderApp> app,
                                  CellGymFlows& flows) const
{
    // A UE's attach and bearer set-up take tens of ms: data sent earlier is lost and the
    // SYN waits 3 s for its retry. Flows therefore start no earlier than kAttachS.
    // The start offset is the run's draw (--draws; 0 for a pareto slot).
    double start = std::max(fc.startS, kAttachS) + m_draws.StartOffsetS(fc.flowId);
    if (const int k = m_cfg.streamOfFlow[fc.flowId]; k >= 0)
    {
        // A slot is ready at the stream's start; the arrivals are the randomness.
        if (!flows.paretoStreams[k])
        {
            const auto& arrivals = m_draws.ParetoStream(k);
            flows.paretoStreams[k] = CreateObject<CellGymParetoStream>();
            flows.paretoStreams[k]->Configure(k, arrivals.afterMs, arrivals.sizePkts);
            flows.paretoStreams[k]->SetLog(flows.flowLog);
        }
        flows.paretoStreams[k]->AddSlot(app);
        flows.streamFirstS[k] = std::min(flows.streamFirstS[k], start);
    }
    app->SetStartTime(Seconds(start));
    if (fc.stopS >= 0)
    {
        app->SetStopTime(Seconds(std::max(fc.stopS, start)));
    }
}

void
CellGymFlowHelper::InstallFlows(CellGymFlows& flows,
                                CellGymWiredSide& wired,
                                RadioCell& cell,
                                CellGymStepLoop& loop) const
{
    PrepareParetoStreams(flows);
    for (const auto& fc : m_cfg.flows)
    {
        const Ipv4InterfaceContainer ifaces = InstallServerLink(fc, flows, wired, cell.stream);
        const uint16_t port = kCellGymBasePort + fc.flowId;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sink = sinkHelper.Install(cell.ueNodes.Get(fc.ue));
        sink.Start(Seconds(0));

        Ptr<CellGymSenderApp> app = CreateObject<CellGymSenderApp>();
        app->Setup(fc, InetSocketAddress(cell.ueIfaces.GetAddress(fc.ue), port));
        wired.servers.Get(fc.flowId)->AddApplication(app);
        ScheduleSender(fc, app, flows);
        sink.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnSinkRx, app));
        cell.tap->AddFlow(fc.flowId, fc.ue, ifaces.GetAddress(0));
        wired.explicitRouter.flowOf[ifaces.GetAddress(0)] = fc.flowId;
        loop.senders.push_back(app);
        if (fc.cca == "agent")
        {
            loop.agentFlows.push_back(fc.flowId);
            loop.agentOps.push_back(app->GetAgentOps());
        }
    }
}

void
CellGymFlowHelper::InstallUdpSources(CellGymFlows& flows, CellGymWiredSide& wired) const
{
    flows.udpReceived.assign(m_cfg.udpSources, 0);
    std::vector<uint64_t>& udpReceived = flows.udpReceived;
    for (uint32_t k = 0; k < m_cfg.udpSources; ++k)
    {
        Ptr<Node> src = CreateObject<Node>();
        wired.internet.Install(src);
        PointToPointHelper link;
        link.SetDeviceAttribute("DataRate", DataRateValue(DataRate("100Gbps")));
        link.SetChannelAttribute("Delay", TimeValue(Seconds(0)));
        NetDeviceContainer devs = link.Install(src, wired.router.Get(0));
        std::ostringstream base;
        base << "2." << (k / 250) << "." << (k % 250) << ".0";
        wired.addr.SetBase(base.str().c_str(), "255.255.255.252");
        Ipv4InterfaceContainer ifaces = wired.addr.Assign(devs);
        wired.routing.GetStaticRouting(src->GetObject<Ipv4>())
            ->SetDefaultRoute(ifaces.GetAddress(1), 1);
        const uint16_t port = kUdpBasePort + k;
        PacketSinkHelper sinkHelper("ns3::UdpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sink = sinkHelper.Install(wired.pgw);
        sink.Start(Seconds(0));
        sink.Get(0)->TraceConnectWithoutContext(
            "Rx",
            Callback<void, Ptr<const Packet>, const Address&>(
                [&udpReceived, k](Ptr<const Packet> p, const Address&)
                {
                    udpReceived[k] += p->GetSize() + 28; // + the UDP and IP headers
                }));
        Ptr<CellGymUdpOnOff> app = CreateObject<CellGymUdpOnOff>();
        app->Setup(InetSocketAddress(wired.coreIfaces.GetAddress(1), port),
                   m_cfg.udpRateMbps,
                   m_cfg.udpOnS,
                   m_cfg.udpOffS,
                   m_cfg.udpPeriods == "exponential" ? m_draws.UdpPeriods(k)
                                                     : std::vector<double>{});
        src->AddApplication(app);
        app->SetStartTime(Seconds(m_cfg.udpStartS));
        flows.udpApps.push_back(app);
    }
}

void
CellGymFlowHelper::StartParetoStreams(CellGymFlows& flows)
{
    for (size_t i = 0; i < flows.paretoStreams.size(); ++i)
    {
        flows.paretoStreams[i]->Start(Seconds(flows.streamFirstS[i]));
    }
}

void
CellGymFlowHelper::PrintSummary(const CellGymFlows& flows,
                                const CellGymWiredSide& wired,
                                const CellGymStepLoop& loop) const
{
    // When each flow's application started (the drawn offset applied; cellgym.draws).
    for (const auto& app : loop.senders)
    {
        std::cerr << "cellgym-lte: flow_start flow=" << app->FlowId()
                  << " start_s=" << std::setprecision(12) << app->StartedAtS() << '\n';
    }
    // What the reverse path lost and what the UDP sources sent and got through (on stderr).
    if (!flows.ackLossModels.empty())
    {
        uint64_t seen = 0;
        uint64_t dropped = 0;
        for (const auto& m : flows.ackLossModels)
        {
            seen += m->GetSeen();
            dropped += m->GetDropped();
        }
        std::cerr << "cellgym-lte: ack_loss acks=" << seen << " dropped=" << dropped << '\n';
    }
    const CellGymWiredRouter& wr = wired.explicitRouter;
    if (wr.router && m_cfg.anyXcp)
    {
        // The feedback the router handed each flow (payload bytes; the ACKs' running total).
        for (const auto& [server, flow] : wr.flowOf)
        {
            std::cerr << "cellgym-lte: xcp_feedback flow=" << flow
                      << " total_bytes=" << wr.router->FeedbackOf(flow).xcpTotalBytes << '\n';
        }
    }
    for (uint32_t k = 0; k < flows.udpApps.size(); ++k)
    {
        std::cerr << "cellgym-lte: udp source=" << k << " on_s=" << flows.udpApps[k]->GetOnSeconds()
                  << " sent_bytes=" << flows.udpApps[k]->GetSentBytes()
                  << " received_bytes=" << flows.udpReceived[k] << '\n';
    }
}

} // namespace ns3
