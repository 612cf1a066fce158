// SPDX-License-Identifier: GPL-2.0-only
#include "xrc-enb-agent.h"

#include "xrc-feedback-tag.h"

#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/epc-gtpu-header.h"
#include "ns3/ipv4-header.h"
#include "ns3/log.h"
#include "ns3/ppp-header.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/udp-header.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <vector>

/*
 * Choices where the XRC paper (section III.A) is silent:
 * - Capacity is counted at the MAC: transport-block bytes, so it includes the MAC, RLC and PDCP
 *   headers and the flow's IP/TCP headers. A 1448-B-MSS TCP flow delivers about 4% less goodput
 *   than the capacity (35.16 vs 33.8 Mbit/s at MCS 28, 50 RBs).
 * - Free RBs per TTI = RBs the scheduler can allocate (whole RB groups: 48 of 50) minus the RBs of
 *   every TB sent (HARQ retransmissions included; one MIMO layer counted). The RBs of a TB are
 *   found by inverting the TB-size table (LteAmc::GetDlTbSizeFromMcs) at its MCS. Free RBs are
 *   shared equally among the UEs with an active flow; a UE without one is offered the share it
 *   would get by joining. They are valued at the UE's latest new-TB MCS; before its first TB a UE
 *   has no MCS and its free-RB share counts 0.
 * - The capacity window closes every TTI at x.5 ms (TBs are traced at whole ms); C is the sum of
 *   the last WindowTtis TTIs over the window length (zeros before the window first fills).
 * - A flow is active once a downlink packet of it has passed the eNB's S1-U device (MacRx) less
 *   than ActiveTimeout ago. C_i = C / n, n = active flows of the UE, counting the flow itself if
 *   it is not active (the rate it would get by starting).
 * - HoL is the exact age of the RLC's head of line: now minus the arrival at the RLC of the
 *   oldest SDU (or rest of a segmented one) still in its transmit queue, 0 when the queue is
 *   empty. The carrier manager's XrcRlcWatch keeps a copy of the queue from the buffer reports
 *   (a PDCP PDU's arrival) and the PDUs sent, and tells the agent each new head; the RLC's own
 *   report (whole ms, truncated, refreshed only on arrivals and every 10 ms) cannot resolve NR's
 *   sub-ms slots. The step's maximum is the largest age the head reached in the step: the age
 *   of a head as it leaves, or the current head's at the step's end.
 * - The feedback is written on every uplink packet of a registered flow as it enters the S1-U
 *   device (MacTx), as a byte tag and as a packet tag.
 */

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("XrcEnbAgent");
NS_OBJECT_ENSURE_REGISTERED(XrcEnbAgent);

namespace
{
constexpr uint16_t kGtpuPort = 2152;
} // namespace

/// Per-UE state of the agent.
struct UeAgentState
{
    std::function<uint16_t()> rnti; //!< the UE's current RNTI
    std::vector<double> ring;       //!< capacity of each of the last W TTIs, bytes
    size_t ringPos{0};              //!< next slot of the ring
    double ringSum{0};              //!< sum of the ring, bytes
    uint32_t newBytesTti{0};        //!< new-TB bytes in the current TTI
    uint32_t rbsTti{0};             //!< RBs of the UE's TBs in the current TTI
    uint32_t retxRbsTti{0};         //!< ... of its HARQ retransmissions
    int lastMcs{-1};                //!< MCS of the UE's latest TB (-1: none yet)
    std::optional<Time> headSince;  //!< arrival of the RLC's head of line (none: empty)
    double rlcBytes{0};             //!< latest RLC tx queue
    double stepCapBytes{0};         //!< capacity summed over the step's TTIs, bytes
    double stepTxBytes{0};          //!< new-TB bytes in the step
    double stepHolMaxMs{0};         //!< max age of a head that left in the step, ms
    uint32_t stepDrops{0};          //!< RLC tail drops in the step
    uint32_t stepTtis{0};           //!< TTIs in the step
    Ptr<const Packet> dropped; //!< packet the RLC TxDrop trace just named (judged on the report)
};

