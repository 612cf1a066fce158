// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_TCP_XRC_H
#define CELLGYM_TCP_XRC_H

#include "cellgym-explicit-sender.h"

#include "ns3/tcp-congestion-ops.h"

namespace ns3
{

/**
 * @brief XRC's sender (XRC paper, section III.B): explicit-rate congestion control.
 *
 * On every ACK that carries the base station's feedback (explicit fair-share rate R_exp and RLC
 * head-of-line delay HoL_exp, handed over with SetFeedback just before the ACK is processed):
 * - target window twnd = R_exp x RTT_min (eq. 2);
 * - queueing delay per window of data: delta = max(mean RTT - RTT_min, HoL_exp) (eq. 3);
 * - bottleneck: cellular when HoL_exp > budget; Internet when HoL_exp <= budget and the
 *   end-to-end queueing delay exceeds HoL_exp by more than the budget;
 * - congestion avoidance: below twnd with delta <= budget the window closes the gap to twnd
 *   within RampRtts RTTs (large alpha); at or above twnd it grows one segment per RTT; when
 *   delta exceeds the budget it is reset to twnd; with an Internet bottleneck alpha = 1 (standard
 *   TCP);
 * - unfairness mode, only at a cellular bottleneck (HoL_exp above the budget, the paper's "at a
 *   wireless bottleneck"): after UnfairRtts RTTs with delta above the budget while the window
 *   sits at twnd (a competitor fills the buffer), alpha becomes UnfairAlpha segments per RTT until
 *   the delay or the HoL falls within the budget or a loss occurs;
 * - slow start and loss recovery are standard (NewReno); slow start ends at twnd.
 * Without feedback it behaves exactly as NewReno.
 *
 * Choices where the paper is silent: the ramp closes the gap linearly over RampRtts RTTs from
 * the window at which the ramp began; "sits at twnd" means cwnd <= 1.05 twnd; the unfair alpha
 * defaults to 10 segments per RTT; the mean RTT is taken over the last complete window of data
 * (the running window before the first completes).
 *
 * RTT samples: ns-3's TcpSocketBase hands PktsAcked the smoothed RTT (m_srtt) and keeps
 * m_minRtt as the minimum of the smoothed RTT, which never falls to the path's base RTT once a
 * queue has formed (slow start). The paper's RTT samples and RTT_min are the ACKs' own round
 * trips, as a real stack measures them: TcpXrc takes each ACK's sample from m_lastRtt (set by
 * TcpSocketBase::EstimateRtt just before), and RTT_min = min(smallest sample, m_minRtt), the
 * latter contributing the handshake's sample.
 */
class TcpXrc : public TcpNewReno, public CellGymExplicitSender
{
  public:
    static TypeId GetTypeId();
    TcpXrc();
    TcpXrc(const TcpXrc& other);

    std::string GetName() const override;
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override;
    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override;
    Ptr<TcpCongestionOps> Fork() override;

    // CellGymExplicitSender: the agent's rate and HoL delay from the ACKs (XrcFeedbackTag)
    void ReadFeedback(Ptr<const Packet> ack) override;

    /**
     * @brief The feedback carried by the ACK about to be processed.
     * @param rateMbps explicit fair-share rate, Mbit/s
     * @param holMs RLC head-of-line delay, ms
     */
    void SetFeedback(double rateMbps, double holMs);

    /// The mode of the latest window update, for tests and traces.
    enum class Mode
    {
        NO_FEEDBACK, //!< no feedback yet: NewReno
        SLOW_START,  //!< standard slow start
        RAMP,        //!< below twnd, delay within budget: rapid growth
        PROBE,       //!< at or above twnd: one segment per RTT
        RESET,       //!< delay above budget: window reset to twnd
        UNFAIR,      //!< unfairness mode
        INTERNET,    //!< Internet bottleneck: standard TCP
    };

    /// @return the mode of the latest window update
    Mode GetMode() const;

    /// @return the target window of the latest update, bytes
    double GetTargetWindow() const;

  private:
    /// What one window update measures (XRC paper, section III.B's quantities).
    struct Measures
    {
        double seg{0};        //!< segment size, bytes
        double cwnd{0};       //!< congestion window, bytes
        double minRttMs{0};   //!< RTT_min, ms
        double e2eMs{0};      //!< end-to-end queueing delay (mean RTT - RTT_min), ms
        double deltaMs{0};    //!< the larger of it and the HoL delay, ms
        double perSegment{0}; //!< growth of one segment per RTT, per acknowledged segment
        double elapsedMs{0};  //!< time since the previous update, ms
    };

    /// @brief Measure the delays and set the target window twnd = rate x RTT_min.
    Measures Measure(Ptr<const TcpSocketState> tcb, double elapsedMs);
    /// @brief The queue is in the Internet, not at the base station: standard TCP (alpha = 1).
    /// @return whether the rule applied (the window is then updated)
    bool InternetRule(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Measures& m);
    /// @brief Slow start below twnd within the budget; it ends at twnd or at the budget.
    /// @return whether slow start updated the window
    bool SlowStartRule(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Measures& m);
    /// @brief Delay over the budget: back to twnd, or the unfairness mode after UnfairRtts.
    /// @return the next window, bytes
    double OverBudgetRule(uint32_t segmentsAcked, const Measures& m);
    /// @brief Delay within the budget: ramp up to twnd over RampRtts, then probe.
    /// @return the next window, bytes
    double WithinBudgetRule(uint32_t segmentsAcked, const Measures& m);

    double m_budgetMs{10};          //!< queueing-delay budget, ms
    double m_rampRtts{2};           //!< RTTs to reach twnd
    uint32_t m_unfairRtts{10};      //!< RTTs of high delay at twnd before unfairness mode
    double m_unfairAlpha{10};       //!< segments per RTT in unfairness mode
    double m_rateMbps{0};           //!< latest explicit rate
    double m_holMs{0};              //!< latest HoL delay
    bool m_hasFeedback{false};      //!< feedback received
    double m_rttSumMs{0};           //!< RTT samples of the current window
    uint32_t m_rttCount{0};         //!< their number
    double m_windowMeanMs{0};       //!< mean RTT of the last complete window
    double m_minRttMs{0};           //!< smallest RTT sample of an ACK, ms (0: none yet)
    uint32_t m_windowAcked{0};      //!< bytes acked in the current window
    double m_highDelayMs{0};        //!< time at twnd with delay above the budget
    Time m_lastUpdate;              //!< time of the previous update
    bool m_updated{false};          //!< an update happened before
    bool m_unfair{false};           //!< in unfairness mode
    double m_rampFrom{0};           //!< window when the ramp began (0: no ramp)
    double m_twnd{0};               //!< latest target window
    Mode m_mode{Mode::NO_FEEDBACK}; //!< latest mode
};

} // namespace ns3

#endif // CELLGYM_TCP_XRC_H
