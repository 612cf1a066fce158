// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_BS_TAP_H
#define CELLGYM_BS_TAP_H

#include "ns3/ipv4-address.h"
#include "ns3/ipv4-header.h"
#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/packet.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @brief What a cell type tells the tap about its radio (an installer fills it: LTE in
 * cellgym-bs-tap-lte.cc, NR in nr/cellgym-bs-tap-nr.cc).
 */
struct CellGymBsRadio
{
    Time tti{MilliSeconds(1)}; //!< scheduling interval: LTE's TTI or NR's slot
    double ttiS{1e-3};         //!< the same, in seconds
    uint32_t usableRbs{0};     //!< resource units per TTI the scheduler can allocate
    /// Optional: the units the closing TTI offered the downlink (NR: its downlink symbols);
    /// called once per TTI when set, instead of usableRbs.
    std::function<uint32_t()> usableRbsNow;
    /// Resource units a transport block of `bytes` at `mcs` occupies.
    std::function<uint32_t(int mcs, uint32_t bytes)> rbsOf;
    /// Bytes `rbs` (fractional) resource units carry at `mcs` (0 for mcs < 0).
    std::function<double(int mcs, double rbs)> bytesOf;
    /// Whether a packet named by the RLC's TxDrop trace was queued anyway (not a tail drop).
    std::function<bool(Ptr<const Packet>)> queuedByRlc;
    /// Config path, below the base station's device, of its data-bearer RLC objects.
    std::string rlcPath;
};

/// What one UE got in a closing TTI (NR: slot), as the scheduler's transport blocks say.
struct CellGymBsUeTti
{
    uint32_t newBytes{0}; //!< bytes of its new transport blocks
    uint32_t rbs{0};      //!< resource units of all its transport blocks (one MIMO layer)
    uint32_t retxRbs{0};  //!< ... of its HARQ retransmissions among them
    int lastMcs{-1};      //!< MCS of its latest new transport block (-1: none yet)
};

/**
 * @brief A base-station controller: what the tap tells its subscribers (every method does
 * nothing unless overridden). UEs and flows are named by their index in the tap.
 */
class CellGymBsTapSubscriber
{
  public:
    virtual ~CellGymBsTapSubscriber() = default;
    /// @brief The tap declared a UE (its indices count up from 0).
    virtual void OnUeAdded(uint32_t ue);
    /**
     * @brief A TTI (NR: slot) closed, mid-TTI.
     * @param ues every UE's transport blocks in it (AddUe order)
     * @param usable the resource units it offered the downlink
     */
    virtual void OnTti(const std::vector<CellGymBsUeTti>& ues, uint32_t usable);
    /// @brief The UE's RLC dropped a packet because its buffer was full.
    virtual void OnRlcTailDrop(uint32_t ue);
    /// @brief The UE's RLC buffer ran empty after a transmit opportunity.
    virtual void OnRlcDrained(uint32_t ue);
    /// @brief A data bearer's RLC head of line changed; `since` is the new head's arrival at
    /// the RLC (none: the queue is empty).
    virtual void OnHeadOfLine(uint32_t ue, uint8_t lcid, std::optional<Time> since);
    /// @brief An SDU's first byte left the RLC after `sojourn` there (only if WantsSojourns).
    virtual void OnSduSojourn(uint32_t ue, uint8_t lcid, Time sojourn);
    /// @return whether the subscriber wants OnSduSojourn (asked when the tap is installed)
    virtual bool WantsSojourns() const;
    /// @brief A downlink packet of a declared flow arrived at the S1-U device: its inner IPv4
    /// packet's size in bytes, and the packet with its outer headers.
    virtual void OnDownlink(uint32_t flow, double bytes, Ptr<const Packet> packet);
    /// @brief An uplink packet of a declared flow leaves the S1-U device (a subscriber may tag
    /// it; later subscribers see the tags).
    virtual void OnUplink(uint32_t flow, Ptr<const Packet> packet);
};

/**
 * @brief The base-station tap: the one hook point into a base station for every controller
 * there (XRC's agent, XCP's and RCP's routers, PBE-CC's monitor).
 *
 * A cell type's installer (CellGymLteBsTap, CellGymNrBsTap) connects it to the base station's
 * traces (transport blocks, the RLC watch in the carrier manager) and describes the radio; the
 * tap connects the S1-U device's MacRx/MacTx traces, closes a TTI mid-TTI every TTI, connects
 * the RLCs' TxDrop traces as bearers appear, maps RNTIs to UEs and packets to flows (inner
 * GTP-U headers), keeps each UE's latest RLC queue and each flow's downlink activity, and
 * tells its subscribers, in the order they subscribed.
 */