/// Per-flow state of the agent.
struct FlowAgentState
{
    uint32_t ue{0};   //!< UE index
    Time lastArrival; //!< last downlink packet at the eNB
    bool seen{false}; //!< a downlink packet has passed the eNB

    /// @return whether the flow is active at `now` (Time::Min() would overflow `now - last`)
    bool IsActive(Time now, Time timeout) const
    {
        return seen && now - lastArrival < timeout;
    }
};

struct XrcEnbAgent::Impl
{
    uint32_t windowTtis{40};                   //!< capacity averaging window
    Time activeTimeout{MilliSeconds(200)};     //!< inter-arrival time that ends activity
    uint32_t maxRlcBytes{0};                   //!< RLC buffer size, for counting tail drops
    XrcRadio radio;                            //!< what the cell type tells the agent
    std::vector<UeAgentState> ues;             //!< UEs in AddUe order
    std::map<uint16_t, uint32_t> rntiToUe;     //!< RNTI -> UE index (refreshed on misses)
    std::map<uint32_t, FlowAgentState> flows;  //!< flow id -> state
    std::map<uint32_t, uint32_t> serverToFlow; //!< server IPv4 -> flow id
    std::map<std::pair<uint32_t, uint16_t>, uint32_t> ueEndToFlow; //!< (UE IPv4, port) -> flow
    std::set<const Object*> dropsConnected;            //!< RLCs whose TxDrop trace is connected
    Ptr<NetDevice> enbDevice;                          //!< the eNB
    std::vector<XrcEnbAgent::DownlinkHook> onDownlink; //!< routers' views of the downlink
    std::vector<XrcEnbAgent::UplinkHook> onUplink;     //!< ... and of the uplink packets
    XrcEnbAgent::TtiHook onTti;                        //!< a UE-side monitor of the TTIs
    std::string sojournPath;                           //!< SDU sojourn file ("": none)
    std::ofstream sojournFile;                         //!< ... once opened
    std::vector<XrcEnbAgent::TtiAllocation> ttiAllocs; //!< its argument, reused

    bool UeHasActiveFlow(uint32_t ue, Time now) const
    {
        for (const auto& [id, f] : flows)
        {
            if (f.ue == ue && f.IsActive(now, activeTimeout))
            {
                return true;
            }
        }
        return false;
    }

    uint32_t ActiveFlows(uint32_t ue, Time now) const
    {
        uint32_t n = 0;
        for (const auto& [id, f] : flows)
        {
            n += (f.ue == ue && f.IsActive(now, activeTimeout)) ? 1 : 0;
        }
        return n;
    }

    double CapacityMbps(uint32_t ue) const
    {
        return ues[ue].ringSum * 8.0 / (windowTtis * radio.ttiS) / 1e6;
    }

    /// Close the current TTI: new-TB bytes plus the UE's share of the idle RBs.
    void EndTti()
    {
        const Time now = Simulator::Now();
        uint32_t used = 0;
        uint32_t eligible = 0;
        for (uint32_t u = 0; u < ues.size(); ++u)
        {
            used += ues[u].rbsTti;
            eligible += UeHasActiveFlow(u, now) ? 1 : 0;
        }
        const uint32_t usable = radio.usableRbsNow ? radio.usableRbsNow() : radio.usableRbs;
        const double idle = used >= usable ? 0.0 : static_cast<double>(usable - used);
        if (onTti)
        {
            ttiAllocs.resize(ues.size());
            for (uint32_t u = 0; u < ues.size(); ++u)
            {
                const auto& s = ues[u];
                ttiAllocs[u].newRbs = s.rbsTti - s.retxRbsTti;
                ttiAllocs[u].newBytes = s.newBytesTti;
                ttiAllocs[u].retxRbs = s.retxRbsTti;
                ttiAllocs[u].fullBytes = radio.bytesOf(s.lastMcs, usable);
            }
            onTti(ttiAllocs, usable);
        }
        for (uint32_t u = 0; u < ues.size(); ++u)
        {
            auto& s = ues[u];
            // A UE without an active flow is offered what it would get if it joined.
            const uint32_t sharers = eligible + (UeHasActiveFlow(u, now) ? 0 : 1);
            const double cap = s.newBytesTti + radio.bytesOf(s.lastMcs, idle / sharers);
            s.ringSum += cap - s.ring[s.ringPos];
            s.ring[s.ringPos] = cap;
            s.ringPos = (s.ringPos + 1) % s.ring.size();
            s.stepCapBytes += cap;
            s.stepTxBytes += s.newBytesTti;
            s.stepTtis += 1;
            s.newBytesTti = 0;
            s.rbsTti = 0;
            s.retxRbsTti = 0;
        }
        Simulator::Schedule(radio.tti, &Impl::EndTti, this);
    }

