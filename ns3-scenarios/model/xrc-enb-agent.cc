// SPDX-License-Identifier: GPL-2.0-only
#include "xrc-enb-agent.h"

#include "xrc-feedback-tag.h"

#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <fstream>
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
 * - The capacity window closes every TTI when the tap closes it, at x.5 ms (TBs are traced at
 *   whole ms); C is the sum of the last WindowTtis TTIs over the window length (zeros before the
 *   window first fills).
 * - A flow is active once a downlink packet of it has passed the eNB's S1-U device (MacRx) less
 *   than the tap's ActiveTimeoutMs ago. C_i = C / n, n = active flows of the UE, counting the
 *   flow itself if it is not active (the rate it would get by starting).
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

/// Per-UE state of the agent.
struct UeAgentState
{
    std::vector<double> ring;      //!< capacity of each of the last W TTIs, bytes
    size_t ringPos{0};             //!< next slot of the ring
    double ringSum{0};             //!< sum of the ring, bytes
    std::optional<Time> headSince; //!< arrival of the RLC's head of line (none: empty)
    double stepCapBytes{0};        //!< capacity summed over the step's TTIs, bytes
    double stepTxBytes{0};         //!< new-TB bytes in the step
    double stepHolMaxMs{0};        //!< max age of a head that left in the step, ms
    uint32_t stepDrops{0};         //!< RLC tail drops in the step
    uint32_t stepTtis{0};          //!< TTIs in the step
};

struct XrcEnbAgent::Impl
{
    uint32_t windowTtis{40};       //!< capacity averaging window
    uint32_t maxRlcBytes{0};       //!< RLC buffer size (kept for callers)
    Ptr<CellGymBsTap> tap;         //!< the base station's tap
    std::vector<UeAgentState> ues; //!< UEs in the tap's order
    std::string sojournPath;       //!< SDU sojourn file ("": none)
    std::ofstream sojournFile;     //!< ... once opened

    double CapacityMbps(uint32_t ue) const
    {
        return ues[ue].ringSum * 8.0 / (windowTtis * tap->GetRadio().ttiS) / 1e6;
    }

    /// Close the TTI: new-TB bytes plus the UE's share of the idle RBs.
    void EndTti(const std::vector<CellGymBsUeTti>& tti, uint32_t usable)
    {
        const Time now = Simulator::Now();
        const CellGymBsRadio& radio = tap->GetRadio();
        uint32_t used = 0;
        uint32_t eligible = 0;
        for (uint32_t u = 0; u < ues.size(); ++u)
        {
            used += tti[u].rbs;
            eligible += tap->UeHasActiveFlow(u, now) ? 1 : 0;
        }
        const double idle = used >= usable ? 0.0 : static_cast<double>(usable - used);
        for (uint32_t u = 0; u < ues.size(); ++u)
        {
            auto& s = ues[u];
            // A UE without an active flow is offered what it would get if it joined.
            const uint32_t sharers = eligible + (tap->UeHasActiveFlow(u, now) ? 0 : 1);
            const double cap = tti[u].newBytes + radio.bytesOf(tti[u].lastMcs, idle / sharers);
            s.ringSum += cap - s.ring[s.ringPos];
            s.ring[s.ringPos] = cap;
            s.ringPos = (s.ringPos + 1) % s.ring.size();
            s.stepCapBytes += cap;
            s.stepTxBytes += tti[u].newBytes;
            s.stepTtis += 1;
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

    void OnSojourn(uint32_t u, Time sojourn)
    {
        if (!sojournFile.is_open())
        {
            sojournFile.open(sojournPath);
            NS_ABORT_MSG_IF(!sojournFile, "cannot write SojournTraceFile " << sojournPath);
            sojournFile << "time_s,ue,sojourn_ms\n";
        }
        sojournFile << Simulator::Now().GetSeconds() << "," << u << ","
                    << sojourn.ToDouble(Time::MS) << std::endl;
    }

    /// Stamp the flow's feedback on an uplink packet: a byte tag and a packet tag.
    void Stamp(uint32_t flow, Ptr<const Packet> packet) const
    {
        XrcFeedbackTag tag;
        tag.rateMbps = FlowRate(flow);
        tag.holMs = HolMs(ues[tap->GetFlowUe(flow)], Simulator::Now());
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
    }

    double FlowRate(uint32_t flowId) const
    {
        const uint32_t ue = tap->GetFlowUe(flowId);
        const Time now = Simulator::Now();
        const bool self = tap->IsFlowActive(flowId, now);
        const uint32_t n = tap->ActiveFlows(ue, now) + (self ? 0 : 1);
        return CapacityMbps(ue) / n;
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
XrcEnbAgent::Attach(Ptr<CellGymBsTap> tap)
{
    NS_ABORT_MSG_IF(m_impl->tap, "XrcEnbAgent::Attach: already attached");
    m_impl->tap = tap;
    tap->Subscribe(this);
}

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
XrcEnbAgent::OnUeAdded(uint32_t ue)
{
    UeAgentState s;
    s.ring.assign(m_impl->windowTtis, 0.0);
    m_impl->ues.push_back(std::move(s));
}

void
XrcEnbAgent::OnTti(const std::vector<CellGymBsUeTti>& ues, uint32_t usable)
{
    m_impl->EndTti(ues, usable);
}

void
XrcEnbAgent::OnRlcTailDrop(uint32_t ue)
{
    m_impl->ues[ue].stepDrops += 1;
}

void
XrcEnbAgent::OnRlcDrained(uint32_t ue)
{
    Impl::SetHead(m_impl->ues[ue], std::nullopt);
}

void
XrcEnbAgent::OnHeadOfLine(uint32_t ue, uint8_t lcid, std::optional<Time> since)
{
    Impl::SetHead(m_impl->ues[ue], since);
}

void
XrcEnbAgent::OnSduSojourn(uint32_t ue, uint8_t lcid, Time sojourn)
{
    m_impl->OnSojourn(ue, sojourn);
}

bool
XrcEnbAgent::WantsSojourns() const
{
    return !m_impl->sojournPath.empty();
}

void
XrcEnbAgent::OnUplink(uint32_t flow, Ptr<const Packet> packet)
{
    m_impl->Stamp(flow, packet);
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

XrcUeStepStats
XrcEnbAgent::TakeStepStats(uint32_t ueIndex)
{
    auto& s = m_impl->ues.at(ueIndex);
    XrcUeStepStats out;
    const double seconds = s.stepTtis * m_impl->tap->GetRadio().ttiS;
    if (seconds > 0)
    {
        out.capacityMbps = s.stepCapBytes * 8.0 / seconds / 1e6;
        out.txMbps = s.stepTxBytes * 8.0 / seconds / 1e6;
    }
    out.holMs = Impl::HolMs(s, Simulator::Now());
    out.holMaxMs = std::max(s.stepHolMaxMs, out.holMs);
    out.rlcBytes = m_impl->tap->GetRlcBytes(ueIndex);
    out.rlcDrops = s.stepDrops;
    s.stepCapBytes = s.stepTxBytes = s.stepHolMaxMs = 0;
    s.stepDrops = 0;
    s.stepTtis = 0;
    return out;
}

} // namespace ns3
