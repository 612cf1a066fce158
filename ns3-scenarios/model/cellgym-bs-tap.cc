// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-bs-tap.h"

#include "ns3/config.h"
#include "ns3/double.h"
#include "ns3/epc-gtpu-header.h"
#include "ns3/ipv4-header.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/ppp-header.h"
#include "ns3/simulator.h"
#include "ns3/udp-header.h"

/*
 * Choices:
 * - A TTI closes mid-TTI (LTE: x.5 ms; transport blocks are traced at whole ms), so each TTI's
 *   blocks reach its subscribers together.
 * - A flow is active once a downlink packet of it has passed the base station's S1-U device
 *   (MacRx) less than ActiveTimeout ago.
 * - The RLC's TxDrop trace also fires for a PDU older than the PDCP discard timer that the RLC
 *   then queues anyway (ns-3.44 LteRlcUm::DoTransmitPdcpPdu, and NR's copy); the buffer report
 *   that follows every PDCP PDU synchronously tells them apart (the radio's queuedByRlc).
 */

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CellGymBsTap");
NS_OBJECT_ENSURE_REGISTERED(CellGymBsTap);

namespace
{
constexpr uint16_t kGtpuPort = 2152;

/// Peel PPP / IPv4 / UDP / GTP-U headers; return the inner IPv4 header, if this is GTP-U, and
/// the inner TCP/UDP ports (0 when absent).
bool
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
    if ((inner.GetProtocol() == 6 || inner.GetProtocol() == 17) && inner.GetFragmentOffset() == 0
        && p->CopyData(ports, 4) == 4)
    {
        srcPort = static_cast<uint16_t>(ports[0] << 8 | ports[1]);
        dstPort = static_cast<uint16_t>(ports[2] << 8 | ports[3]);
    }
    return true;
}

/// Functions subscribed through AddPacketHooks or AddTtiHook.
class HookSubscriber : public CellGymBsTapSubscriber
{
  public:
    CellGymBsTap::DownlinkHook downlink; //!< the packets' (empty: none)
    CellGymBsTap::UplinkHook uplink;     //!< ...
    CellGymBsTap::TtiHook tti;           //!< the TTIs' (empty: none)

    void OnDownlink(uint32_t flow, double bytes, Ptr<const Packet> packet) override
    {
        if (downlink)
        {
            downlink(flow, bytes, packet);
        }
    }

    void OnUplink(uint32_t flow, Ptr<const Packet> packet) override
    {
        if (uplink)
        {
            uplink(flow, packet);
        }
    }

    void OnTti(const std::vector<CellGymBsUeTti>& ues, uint32_t usable) override
    {
        if (tti)
        {
            tti(ues, usable);
        }
    }
};
} // namespace

void
CellGymBsTapSubscriber::OnUeAdded(uint32_t)
{
}

void
CellGymBsTapSubscriber::OnTti(const std::vector<CellGymBsUeTti>&, uint32_t)
{
}

void
CellGymBsTapSubscriber::OnRlcTailDrop(uint32_t)
{
}

void
CellGymBsTapSubscriber::OnRlcDrained(uint32_t)
{
}

void
CellGymBsTapSubscriber::OnHeadOfLine(uint32_t, uint8_t, std::optional<Time>)
{
}

void
CellGymBsTapSubscriber::OnSduSojourn(uint32_t, uint8_t, Time)
{
}

bool
CellGymBsTapSubscriber::WantsSojourns() const
{
    return false;
}

void
CellGymBsTapSubscriber::OnDownlink(uint32_t, double, Ptr<const Packet>)
{
}

void
CellGymBsTapSubscriber::OnUplink(uint32_t, Ptr<const Packet>)
{
}

TypeId
CellGymBsTap::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::CellGymBsTap")
              .SetParent<Object>()
              .SetGroupName("CellGym")
              .AddConstructor<CellGymBsTap>()
              .AddAttribute("ActiveTimeoutMs",
                            "A flow is active while its packets arrive less than this apart, ms",
                            DoubleValue(200.0),
                            MakeDoubleAccessor(&CellGymBsTap::SetActiveTimeoutMs),
                            MakeDoubleChecker<double>(0.001));
    return tid;
}

