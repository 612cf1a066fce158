// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-pbe-monitor.h"

#include "ns3/abort.h"

#include <algorithm>

namespace ns3
{

namespace
{
/// ACK records kept per flow at most (older ones belong to ACKs lost in the uplink).
constexpr size_t kMaxAcks = 1 << 16;
} // namespace

CellGymPbeMonitor::CellGymPbeMonitor(uint32_t numUes, PbeMonitorKnobs knobs)
    : m_knobs(knobs)
{
    NS_ABORT_MSG_IF(knobs.windowSlots < 1, "PBE-CC: windowSlots must be at least 1");
    Ue ue;
    ue.newRing.assign(knobs.windowSlots, 0.0);
    ue.bytesRing.assign(knobs.windowSlots, 0.0);
    ue.retxRing.assign(knobs.windowSlots, 0.0);
    ue.fullRing.assign(knobs.windowSlots, 0.0);
    m_ues.assign(numUes, ue);
    m_usableRing.assign(knobs.windowSlots, 0.0);
}

const PbeMonitorKnobs&
CellGymPbeMonitor::Knobs() const
{
    return m_knobs;
}

void
CellGymPbeMonitor::OnSlot(const std::vector<PbeSlotAllocation>& ues, double usable)
{
    NS_ABORT_MSG_IF(ues.size() != m_ues.size(), "PBE-CC: one allocation per UE");
    const uint32_t w = m_knobs.windowSlots;
    const size_t pos = static_cast<size_t>(m_slot % w);
    // What the blocks carry of PDCP PDUs: less their MAC/RLC header and each PDU's RLC header.
    const double pdu = m_knobs.pduBytes;
    for (size_t u = 0; u < ues.size(); ++u)
    {
        Ue& s = m_ues[u];
        const PbeSlotAllocation& a = ues[u];
        if (a.newRbs + a.retxRbs > 0)
        {
            s.lastSlot = m_slot;
        }
        const double pdcp = pdu / (pdu + m_knobs.sduOverheadBytes);
        const double full = std::max(0.0, a.fullBytes - m_knobs.tbOverheadBytes) * pdcp;
        const double own = std::max(0.0, a.newBytes - m_knobs.tbOverheadBytes) * pdcp;
        s.bytesSum += own - s.bytesRing[pos];
        s.bytesRing[pos] = own;
        s.newSum += a.newRbs - s.newRing[pos];
        s.newRing[pos] = a.newRbs;
        s.retxSum += a.retxRbs - s.retxRing[pos];
        s.retxRing[pos] = a.retxRbs;
        s.fullSum += full - s.fullRing[pos];
        s.fullRing[pos] = full;
    }
    // Slots that offer the downlink nothing (NR's uplink slots) count as offered nothing.
    m_usableSum += usable - m_usableRing[pos];
    m_usableRing[pos] = usable;
    const double offered = m_usableSum / w;
    const double activeSlots = m_knobs.activeMs * m_knobs.slotsPerMs;
    auto active = [this, activeSlots](const Ue& s)
    {
        return s.lastSlot >= 0 && static_cast<double>(m_slot - s.lastSlot) < activeSlots;
    };
    uint32_t nAct = 0;
    double used = 0;
    for (const Ue& s : m_ues)
    {
        used += s.newSum + s.retxSum;
        nAct += active(s) ? 1 : 0;
    }
    used /= w;
    const double idle = std::max(0.0, offered - used);
    for (size_t u = 0; u < m_ues.size(); ++u)
    {
        Ue& s = m_ues[u];
        const double n = nAct + (active(s) ? 0 : 1);
        const double fair = offered / n;
        const double own = s.newSum / w;
        const double base = own + idle / n;
        double share = base;
        if (base < fair)
        {
            double over = 0;
            for (size_t j = 0; j < m_ues.size(); ++j)
            {
                if (j != u && active(m_ues[j]))
                {
                    over += std::max(0.0, m_ues[j].newSum / w + idle / n - fair);
                }
            }
            share = std::min(fair, base + over);
        }
        s.rate = offered > 0 ? (s.bytesSum / w + (share - own) / offered * s.fullSum / w)
                                   * m_knobs.slotsPerMs
                             : 0.0;
    }
    m_slot += 1;
}

double
CellGymPbeMonitor::RateBytesPerMs(uint32_t ue) const
{
    return m_ues.at(ue).rate;
}

double
CellGymPbeMonitor::FlowRateBps(uint32_t ue, uint32_t activeFlows) const
{
    const double payload = m_knobs.segPayloadBytes / m_knobs.pduBytes;
    return RateBytesPerMs(ue) * payload * 8e3 / std::max<uint32_t>(activeFlows, 1);
}

void
CellGymPbeMonitor::OnUeAck(uint32_t flow, uint32_t ackNo, double rateBps)
{
    if (rateBps <= 0)
    {
        return; // no estimate yet: the ACK carries none
    }
    auto& acks = m_acks[flow];
    acks.emplace_back(ackNo, rateBps);
    while (acks.size() > kMaxAcks)
    {
        acks.pop_front();
    }
}

bool
CellGymPbeMonitor::RateOfAck(uint32_t flow, uint32_t ackNo, double& rateBps)
{
    auto& acks = m_acks[flow];
    auto it = std::find_if(acks.begin(),
                           acks.end(),
                           [ackNo](const auto& a)
                           {
                               return a.first == ackNo;
                           });
    if (it == acks.end())
    {
        return false;
    }
    rateBps = it->second;
    acks.erase(acks.begin(), std::next(it)); // earlier ones were lost in the uplink
    return true;
}

NS_OBJECT_ENSURE_REGISTERED(PbeRateTag);

TypeId
PbeRateTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PbeRateTag")
                            .SetParent<Tag>()
                            .SetGroupName("CellGym")
                            .AddConstructor<PbeRateTag>();
    return tid;
}

TypeId
PbeRateTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
PbeRateTag::GetSerializedSize() const
{
    return sizeof(double);
}

void
PbeRateTag::Serialize(TagBuffer i) const
{
    i.WriteDouble(rateBps);
}

void
PbeRateTag::Deserialize(TagBuffer i)
{
    rateBps = i.ReadDouble();
}

void
PbeRateTag::Print(std::ostream& os) const
{
    os << "rate=" << rateBps << "bit/s";
}

} // namespace ns3
