// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_TCP_PBE_H
#define CELLGYM_TCP_PBE_H

#include "cellgym-explicit-sender.h"

#include "ns3/tcp-bbr.h"
#include "ns3/tcp-congestion-ops.h"

#include <deque>
#include <utility>

namespace ns3
{

/**
 * @brief PBE-CC's sender (docs/pbe-cc.md; the fast model's envs/fastsim/senders/pbecc.py).
 *
 * The UE's monitor (cellgym-pbe-monitor.h) stamps its rate on the receiver's ACKs; the sender
 * takes it just before the ACK is processed (SetRate). Before the first rate, and in the
 * fallback, ns-3's BBR (TcpBbr) is the sender. With a rate, in the PBE mode, the sender
 * paces at PacingGain x rate and, outside loss recovery, sets its window to
 * CwndGain x rate x min RTT. The RTT the rate explains is max(min RTT, in flight / rate); when
 * the latest RTT exceeds it by more than MarginMs for HoldRtts min RTTs, the queue is elsewhere
 * (an Internet bottleneck) and the sender falls back to BBR's probing on the path's delivery
 * rate btl (acknowledged bytes over 2 min RTTs, the largest of the last 10 min RTTs): pacing
 * 1.25, 0.75, then six times 1 x btl, one min RTT each; window 2 x btl x min RTT. It returns when
 * btl reaches ReturnShare of the rate. Not ns-3's BBR for the fallback: its rate samples (per
 * ACK) take the cell's rate after segments paced at it, as the cell's uplink bunches the ACKs,
 * and its bandwidth estimate then overfills the slower Internet link (docs/pbe-cc.md). The
 * socket's pacing must be on.
 */
class TcpPbe : public TcpCongestionOps, public CellGymExplicitSender
{
  public:
    static TypeId GetTypeId();
    TcpPbe();
    TcpPbe(const TcpPbe& other);

    std::string GetName() const override;
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override;
    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override;
    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override;
    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override;
    void CwndEvent(Ptr<TcpSocketState> tcb, const TcpSocketState::TcpCAEvent_t event) override;
    bool HasCongControl() const override;
    void CongControl(Ptr<TcpSocketState> tcb,
                     const TcpRateOps::TcpRateConnection& rc,
                     const TcpRateOps::TcpRateSample& rs) override;
    Ptr<TcpCongestionOps> Fork() override;

    // CellGymExplicitSender: paced; the rate its UE stamped on the ACKs (PbeRateTag)
    Pacing GetPacing() const override;
    void ReadFeedback(Ptr<const Packet> ack) override;

    /// @brief The rate carried by the ACK about to be processed (payload bit/s; 0: none).
    void SetRate(double rateBps);

    /// @return the latest rate, bit/s (0: none yet)
    double GetRate() const;

    /// @return whether the BBR-like fallback is on
    bool InFallback() const;

  private:
    friend class PbeDeliveryRateTestCase; // DeliveryBps against a hand-worked sequence

    /// The delivery rate: bytes acknowledged over 2 min RTTs, the largest of the last 10.
    double DeliveryBps(Time now, Time minRtt, uint64_t delivered);
    /// The mode after an ACK (the fast model's _pbe_mode).
    void UpdateMode(Ptr<TcpSocketState> tcb, double btlBps);

    double m_pacingGain{1.0};
    double m_cwndGain{1.25};
    double m_marginMs{10.0};
    double m_holdRtts{2.0};
    double m_returnShare{0.9};
    double m_rateBps{0};
    bool m_fallback{false};
    Time m_since{Time(0)}; //!< when the RTT first went unexplained (0: it is explained)
    Time m_fallbackStart;  //!< when the fallback began (its probing cycle's phase)
    Ptr<TcpBbr> m_bbr;     //!< the sender before the first rate (ns-3's BBR)
    std::deque<std::pair<Time, uint64_t>> m_delivered; //!< (time, bytes delivered so far)
    std::deque<std::pair<Time, double>> m_rates;       //!< decreasing delivery rates (time, bit/s)
};

} // namespace ns3

#endif // CELLGYM_TCP_PBE_H