CellGymBsTap::CellGymBsTap() = default;

CellGymBsTap::~CellGymBsTap() = default;

void
CellGymBsTap::Subscribe(CellGymBsTapSubscriber* subscriber)
{
    m_subscribers.push_back(subscriber);
    for (uint32_t u = 0; u < m_ues.size(); ++u)
    {
        subscriber->OnUeAdded(u);
    }
}

void
CellGymBsTap::AddPacketHooks(DownlinkHook downlink, UplinkHook uplink)
{
    auto hook = std::make_unique<HookSubscriber>();
    hook->downlink = std::move(downlink);
    hook->uplink = std::move(uplink);
    Subscribe(hook.get());
    m_hooks.push_back(std::move(hook));
}

void
CellGymBsTap::AddTtiHook(TtiHook tti)
{
    auto hook = std::make_unique<HookSubscriber>();
    hook->tti = std::move(tti);
    Subscribe(hook.get());
    m_hooks.push_back(std::move(hook));
}

void
CellGymBsTap::SetActiveTimeoutMs(double ms)
{
    m_activeTimeout = MicroSeconds(static_cast<int64_t>(ms * 1000));
}

void
CellGymBsTap::InstallRadio(CellGymBsRadio radio, Ptr<NetDevice> bsDevice, Ptr<NetDevice> s1uDevice)
{
    m_radio = std::move(radio);
    m_bsDevice = bsDevice;
    s1uDevice->TraceConnectWithoutContext("MacTx", MakeCallback(&CellGymBsTap::OnS1uTx, this));
    s1uDevice->TraceConnectWithoutContext("MacRx", MakeCallback(&CellGymBsTap::OnS1uRx, this));
    // The TTI closes mid-TTI (LTE: x.5 ms), between the TTIs' transport blocks.
    Simulator::Schedule(m_radio.tti / 2, &CellGymBsTap::EndTti, this);
    Simulator::Schedule(MilliSeconds(50), &CellGymBsTap::ConnectDrops, this);
}

uint32_t
CellGymBsTap::AddUe(std::function<uint16_t()> rntiOf)
{
    Ue ue;
    ue.rnti = std::move(rntiOf);
    const auto index = static_cast<uint32_t>(m_ues.size());
    m_ues.push_back(std::move(ue));
    for (auto* s : m_subscribers)
    {
        s->OnUeAdded(index);
    }
    return index;
}

void
CellGymBsTap::AddFlow(uint32_t flowId, uint32_t ueIndex, Ipv4Address serverAddress)
{
    NS_ABORT_MSG_IF(ueIndex >= m_ues.size(), "AddFlow: unknown UE " << ueIndex);
    Flow flow;
    flow.ue = ueIndex;
    m_flows[flowId] = flow;
    m_serverToFlow[serverAddress.Get()] = flowId;
}

void
CellGymBsTap::AddFlow(uint32_t flowId, uint32_t ueIndex, Ipv4Address ueAddress, uint16_t uePort)
{
    NS_ABORT_MSG_IF(ueIndex >= m_ues.size(), "AddFlow: unknown UE " << ueIndex);
    Flow flow;
    flow.ue = ueIndex;
    m_flows[flowId] = flow;
    m_ueEndToFlow[{ueAddress.Get(), uePort}] = flowId;
}

int
CellGymBsTap::UeOfRnti(uint16_t rnti)
{
    auto it = m_rntiToUe.find(rnti);
    if (it != m_rntiToUe.end())
    {
        return static_cast<int>(it->second);
    }
    for (uint32_t u = 0; u < m_ues.size(); ++u)
    {
        if (m_ues[u].rnti() == rnti)
        {
            m_rntiToUe[rnti] = u;
            return static_cast<int>(u);
        }
    }
    return -1;
}

void
CellGymBsTap::OnTransportBlock(
    uint16_t rnti, int mcs, uint32_t bytes, bool occupiesRbs, bool newData)
{
    const int u = UeOfRnti(rnti);
    if (u < 0)
    {
        return;
    }
    auto& tti = m_ues[u].tti;
    // A HARQ retransmission occupies resource units (they are not free) but carries no new data.
    if (occupiesRbs)
    {
        const uint32_t rbs = m_radio.rbsOf(mcs, bytes);
        tti.rbs += rbs;
        tti.retxRbs += newData ? 0 : rbs;
    }
    if (!newData)
    {
        return;
    }
    tti.newBytes += bytes;
    tti.lastMcs = mcs;
}

