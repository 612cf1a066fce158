// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_XRC_ENB_AGENT_H
#define CELLGYM_XRC_ENB_AGENT_H

#include "ns3/ipv4-address.h"
#include "ns3/lte-helper.h"
#include "ns3/net-device-container.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/packet.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ns3
{

class CapacityTrace;

/// @brief Per-UE counters the scenario reads once per environment step (then they restart).
struct XrcUeStepStats
{
    double capacityMbps{
        0};               //!< mean of the capacity estimate over the step (new TBs + free-RB share)
    double txMbps{0};     //!< new transport-block bytes sent in the step, as a rate
    double holMs{0};      //!< RLC HoL delay at the step's end (the head's exact age), ms
    double holMaxMs{0};   //!< largest HoL delay in the step, ms
    double rlcBytes{0};   //!< latest RLC transmit queue size
    uint32_t rlcDrops{0}; //!< packets dropped at the RLC because the buffer was full, in the step
};

/**
 * @brief What a cell type tells XRC's agent about its radio (an adapter fills it: LTE in
 * xrc-enb-agent-lte.cc, NR in nr/xrc-nr-adapter.cc).
 */
struct XrcRadio
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

/**
 * @brief The XRC base-station agent (XRC paper, section III.A): one logic for every cell type.
 *
 * Per UE: capacity from new transport blocks only (LTE: NDI set, `LteEnbPhy::DlPhyTransmission`;
 * NR: `NrGnbMac::DlScheduling`) plus the UE's share of unused resource blocks, averaged over the
 * last `WindowTtis` TTIs (NR: slots). Per flow: the
 * fair share C_i = C / active flows of the UE, a flow being active while its downlink packets
 * arrive less than `ActiveTimeout` apart. The RLC head-of-line delay is the exact age of the
 * head of the UE's RLC transmit queue, which a carrier-manager subclass follows (XrcRlcWatch:
 * buffer reports and PDUs between RLC and MAC). Both values are written into an
 * `XrcFeedbackTag` (byte tag and packet tag) on the flow's uplink ACKs as they leave the eNB, so
 * the sender sees them with the real uplink delay.
 */
class XrcEnbAgent : public Object
{
  public:
    static TypeId GetTypeId();
    XrcEnbAgent();
    ~XrcEnbAgent() override;

    /// @brief Select the HoL-reporting component carrier manager. Call before installing eNB
    /// devices.
    static void ConfigureLteHelper(Ptr<LteHelper> lteHelper);

    /**
     * @brief Hook the agent into a base station through a cell type's adapter.
     * @param radio what the cell type tells the agent
     * @param bsDevice the base station's device (its RLCs are found below it)
     * @param s1uDevice the base station's S1-U device (uplink GTP-U packets leave through it)
     */
    void InstallRadio(XrcRadio radio, Ptr<NetDevice> bsDevice, Ptr<NetDevice> s1uDevice);

    /**
     * @brief Declare a UE by a function giving its current RNTI (call after attaching it).
     * @return the UE's index in the agent (the order of the calls)
     */
    uint32_t AddUe(std::function<uint16_t()> rntiOf);

    /**
     * @brief An adapter saw a downlink transport block.
     * @param rnti the UE
     * @param mcs its MCS
     * @param bytes its size
     * @param occupiesRbs count its resource units as used (false for a second MIMO layer)
     * @param newData a new transmission (false: a HARQ retransmission, no new capacity)
     */
    void OnTransportBlock(uint16_t rnti, int mcs, uint32_t bytes, bool occupiesRbs, bool newData);

    /// @brief An adapter relayed an RLC buffer status report: its queue size (its HoL delay, in
    /// whole ms, is not used: OnHeadOfLine gives the exact one).
    void OnBufferStatus(uint16_t rnti, uint8_t lcid, uint32_t txQueueBytes, uint16_t holMs);

    /**
     * @brief An adapter saw a data bearer's RLC head of line change.
     * @param rnti the UE
     * @param lcid the bearer (a UE's HoL is its latest bearer's: the scenarios have one)
     * @param since the arrival at the RLC of the new head (none: the queue is empty)
     */
    void OnHeadOfLine(uint16_t rnti, uint8_t lcid, std::optional<Time> since);

    /// @brief An adapter saw an SDU's first byte leave the RLC after `sojourn` there (written to
    /// SojournTraceFile, if set).
    void OnSduSojourn(uint16_t rnti, uint8_t lcid, Time sojourn);

    /// @return whether SojournTraceFile is set (adapters then report the SDUs' sojourns)
    bool WantsSojourns() const;

    /// @brief An adapter saw a data bearer's RLC buffer run empty.
    void OnBufferDrained(uint16_t rnti, uint8_t lcid);

    /**
     * @brief LTE adapter: hook the agent into an installed eNB.
     * @param enbDevice the eNB's LteEnbNetDevice
     * @param s1uDevice the eNB's S1-U device (uplink GTP-U packets leave through it)
     * @param numRbs downlink bandwidth in RBs
     * @param trace the cell's capacity per TTI when it replays a trace (nullptr: the channel's):
     *        then a TB's RBs are its share of the TTI's trace bytes, and idle RBs carry their
     *        share of them, whatever the MCS (docs/traces.md)
     */
    void Install(Ptr<NetDevice> enbDevice,
                 Ptr<NetDevice> s1uDevice,
                 uint16_t numRbs,
                 std::shared_ptr<const CapacityTrace> trace = nullptr);

    /**
     * @brief LTE adapter: declare a UE (call after attaching it).
     * @param ueDevice the UE's LteUeNetDevice
     * @return the UE's index in the agent (the order of the calls)
     */
    uint32_t AddUe(Ptr<NetDevice> ueDevice);

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
     * @return the flow's fair-share rate C_i = C / n in Mbit/s, n counting the UE's active flows
     *         and the flow itself
     */
    double GetFlowRateMbps(uint32_t flowId) const;

    /// @return the UE's RLC HoL delay now (the age of its head of line; 0: empty), ms
    double GetHolMs(uint32_t ueIndex) const;

    /// @return the UE's capacity estimate (new TBs plus its share of idle RBs over the window),
    ///         bytes per ms: the capacity XCP's and RCP's router at the base station uses
    double GetCapacityBytesPerMs(uint32_t ueIndex) const;

    /// @return the UE's latest RLC transmit queue, bytes
    double GetRlcBytes(uint32_t ueIndex) const;

    /// A downlink packet of a registered flow at the S1-U device: flow, inner IPv4 packet size
    /// in bytes, and the packet (with its outer headers).
    using DownlinkHook = std::function<void(uint32_t, double, Ptr<const Packet>)>;
    /// An uplink packet of a registered flow leaves the S1-U device: flow, packet.
    using UplinkHook = std::function<void(uint32_t, Ptr<const Packet>)>;

    /**
     * @brief Let a router at the base station (XCP, RCP) or PBE-CC's side channel see the flows'
     * packets there (hooks add up; an empty one is skipped).
     * @param downlink called for every downlink packet of a registered flow as it arrives
     * @param uplink called for every uplink packet of a registered flow as it leaves, after
     *        the agent stamped it (a router stamps its own feedback on the ACKs here)
     */
    void AddPacketHooks(DownlinkHook downlink, UplinkHook uplink);

    /// @return the UE's counters since the previous call, then restart them
    XrcUeStepStats TakeStepStats(uint32_t ueIndex);

    /// What the scheduler gave one UE in a TTI (NR: slot), as its control messages say.
    struct TtiAllocation
    {
        double newRbs{0};    //!< resource units of its new transport blocks
        double newBytes{0};  //!< their bytes
        double retxRbs{0};   //!< resource units of its HARQ retransmissions
        double fullBytes{0}; //!< bytes all usable units would carry at its latest MCS
    };

    /// Called at the end of every TTI (NR: slot): every UE's allocation (AddUe order) and the
    /// units the TTI offered.
    using TtiHook = std::function<void(const std::vector<TtiAllocation>&, double usable)>;

    /// @brief Let a UE-side monitor (PBE-CC's) decode every TTI's allocations.
    void SetTtiHook(TtiHook hook);

    /// @return the scheduling interval (LTE: the TTI; NR: the slot)
    Time GetTti() const;

    /// @return the active flows of the flow's UE, the flow itself counted
    uint32_t GetUeActiveFlows(uint32_t flowId) const;

    /// @return the UE index of a declared flow
    uint32_t GetFlowUe(uint32_t flowId) const;

    /// @brief Set the capacity averaging window, in TTIs (NR: slots).
    void SetWindowTtis(uint32_t ttis);
    /// @brief Set the inter-arrival time after which a flow counts as inactive, in ms.
    void SetActiveTimeoutMs(double ms);
    /// @brief Set the RLC buffer size, in bytes. Kept for callers; the agent no longer needs it:
    /// it tells tail drops from discard-timer drops by whether the RLC queued the PDU.
    void SetMaxRlcBytes(uint32_t bytes);
    /// @brief Write every downlink SDU's RLC sojourn to this CSV file (a diagnostic; "": none).
    void SetSojournTraceFile(std::string path);

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl; //!< state
};

} // namespace ns3

#endif // CELLGYM_XRC_ENB_AGENT_H
