// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_XCPR_RECEIVER_H
#define CELLGYM_XCPR_RECEIVER_H

#include "tcp-xcpr.h"

#include "ns3/packet.h"
#include "ns3/tcp-header.h"

#include <cstdint>
#include <deque>
#include <map>

namespace ns3
{

/**
 * @brief XCP-r's receiver state for one flow and its rule (as envs/fastsim/xcpr_receiver.py's
 * _xcpr_rule).
 *
 * cwnd' adds the router's feedback of every data segment received (the running total fbSum up to
 * the segment less the part already counted, seen, so a segment lost after the router gives its
 * feedback to the next one received); a segment whose header carries a new reset count
 * resynchronises cwnd' to the header's window plus that segment's own feedback (the paper's
 * receiver reads H_cwnd again and adds the flagged packet's H_feedback; the fast model adds its
 * router tick's). cwnd' stays at one segment at least.
 */
struct XcprReceiverState
{
    double cwnd{0};    //!< cwnd', payload bytes
    uint32_t epoch{0}; //!< the reset count + 1 it follows (0: no segment yet)
    double seen{0};    //!< the router's feedback total already in cwnd'

    /// One segment: the router's total up to it, its header's window and reset count + 1, and
    /// its own feedback (the router's total up to it less the total at the flow's previous
    /// segment there).
    void Update(double fbSum, double hCwnd, uint32_t hEpoch, double segBytes, double ownFb);
};

/**
 * @brief Where XCP-r's header values travel in ns-3 (docs/xcp-r.md "ns-3").
 *
 * ns-3's LTE core network removes packet tags at the base station (its EPC application), so the
 * values a real XCP-r header would carry between the router and the UE travel beside the packets,
 * keyed by the TCP segment they belong to: the router records, per data segment (its sequence
 * number), its flow's feedback total so far and the header's window and reset count; the UE's IP
 * layer reads them when the segment is delivered (the receiver's update, XcprReceiverState) and
 * records the window of each ACK it sends (its acknowledgement number), which the router puts on
 * that ACK (XcprWindowTag) when it arrives from the cell; from there the tag travels with the ACK
 * (and is lost with it). An ACK lost in the cell's uplink leaves its record behind, skipped by the
 * next.
 */
class CellGymXcprPath
{
  public:
    /// A data segment of an XCP-r flow passes the router.
    void OnRouterData(uint32_t flow,
                      uint32_t seq,
                      double fbTotal,
                      double hCwnd,
                      uint32_t hEpoch,
                      double segBytes);
    /// The receiver gets a data segment (its sequence number).
    void OnReceiverData(uint32_t flow, uint32_t seq);
    /// The receiver sends an ACK (its acknowledgement number): it carries cwnd'.
    void OnReceiverAck(uint32_t flow, uint32_t ackNo);
    /// An ACK reaches the router: the window it carries; false when none is known.
    bool WindowOfAck(uint32_t flow, uint32_t ackNo, XcprWindowTag& tag);
    /// The receiver's state of a flow.
    const XcprReceiverState& Receiver(uint32_t flow);

    /// The inner TCP header of a GTP-U packet at a base station's S1-U device (with or without
    /// its PPP header); false when it is none.
    static bool InnerTcp(Ptr<const Packet> packet, TcpHeader& tcp);

  private:
    struct Header
    {
        double fbTotal;
        double hCwnd;
        uint32_t hEpoch;
        double segBytes;
        double ownFb; //!< the segment's own feedback
    };

    struct Ack
    {
        uint32_t ackNo;
        double cwnd;
        uint32_t epoch;
    };

    struct Flow
    {
        std::map<uint32_t, Header> headers; //!< data segments past the router, by sequence
        std::deque<Ack> acks;               //!< ACKs sent, not yet past the router
        XcprReceiverState rx;
        double routerTotal{0}; //!< the feedback total at the flow's latest segment past the router
    };

    std::map<uint32_t, Flow> m_flows;
};

} // namespace ns3

#endif // CELLGYM_XCPR_RECEIVER_H
