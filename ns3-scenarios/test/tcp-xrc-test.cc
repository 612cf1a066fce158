// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of TcpXrc's window rules against hand-worked ACK sequences, in the style of ns-3's
// own TCP tests: the expected window after each event is written in the test.
#include "tcp-xrc.h"

#include "ns3/simulator.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/test.h"

using namespace ns3;

namespace
{

constexpr uint32_t kSeg = 1000; // bytes per segment in every case below

/// A socket state with 1000-byte segments, a 40 ms minimum RTT and the given window.
Ptr<TcpSocketState>
MakeTcb(uint32_t cwnd, uint32_t ssthresh)
{
    Ptr<TcpSocketState> tcb = CreateObject<TcpSocketState>();
    tcb->m_segmentSize = kSeg;
    tcb->m_cWnd = cwnd;
    tcb->m_ssThresh = ssthresh;
    tcb->m_minRtt = MilliSeconds(40);
    return tcb;
}

/// One ACK of one segment with the given RTT sample (m_lastRtt, as TcpSocketBase::EstimateRtt
/// sets it) and the given smoothed RTT (what TcpSocketBase passes to PktsAcked; default: the
/// sample).
void
Ack(Ptr<TcpXrc> xrc, Ptr<TcpSocketState> tcb, Time rtt, Time srtt = Time(0))
{
    tcb->m_lastRtt = rtt;
    xrc->PktsAcked(tcb, 1, srtt.IsStrictlyPositive() ? srtt : rtt);
    xrc->IncreaseWindow(tcb, 1);
}

} // namespace

/// Single-ACK rules: twnd = 20 Mbit/s x 40 ms = 100,000 B in every case.
class TcpXrcRulesTestCase : public TestCase
{
  public:
    TcpXrcRulesTestCase()
        : TestCase("XRC window rules, one ACK at a time")
    {
    }

  private:
    void DoRun() override
    {
        // No feedback: NewReno congestion avoidance, cwnd += 1000 * 1000 / 10,000 = +100.
        Ptr<TcpXrc> xrc = CreateObject<TcpXrc>();
        Ptr<TcpSocketState> tcb = MakeTcb(10000, 5000);
        Ack(xrc, tcb, MilliSeconds(40));
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 10100, "NewReno without feedback");
        NS_TEST_ASSERT_MSG_EQ(
            static_cast<int>(xrc->GetMode()), static_cast<int>(TcpXrc::Mode::NO_FEEDBACK), "mode");

        // Feedback, slow start below twnd: one segment per acknowledged segment, 10,000 -> 11,000.
        xrc = CreateObject<TcpXrc>();
        tcb = MakeTcb(10000, 1000000);
        xrc->SetFeedback(20.0, 0.0);
        Ack(xrc, tcb, MilliSeconds(40));
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 11000, "slow start");
        NS_TEST_ASSERT_MSG_EQ_TOL(xrc->GetTargetWindow(), 100000.0, 1e-6, "twnd = R x RTTmin");

        // Slow start at twnd ends it (ssthresh = cwnd) and probes: 100,000 + 1000^2/100,000.
        xrc = CreateObject<TcpXrc>();
        tcb = MakeTcb(100000, 1000000);
        xrc->SetFeedback(20.0, 0.0);
        Ack(xrc, tcb, MilliSeconds(40));
        NS_TEST_ASSERT_MSG_EQ(tcb->m_ssThresh.Get(), 100000, "slow start ends at twnd");
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 100010, "one segment per RTT past twnd");
        NS_TEST_ASSERT_MSG_EQ(
            static_cast<int>(xrc->GetMode()), static_cast<int>(TcpXrc::Mode::PROBE), "mode");

        // Ramp: cwnd 50,000 < twnd, delay within budget. The gap of 50,000 B closes over 2 RTTs:
        // per acknowledged segment 50,000 / 2 * 1000 / 50,000 = +500 -> 50,500; the next ACK
        // adds 25,000 * 1000 / 50,500 = 495.05 -> 50,995.
        xrc = CreateObject<TcpXrc>();
        tcb = MakeTcb(50000, 50000);
        xrc->SetFeedback(20.0, 2.0);
        Ack(xrc, tcb, MilliSeconds(40));
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 50500, "ramp, first ACK");
        Ack(xrc, tcb, MilliSeconds(40));
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 50995, "ramp, second ACK");
        NS_TEST_ASSERT_MSG_EQ(
            static_cast<int>(xrc->GetMode()), static_cast<int>(TcpXrc::Mode::RAMP), "mode");

        // HoL 15 ms > 10 ms budget (cellular bottleneck): the window is reset to twnd.
        xrc = CreateObject<TcpXrc>();
        tcb = MakeTcb(150000, 100000);
        xrc->SetFeedback(20.0, 15.0);
        Ack(xrc, tcb, MilliSeconds(55));
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 100000, "reset to twnd");
        NS_TEST_ASSERT_MSG_EQ(
            static_cast<int>(xrc->GetMode()), static_cast<int>(TcpXrc::Mode::RESET), "mode");

        // Internet bottleneck: HoL 2 ms within budget, end-to-end queueing 75 - 40 = 35 ms exceeds
        // HoL + budget: standard TCP, 80,000 + 1000^2 / 80,000 = 80,012.5 -> 80,012.
        xrc = CreateObject<TcpXrc>();
        tcb = MakeTcb(80000, 50000);
        xrc->SetFeedback(20.0, 2.0);
        Ack(xrc, tcb, MilliSeconds(75));
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 80012, "Internet bottleneck: NewReno");
        NS_TEST_ASSERT_MSG_EQ(
            static_cast<int>(xrc->GetMode()), static_cast<int>(TcpXrc::Mode::INTERNET), "mode");

        // Loss: standard halving of the flight, at least two segments.
        NS_TEST_ASSERT_MSG_EQ(xrc->GetSsThresh(tcb, 60000), 30000, "ssthresh = flight / 2");
        NS_TEST_ASSERT_MSG_EQ(xrc->GetSsThresh(tcb, 1000), 2000, "ssthresh >= 2 segments");
    }
};

