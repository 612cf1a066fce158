// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_EXPLICIT_TAGS_H
#define CELLGYM_EXPLICIT_TAGS_H

#include "ns3/tag.h"

namespace ns3
{

/**
 * @brief XCP's or RCP's congestion header, written by the sender on each data segment.
 *
 * The fields are the header's (the sender's window and smoothed RTT); the header's bytes on the
 * wire are taken from the segment's payload (the sender's segment size is smaller by
 * headerBytes: 20 for XCP, 16 for RCP), so the tag itself is only the carrier of the values.
 */
class ExplicitHeaderTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer i) const override;
    void Deserialize(TagBuffer i) override;
    void Print(std::ostream& os) const override;

    double cwndBytes{0}; //!< H_cwnd: the sender's window, payload bytes
    double rttS{0};      //!< H_rtt: the sender's smoothed RTT, s (0: no sample yet)
    double segBytes{0};  //!< the sender's segment payload, bytes (to convert to wire bytes)
};

/**
 * @brief The router's feedback, stamped on the ACKs of a flow as they pass the router.
 *
 * xcpTotalBytes is the sum of the XCP feedback the flow's packets collected so far (payload
 * bytes): the sender applies the difference to the previous total it saw, so a lost ACK loses
 * nothing. rcpRateBps is the router's RCP rate, payload bits per second (0: none yet).
 */
class ExplicitFeedbackTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer i) const override;
    void Deserialize(TagBuffer i) override;
    void Print(std::ostream& os) const override;

    double xcpTotalBytes{0}; //!< XCP: the flow's feedback so far, payload bytes
    double rcpRateBps{0};    //!< RCP: the common rate R, payload bit/s (0: none)
};

} // namespace ns3

#endif // CELLGYM_EXPLICIT_TAGS_H
