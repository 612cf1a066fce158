// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of XCP's and RCP's router (CellGymExplicitRouter) and senders (TcpXcp, TcpRcp)
// against hand-worked sequences: the expected values after each event are worked out in the
// comments. Units as the router's: bytes on the wire, ms; capacity C = 1000 B/ms in every case.
#include "cellgym-explicit-router.h"
#include "tcp-rcp.h"
#include "tcp-xcp.h"

#include "ns3/tcp-socket-state.h"
#include "ns3/test.h"

using namespace ns3;

namespace
{

constexpr double kCap = 1000; // bytes per ms

/// A congestion header: window (payload bytes), RTT (ms), 1000-byte segments.
ExplicitHeaderTag
MakeHeader(double cwnd, double rttMs)
{
    ExplicitHeaderTag h;
    h.cwndBytes = cwnd;
    h.rttS = rttMs / 1e3;
    h.segBytes = 1000;
    return h;
}

/// ``n`` packets of ``wire`` bytes of flow ``flow`` with header ``h``.
void
Packets(Ptr<CellGymExplicitRouter> r, uint32_t flow, int n, double wire, const ExplicitHeaderTag& h)
{
    for (int i = 0; i < n; ++i)
    {
        r->OnPacket(flow, wire, &h);
    }
}

/// ``n`` ticks with the queue at ``queue`` bytes.
void
Ticks(Ptr<CellGymExplicitRouter> r, int n, double queue)
{
    for (int i = 0; i < n; ++i)
    {
        r->Tick(kCap, queue);
    }
}

} // namespace

/// XCP: efficiency controller, shuffling, fairness controller, per-packet feedback.
class XcpRouterTestCase : public TestCase
{
  public:
    XcpRouterTestCase()
        : TestCase("XCP router: control intervals and per-packet feedback")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<CellGymExplicitRouter> r = CreateObject<CellGymExplicitRouter>();
        r->Configure(CellGymExplicitRouter::Kind::XCP, CellGymExplicitRouter::Knobs{});
        const ExplicitHeaderTag h = MakeHeader(10000, 50); // cwnd 10 packets of 1000 B, RTT 50 ms

