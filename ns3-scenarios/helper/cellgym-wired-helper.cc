// SPDX-License-Identifier: GPL-2.0-only
// The wired side of the scenario: servers -> router -> (bottleneck) -> PGW, and XCP's or RCP's
// router at the bottleneck (docs/explicit-feedback.md).
#include "cellgym-wired-helper.h"

#include "cellgym-explicit-tags.h"
#include "cellgym-trace-link.h"

#include "ns3/core-module.h"
#include "ns3/point-to-point-module.h"

#include <fstream>
#include <memory>

namespace ns3
{

namespace
{

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
RecordXcprData(CellGymWiredRouter* wr,
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
OnBottleneckTx(CellGymWiredRouter* wr, Ptr<const Packet> p)
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
OnTraceLinkEnqueue(CellGymWiredRouter* wr, Ptr<const QueueDiscItem> item)
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
OnBottleneckAck(CellGymWiredRouter* wr, Ptr<const Packet> p)
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

} // namespace

CellGymWiredHelper::CellGymWiredHelper(const CellGymScenarioConfig& cfg)
    : m_cfg(cfg)
{
}

void
CellGymWiredHelper::Install(CellGymWiredSide& side, Ptr<Node> pgw) const
{
    side.pgw = pgw;
    InstallCoreLink(side);
    InstallRed(side);
    InstallQueueLog(side);
    InstallTraceLink(side);
    side.routerRouting = side.routing.GetStaticRouting(side.router.Get(0)->GetObject<Ipv4>());
    side.routerRouting->AddNetworkRouteTo(
        Ipv4Address("7.0.0.0"), Ipv4Mask("255.0.0.0"), side.coreIfaces.GetAddress(1), 1);
    side.routing.GetStaticRouting(pgw->GetObject<Ipv4>())
        ->AddNetworkRouteTo(Ipv4Address("1.0.0.0"),
                            Ipv4Mask("255.0.0.0"),
                            side.coreIfaces.GetAddress(0),
                            pgw->GetObject<Ipv4>()->GetInterfaceForDevice(side.coreDevs.Get(1)));
}

void
CellGymWiredHelper::InstallCoreLink(CellGymWiredSide& side) const
{
    const double bottleneckMbps = m_cfg.bottleneckMbps;
    side.router.Create(1);
    side.servers.Create(m_cfg.flows.size());
    side.internet.Install(side.router);
    side.internet.Install(side.servers);

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
        const uint32_t devicePkts = m_cfg.bottleneckQueue == "red" ? 1 : m_cfg.bottleneckBufferPkts;
        core.SetQueue("ns3::DropTailQueue<Packet>",
                      "MaxSize",
                      QueueSizeValue(QueueSize(std::to_string(devicePkts) + "p")));
    }
    side.coreDevs = core.Install(side.router.Get(0), side.pgw);
    side.addr.SetBase("10.255.0.0", "255.255.255.252");
    side.coreIfaces = side.addr.Assign(side.coreDevs);
    if (bottleneckMbps > 0)
    {
        // The drop-tail device queue is the bottleneck's buffer: remove the queue disc that
        // address assignment put in front of it.
        TrafficControlHelper().Uninstall(side.coreDevs.Get(0));
    }
}

void
CellGymWiredHelper::InstallRed(CellGymWiredSide& side) const
{
    if (m_cfg.bottleneckQueue != "red")
    {
        return;
    }
    // RED (docs/xcp-rcp-fct/README.md): ns-3's RedQueueDisc with the scenario's
    // thresholds, gentle, count-spread drops without RED's extra wait (as the fast model),
    // 1500-byte mean packets, its idle decay at the link's rate.
    TrafficControlHelper tch;
    tch.SetRootQueueDisc(
        "ns3::RedQueueDisc",
        "MaxSize",
        QueueSizeValue(QueueSize(std::to_string(m_cfg.bottleneckBufferPkts) + "p")),
        "MinTh",
        DoubleValue(m_cfg.redMinThPkts),
        "MaxTh",
        DoubleValue(m_cfg.redMaxThPkts),
        "LInterm",
        DoubleValue(1.0 / m_cfg.redMaxP),
        "QW",
        DoubleValue(m_cfg.redWeight),
        "Gentle",
        BooleanValue(true),
        "Wait",
        BooleanValue(false),
        "MeanPktSize",
        UintegerValue(1500),
        "LinkBandwidth",
        DataRateValue(DataRate(static_cast<uint64_t>(m_cfg.bottleneckMbps * 1e6))),
        "LinkDelay",
        TimeValue(Seconds(0)));
    side.redQueue = tch.Install(side.coreDevs.Get(0)).Get(0);
}

void
CellGymWiredHelper::InstallQueueLog(CellGymWiredSide& side) const
{
    if (m_cfg.bottleneckLogPath.empty() || m_cfg.bottleneckMbps <= 0)
    {
        return;
    }
    auto log = std::make_shared<std::ofstream>(m_cfg.bottleneckLogPath);
    if (!*log)
    {
        BadArg("bottleneckLogPath", m_cfg.bottleneckLogPath, "a writable file path");
    }
    *log << "t_s,queue_pkts,early_drops,forced_drops\n";
    Ptr<Queue<Packet>> devQueue
        = DynamicCast<PointToPointNetDevice>(side.coreDevs.Get(0))->GetQueue();
    Simulator::Schedule(
        MilliSeconds(1), &LogBottleneck, log, side.redQueue, devQueue, MilliSeconds(1));
}

void
CellGymWiredHelper::InstallTraceLink(CellGymWiredSide& side) const
{
    if (m_cfg.bottleneckTrace.empty())
    {
        return;
    }
    // The trace-driven link: a queue disc that releases packets to the fast router -> PGW
    // device only at the trace's delivery opportunities (cellgym-trace-link.h).
    TrafficControlHelper().Uninstall(side.coreDevs.Get(0));
    TrafficControlHelper tch;
    tch.SetRootQueueDisc(
        "ns3::CellGymTraceQueueDisc",
        "MaxSize",
        QueueSizeValue(QueueSize(std::to_string(m_cfg.bottleneckBufferPkts) + "p")));
    QueueDiscContainer qdiscs = tch.Install(side.coreDevs.Get(0));
    DynamicCast<CellGymTraceQueueDisc>(qdiscs.Get(0))->SetSchedule(m_cfg.bottleneckSchedule);
}

void
CellGymWiredHelper::InstallRouter(CellGymWiredSide& side) const
{
    for (const auto& fc : m_cfg.flows)
    {
        if (fc.cca == "xcpr")
        {
            side.explicitRouter.xcprFlows.insert(fc.flowId);
        }
    }
    if (m_cfg.HasExplicitRouter() && m_cfg.bottleneckMbps > 0)
    {
        InstallRateRouter(side);
    }
    if (m_cfg.HasExplicitRouter() && !m_cfg.bottleneckTrace.empty())
    {
        InstallTraceRouter(side);
    }
}

void
CellGymWiredHelper::InstallRateRouter(CellGymWiredSide& side) const
{
    CellGymWiredRouter& wr = side.explicitRouter;
    wr.router = CreateObject<CellGymExplicitRouter>();
    wr.router->Configure(m_cfg.RouterKind(), m_cfg.RouterKnobs());
    Ptr<PointToPointNetDevice> bnDev = DynamicCast<PointToPointNetDevice>(side.coreDevs.Get(0));
    Ptr<Queue<Packet>> bnQueue = bnDev->GetQueue();
    Ptr<QueueDisc> redQueue = side.redQueue;
    const double capBytesPerMs = m_cfg.bottleneckMbps * 1e6 / 8 / 1e3;
    wr.router->Start(
        [capBytesPerMs]()
        {
            return capBytesPerMs;
        },
        [bnQueue, redQueue]()
        {
            const uint32_t qd = redQueue ? redQueue->GetNBytes() : 0;
            return static_cast<double>(bnQueue->GetNBytes() + qd);
        });
    bnDev->TraceConnectWithoutContext("MacTx", MakeBoundCallback(&OnBottleneckTx, &wr));
    bnDev->TraceConnectWithoutContext("PhyRxEnd", MakeBoundCallback(&OnBottleneckAck, &wr));
}

void
CellGymWiredHelper::InstallTraceRouter(CellGymWiredSide& side) const
{
    // The trace-driven link: packets count as they join its queue disc, each one delivery
    // opportunity (kTracePacketBytes); the capacity is the opportunities of each ms.
    CellGymWiredRouter& wr = side.explicitRouter;
    wr.router = CreateObject<CellGymExplicitRouter>();
    wr.router->Configure(m_cfg.RouterKind(), m_cfg.RouterKnobs());
    wr.router->SetCapacityPerTick(true);
    Ptr<NetDevice> bnDev = side.coreDevs.Get(0);
    Ptr<QueueDisc> qdisc
        = bnDev->GetNode()->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(bnDev);
    const auto perMs = m_cfg.bottleneckSchedule.perMs;
    wr.router->Start(
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
    qdisc->TraceConnectWithoutContext("Enqueue", MakeBoundCallback(&OnTraceLinkEnqueue, &wr));
    bnDev->TraceConnectWithoutContext("PhyRxEnd", MakeBoundCallback(&OnBottleneckAck, &wr));
}

} // namespace ns3
