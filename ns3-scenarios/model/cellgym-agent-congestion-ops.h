// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_AGENT_CONGESTION_OPS_H
#define CELLGYM_AGENT_CONGESTION_OPS_H

#include "ns3/callback.h"
#include "ns3/tcp-congestion-ops.h"

namespace ns3
{

/**
 * @brief The congestion control a Python policy drives: it holds the commanded window.
 *
 * On every ACK outside loss recovery the window is set to the commanded value; in recovery ns-3's
 * standard recovery runs (ssthresh = max(2 segments, in-flight / 2), fast recovery by the socket's
 * recovery algorithm, slow start after an RTO) and the commanded window returns when the socket is
 * back in CA_OPEN. A positive commanded rate turns pacing on at that rate, 0 turns it off. Before
 * the first command the flow uses NewReno's slow start and congestion avoidance.
 *
 * A command takes effect at once: a window that opens room above the bytes in flight calls the
 * send trigger (the sender application's), so the socket sends into it now rather than on the next
 * ACK (TcpSocketBase sends only on an ACK, a write or a timer; after an idle uplink the next ACK
 * can be tens of ms away).
 */
class CellGymAgentCongestionOps : public TcpNewReno
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    /// @brief Create an agent congestion control with no command yet.
    CellGymAgentCongestionOps();

    /**
     * @brief Copy constructor (used by Fork).
     * @param other the object to copy
     */
    CellGymAgentCongestionOps(const CellGymAgentCongestionOps& other);

    std::string GetName() const override;

    /**
     * @brief Remember the socket's state and apply a command given before the socket existed.
     * @param tcb the socket's state
     */
    void Init(Ptr<TcpSocketState> tcb) override;

    /**
     * @brief The standard ssthresh after a loss: max(2 segments, bytes in flight / 2).
     * @param tcb the socket's state
     * @param bytesInFlight bytes in flight when the loss was detected
     * @return the new slow-start threshold, bytes
     */
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;

    /**
     * @brief On an ACK: NewReno before the first command and after an RTO, else the command.
     * @param tcb the socket's state
     * @param segmentsAcked segments acknowledged by the ACK
     */
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;

    /**
     * @brief Return to the commanded window when the socket re-enters CA_OPEN.
     * @param tcb the socket's state
     * @param newState the congestion state being entered
     */
    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override;

    Ptr<TcpCongestionOps> Fork() override;

    /**
     * @brief Command a window and a pacing rate; applied at once outside recovery.
     * @param cwndBytes congestion window in bytes (clipped to at least one segment)
     * @param pacingBps pacing rate in bit/s; 0 turns pacing off
     */
    void SetTarget(double cwndBytes, double pacingBps);

    /**
     * @brief What to call when a command opens the window: make the socket send into it now.
     * @param trigger the callback (the sender application's), or a null callback
     */
    void SetSendTrigger(Callback<void> trigger);

  private:
    /**
     * @brief Impose the commanded window (outside recovery) and pacing rate on the socket.
     * @param tcb the socket's state
     */
    void Apply(Ptr<TcpSocketState> tcb);

    double m_cwndBytes{0};           //!< commanded window, bytes (0: none yet)
    double m_pacingBps{0};           //!< commanded pacing rate, bit/s
    Ptr<TcpSocketState> m_tcb;       //!< the socket's state, known from Init
    Callback<void> m_sendTrigger;    //!< makes the socket send into an opened window
    bool m_savedPacing{false};       //!< the socket's own pacing settings were saved
    DataRate m_defaultMaxPacingRate; //!< the socket's MaxPacingRate before the first command
    uint16_t m_defaultSsRatio{0};    //!< the socket's PacingSsRatio before the first command
    uint16_t m_defaultCaRatio{0};    //!< the socket's PacingCaRatio before the first command
};

} // namespace ns3

#endif // CELLGYM_AGENT_CONGESTION_OPS_H
