// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_TCP_XCPR_H
#define CELLGYM_TCP_XCPR_H

#include "cellgym-explicit-sender.h"

#include "ns3/tag.h"
#include "ns3/tcp-congestion-ops.h"

namespace ns3
{

/**
 * @brief XCP-r's congestion flag on a data segment: the sender's count of resets + 1
 * (docs/xcp-r.md; the fast model's FB_H_EPOCH). Travels beside XCP's ExplicitHeaderTag.
 */
class XcprHeaderTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer i) const override;
    void Deserialize(TagBuffer i) override;
    void Print(std::ostream& os) const override;

    uint32_t epoch{0}; //!< the sender's resets so far + 1
};

/**
 * @brief The window an XCP-r ACK carries: the receiver's cwnd' and the reset count + 1 it was
 * computed under.
 */
class XcprWindowTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer i) const override;
    void Deserialize(TagBuffer i) override;
    void Print(std::ostream& os) const override;

    double cwndBytes{0}; //!< the receiver's window cwnd', payload bytes
    uint32_t epoch{0};   //!< the header's reset count + 1 it follows
};

/**
 * @brief XCP-r's sender (../shared/papers/xcp-r-receiver-side-xcp.txt, section IV), as the fast
 * model's envs/fastsim/senders/xcpr.py.
 *
 * XCP's router is untouched; the receiver (cellgym-xcpr-receiver.h) sums the feedback into
 * cwnd' and every ACK carries it (SetWindow, just before the ACK is processed). The sender's two
 * changes: on the ACKs, cwnd = the window the latest ACK carries (instead of cwnd + feedback);
 * and whenever it changes the window itself (entering fast recovery or a retransmission timeout,
 * and when recovery ends) it raises the congestion flag, counted as resets (GetHeaderEpoch): the
 * receiver takes the header's window again on the first segment with the new count, and the
 * sender ignores windows computed under an older count, except, after a timeout, those of the count
 * just before it (the receiver's unchanged cwnd', which the paper credits for XCP-r's recovery).
 * During fast recovery ns-3's recovery sets the window and the ACKs' windows are ignored; after a
 * timeout they apply at once. No slow start
 * and no probing of its own; on a loss NewReno's ssthresh, as XCP's.
 */
class TcpXcpr : public TcpNewReno, public CellGymExplicitSender
{
  public:
    /// The congestion header's bytes (XCP's), taken from each segment's payload.
    static constexpr uint32_t kHeaderBytes = 20;

    static TypeId GetTypeId();
    TcpXcpr();
    TcpXcpr(const TcpXcpr& other);

    std::string GetName() const override;
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override;
    Ptr<TcpCongestionOps> Fork() override;

    // CellGymExplicitSender: XCP's header plus the congestion flag (XcprHeaderTag); the
    // receiver's window from the ACKs (XcprWindowTag)
    uint32_t GetHeaderBytes() const override;
    void ReadFeedback(Ptr<const Packet> ack) override;
    void TagSegment(Ptr<const Packet> segment) override;

    /**
     * @brief The window carried by the ACK about to be processed.
     * @param cwndBytes the receiver's cwnd', payload bytes
     * @param epoch the reset count + 1 it was computed under
     */
    void SetWindow(double cwndBytes, uint32_t epoch);

    /// @return the reset count + 1 the next segments' headers carry
    uint32_t GetHeaderEpoch() const;
    /// @return the synchronised window not yet applied (0: none)
    double GetPendingWindow() const;

  private:
    uint32_t m_resets{0};   //!< the sender's own window changes so far
    double m_window{0};     //!< the latest synchronised window carried by an ACK (0: none)
    bool m_recovery{false}; //!< in fast recovery
    bool m_loss{false};     //!< after a retransmission timeout, until the loss is repaired
};

} // namespace ns3

#endif // CELLGYM_TCP_XCPR_H
