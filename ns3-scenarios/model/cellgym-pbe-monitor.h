// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_PBE_MONITOR_H
#define CELLGYM_PBE_MONITOR_H

#include "ns3/tag.h"

#include <cstdint>
#include <deque>
#include <map>
#include <vector>

namespace ns3
{

/// @brief PBE-CC's knobs of the UE's monitor (defaults: envs/fastsim/pbe_params.py's PbeKnobs).
struct PbeMonitorKnobs
{
    uint32_t windowSlots{8};      //!< slots over which a UE averages the allocations it decodes
    double activeMs{100};         //!< a UE scheduled within this many ms is active
    double slotsPerMs{1};         //!< LTE: 1 (1 ms TTIs); NR: 2^numerology
    double tbOverheadBytes{3};    //!< MAC/RLC header bytes per transport block
    double sduOverheadBytes{2};   //!< RLC header bytes per further PDCP PDU in a block
    double pduBytes{1502};        //!< a PDCP PDU (IP packet + PDCP header)
    double segPayloadBytes{1448}; //!< TCP payload of a full segment
};

/// @brief What a UE decodes of one slot's downlink control messages for one UE.
struct PbeSlotAllocation
{
    double newRbs{0};    //!< resource units of the UE's new transport blocks
    double newBytes{0};  //!< their bytes (the blocks' sizes)
    double retxRbs{0};   //!< resource units of its HARQ retransmissions (used, no capacity)
    double fullBytes{0}; //!< bytes all usable units would carry at the UE's MCS (a block's size)
};

/**
 * @brief PBE-CC's physical-layer monitor at every UE of a cell, and its rate's way to the sender
 * (docs/pbe-cc.md; the fast model's envs/fastsim/ue_monitor.py, whose rule this is).
 *
 * Per slot, every UE decodes every UE's allocation (here: what the base-station tap saw the
 * scheduler send, CellGymBsTap::AddTtiHook). Over the last `windowSlots` slots it keeps its own
 * new-block units and bytes, everybody's used units, the units offered (usable: 0 in NR's uplink
 * slots) and the bytes the whole cell would carry at its MCS, each averaged per slot. Then: n = the
 * active UEs (scheduled within `activeMs`, itself always counted), idle = usable - used, base = own
 * + idle / n, fair = usable / n; below the fair share a UE also claims what the other active UEs
 * hold above theirs: share = min(fair, base + sum_j max(0, own_j + idle / n - fair)). Its rate:
 * what its own blocks carried plus (share - own) / usable of the full-cell bytes, as PDCP bytes per
 * ms (RateBytesPerMs). (The fast model values the whole share at the full-cell bytes; here the own
 * part is the blocks' real size: NR's blocks carry about 5 % less than the units' nominal bytes at
 * the MCS, and the UE sees both on the control channel.)
 *
 * The receiver stamps its rate, split among the UE's active flows, on every ACK it sends
 * (OnUeAck, keyed by the acknowledgement number: ns-3's LTE core network strips packet tags), and
 * the base station puts it on the ACK as a PbeRateTag when it leaves for the server
 * (RateOfAck): the sender reads it one uplink delay after the UE measured it.
 */
class CellGymPbeMonitor
{
  public:
    CellGymPbeMonitor(uint32_t numUes, PbeMonitorKnobs knobs);

    /// @brief The UEs decode a slot: one allocation per UE, `usable` units offered.
    void OnSlot(const std::vector<PbeSlotAllocation>& ues, double usable);

    /// @return the UE's rate after the latest slot, PDCP bytes per ms (0 before any slot)
    double RateBytesPerMs(uint32_t ue) const;

    /// @return a flow's rate as segment payload, bit/s: the UE's rate over `activeFlows`
    double FlowRateBps(uint32_t ue, uint32_t activeFlows) const;

    /// @brief A UE sends an ACK of a flow (its acknowledgement number) carrying `rateBps`.
    void OnUeAck(uint32_t flow, uint32_t ackNo, double rateBps);

    /// @brief An ACK of a flow reaches the base station: the rate it carries; false if none.
    bool RateOfAck(uint32_t flow, uint32_t ackNo, double& rateBps);

    const PbeMonitorKnobs& Knobs() const;

  private:
    struct Ue
    {
        std::vector<double> newRing;   //!< new-block units per slot
        std::vector<double> bytesRing; //!< new-block PDCP bytes per slot
        std::vector<double> retxRing;  //!< retransmission units per slot
        std::vector<double> fullRing;  //!< full-cell PDCP bytes at the UE's MCS per slot
        double newSum{0};
        double bytesSum{0};
        double retxSum{0};
        double fullSum{0};
        int64_t lastSlot{-1}; //!< the latest slot in which the UE was scheduled (-1: never)
        double rate{0};       //!< PDCP bytes per ms
    };

    PbeMonitorKnobs m_knobs;
    std::vector<Ue> m_ues;
    int64_t m_slot{0};                                                  //!< slots decoded so far
    std::vector<double> m_usableRing;                                   //!< units offered per slot
    double m_usableSum{0};                                              //!< their sum
    std::map<uint32_t, std::deque<std::pair<uint32_t, double>>> m_acks; //!< flow -> (ackNo, bps)
};

/// @brief The rate a PBE-CC receiver stamped on an ACK (payload bit/s), from the base station on.
class PbeRateTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer i) const override;
    void Deserialize(TagBuffer i) override;
    void Print(std::ostream& os) const override;

    double rateBps{0}; //!< the flow's rate
};

} // namespace ns3

#endif // CELLGYM_PBE_MONITOR_H
