// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_XRC_FEEDBACK_TAG_H
#define CELLGYM_XRC_FEEDBACK_TAG_H

#include "ns3/tag.h"

namespace ns3
{

/**
 * @brief Explicit feedback the XRC agent piggybacks on uplink ACKs: the flow's fair-share rate and
 * the UE's RLC head-of-line delay, plus the eNB time at which they were written.
 *
 * The agent adds it twice to each uplink packet of a registered flow: as a byte tag (readable
 * with FindFirstMatchingByteTag at the server's IPv4 layer, while the TCP header is still there)
 * and as a packet tag (readable with PeekPacketTag anywhere up to the TCP socket's "Rx" trace).
 */
class XrcFeedbackTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer i) const override;
    void Deserialize(TagBuffer i) override;
    void Print(std::ostream& os) const override;

    double rateMbps{0}; //!< explicit fair-share rate C_i, Mbit/s
    double holMs{0};    //!< RLC HoL delay, ms
    double stampS{0};   //!< simulation time the eNB wrote the tag, s
};

} // namespace ns3

#endif // CELLGYM_XRC_FEEDBACK_TAG_H