        // Interval 1 (the first: 10 ms). 5 packets of 1000 B: y = 5000 B, sum rtt s = 250,000,
        // sum rtt s / cwnd = 5 x 50 x 1000 / 10,000 = 25. They get no feedback (xi = 0).
        Packets(r, 1, 5, 1000, h);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->FeedbackOf(1).xcpTotalBytes, 0.0, 1e-9, "no xi yet");
        // Queue 2000 B every tick: Q = 2000. At the 10th tick: d = 250,000 / 5000 = 50 ms,
        // y = 5000 / 10 = 500 B/ms, phi = 0.4 x 50 x (1000 - 500) - 0.226 x 2000 = 9548;
        // h = max(0, 0.1 x 1000 x 50 - 9548) = 0; sums scaled by d / T = 5: rsc = 125,
        // sized = 25,000; xi_p = 9548 / (50 x 125) = 1.52768, xi_n = 0.
        Ticks(r, 9, 2000);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetIntervalMs(), 10.0, 1e-9, "first interval still open");
        Ticks(r, 1, 2000);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetIntervalMs(), 50.0, 1e-9, "d = average RTT");
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetPhi(), 9548.0, 1e-9, "phi");
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetXiP(), 1.52768, 1e-9, "xi_p");
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetXiN(), 0.0, 1e-12, "xi_n");

        // Interval 2 (50 ms): one packet of flow 1 gets xi_p rtt^2 s / cwnd
        // = 1.52768 x 2500 x 1000 / 10,000 = 381.92 B (payload = wire here).
        Packets(r, 1, 1, 1000, h);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->FeedbackOf(1).xcpTotalBytes, 381.92, 1e-9, "positive");
        // 49 more packets (50 in all, y = 50,000 / 50 = 1000 = C) with an empty queue: phi = 0,
        // so all is shuffling: h = 0.1 x 1000 x 50 = 5000; rsc = 50 x 50 x 1000 / 10,000 = 250,
        // sized = 50,000; xi_p = 5000 / (50 x 250) = 0.4, xi_n = 5000 / (50 x 50,000) = 0.002.
        // (The queue reaches 20,000 B at the last tick: the next interval's Q starts there.)
        Packets(r, 1, 49, 1000, h);
        Ticks(r, 49, 0);
        Ticks(r, 1, 20000);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetPhi(), 0.0, 1e-9, "phi at full use, no queue");
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetXiP(), 0.4, 1e-12, "xi_p from shuffling");
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetXiN(), 0.002, 1e-12, "xi_n from shuffling");

        // Interval 3: the flows' feedback. Window 10,000: 0.4 x 2500 x 1000 / 10,000 - 0.002 x
        // 50 x 1000 = 100 - 100 = 0 (the average flow keeps its window); window 5000: 200 - 100
        // = +100 (the smaller flow gains: fairness).
        const double before = r->FeedbackOf(1).xcpTotalBytes;
        Packets(r, 1, 1, 1000, h);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->FeedbackOf(1).xcpTotalBytes - before, 0.0, 1e-9, "average");
        Packets(r, 2, 1, 1000, MakeHeader(5000, 50));
        NS_TEST_ASSERT_MSG_EQ_TOL(r->FeedbackOf(2).xcpTotalBytes, 100.0, 1e-9, "smaller gains");

        // Overload: 59 more packets (60 in all: y = 1200 B/ms) and a queue of 20,000 B:
        // phi = 0.4 x 50 x (-200) - 0.226 x 20,000 = -8520, h = max(0, 5000 - 8520) = 0,
        // xi_p = 0, xi_n = 8520 / (50 x 60,000) = 0.00284. A packet: -0.00284 x 50 x 1000 = -142;
        // with 1250-byte packets of 1000 B payload: the window in wire bytes is 12,500 and the
        // feedback -0.00284 x 50 x 1250 = -177.5 wire bytes = -142 payload bytes.
        Packets(r, 1, 58, 1000, h);
        Ticks(r, 50, 20000);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetPhi(), -8520.0, 1e-9, "phi with a queue");
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetXiP(), 0.0, 1e-12, "no positive feedback");
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetXiN(), 0.00284, 1e-12, "xi_n");
        Packets(r, 3, 1, 1000, h);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->FeedbackOf(3).xcpTotalBytes, -142.0, 1e-9, "negative");
        Packets(r, 4, 1, 1250, h);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->FeedbackOf(4).xcpTotalBytes, -142.0, 1e-9, "wire bytes");
        // A packet without an RTT (the first flight) counts in y and gets no feedback.
        Packets(r, 5, 1, 1000, MakeHeader(10000, 0));
        NS_TEST_ASSERT_MSG_EQ_TOL(r->FeedbackOf(5).xcpTotalBytes, 0.0, 1e-12, "no RTT yet");
    }
};