    void OnTransportBlock(uint16_t rnti, int mcs, uint32_t bytes, bool occupiesRbs, bool newData)
    {
        const int u = UeOfRnti(rnti);
        if (u < 0)
        {
            return;
        }
        auto& s = ues[u];
        // A HARQ retransmission occupies RBs (they are not free) but carries no new capacity.
        if (occupiesRbs)
        {
            const uint32_t rbs = radio.rbsOf(mcs, bytes);
            s.rbsTti += rbs;
            s.retxRbsTti += newData ? 0 : rbs;
        }
        if (!newData)
        {
            return; // HARQ retransmissions carry no new capacity (XRC paper, III.A)
        }
        s.newBytesTti += bytes;
        s.lastMcs = mcs;
    }

    int UeOfRnti(uint16_t rnti)
    {
        auto it = rntiToUe.find(rnti);
        if (it != rntiToUe.end())
        {
            return static_cast<int>(it->second);
        }
        for (uint32_t u = 0; u < ues.size(); ++u)
        {
            if (ues[u].rnti() == rnti)
            {
                rntiToUe[rnti] = u;
                return static_cast<int>(u);
            }
        }
        return -1;
    }

    void OnBufferStatus(uint16_t rnti, uint8_t lcid, uint32_t txQueue, uint16_t holMs)
    {
        const int u = UeOfRnti(rnti);
        if (u < 0)
        {
            return;
        }
        auto& s = ues[u];
        s.rlcBytes = txQueue; // the HoL comes from the watch's head events (OnHead)
        // The RLC reports right after every PDCP PDU, dropped or not. Its TxDrop trace also fires
        // for a PDU older than the PDCP discard timer that it then queues anyway (ns-3.44
        // LteRlcUm::DoTransmitPdcpPdu, and NR's copy): the adapter tells them apart.
        if (s.dropped)
        {
            if (!radio.queuedByRlc(s.dropped))
            {
                s.stepDrops += 1;
            }
            s.dropped = nullptr;
        }
    }

    /// The UE's RLC buffer ran empty after a transmit opportunity (no report says so).
    void OnBufferDrained(uint16_t rnti, uint8_t lcid)
    {
        const int u = UeOfRnti(rnti);
        if (u >= 0)
        {
            SetHead(ues[u], std::nullopt);
            ues[u].rlcBytes = 0;
        }
    }

    /// @return the age of the UE's head of line at `now`, ms (0: its RLC queue is empty)
    static double HolMs(const UeAgentState& s, Time now)
    {
        return s.headSince ? (now - *s.headSince).ToDouble(Time::MS) : 0.0;
    }

    /// The UE's head of line changed: the one leaving counts towards the step's maximum.
    static void SetHead(UeAgentState& s, std::optional<Time> since)
    {
        s.stepHolMaxMs = std::max(s.stepHolMaxMs, HolMs(s, Simulator::Now()));
        s.headSince = since;
    }

