// SPDX-License-Identifier: GPL-2.0-only
// The controllers outside the senders: XCP's or RCP's router per UE at the base station, XCP-r's
// receivers, PBE-CC's monitor.
#include "cellgym-controller-helper.h"

#include "cellgym-explicit-tags.h"
#include "cellgym-pbe-monitor.h"
#include "cellgym-xcpr-receiver.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include <memory>
#include <set>

namespace ns3
{

namespace
{

/// A TCP ACK a UE's IP layer sends (its SendOutgoing trace): the flow it belongs to (its source
/// port less kCellGymBasePort) and its header; false for anything else.
bool
UeAckOf(const Ipv4Header& h, Ptr<const Packet> p, uint32_t& flow, TcpHeader& tcp)
{
    if (h.GetProtocol() != 6 || p->PeekHeader(tcp) == 0 || (tcp.GetFlags() & TcpHeader::ACK) == 0)
    {
        return false;
    }
    flow = tcp.GetSourcePort() - kCellGymBasePort;
    return true;
}

/// The UEs' IP layers' trace callbacks.
using IpTrace = Callback<void, const Ipv4Header&, Ptr<const Packet>, uint32_t>;

/// PBE-CC at the UEs: each stamps its monitor's rate for the flow on the ACKs it sends.
void
InstallPbeUeHooks(const RadioCell& cell,
                  std::shared_ptr<CellGymPbeMonitor> pbeMonitor,
                  const std::set<uint32_t>& pbeFlows,
                  uint32_t numUes)
{
    Ptr<CellGymBsTap> tap = cell.tap;
    for (uint32_t u = 0; u < numUes; ++u)
    {
        cell.ueNodes.Get(u)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
            "SendOutgoing",
            IpTrace(
                [pbeMonitor, tap, pbeFlows](const Ipv4Header& h, Ptr<const Packet> p, uint32_t)
                {
                    uint32_t flow = 0;
                    TcpHeader tcp;
                    if (UeAckOf(h, p, flow, tcp) && pbeFlows.count(flow) > 0)
                    {
                        const double bps = pbeMonitor->FlowRateBps(tap->GetFlowUe(flow),
                                                                   tap->GetUeActiveFlows(flow));
                        pbeMonitor->OnUeAck(flow, tcp.GetAckNumber().GetValue(), bps);
                    }
                }));
    }
}

} // namespace

CellGymControllerHelper::CellGymControllerHelper(const CellGymScenarioConfig& cfg)
    : m_cfg(cfg)
{
}

void
CellGymControllerHelper::InstallBaseStationRouters(
    std::vector<Ptr<CellGymExplicitRouter>>& ueRouters,
    CellGymWiredSide& wired,
    const RadioCell& cell) const
{
    if (!m_cfg.HasExplicitRouter() || m_cfg.HasWiredBottleneck())
    {
        return;
    }
    std::vector<uint32_t> ueOfFlow(m_cfg.flows.size(), 0);
    for (const auto& fc : m_cfg.flows)
    {
        ueOfFlow[fc.flowId] = fc.ue;
    }
    Ptr<XrcEnbAgent> agent = cell.agent;
    Ptr<CellGymBsTap> tap = cell.tap;
    for (uint32_t u = 0; u < m_cfg.numUes; ++u)
    {
        Ptr<CellGymExplicitRouter> r = CreateObject<CellGymExplicitRouter>();
        r->Configure(m_cfg.RouterKind(), m_cfg.RouterKnobs());
        r->Start(
            [agent, u]()
            {
                return agent->GetCapacityBytesPerMs(u);
            },
            [tap, u]()
            {
                return tap->GetRlcBytes(u);
            });
        ueRouters.push_back(r);
    }
    CellGymWiredRouter& wiredRouter = wired.explicitRouter;
    tap->AddPacketHooks(
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

void
CellGymControllerHelper::InstallXcprReceivers(CellGymWiredSide& wired, const RadioCell& cell) const
{
    CellGymWiredRouter& wiredRouter = wired.explicitRouter;
    if (wiredRouter.xcprFlows.empty())
    {
        return;
    }
    for (uint32_t u = 0; u < m_cfg.numUes; ++u)
    {
        Ptr<Ipv4L3Protocol> ip = cell.ueNodes.Get(u)->GetObject<Ipv4L3Protocol>();
        ip->TraceConnectWithoutContext(
            "LocalDeliver",
            IpTrace(
                [&wiredRouter](const Ipv4Header& h, Ptr<const Packet> p, uint32_t)
                {
                    TcpHeader tcp;
                    if (h.GetProtocol() != 6 || p->PeekHeader(tcp) == 0)
                    {
                        return;
                    }
                    const uint32_t flow = tcp.GetDestinationPort() - kCellGymBasePort;
                    if (wiredRouter.xcprFlows.count(flow) > 0
                        && p->GetSize() > tcp.GetSerializedSize())
                    {
                        wiredRouter.xcpr.OnReceiverData(flow, tcp.GetSequenceNumber().GetValue());
                    }
                }));
        ip->TraceConnectWithoutContext(
            "SendOutgoing",
            IpTrace(
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

void
CellGymControllerHelper::InstallPbe(const RadioCell& cell) const
{
    std::set<uint32_t> pbeFlows;
    for (const auto& fc : m_cfg.flows)
    {
        if (fc.cca == "pbecc")
        {
            pbeFlows.insert(fc.flowId);
        }
    }
    if (pbeFlows.empty())
    {
        return;
    }
    const uint32_t numUes = m_cfg.numUes;
    PbeMonitorKnobs pk;
    pk.slotsPerMs = 1e-3 / cell.tap->GetTti().GetSeconds();
    auto pbeMonitor = std::make_shared<CellGymPbeMonitor>(numUes, pk);
    auto allocs = std::make_shared<std::vector<PbeSlotAllocation>>(numUes);
    CellGymBsTap* tap = PeekPointer(cell.tap);
    cell.tap->AddTtiHook(
        [pbeMonitor, allocs, tap](const std::vector<CellGymBsUeTti>& tti, uint32_t usable)
        {
            // What the UE decodes of the TTI's control messages: new and retransmitted units,
            // and the bytes all usable units would carry at its latest MCS.
            for (size_t u = 0; u < tti.size(); ++u)
            {
                const double fullBytes = tap->GetRadio().bytesOf(tti[u].lastMcs, usable);
                (*allocs)[u] = PbeSlotAllocation{static_cast<double>(tti[u].rbs - tti[u].retxRbs),
                                                 static_cast<double>(tti[u].newBytes),
                                                 static_cast<double>(tti[u].retxRbs),
                                                 fullBytes};
            }
            pbeMonitor->OnSlot(*allocs, usable);
        });
    InstallPbeUeHooks(cell, pbeMonitor, pbeFlows, numUes);
    cell.tap->AddPacketHooks(
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

} // namespace ns3