/// RCP: the rate update of equation 3 with the factor T / d.
class RcpRouterTestCase : public TestCase
{
  public:
    RcpRouterTestCase()
        : TestCase("RCP router: R(t) from the spare capacity and the queue")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<CellGymExplicitRouter> r = CreateObject<CellGymExplicitRouter>();
        CellGymExplicitRouter::Knobs k;
        r->Configure(CellGymExplicitRouter::Kind::RCP, k);
        const ExplicitHeaderTag h = MakeHeader(10000, 50);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->FeedbackOf(1).rcpRateBps, 0.0, 1e-12, "no rate yet");

        // First interval (10 ms): 5 packets of 1250 B (1000 B payload): y = 625 B/ms, d = 50.
        // R starts at C: 1000 x (1 + (10 / 50) x 0.4 x (1000 - 625) / 1000) = 1030, capped at C.
        Packets(r, 1, 5, 1250, h);
        Ticks(r, 10, 0);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetRate(), 1000.0, 1e-9, "R within [s / d, C]");
        // The flow's ACKs carry R as payload bit/s: 1000 B/ms x 1000 / 1250 x 8000.
        NS_TEST_ASSERT_MSG_EQ_TOL(r->FeedbackOf(1).rcpRateBps, 6.4e6, 1e-3, "payload rate");

        // Next update after d = 50 ms: 60 packets (y = 75,000 / 50 = 1500 B/ms), queue 5000 B:
        // R = 1000 x (1 + (50 / 50) x (0.4 x (1000 - 1500) - 0.226 x 5000 / 50) / 1000)
        //   = 1000 x (1 - 0.2226) = 777.4.
        Packets(r, 1, 60, 1250, h);
        Ticks(r, 49, 5000);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetRate(), 1000.0, 1e-9, "not yet");
        Ticks(r, 1, 5000);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetRate(), 777.4, 1e-9, "equation 3");
        NS_TEST_ASSERT_MSG_EQ_TOL(r->FeedbackOf(1).rcpRateBps, 777.4 * 0.8 * 8000, 1e-3, "ACKs");

        // An idle link for 50 ms: R = 777.4 x (1 + 0.4 x 1000 / 1000) = 1088.36 -> C = 1000.
        Ticks(r, 50, 0);
        NS_TEST_ASSERT_MSG_EQ_TOL(r->GetRate(), 1000.0, 1e-9, "capped at C");

        // An update period of 10 ms (T / d = 0.2): 10 packets of 1250 B (y = 1250 B/ms), no
        // queue: R = 1000 x (1 + 0.2 x 0.4 x (-250) / 1000) = 980.
        Ptr<CellGymExplicitRouter> fast = CreateObject<CellGymExplicitRouter>();
        k.rcpUpdateMs = 10;
        fast->Configure(CellGymExplicitRouter::Kind::RCP, k);
        Packets(fast, 1, 5, 1250, h);
        Ticks(fast, 10, 0); // the first update: R = C (as above)
        Packets(fast, 1, 10, 1250, h);
        Ticks(fast, 10, 0);
        NS_TEST_ASSERT_MSG_EQ_TOL(fast->GetRate(), 980.0, 1e-9, "T / d scaling");

        // A trace link's capacity: the bytes each tick offers, averaged over the interval.
        // Ticks offering 2000 and 0 B in turn: C = 1000 B/ms, so the same sequence gives 980.
        Ptr<CellGymExplicitRouter> trace = CreateObject<CellGymExplicitRouter>();
        trace->Configure(CellGymExplicitRouter::Kind::RCP, k);
        trace->SetCapacityPerTick(true);
        Packets(trace, 1, 5, 1250, h);
        for (int i = 0; i < 10; ++i)
        {
            trace->Tick(i % 2 == 0 ? 2000 : 0, 0);
        }
        NS_TEST_ASSERT_MSG_EQ_TOL(trace->GetRate(), 1000.0, 1e-9, "R = C = the ticks' mean");
        Packets(trace, 1, 10, 1250, h);
        for (int i = 0; i < 10; ++i)
        {
            trace->Tick(i % 2 == 0 ? 2000 : 0, 0);
        }
        NS_TEST_ASSERT_MSG_EQ_TOL(trace->GetRate(), 980.0, 1e-9, "C from the offered bytes");
    }
};