    void OnHead(uint16_t rnti, uint8_t lcid, std::optional<Time> since)
    {
        const int u = UeOfRnti(rnti);
        if (u >= 0)
        {
            SetHead(ues[u], since);
        }
    }

    void OnSojourn(uint16_t rnti, uint8_t lcid, Time sojourn)
    {
        const int u = UeOfRnti(rnti);
        if (u < 0 || sojournPath.empty())
        {
            return;
        }
        if (!sojournFile.is_open())
        {
            sojournFile.open(sojournPath);
            NS_ABORT_MSG_IF(!sojournFile, "cannot write SojournTraceFile " << sojournPath);
            sojournFile << "time_s,ue,sojourn_ms\n";
        }
        sojournFile << Simulator::Now().GetSeconds() << "," << u << ","
                    << sojourn.ToDouble(Time::MS) << std::endl;
    }

    /// Peel PPP / IPv4 / UDP / GTP-U headers; return the inner IPv4 header, if this is GTP-U,
    /// and the inner TCP/UDP ports (0 when absent).
    static bool
    InnerHeader(Ptr<const Packet> packet, Ipv4Header& inner, uint16_t& srcPort, uint16_t& dstPort)
    {
        srcPort = dstPort = 0;
        Ptr<Packet> p = packet->Copy();
        uint8_t first[2];
        if (p->CopyData(first, 2) < 2)
        {
            return false;
        }
        if (first[0] == 0x00 && first[1] == 0x21)
        {
            PppHeader ppp;
            p->RemoveHeader(ppp);
        }
        Ipv4Header outer;
        UdpHeader udp;
        GtpuHeader gtpu;
        if (p->GetSize() < 20 + 8 + 8 + 20)
        {
            return false;
        }
        p->RemoveHeader(outer);
        if (outer.GetProtocol() != 17) // UDP
        {
            return false;
        }
        p->RemoveHeader(udp);
        if (udp.GetDestinationPort() != kGtpuPort && udp.GetSourcePort() != kGtpuPort)
        {
            return false;
        }
        p->RemoveHeader(gtpu);
        p->RemoveHeader(inner);
        uint8_t ports[4];
        if ((inner.GetProtocol() == 6 || inner.GetProtocol() == 17)
            && inner.GetFragmentOffset() == 0 && p->CopyData(ports, 4) == 4)
        {
            srcPort = static_cast<uint16_t>(ports[0] << 8 | ports[1]);
            dstPort = static_cast<uint16_t>(ports[2] << 8 | ports[3]);
        }
        return true;
    }

    /// @return the flow of a packet by its UE end (address, port), else by its server address;
    ///         -1 if it belongs to no registered flow
    int64_t FindFlow(Ipv4Address ue, uint16_t uePort, Ipv4Address server) const
    {
        if (!ueEndToFlow.empty())
        {
            auto it = ueEndToFlow.find({ue.Get(), uePort});
            if (it != ueEndToFlow.end())
            {
                return it->second;
            }
        }
        auto it = serverToFlow.find(server.Get());
        return it == serverToFlow.end() ? -1 : static_cast<int64_t>(it->second);
    }

    void OnS1uRx(Ptr<const Packet> packet)
    {
        Ipv4Header inner;
        uint16_t srcPort;
        uint16_t dstPort;
        if (!InnerHeader(packet, inner, srcPort, dstPort))
        {
            return;
        }
        const int64_t flow = FindFlow(inner.GetDestination(), dstPort, inner.GetSource());
        if (flow >= 0)
        {
            flows[flow].lastArrival = Simulator::Now();
            flows[flow].seen = true;
            for (const auto& hook : onDownlink)
            {
                hook(static_cast<uint32_t>(flow),
                     inner.GetPayloadSize() + inner.GetSerializedSize(),
                     packet);
            }
        }
    }