class CellGymBsTap : public Object
{
  public:
    static TypeId GetTypeId();
    CellGymBsTap();
    ~CellGymBsTap() override;

    /**
     * @brief Add a subscriber (it must outlive the simulation). Subscribe before installing:
     * WantsSojourns is asked then.
     */
    void Subscribe(CellGymBsTapSubscriber* subscriber);

    /// A downlink packet of a declared flow at the S1-U device: flow, inner IPv4 packet size in
    /// bytes, and the packet (with its outer headers).
    using DownlinkHook = std::function<void(uint32_t, double, Ptr<const Packet>)>;
    /// An uplink packet of a declared flow leaves the S1-U device: flow, packet.
    using UplinkHook = std::function<void(uint32_t, Ptr<const Packet>)>;
    /// A TTI (NR: slot) closed: every UE's transport blocks and the units it offered.
    using TtiHook = std::function<void(const std::vector<CellGymBsUeTti>&, uint32_t usable)>;

    /// @brief Subscribe functions to the packets (an empty one is skipped).
    void AddPacketHooks(DownlinkHook downlink, UplinkHook uplink);
    /// @brief Subscribe a function to the TTIs.
    void AddTtiHook(TtiHook hook);

    /**
     * @brief Hook the tap into a base station (an installer calls it, last).
     * @param radio what the cell type tells the tap
     * @param bsDevice the base station's device (its RLCs are found below it)
     * @param s1uDevice the base station's S1-U device (uplink GTP-U packets leave through it)
     */
    void InstallRadio(CellGymBsRadio radio, Ptr<NetDevice> bsDevice, Ptr<NetDevice> s1uDevice);

    /**
     * @brief Declare a UE by a function giving its current RNTI (call after attaching it).
     * @return the UE's index (the order of the calls)
     */
    uint32_t AddUe(std::function<uint16_t()> rntiOf);

    /**
     * @brief Declare a flow (call before it starts).
     * @param flowId the flow's index in the scenario
     * @param ueIndex the UE's index (from AddUe)
     * @param serverAddress the address of the flow's server: every flow has its own server, so
     *        the inner IP header of a GTP-U packet identifies the flow
     */
    void AddFlow(uint32_t flowId, uint32_t ueIndex, Ipv4Address serverAddress);

    /**
     * @brief Declare a flow by its UE end (call before it starts), for flows that share a server.
     *
     * Downlink packets match on inner destination address and port, uplink ACKs on inner source
     * address and port (TCP or UDP). A match by UE end takes precedence over one by server.
     * @param flowId the flow's index in the scenario
     * @param ueIndex the UE's index (from AddUe)
     * @param ueAddress the UE's IPv4 address
     * @param uePort the flow's port at the UE
     */
    void AddFlow(uint32_t flowId, uint32_t ueIndex, Ipv4Address ueAddress, uint16_t uePort);

    /**
     * @brief An installer saw a downlink transport block.
     * @param rnti the UE
     * @param mcs its MCS
     * @param bytes its size
     * @param occupiesRbs count its resource units as used (false for a second MIMO layer)
     * @param newData a new transmission (false: a HARQ retransmission)
     */
    void OnTransportBlock(uint16_t rnti, int mcs, uint32_t bytes, bool occupiesRbs, bool newData);
    /// @brief An installer relayed an RLC buffer status report: its queue size (its whole-ms
    /// HoL delay is not used: OnHeadOfLine gives the exact one).
    void OnBufferStatus(uint16_t rnti, uint8_t lcid, uint32_t txQueueBytes, uint16_t holMs);
    /// @brief An installer saw a data bearer's RLC head of line change (none: queue empty).
    void OnHeadOfLine(uint16_t rnti, uint8_t lcid, std::optional<Time> since);
    /// @brief An installer saw an SDU's first byte leave the RLC after `sojourn` there.
    void OnSduSojourn(uint16_t rnti, uint8_t lcid, Time sojourn);
    /// @brief An installer saw a data bearer's RLC buffer run empty.
    void OnBufferDrained(uint16_t rnti, uint8_t lcid);
    /// @return whether a subscriber wants the SDUs' sojourns (installers then report them)
    bool WantsSojourns() const;

