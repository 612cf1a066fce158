// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_TCP_RCP_H
#define CELLGYM_TCP_RCP_H

#include "cellgym-explicit-sender.h"

#include "ns3/tcp-congestion-ops.h"

namespace ns3
{

/**
 * @brief RCP's sender (the evaluation paper's section 2.3; docs/explicit-feedback.md).
 *
 * It paces at the router's rate R, carried back on the ACKs (SetFeedback, just before the ACK is
 * processed), with ns-3's TCP pacing (the socket's pacing must be on); a new flow starts at the
 * R its SYN-ACK carried (Init, at the connection's start). The window only bounds what is
 * outstanding: the receive window (ReceiveWindowBytes), once a rate paces the flow; before, the
 * initial window leaves unpaced. Losses are repaired by ns-3's recovery; neither the rate nor the
 * window is cut (the paper leaves RCP's reaction to losses unspecified).
 */
class TcpRcp : public TcpNewReno, public CellGymExplicitSender
{
  public:
    /// The congestion header's bytes, taken from each segment's payload.
    static constexpr uint32_t kHeaderBytes = 16;

    static TypeId GetTypeId();
    TcpRcp();
    TcpRcp(const TcpRcp& other);

    std::string GetName() const override;
    void Init(Ptr<TcpSocketState> tcb) override;
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override;
    Ptr<TcpCongestionOps> Fork() override;

    // CellGymExplicitSender: RCP's header, paced at R after the initial window
    uint32_t GetHeaderBytes() const override;
    Pacing GetPacing() const override;
    void ReadFeedback(Ptr<const Packet> ack) override;

    /**
     * @brief The rate carried by the ACK (or SYN-ACK) about to be processed.
     * @param rateBps the router's rate, payload bit/s (0: none)
     */
    void SetFeedback(double rateBps);

    /// @return the latest rate, bit/s (0: none yet)
    double GetRate() const;

  private:
    /**
     * @brief Pace at the latest rate.
     * @param tcb the socket's state
     * @param window also set the window to the receive window
     */
    void Apply(Ptr<TcpSocketState> tcb, bool window) const;

    double m_rateBps{0};           //!< the latest rate
    uint32_t m_rwndBytes{4194304}; //!< the window once paced
};

} // namespace ns3

#endif // CELLGYM_TCP_RCP_H
