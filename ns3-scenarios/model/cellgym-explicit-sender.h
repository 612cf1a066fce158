// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_EXPLICIT_SENDER_H
#define CELLGYM_EXPLICIT_SENDER_H

#include "ns3/packet.h"
#include "ns3/ptr.h"

#include <cstdint>

namespace ns3
{

/**
 * @brief A congestion control that takes explicit feedback from the network (XRC, XCP, XCP-r,
 * RCP, PBE-CC): what the sender application asks of it, so that the application has no branch
 * per controller (docs/explicit-feedback.md). Implemented beside TcpCongestionOps by each such
 * controller; the application finds it with dynamic_cast.
 */
class CellGymExplicitSender
{
  public:
    /// How the sender paces its segments.
    enum class Pacing
    {
        NONE,                 //!< no pacing of its own
        ALL,                  //!< every segment, the initial window too
        AFTER_INITIAL_WINDOW, //!< every segment after the initial window
    };

    virtual ~CellGymExplicitSender() = default;

    /// @return the congestion header's bytes, taken from each segment's payload (0: none; with
    ///         a header, the application stamps ExplicitHeaderTag on every segment)
    virtual uint32_t GetHeaderBytes() const;

    /// @return how the sender paces
    virtual Pacing GetPacing() const;

    /**
     * @brief Read the feedback an ACK carries (its packet tags), before TCP processes the ACK.
     * @param ack the ACK, as the socket's Rx trace sees it
     */
    virtual void ReadFeedback(Ptr<const Packet> ack) = 0;

    /**
     * @brief Add the controller's own tags to an outgoing segment, after the congestion header
     * (called only with a header: GetHeaderBytes() > 0).
     * @param segment the segment, as the socket's Tx trace sees it
     */
    virtual void TagSegment(Ptr<const Packet> segment);
};

} // namespace ns3

#endif // CELLGYM_EXPLICIT_SENDER_H
