// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_TCP_CONSTRATE_H
#define CELLGYM_TCP_CONSTRATE_H

#include "cellgym-explicit-sender.h"

#include "ns3/tcp-congestion-ops.h"

namespace ns3
{

/**
 * @brief A test-only toy sender: paces every segment at a constant rate (the worked example of
 * docs/architecture.md, "Add a controller"; the fast model's envs/fastsim/senders/constrate.py).
 *
 * The rate (RateBps, payload bit/s) is set at the connection's start (Init) and on every ACK,
 * with ns-3's TCP pacing (the sender application turns it on for every segment: GetPacing).
 * The window only bounds what is outstanding: the receive window (ReceiveWindowBytes). Losses
 * are repaired by ns-3's recovery; neither the rate nor the window is cut.
 */
class TcpConstRate : public TcpNewReno, public CellGymExplicitSender
{
  public:
    /// The default rate, payload bit/s (tests/test_controller_recipe.py reads it).
    static constexpr uint64_t kRateBps = 5000000;

    static TypeId GetTypeId();
    TcpConstRate();
    TcpConstRate(const TcpConstRate& other);

    std::string GetName() const override;
    void Init(Ptr<TcpSocketState> tcb) override;
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override;
    Ptr<TcpCongestionOps> Fork() override;

    // CellGymExplicitSender: no header, no feedback; every segment paced
    Pacing GetPacing() const override;
    void ReadFeedback(Ptr<const Packet> ack) override;

  private:
    /**
     * @brief Pace at the rate.
     * @param tcb the socket's state
     * @param window also set the window to the receive window
     */
    void Apply(Ptr<TcpSocketState> tcb, bool window) const;

    uint64_t m_rateBps{kRateBps};  //!< the pacing rate
    uint32_t m_rwndBytes{4194304}; //!< the window
};

} // namespace ns3

#endif // CELLGYM_TCP_CONSTRATE_H
