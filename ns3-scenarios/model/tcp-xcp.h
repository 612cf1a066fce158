// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_TCP_XCP_H
#define CELLGYM_TCP_XCP_H

#include "cellgym-explicit-sender.h"

#include "ns3/tcp-congestion-ops.h"

namespace ns3
{

/**
 * @brief XCP's window-based sender (the evaluation paper's section 4.2; docs/explicit-feedback.md).
 *
 * The router's feedback comes back on the ACKs as the flow's running total (SetFeedback, just
 * before the ACK is processed); the difference to the total seen before moves the window on the
 * ACKs that advance it: cwnd = max(cwnd + feedback, one segment). There is no slow start and no
 * probing of its own: the window starts at the initial window and moves by the feedback alone.
 * On a loss it falls back to TCP: NewReno's ssthresh and ns-3's recovery; feedback that arrives
 * during fast recovery is dropped, and after a retransmission timeout it applies at once (as the
 * fast model does: the XCP-r paper's ns-2 XCP leaves a timeout that way).
 */
class TcpXcp : public TcpNewReno, public CellGymExplicitSender
{
  public:
    /// The congestion header's bytes, taken from each segment's payload.
    static constexpr uint32_t kHeaderBytes = 20;

    static TypeId GetTypeId();
    TcpXcp();
    TcpXcp(const TcpXcp& other);

    std::string GetName() const override;
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override;
    Ptr<TcpCongestionOps> Fork() override;

    // CellGymExplicitSender
    uint32_t GetHeaderBytes() const override;
    void ReadFeedback(Ptr<const Packet> ack) override;

    /**
     * @brief The feedback total carried by the ACK about to be processed.
     * @param totalBytes the flow's feedback so far, payload bytes
     */
    void SetFeedback(double totalBytes);

    /// @return feedback received and not yet applied, bytes
    double GetPending() const;

  private:
    double m_seen{0};    //!< the latest total seen
    double m_pending{0}; //!< feedback not yet applied to the window
    bool m_open{true};   //!< not in fast recovery
};

} // namespace ns3

#endif // CELLGYM_TCP_XCP_H