    /// @return the radio as the installer described it
    const CellGymBsRadio& GetRadio() const;
    /// @return the scheduling interval (LTE: the TTI; NR: the slot)
    Time GetTti() const;
    /// @return the UEs declared
    uint32_t GetNUes() const;
    /// @return the UE's latest RLC transmit queue, bytes (0 once it drained)
    double GetRlcBytes(uint32_t ueIndex) const;
    /// @return the UE index of a declared flow
    uint32_t GetFlowUe(uint32_t flowId) const;
    /// @return whether a downlink packet of the flow passed the S1-U device less than
    ///         ActiveTimeout ago
    bool IsFlowActive(uint32_t flowId, Time now) const;
    /// @return the UE's active flows at `now`
    uint32_t ActiveFlows(uint32_t ueIndex, Time now) const;
    /// @return whether the UE has an active flow at `now`
    bool UeHasActiveFlow(uint32_t ueIndex, Time now) const;
    /// @return the active flows of the flow's UE, the flow itself counted
    uint32_t GetUeActiveFlows(uint32_t flowId) const;

    /// @brief Set the inter-arrival time after which a flow counts as inactive, in ms.
    void SetActiveTimeoutMs(double ms);

  private:
    /// Per-UE state of the tap.
    struct Ue
    {
        std::function<uint16_t()> rnti; //!< the UE's current RNTI
        CellGymBsUeTti tti;             //!< its transport blocks in the current TTI
        double rlcBytes{0};             //!< latest RLC transmit queue
        Ptr<const Packet> dropped;      //!< packet the RLC TxDrop trace just named
    };

    /// Per-flow state of the tap.
    struct Flow
    {
        uint32_t ue{0};   //!< UE index
        Time lastArrival; //!< last downlink packet at the S1-U device
        bool seen{false}; //!< a downlink packet has passed it
    };

    /// @return the UE of an RNTI, -1 if none (cached; the cache is refreshed on misses)
    int UeOfRnti(uint16_t rnti);
    /// @return the flow of an S1-U packet (its inner header into `inner`) by its UE end, else by
    ///         its server; -1 if none (or not an IPv4 packet in GTP-U)
    int64_t FindFlow(Ptr<const Packet> packet, bool downlink, Ipv4Header& inner) const;
    /// Close the current TTI: tell the subscribers, then start the next one.
    void EndTti();
    /// The S1-U device received a (downlink) packet.
    void OnS1uRx(Ptr<const Packet> packet);
    /// The S1-U device sends an (uplink) packet.
    void OnS1uTx(Ptr<const Packet> packet);
    /// Connect the TxDrop trace of every data-bearer RLC that exists now (runs periodically).
    void ConnectDrops();
    /// The RLC's TxDrop trace fired: judged on the buffer report that follows synchronously.
    void OnRlcDrop(uint16_t rnti, Ptr<const Packet> p);

    Time m_activeTimeout{MilliSeconds(200)};     //!< inter-arrival time that ends activity
    CellGymBsRadio m_radio;                      //!< what the cell type tells the tap
    Ptr<NetDevice> m_bsDevice;                   //!< the base station
    std::vector<Ue> m_ues;                       //!< UEs in AddUe order
    std::vector<CellGymBsUeTti> m_tti;           //!< OnTti's argument, reused
    std::map<uint16_t, uint32_t> m_rntiToUe;     //!< RNTI -> UE index
    std::map<uint32_t, Flow> m_flows;            //!< flow id -> state
    std::map<uint32_t, uint32_t> m_serverToFlow; //!< server IPv4 -> flow id
    std::map<std::pair<uint32_t, uint16_t>, uint32_t> m_ueEndToFlow; //!< (UE IPv4, port) -> flow
    std::set<const Object*> m_dropsConnected;           //!< RLCs whose TxDrop trace is connected
    std::vector<CellGymBsTapSubscriber*> m_subscribers; //!< in subscription order
    std::vector<std::unique_ptr<CellGymBsTapSubscriber>> m_hooks; //!< the hook subscribers
};

} // namespace ns3

#endif // CELLGYM_BS_TAP_H
