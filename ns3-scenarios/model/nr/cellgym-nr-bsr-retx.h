// SPDX-License-Identifier: GPL-2.0-only
// The NR UE's buffer status timer as the RLC means it: while data waits and no transmission
// opportunity comes, the UE's MAC is told again, every BsrRetxMs, that the timer expired.
#ifndef CELLGYM_NR_BSR_RETX_H
#define CELLGYM_NR_BSR_RETX_H

#include "ns3/event-id.h"
#include "ns3/net-device.h"
#include "ns3/nr-mac-sap.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <map>
#include <memory>

namespace ns3
{

/**
 * A proxy between a UE's RLC entities and its MAC (the UE's `NrMacSapProvider`), installed on
 * the UE's RRC before the simulation starts, so every RLC the RRC creates talks through it.
 *
 * 5G-LENA v4.0's RLC UM starts a 10 ms buffer status timer after a transmission opportunity
 * that leaves data behind, and its expiry reports the buffer with `expBsrTimer` set, which is
 * what makes the UE's MAC send a scheduling request again while it waits for a grant
 * (`NrUeMac::DoTransmitBufferStatusReport`: an SR from the ACTIVE state only on an expiry). But
 * every new PDU from PDCP cancels that timer without restarting it: a UE whose last uplink TB
 * failed its four HARQ transmissions (an FR2 blockage) keeps receiving TCP ACKs to send, its
 * timer never expires, no SR goes out, the gNB grants nothing, and the flow stops for the rest
 * of the run. TS 38.321 (5.4.5, `retxBSR-Timer`; 5.4.4, a pending SR repeats until a grant)
 * has the UE ask again. This proxy keeps the timer running for the data bearers: when a
 * channel reports data after its last transmission opportunity and `interval` passes without
 * another, the channel's latest report is forwarded again with `expBsrTimer` set, then every
 * `interval` until an opportunity comes or a report says the buffer is empty (data left behind
 * by an opportunity is the RLC's own timer's until a new PDU cancels it). Everything else is
 * forwarded unchanged; while grants arrive it never acts.
 */
class CellGymNrBsrRetx : public NrMacSapProvider
{
  public:
    /// The proxy in front of the UE's current MAC SAP provider (its component carrier manager).
    CellGymNrBsrRetx(NrMacSapProvider* mac, Time interval);
    ~CellGymNrBsrRetx() override;

    void TransmitPdu(TransmitPduParameters params) override;
    void BufferStatusReport(BufferStatusReportParameters params) override;

    /// Put a proxy between the UE device's RLC entities and its MAC (before the simulation
    /// starts); it lives as long as the device.
    static void Install(Ptr<NetDevice> ueDevice, Time interval);

    /// Reports forwarded again with `expBsrTimer` so far (all logical channels).
    uint64_t Repeats() const;

  private:
    /// One data bearer's logical channel: its latest report, whether data reported since its
    /// last transmission opportunity waits, since when, and the timer.
    struct Channel
    {
        BufferStatusReportParameters last{};
        bool waiting = false;
        Time since;
        EventId timer;
    };

    /// The timer of `lcid` expired: the latest report again, flagged as an expiry.
    void Expire(uint8_t lcid);

    NrMacSapProvider* m_mac;
    Time m_interval;
    std::map<uint8_t, Channel> m_channels;
    uint64_t m_repeats = 0;
};

} // namespace ns3

#endif // CELLGYM_NR_BSR_RETX_H