/// The unfairness mode: N = 10 RTTs of 40 ms of high delay at twnd, then alpha = 10 per RTT.
class TcpXrcUnfairTestCase : public TestCase
{
  public:
    TcpXrcUnfairTestCase()
        : TestCase("XRC unfairness mode after N RTTs of high delay at twnd")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<TcpXrc> xrc = CreateObject<TcpXrc>();
        Ptr<TcpSocketState> tcb = MakeTcb(100000, 100000);
        xrc->SetFeedback(20.0, 40.0); // a competitor keeps the RLC queue 40 ms deep
        std::vector<int> modes;
        // One ACK every 10 ms: the mode switches once 400 ms of high delay have accumulated,
        // i.e. at the 41st ACK (the first ACK starts the clock).
        for (int k = 0; k < 45; ++k)
        {
            Simulator::Schedule(MilliSeconds(10 * k),
                                [&]()
                                {
                                    Ack(xrc, tcb, MilliSeconds(80));
                                    modes.push_back(static_cast<int>(xrc->GetMode()));
                                });
        }
        Simulator::Run();
        Simulator::Destroy();
        const int reset = static_cast<int>(TcpXrc::Mode::RESET);
        const int unfair = static_cast<int>(TcpXrc::Mode::UNFAIR);
        NS_TEST_ASSERT_MSG_EQ(modes.size(), 45, "all ACKs processed");
        NS_TEST_ASSERT_MSG_EQ(modes[39], reset, "still resetting after 390 ms");
        NS_TEST_ASSERT_MSG_EQ(modes[40], unfair, "unfair after 400 ms = 10 RTTs");
        // In the mode each ACK adds 10 * 1000^2 / cwnd: 100,000 -> 100,100 on the first.
        NS_TEST_ASSERT_MSG_GT(tcb->m_cWnd.Get(), 100400, "alpha = 10 segments per RTT");
        // A loss ends it.
        xrc->CongestionStateSet(tcb, TcpSocketState::CA_RECOVERY);
        tcb->m_cWnd = 100000;
        Ack(xrc, tcb, MilliSeconds(80));
        NS_TEST_ASSERT_MSG_EQ(static_cast<int>(xrc->GetMode()), reset, "loss ends the mode");
    }
};

/// RTT_min and the mean RTT come from the ACKs' own samples, not ns-3's smoothed RTT.
class TcpXrcRttSamplesTestCase : public TestCase
{
  public:
    TcpXrcRttSamplesTestCase()
        : TestCase("XRC takes RTT_min and the mean RTT from the ACKs' samples")
    {
    }

  private:
    void DoRun() override
    {
        // ns-3 keeps m_minRtt as the smoothed RTT's minimum (45 ms here, inflated by the queue of
        // slow start) and passes the smoothed RTT (56 ms) to PktsAcked, while the ACK's own
        // sample is 40 ms. The paper's twnd = 20 Mbit/s x 40 ms = 100,000 B, and with every
        // sample at 40 ms the queueing delay is 0: the window at twnd probes, 100,000 -> 100,010.
        // With the smoothed values it would read twnd 112,500 and delta 56 - 45 = 11 ms > budget
        // and jump to 112,500 (RESET).
        Ptr<TcpXrc> xrc = CreateObject<TcpXrc>();
        Ptr<TcpSocketState> tcb = MakeTcb(100000, 100000);
        tcb->m_minRtt = MilliSeconds(45);
        xrc->SetFeedback(20.0, 2.0);
        Ack(xrc, tcb, MilliSeconds(40), MilliSeconds(56));
        NS_TEST_ASSERT_MSG_EQ_TOL(xrc->GetTargetWindow(), 100000.0, 1e-6, "twnd from min sample");
        NS_TEST_ASSERT_MSG_EQ(
            static_cast<int>(xrc->GetMode()), static_cast<int>(TcpXrc::Mode::PROBE), "mode");
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 100010, "probe at twnd");

        // The socket's minimum still counts (it holds the handshake's sample): 30 ms < 40 ms.
        xrc = CreateObject<TcpXrc>();
        tcb = MakeTcb(50000, 50000);
        tcb->m_minRtt = MilliSeconds(30);
        xrc->SetFeedback(20.0, 2.0);
        Ack(xrc, tcb, MilliSeconds(40), MilliSeconds(42));
        NS_TEST_ASSERT_MSG_EQ_TOL(xrc->GetTargetWindow(), 75000.0, 1e-6, "handshake's minimum");
    }
};

/// The suite.
class TcpXrcTestSuite : public TestSuite
{
  public:
    TcpXrcTestSuite()
        : TestSuite("tcp-xrc", Type::UNIT)
    {
        AddTestCase(new TcpXrcRulesTestCase, Duration::QUICK);
        AddTestCase(new TcpXrcUnfairTestCase, Duration::QUICK);
        AddTestCase(new TcpXrcRttSamplesTestCase, Duration::QUICK);
    }
};

static TcpXrcTestSuite g_tcpXrcTestSuite; //!< registers the suite