/// TcpXcp: cwnd = max(cwnd + feedback, one segment); no slow start; feedback in fast recovery
/// dropped, after a timeout applied.
class TcpXcpTestCase : public TestCase
{
  public:
    TcpXcpTestCase()
        : TestCase("XCP sender: the window moves by the feedback alone")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<TcpXcp> xcp = CreateObject<TcpXcp>();
        Ptr<TcpSocketState> tcb = CreateObject<TcpSocketState>();
        tcb->m_segmentSize = 1000;
        tcb->m_cWnd = 10000;
        tcb->m_ssThresh = 1000000;
        // No feedback: no slow start, the window stays.
        xcp->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 10000, "no slow start");
        // Totals 500 then 300: +500 -> 10,500, then -200 -> 10,300.
        xcp->SetFeedback(500);
        xcp->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 10500, "positive feedback");
        xcp->SetFeedback(300);
        xcp->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 10300, "negative feedback");
        // Two ACKs before the window moves (their totals 400, 450): +150 at once -> 10,450.
        xcp->SetFeedback(400);
        xcp->SetFeedback(450);
        xcp->IncreaseWindow(tcb, 2);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 10450, "the sum of the ACKs' feedback");
        // Total -20,000: -20,450 -> floor of one segment.
        xcp->SetFeedback(-20000);
        xcp->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 1000, "one segment at least");
        // Loss: NewReno's ssthresh (8000 in flight -> 4000); feedback during recovery is dropped.
        NS_TEST_ASSERT_MSG_EQ(xcp->GetSsThresh(tcb, 8000), 4000, "NewReno's ssthresh");
        xcp->CongestionStateSet(tcb, TcpSocketState::CA_RECOVERY);
        xcp->SetFeedback(-19000);
        xcp->CongestionStateSet(tcb, TcpSocketState::CA_OPEN);
        xcp->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 1000, "feedback of recovery dropped");
        xcp->SetFeedback(-18500);
        xcp->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 1500, "+500 after recovery");
        // A retransmission timeout (one segment): the feedback applies at once, as the ACKs of
        // the data queued before the timeout arrive (total -18,500 -> -10,000: +8,500).
        xcp->CongestionStateSet(tcb, TcpSocketState::CA_LOSS);
        tcb->m_cWnd = 1000;
        xcp->SetFeedback(-10000);
        xcp->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 9500, "feedback applies after a timeout");
    }
};

/// TcpRcp: paces at the carried rate; the window is the receive window; no cut on loss.
class TcpRcpTestCase : public TestCase
{
  public:
    TcpRcpTestCase()
        : TestCase("RCP sender: paces at the router's rate")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<TcpRcp> rcp = CreateObject<TcpRcp>();
        Ptr<TcpSocketState> tcb = CreateObject<TcpSocketState>();
        tcb->m_segmentSize = 1000;
        tcb->m_cWnd = 10000;
        tcb->m_ssThresh = 1000000;
        // No rate yet: NewReno's slow start, 10,000 + 1000.
        rcp->Init(tcb);
        rcp->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 11000, "unpaced before a rate");
        // The SYN-ACK's rate (8 Mbit/s) at the connection's start: paced, window = rwnd.
        rcp = CreateObject<TcpRcp>();
        tcb->m_cWnd = 10000;
        rcp->SetFeedback(8e6);
        rcp->Init(tcb);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_pacingRate.Get().GetBitRate(), 8000000, "starts at R");
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 4194304, "receive window");
        // An ACK with 4 Mbit/s; one without a rate (0) keeps it.
        rcp->SetFeedback(4e6);
        rcp->PktsAcked(tcb, 1, MilliSeconds(50));
        NS_TEST_ASSERT_MSG_EQ(tcb->m_pacingRate.Get().GetBitRate(), 4000000, "new R");
        rcp->SetFeedback(0);
        rcp->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_pacingRate.Get().GetBitRate(), 4000000, "kept");
        NS_TEST_ASSERT_MSG_EQ(rcp->GetSsThresh(tcb, 8000), 4194304, "no window cut on loss");
    }
};

/// The suite.
class ExplicitRouterTestSuite : public TestSuite
{
  public:
    ExplicitRouterTestSuite()
        : TestSuite("explicit-router", Type::UNIT)
    {
        AddTestCase(new XcpRouterTestCase, Duration::QUICK);
        AddTestCase(new RcpRouterTestCase, Duration::QUICK);
        AddTestCase(new TcpXcpTestCase, Duration::QUICK);
        AddTestCase(new TcpRcpTestCase, Duration::QUICK);
    }
};

static ExplicitRouterTestSuite g_explicitRouterTestSuite; //!< registers the suite