void
CellGymBsTap::EndTti()
{
    const uint32_t usable = m_radio.usableRbsNow ? m_radio.usableRbsNow() : m_radio.usableRbs;
    m_tti.resize(m_ues.size());
    for (uint32_t u = 0; u < m_ues.size(); ++u)
    {
        m_tti[u] = m_ues[u].tti;
    }
    for (auto* s : m_subscribers)
    {
        s->OnTti(m_tti, usable);
    }
    for (auto& ue : m_ues)
    {
        ue.tti.newBytes = 0;
        ue.tti.rbs = 0;
        ue.tti.retxRbs = 0;
    }
    Simulator::Schedule(m_radio.tti, &CellGymBsTap::EndTti, this);
}

void
CellGymBsTap::OnBufferStatus(uint16_t rnti, uint8_t lcid, uint32_t txQueueBytes, uint16_t holMs)
{
    const int u = UeOfRnti(rnti);
    if (u < 0)
    {
        return;
    }
    auto& ue = m_ues[u];
    ue.rlcBytes = txQueueBytes;
    // The RLC reports right after every PDCP PDU, dropped or not (see the choices above).
    if (ue.dropped)
    {
        const bool tailDrop = !m_radio.queuedByRlc(ue.dropped);
        ue.dropped = nullptr;
        if (tailDrop)
        {
            for (auto* s : m_subscribers)
            {
                s->OnRlcTailDrop(u);
            }
        }
    }
}

void
CellGymBsTap::OnBufferDrained(uint16_t rnti, uint8_t lcid)
{
    const int u = UeOfRnti(rnti);
    if (u < 0)
    {
        return;
    }
    for (auto* s : m_subscribers)
    {
        s->OnRlcDrained(u);
    }
    m_ues[u].rlcBytes = 0;
}

void
CellGymBsTap::OnHeadOfLine(uint16_t rnti, uint8_t lcid, std::optional<Time> since)
{
    const int u = UeOfRnti(rnti);
    if (u < 0)
    {
        return;
    }
    for (auto* s : m_subscribers)
    {
        s->OnHeadOfLine(u, lcid, since);
    }
}

void
CellGymBsTap::OnSduSojourn(uint16_t rnti, uint8_t lcid, Time sojourn)
{
    const int u = UeOfRnti(rnti);
    if (u < 0)
    {
        return;
    }
    for (auto* s : m_subscribers)
    {
        if (s->WantsSojourns())
        {
            s->OnSduSojourn(u, lcid, sojourn);
        }
    }
}

bool
CellGymBsTap::WantsSojourns() const
{
    for (const auto* s : m_subscribers)
    {
        if (s->WantsSojourns())
        {
            return true;
        }
    }
    return false;
}

int64_t
CellGymBsTap::FindFlow(Ptr<const Packet> packet, bool downlink, Ipv4Header& inner) const
{
    uint16_t srcPort;
    uint16_t dstPort;
    if (!InnerHeader(packet, inner, srcPort, dstPort))
    {
        return -1;
    }
    // The UE's end is the destination of a downlink packet and the source of an uplink one.
    const Ipv4Address ue = downlink ? inner.GetDestination() : inner.GetSource();
    const Ipv4Address server = downlink ? inner.GetSource() : inner.GetDestination();
    if (!m_ueEndToFlow.empty())
    {
        auto it = m_ueEndToFlow.find({ue.Get(), downlink ? dstPort : srcPort});
        if (it != m_ueEndToFlow.end())
        {
            return it->second;
        }
    }
    auto it = m_serverToFlow.find(server.Get());
    return it == m_serverToFlow.end() ? -1 : static_cast<int64_t>(it->second);
}

