// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_XRC_ENB_AGENT_H
#define CELLGYM_XRC_ENB_AGENT_H

#include "cellgym-bs-tap.h"

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
 * @brief The XRC base-station agent (XRC paper, section III.A): one logic for every cell type,
 * a subscriber of the base station's tap (CellGymBsTap), which feeds it the transport blocks,
 * RLC events and packets of every cell type.
 *
 * Per UE: capacity from new transport blocks only (LTE: NDI set, `LteEnbPhy::DlPhyTransmission`;
 * NR: `NrGnbMac::DlScheduling`) plus the UE's share of unused resource blocks, averaged over the
 * last `WindowTtis` TTIs (NR: slots). Per flow: the
 * fair share C_i = C / active flows of the UE, a flow being active while its downlink packets
 * arrive less than the tap's `ActiveTimeoutMs` apart. The RLC head-of-line delay is the exact
 * age of the head of the UE's RLC transmit queue, which a carrier-manager subclass follows
 * (XrcRlcWatch: buffer reports and PDUs between RLC and MAC). Both values are written into an
 * `XrcFeedbackTag` (byte tag and packet tag) on the flow's uplink ACKs as they leave the eNB, so
 * the sender sees them with the real uplink delay.
 */
class XrcEnbAgent : public Object, public CellGymBsTapSubscriber
{
  public:
    static TypeId GetTypeId();
    XrcEnbAgent();
    ~XrcEnbAgent() override;

    /**
     * @brief Subscribe the agent to a base station's tap (before an installer installs the
     * tap: the agent may want the SDUs' sojourns).
     * @param tap the tap (it outlives the agent's use)
     */
    void Attach(Ptr<CellGymBsTap> tap);

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

    /// @return the UE's counters since the previous call, then restart them
    XrcUeStepStats TakeStepStats(uint32_t ueIndex);

    /// @brief Set the capacity averaging window, in TTIs (NR: slots).
    void SetWindowTtis(uint32_t ttis);
    /// @brief Set the RLC buffer size, in bytes. Kept for callers; the agent no longer needs it:
    /// the tap tells tail drops from discard-timer drops by whether the RLC queued the PDU.
    void SetMaxRlcBytes(uint32_t bytes);
    /// @brief Write every downlink SDU's RLC sojourn to this CSV file (a diagnostic; "": none).
    void SetSojournTraceFile(std::string path);

    // The tap's events (CellGymBsTapSubscriber).
    void OnUeAdded(uint32_t ue) override;
    void OnTti(const std::vector<CellGymBsUeTti>& ues, uint32_t usable) override;
    void OnRlcTailDrop(uint32_t ue) override;
    void OnRlcDrained(uint32_t ue) override;
    void OnHeadOfLine(uint32_t ue, uint8_t lcid, std::optional<Time> since) override;
    void OnSduSojourn(uint32_t ue, uint8_t lcid, Time sojourn) override;
    bool WantsSojourns() const override;
    void OnUplink(uint32_t flow, Ptr<const Packet> packet) override;

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl; //!< state
};

} // namespace ns3

#endif // CELLGYM_XRC_ENB_AGENT_H
