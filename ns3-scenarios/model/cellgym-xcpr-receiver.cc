// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-xcpr-receiver.h"

#include "ns3/epc-gtpu-header.h"
#include "ns3/ipv4-header.h"
#include "ns3/ppp-header.h"
#include "ns3/udp-header.h"

#include <algorithm>

namespace ns3
{

namespace
{
/// Records kept per flow at most (older ones belong to segments or ACKs lost on the way).
constexpr size_t kMaxRecords = 1 << 16;
} // namespace

void
XcprReceiverState::Update(
    double fbSum, double hCwnd, uint32_t hEpoch, double segBytes, double ownFb)
{
    if (hEpoch != epoch)
    {
        cwnd = hCwnd + ownFb;
        epoch = hEpoch;
    }
    else
    {
        cwnd += fbSum - seen;
    }
    cwnd = std::clamp(cwnd, segBytes, 4e9);
    seen = fbSum;
}

void
CellGymXcprPath::OnRouterData(
    uint32_t flow, uint32_t seq, double fbTotal, double hCwnd, uint32_t hEpoch, double segBytes)
{
    Flow& f = m_flows[flow];
    f.headers[seq] = Header{fbTotal, hCwnd, hEpoch, segBytes, fbTotal - f.routerTotal};
    f.routerTotal = fbTotal;
    while (f.headers.size() > kMaxRecords)
    {
        f.headers.erase(f.headers.begin());
    }
}

void
CellGymXcprPath::OnReceiverData(uint32_t flow, uint32_t seq)
{
    Flow& f = m_flows[flow];
    auto it = f.headers.find(seq);
    if (it == f.headers.end())
    {
        return;
    }
    const Header h = it->second;
    f.headers.erase(f.headers.begin(), std::next(it));
    f.rx.Update(h.fbTotal, h.hCwnd, h.hEpoch, h.segBytes, h.ownFb);
}

void
CellGymXcprPath::OnReceiverAck(uint32_t flow, uint32_t ackNo)
{
    Flow& f = m_flows[flow];
    if (f.rx.epoch == 0)
    {
        return; // no segment yet (the handshake): nothing to carry
    }
    f.acks.push_back(Ack{ackNo, f.rx.cwnd, f.rx.epoch});
    while (f.acks.size() > kMaxRecords)
    {
        f.acks.pop_front();
    }
}

bool
CellGymXcprPath::WindowOfAck(uint32_t flow, uint32_t ackNo, XcprWindowTag& tag)
{
    Flow& f = m_flows[flow];
    auto it = std::find_if(f.acks.begin(),
                           f.acks.end(),
                           [ackNo](const Ack& a)
                           {
                               return a.ackNo == ackNo;
                           });
    if (it == f.acks.end())
    {
        return false;
    }
    tag.cwndBytes = it->cwnd;
    tag.epoch = it->epoch;
    f.acks.erase(f.acks.begin(), std::next(it));
    return true;
}

const XcprReceiverState&
CellGymXcprPath::Receiver(uint32_t flow)
{
    return m_flows[flow].rx;
}

bool
CellGymXcprPath::InnerTcp(Ptr<const Packet> packet, TcpHeader& tcp)
{
    Ptr<Packet> p = packet->Copy();
    uint8_t first = 0;
    if (p->GetSize() < 2 + 20 + 8 + 8 + 20 + 20 || p->CopyData(&first, 1) != 1)
    {
        return false;
    }
    if ((first >> 4) != 4)
    {
        PppHeader ppp;
        p->RemoveHeader(ppp);
    }
    Ipv4Header outer;
    p->RemoveHeader(outer);
    if (outer.GetProtocol() != 17)
    {
        return false;
    }
    UdpHeader udp;
    p->RemoveHeader(udp);
    GtpuHeader gtpu;
    p->RemoveHeader(gtpu);
    Ipv4Header inner;
    p->RemoveHeader(inner);
    return inner.GetProtocol() == 6 && inner.GetFragmentOffset() == 0 && p->PeekHeader(tcp) > 0;
}

} // namespace ns3