void
CellGymBsTap::OnS1uRx(Ptr<const Packet> packet)
{
    Ipv4Header inner;
    const int64_t flow = FindFlow(packet, true, inner);
    if (flow < 0)
    {
        return;
    }
    m_flows[flow].lastArrival = Simulator::Now();
    m_flows[flow].seen = true;
    const double bytes = inner.GetPayloadSize() + inner.GetSerializedSize();
    for (auto* s : m_subscribers)
    {
        s->OnDownlink(static_cast<uint32_t>(flow), bytes, packet);
    }
}

void
CellGymBsTap::OnS1uTx(Ptr<const Packet> packet)
{
    Ipv4Header inner;
    const int64_t flow = FindFlow(packet, false, inner);
    if (flow < 0)
    {
        return;
    }
    for (auto* s : m_subscribers)
    {
        s->OnUplink(static_cast<uint32_t>(flow), packet);
    }
}

void
CellGymBsTap::ConnectDrops()
{
    // Bearers appear when UEs attach, so this runs periodically; it is cheap next to a TTI's
    // events.
    const std::string path = "/NodeList/" + std::to_string(m_bsDevice->GetNode()->GetId())
                             + "/DeviceList/" + std::to_string(m_bsDevice->GetIfIndex()) + "/"
                             + m_radio.rlcPath;
    const Config::MatchContainer matches = Config::LookupMatches(path);
    for (uint32_t i = 0; i < matches.GetN(); ++i)
    {
        Ptr<Object> rlc = matches.Get(i);
        if (!rlc || m_dropsConnected.count(PeekPointer(rlc)) > 0)
        {
            continue;
        }
        // The UE map is keyed by RNTI: ".../UeMap/<rnti>/DataRadioBearerMap/...".
        const std::string& matched = matches.GetMatchedPath(i);
        const auto at = matched.find("/UeMap/");
        const auto rnti = static_cast<uint16_t>(std::stoul(matched.substr(at + 7)));
        rlc->TraceConnectWithoutContext("TxDrop",
                                        MakeCallback(&CellGymBsTap::OnRlcDrop, this).Bind(rnti));
        m_dropsConnected.insert(PeekPointer(rlc));
    }
    Simulator::Schedule(MilliSeconds(m_dropsConnected.size() < m_ues.size() ? 50 : 500),
                        &CellGymBsTap::ConnectDrops,
                        this);
}

void
CellGymBsTap::OnRlcDrop(uint16_t rnti, Ptr<const Packet> p)
{
    const int u = UeOfRnti(rnti);
    if (u >= 0)
    {
        m_ues[u].dropped = p;
    }
}

const CellGymBsRadio&
CellGymBsTap::GetRadio() const
{
    return m_radio;
}

Time
CellGymBsTap::GetTti() const
{
    return m_radio.tti;
}

uint32_t
CellGymBsTap::GetNUes() const
{
    return static_cast<uint32_t>(m_ues.size());
}

double
CellGymBsTap::GetRlcBytes(uint32_t ueIndex) const
{
    return m_ues.at(ueIndex).rlcBytes;
}

uint32_t
CellGymBsTap::GetFlowUe(uint32_t flowId) const
{
    return m_flows.at(flowId).ue;
}

bool
CellGymBsTap::IsFlowActive(uint32_t flowId, Time now) const
{
    const Flow& f = m_flows.at(flowId);
    // Time::Min() would overflow `now - lastArrival`: a flow never seen is not active.
    return f.seen && now - f.lastArrival < m_activeTimeout;
}

uint32_t
CellGymBsTap::ActiveFlows(uint32_t ueIndex, Time now) const
{
    uint32_t n = 0;
    for (const auto& [id, f] : m_flows)
    {
        n += (f.ue == ueIndex && f.seen && now - f.lastArrival < m_activeTimeout) ? 1 : 0;
    }
    return n;
}

bool
CellGymBsTap::UeHasActiveFlow(uint32_t ueIndex, Time now) const
{
    for (const auto& [id, f] : m_flows)
    {
        if (f.ue == ueIndex && f.seen && now - f.lastArrival < m_activeTimeout)
        {
            return true;
        }
    }
    return false;
}

uint32_t
CellGymBsTap::GetUeActiveFlows(uint32_t flowId) const
{
    const Time now = Simulator::Now();
    return ActiveFlows(GetFlowUe(flowId), now) + (IsFlowActive(flowId, now) ? 0 : 1);
}

} // namespace ns3
