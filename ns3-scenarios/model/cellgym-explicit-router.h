// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_EXPLICIT_ROUTER_H
#define CELLGYM_EXPLICIT_ROUTER_H

#include "cellgym-explicit-tags.h"

#include "ns3/event-id.h"
#include "ns3/object.h"

#include <functional>
#include <map>

namespace ns3
{

/**
 * @brief XCP's or RCP's router at one bottleneck queue (docs/explicit-feedback.md).
 *
 * The same rules as the fast backend's router (envs/fastsim/enb_agents/{router,xcp,rcp}.py),
 * in the same units (bytes on the wire, ms): it runs once per 1 ms tick, and a control
 * interval ends at the first tick at or past its length d.
 *
 * - Every data packet that reaches the queue (OnPacket, with the congestion header its sender
 *   wrote) counts in the interval's sums: input traffic y, sum rtt_i s_i, sum rtt_i s_i /
 *   cwnd_i (packets with an RTT). XCP: the packet's feedback
 *   p_i - n_i = xi_p rtt_i^2 s_i / cwnd_i - xi_n rtt_i s_i is added to its flow's total.
 * - Each tick (Tick) takes the queue's minimum (XCP's persistent queue Q). At an interval's end
 *   d becomes the byte-weighted average RTT of its headers (first interval: 10 ms), and
 *   XCP: phi = alpha d (C - y) - beta Q; h = max(0, gamma C d - |phi|);
 *        xi_p = (h + max(phi, 0)) / (d sum rtt s / cwnd), xi_n = (h + max(-phi, 0)) / (d sum s),
 *        with the sums scaled to d (by d / T, T the interval's length);
 *   RCP (every T = d, or every RcpUpdateMs): R <- R (1 + (T / d) (alpha (C - y) - beta q / d) / C),
 *        from C at the first update that has a capacity, within [one packet per d, C].
 * - The flow's ACKs carry its feedback total and the rate back (FeedbackOf), stamped as they
 *   pass the router on the reverse path.
 */
class CellGymExplicitRouter : public Object
{
  public:
    /// The control the router runs.
    enum class Kind
    {
        XCP, //!< XCP's efficiency and fairness controllers
        RCP, //!< RCP's common rate
    };

    /// The router's knobs (program arguments --xcpAlpha, ...).
    struct Knobs
    {
        double alpha{0.4};        //!< XCP's or RCP's alpha
        double beta{0.226};       //!< XCP's or RCP's beta
        double shuffle{0.1};      //!< XCP: share of the capacity shuffled per interval
        double rcpUpdateMs{0};    //!< RCP: update period T, ms (0: every average RTT d)
        double packetBytes{1500}; //!< RCP: a packet on the wire, for R's floor, bytes
    };

    /// The first control interval, before any header carried an RTT, ms.
    static constexpr double kFirstIntervalMs = 10.0;

    static TypeId GetTypeId();
    CellGymExplicitRouter();

    /// Choose the control and its knobs (before the first packet).
    void Configure(Kind kind, const Knobs& knobs);

    /**
     * @brief Read the capacity as the bytes each tick offers (a trace-driven link's delivery
     *        opportunities), summed over the interval, instead of a rate.
     * @param perTick true: Tick's capacity is the tick's bytes; the interval's C is their mean
     */
    void SetCapacityPerTick(bool perTick);

    /**
     * @brief Run Tick every ms from now on, reading the capacity and the queue.
     * @param capacity the capacity now, bytes per ms (<= 0: not known yet)
     * @param queue the queue now, bytes
     */
    void Start(std::function<double()> capacity, std::function<double()> queue);

    /**
     * @brief A data packet reaches the queue.
     * @param flow the packet's flow
     * @param wireBytes its size on the wire, bytes
     * @param hdr its congestion header (nullptr: none, it counts in y only)
     */
    void OnPacket(uint32_t flow, double wireBytes, const ExplicitHeaderTag* hdr);

    /**
     * @brief The end of a 1 ms tick: the persistent queue, the control at an interval's end.
     * @param capBytesPerMs the capacity, bytes per ms (<= 0: none known yet); with
     *        SetCapacityPerTick, the bytes this tick offers
     * @param queueBytes the queue now, bytes
     */
    void Tick(double capBytesPerMs, double queueBytes);

    /// @return what an ACK of the flow carries back now
    ExplicitFeedbackTag FeedbackOf(uint32_t flow) const;

    double GetIntervalMs() const; //!< @return the control interval d, ms
    double GetPhi() const;        //!< @return XCP's latest aggregate feedback phi, bytes
    double GetXiP() const;        //!< @return XCP's latest positive factor xi_p
    double GetXiN() const;        //!< @return XCP's latest negative factor xi_n
    double GetRate() const;       //!< @return RCP's rate R, bytes per ms (0: none yet)

  protected:
    void DoDispose() override;

  private:
    void TickEvent();

    /// What the router keeps per flow.
    struct Flow
    {
        double fbBytes{0};      //!< XCP: the feedback its packets collected, payload bytes
        double payloadShare{1}; //!< payload bytes per wire byte of its full segments
    };

    Kind m_kind{Kind::XCP};
    Knobs m_knobs;
    std::function<double()> m_capacity;
    std::function<double()> m_queue;
    EventId m_tick;
    uint64_t m_t{0};       //!< ticks so far
    double m_d{0};         //!< control interval d, ms (0: before the first tick)
    double m_start{0};     //!< the tick at which the interval began
    double m_in{0};        //!< input traffic of the interval, bytes
    double m_rttBytes{0};  //!< bytes of packets with an RTT
    double m_sumRs{0};     //!< sum rtt_i s_i
    double m_sumRsc{0};    //!< sum rtt_i s_i / cwnd_i
    double m_qMin{0};      //!< the smallest queue of the interval, bytes
    double m_phi{0};       //!< XCP: latest phi
    double m_xiP{0};       //!< XCP: xi_p
    double m_xiN{0};       //!< XCP: xi_n
    double m_rate{0};      //!< RCP: R, bytes per ms
    bool m_perTick{false}; //!< the capacity is each tick's bytes (a trace link)
    double m_capAcc{0};    //!< the interval's bytes offered (m_perTick)
    std::map<uint32_t, Flow> m_flows;
};

} // namespace ns3

#endif // CELLGYM_EXPLICIT_ROUTER_H