    void OnS1uTx(Ptr<const Packet> packet)
    {
        Ipv4Header inner;
        uint16_t srcPort;
        uint16_t dstPort;
        if (!InnerHeader(packet, inner, srcPort, dstPort))
        {
            return;
        }
        const int64_t flow = FindFlow(inner.GetSource(), srcPort, inner.GetDestination());
        if (flow < 0)
        {
            return;
        }
        XrcFeedbackTag tag;
        tag.rateMbps = FlowRate(static_cast<uint32_t>(flow));
        tag.holMs = HolMs(ues[flows[flow].ue], Simulator::Now());
        tag.stampS = Simulator::Now().GetSeconds();
        // A byte tag covers the inner headers too, so it survives decapsulation at the gateways
        // and is still readable at the server's IP layer on a pure ACK. A packet tag survives
        // the removal of every header, so the server's TCP socket ("Rx" trace) can peek it.
        packet->AddByteTag(tag);
        XrcFeedbackTag old;
        if (packet->PeekPacketTag(old))
        {
            // Sent twice through the device (not seen in ns-3.44): keep the newest values.
            const_cast<Packet*>(PeekPointer(packet))->ReplacePacketTag(tag);
        }
        else
        {
            packet->AddPacketTag(tag);
        }
        for (const auto& hook : onUplink)
        {
            hook(static_cast<uint32_t>(flow), packet);
        }
    }

    double FlowRate(uint32_t flowId) const
    {
        const auto& f = flows.at(flowId);
        const Time now = Simulator::Now();
        const bool self = f.IsActive(now, activeTimeout);
        const uint32_t n = ActiveFlows(f.ue, now) + (self ? 0 : 1);
        return CapacityMbps(f.ue) / n;
    }

    /// Connect the TxDrop trace of every data-bearer RLC that exists now (bearers appear when
    /// UEs attach, so this runs periodically; it is cheap next to a TTI's events).
    void ConnectDrops()
    {
        const std::string path = "/NodeList/" + std::to_string(enbDevice->GetNode()->GetId())
                                 + "/DeviceList/" + std::to_string(enbDevice->GetIfIndex()) + "/"
                                 + radio.rlcPath;
        const Config::MatchContainer matches = Config::LookupMatches(path);
        for (uint32_t i = 0; i < matches.GetN(); ++i)
        {
            Ptr<Object> rlc = matches.Get(i);
            if (!rlc || dropsConnected.count(PeekPointer(rlc)) > 0)
            {
                continue;
            }
            // The UE map is keyed by RNTI: ".../UeMap/<rnti>/DataRadioBearerMap/...".
            const std::string& matched = matches.GetMatchedPath(i);
            const auto at = matched.find("/UeMap/");
            const auto rnti = static_cast<uint16_t>(std::stoul(matched.substr(at + 7)));
            rlc->TraceConnectWithoutContext("TxDrop",
                                            MakeCallback(&Impl::OnRlcDrop, this).Bind(rnti));
            dropsConnected.insert(PeekPointer(rlc));
        }
        Simulator::Schedule(
            MilliSeconds(dropsConnected.size() < ues.size() ? 50 : 500), &Impl::ConnectDrops, this);
    }

    /// The RLC's TxDrop trace fired: judged on the buffer report that follows synchronously.
    void OnRlcDrop(uint16_t rnti, Ptr<const Packet> p)
    {
        const int u = UeOfRnti(rnti);
        if (u >= 0)
        {
            ues[u].dropped = p;
        }
    }
};

TypeId
XrcEnbAgent::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::XrcEnbAgent")
              .SetParent<Object>()
              .SetGroupName("CellGym")
              .AddConstructor<XrcEnbAgent>()
              .AddAttribute("WindowTtis",
                            "TTIs over which the capacity is averaged (XRC paper: 40)",
                            UintegerValue(40),
                            MakeUintegerAccessor(&XrcEnbAgent::SetWindowTtis),
                            MakeUintegerChecker<uint32_t>(1, 100000))
              .AddAttribute("ActiveTimeoutMs",
                            "A flow is active while its packets arrive less than this apart, ms",
                            DoubleValue(200.0),
                            MakeDoubleAccessor(&XrcEnbAgent::SetActiveTimeoutMs),
                            MakeDoubleChecker<double>(0.001))
              .AddAttribute("MaxRlcBytes",
                            "RLC transmit buffer size, bytes (to count tail drops)",
                            UintegerValue(128 * 1500),
                            MakeUintegerAccessor(&XrcEnbAgent::SetMaxRlcBytes),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("SojournTraceFile",
                            "A diagnostic: write the RLC sojourn of every downlink SDU, from "
                            "the PDCP's timestamp to its first byte leaving for the MAC, to "
                            "this CSV file (time_s, ue, sojourn_ms); empty: none",
                            StringValue(""),
                            MakeStringAccessor(&XrcEnbAgent::SetSojournTraceFile),
                            MakeStringChecker());
    return tid;
}

XrcEnbAgent::XrcEnbAgent()
    : m_impl(std::make_unique<Impl>())
{
}

XrcEnbAgent::~XrcEnbAgent() = default;

void
XrcEnbAgent::SetWindowTtis(uint32_t ttis)
{
    m_impl->windowTtis = ttis;
    for (auto& s : m_impl->ues)
    {
        s.ring.assign(ttis, 0.0);
        s.ringPos = 0;
        s.ringSum = 0;
    }
}

void
XrcEnbAgent::SetActiveTimeoutMs(double ms)
{
    m_impl->activeTimeout = MicroSeconds(static_cast<int64_t>(ms * 1000));
}

void
XrcEnbAgent::SetMaxRlcBytes(uint32_t bytes)
{
    m_impl->maxRlcBytes = bytes;
}

void
XrcEnbAgent::SetSojournTraceFile(std::string path)
{
    m_impl->sojournPath = std::move(path);
}

void
XrcEnbAgent::InstallRadio(XrcRadio radio, Ptr<NetDevice> bsDevice, Ptr<NetDevice> s1uDevice)
{
    auto& d = *m_impl;
    d.radio = std::move(radio);
    d.enbDevice = bsDevice;
    Impl* impl = m_impl.get();
    s1uDevice->TraceConnectWithoutContext("MacTx", MakeCallback(&Impl::OnS1uTx, impl));
    s1uDevice->TraceConnectWithoutContext("MacRx", MakeCallback(&Impl::OnS1uRx, impl));
    // The window closes mid-TTI (LTE: x.5 ms), between the TTIs' transport blocks.
    Simulator::Schedule(d.radio.tti / 2, &Impl::EndTti, impl);
    Simulator::Schedule(MilliSeconds(50), &Impl::ConnectDrops, impl);
}

uint32_t
XrcEnbAgent::AddUe(std::function<uint16_t()> rntiOf)
{
    auto& d = *m_impl;
    UeAgentState s;
    s.rnti = std::move(rntiOf);
    s.ring.assign(d.windowTtis, 0.0);
    const auto index = static_cast<uint32_t>(d.ues.size());
    d.ues.push_back(std::move(s));
    return index;
}

void
XrcEnbAgent::OnTransportBlock(
    uint16_t rnti, int mcs, uint32_t bytes, bool occupiesRbs, bool newData)
{
    m_impl->OnTransportBlock(rnti, mcs, bytes, occupiesRbs, newData);
}

void
XrcEnbAgent::OnBufferStatus(uint16_t rnti, uint8_t lcid, uint32_t txQueueBytes, uint16_t holMs)
{
    m_impl->OnBufferStatus(rnti, lcid, txQueueBytes, holMs);
}

void
XrcEnbAgent::OnBufferDrained(uint16_t rnti, uint8_t lcid)
{
    m_impl->OnBufferDrained(rnti, lcid);
}

void
XrcEnbAgent::OnHeadOfLine(uint16_t rnti, uint8_t lcid, std::optional<Time> since)
{
    m_impl->OnHead(rnti, lcid, since);
}

void
XrcEnbAgent::OnSduSojourn(uint16_t rnti, uint8_t lcid, Time sojourn)
{
    m_impl->OnSojourn(rnti, lcid, sojourn);
}

bool
XrcEnbAgent::WantsSojourns() const
{
    return !m_impl->sojournPath.empty();
}

void
XrcEnbAgent::AddFlow(uint32_t flowId, uint32_t ueIndex, Ipv4Address serverAddress)
{
    NS_ABORT_MSG_IF(ueIndex >= m_impl->ues.size(), "AddFlow: unknown UE " << ueIndex);
    FlowAgentState flow;
    flow.ue = ueIndex;
    m_impl->flows[flowId] = flow;
    m_impl->serverToFlow[serverAddress.Get()] = flowId;
}

void
XrcEnbAgent::AddFlow(uint32_t flowId, uint32_t ueIndex, Ipv4Address ueAddress, uint16_t uePort)
{
    NS_ABORT_MSG_IF(ueIndex >= m_impl->ues.size(), "AddFlow: unknown UE " << ueIndex);
    FlowAgentState flow;
    flow.ue = ueIndex;
    m_impl->flows[flowId] = flow;
    m_impl->ueEndToFlow[{ueAddress.Get(), uePort}] = flowId;
}

double
XrcEnbAgent::GetFlowRateMbps(uint32_t flowId) const
{
    return m_impl->FlowRate(flowId);
}

double
XrcEnbAgent::GetHolMs(uint32_t ueIndex) const
{
    return Impl::HolMs(m_impl->ues.at(ueIndex), Simulator::Now());
}

double
XrcEnbAgent::GetCapacityBytesPerMs(uint32_t ueIndex) const
{
    return m_impl->CapacityMbps(ueIndex) * 1e6 / 8 / 1e3;
}

double
XrcEnbAgent::GetRlcBytes(uint32_t ueIndex) const
{
    return m_impl->ues.at(ueIndex).rlcBytes;
}

void
XrcEnbAgent::AddPacketHooks(DownlinkHook downlink, UplinkHook uplink)
{
    if (downlink)
    {
        m_impl->onDownlink.push_back(std::move(downlink));
    }
    if (uplink)
    {
        m_impl->onUplink.push_back(std::move(uplink));
    }
}

void
XrcEnbAgent::SetTtiHook(TtiHook hook)
{
    m_impl->onTti = std::move(hook);
}

Time
XrcEnbAgent::GetTti() const
{
    return m_impl->radio.tti;
}

uint32_t
XrcEnbAgent::GetUeActiveFlows(uint32_t flowId) const
{
    const auto& f = m_impl->flows.at(flowId);
    const Time now = Simulator::Now();
    return m_impl->ActiveFlows(f.ue, now) + (f.IsActive(now, m_impl->activeTimeout) ? 0 : 1);
}

uint32_t
XrcEnbAgent::GetFlowUe(uint32_t flowId) const
{
    return m_impl->flows.at(flowId).ue;
}

XrcUeStepStats
XrcEnbAgent::TakeStepStats(uint32_t ueIndex)
{
    auto& s = m_impl->ues.at(ueIndex);
    XrcUeStepStats out;
    const double seconds = s.stepTtis * m_impl->radio.ttiS;
    if (seconds > 0)
    {
        out.capacityMbps = s.stepCapBytes * 8.0 / seconds / 1e6;
        out.txMbps = s.stepTxBytes * 8.0 / seconds / 1e6;
    }
    out.holMs = Impl::HolMs(s, Simulator::Now());
    out.holMaxMs = std::max(s.stepHolMaxMs, out.holMs);
    out.rlcBytes = s.rlcBytes;
    out.rlcDrops = s.stepDrops;
    s.stepCapBytes = s.stepTxBytes = s.stepHolMaxMs = 0;
    s.stepDrops = 0;
    s.stepTtis = 0;
    return out;
}

} // namespace ns3
