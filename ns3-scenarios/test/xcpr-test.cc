// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of XCP-r's receiver and sender (cellgym-xcpr-receiver.h, tcp-xcpr.h) and of the
// reverse path's ACK loss (cellgym-ack-loss.h) against hand-worked sequences: the expected values
// after each event are worked out in the comments. Payload bytes; segments of 1000 bytes.
#include "cellgym-ack-loss.h"
#include "cellgym-explicit-tags.h"
#include "cellgym-xcpr-receiver.h"
#include "tcp-xcpr.h"

#include "ns3/ipv4-header.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/test.h"

#include <vector>

using namespace ns3;

namespace
{

constexpr double kSeg = 1000;

/// The receiver's rule: cwnd' += the feedback since the last segment; a new reset count
/// resynchronises it to the header's window plus the segment's own feedback; one segment at least.
class XcprReceiverTestCase : public TestCase
{
  public:
    XcprReceiverTestCase()
        : TestCase("XCP-r receiver: cwnd' sums the feedback, resynchronises on the flag")
    {
    }

  private:
    void DoRun() override
    {
        XcprReceiverState rx;
        // The first segment (reset count 0 + 1 = 1, new to the receiver): cwnd' = H_cwnd + its
        // own feedback = 10,000 + 40; the total so far (300) counted as seen.
        rx.Update(300, 10000, 1, kSeg, 40);
        NS_TEST_ASSERT_MSG_EQ_TOL(rx.cwnd, 10040.0, 1e-9, "resynchronised to the header");
        NS_TEST_ASSERT_MSG_EQ(rx.epoch, 1u, "epoch taken");
        // Totals 800 then 650: +500 -> 10,540, then -150 -> 10,390 (the header's window and
        // the own feedback are ignored without a new flag).
        rx.Update(800, 99999, 1, kSeg, 7);
        NS_TEST_ASSERT_MSG_EQ_TOL(rx.cwnd, 10540.0, 1e-9, "+500");
        rx.Update(650, 99999, 1, kSeg, 7);
        NS_TEST_ASSERT_MSG_EQ_TOL(rx.cwnd, 10390.0, 1e-9, "-150");
        // A segment lost after the router: the next one's total (1650) carries both: +1000.
        rx.Update(1650, 0, 1, kSeg, 7);
        NS_TEST_ASSERT_MSG_EQ_TOL(rx.cwnd, 11390.0, 1e-9, "a lost segment's feedback kept");
        // The sender reset (flag: count 2, its window 4000, the segment's own feedback 250):
        // cwnd' = 4250 whatever the total (the feedback before it belongs to the old window).
        rx.Update(5000, 4000, 2, kSeg, 250);
        NS_TEST_ASSERT_MSG_EQ_TOL(rx.cwnd, 4250.0, 1e-9, "resynchronised after a reset");
        // Total -20,000: 4250 - 25,000 -> one segment at least.
        rx.Update(-20000, 0, 2, kSeg, 0);
        NS_TEST_ASSERT_MSG_EQ_TOL(rx.cwnd, kSeg, 1e-9, "one segment at least");

        // The path: the router's records by sequence number, the receiver's ACK windows.
        CellGymXcprPath path;
        path.OnRouterData(7, 1, 100, 10000, 1, kSeg);
        path.OnRouterData(7, 1001, 250, 10000, 1, kSeg);
        path.OnRouterData(7, 2001, 600, 10000, 1, kSeg);
        path.OnReceiverAck(7, 1); // before any segment: nothing to carry
        XcprWindowTag tag;
        NS_TEST_ASSERT_MSG_EQ(path.WindowOfAck(7, 1, tag), false, "no window before data");
        path.OnReceiverData(7, 1);    // cwnd' = 10,000 + its own 100 (resynchronised), seen 100
        path.OnReceiverData(7, 2001); // segment 1001 lost: +500 -> 10,600
        NS_TEST_ASSERT_MSG_EQ_TOL(path.Receiver(7).cwnd, 10600.0, 1e-9, "the path's receiver");
        path.OnReceiverData(7, 1001); // its record went with the later segment's: no change
        NS_TEST_ASSERT_MSG_EQ_TOL(path.Receiver(7).cwnd, 10600.0, 1e-9, "a late segment");
        path.OnReceiverAck(7, 1001);
        path.OnReceiverAck(7, 3001);
        // The ACK 1001 is lost in the uplink: the ACK 3001 still finds its own window.
        NS_TEST_ASSERT_MSG_EQ(path.WindowOfAck(7, 3001, tag), true, "found");
        NS_TEST_ASSERT_MSG_EQ_TOL(tag.cwndBytes, 10600.0, 1e-9, "its window");
        NS_TEST_ASSERT_MSG_EQ(tag.epoch, 1u, "its reset count");
        NS_TEST_ASSERT_MSG_EQ(path.WindowOfAck(7, 1001, tag), false, "skipped record dropped");
    }
};

/// TcpXcpr: cwnd = the carried window; resets raise the flag; windows of older counts ignored.
class TcpXcprTestCase : public TestCase
{
  public:
    TcpXcprTestCase()
        : TestCase("XCP-r sender: the ACKs' window is the window; resynchronisation")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<TcpXcpr> s = CreateObject<TcpXcpr>();
        Ptr<TcpSocketState> tcb = CreateObject<TcpSocketState>();
        tcb->m_segmentSize = 1000;
        tcb->m_cWnd = 10000;
        // No window yet: no slow start, the window stays.
        NS_TEST_ASSERT_MSG_EQ(s->GetHeaderEpoch(), 1u, "no reset yet: flag count 1");
        s->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 10000, "no slow start");
        // Windows 12,345.6 then 9000 (count 1): cwnd = floor(12,345.6), then 9000.
        s->SetWindow(12345.6, 1);
        s->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 12345, "cwnd = the carried window");
        s->SetWindow(9000, 1);
        s->SetWindow(500, 1); // the latest of two ACKs, below a segment -> 1000
        s->IncreaseWindow(tcb, 2);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 1000, "the latest, one segment at least");
        // Fast recovery: a reset (count 2); windows during it ignored; leaving it another (3).
        tcb->m_cWnd = 8000;
        s->CongestionStateSet(tcb, TcpSocketState::CA_RECOVERY);
        NS_TEST_ASSERT_MSG_EQ(s->GetHeaderEpoch(), 2u, "entering recovery raises the flag");
        s->SetWindow(20000, 2);
        s->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 8000, "recovery sets the window");
        s->CongestionStateSet(tcb, TcpSocketState::CA_OPEN);
        NS_TEST_ASSERT_MSG_EQ(s->GetHeaderEpoch(), 3u, "leaving recovery raises it again");
        // Windows computed before the reset (count 1 or 2) are ignored; count 3 applies.
        s->SetWindow(30000, 2);
        s->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 8000, "not synchronised yet");
        s->SetWindow(8500, 3);
        s->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 8500, "synchronised");
        // A timeout: a reset (count 4), and the next synchronised window applies at once.
        s->CongestionStateSet(tcb, TcpSocketState::CA_LOSS);
        tcb->m_cWnd = 1000;
        NS_TEST_ASSERT_MSG_EQ(s->GetHeaderEpoch(), 4u, "a timeout raises the flag");
        s->SetWindow(6000, 4);
        s->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 6000, "applies in the loss state");
        // After a timeout the receiver's unchanged cwnd' (count 3, on the ACKs of data sent
        // before it) applies too; older counts do not.
        s->SetWindow(7000, 3);
        s->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 7000, "the count before the timeout");
        s->SetWindow(9000, 2);
        s->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 7000, "older counts ignored");
        // Once the loss is repaired (open again), only the current count applies.
        s->CongestionStateSet(tcb, TcpSocketState::CA_OPEN);
        s->SetWindow(7500, 3);
        s->IncreaseWindow(tcb, 1);
        NS_TEST_ASSERT_MSG_EQ(tcb->m_cWnd.Get(), 7000, "the old count no longer applies");
        NS_TEST_ASSERT_MSG_EQ(s->GetSsThresh(tcb, 8000), 4000, "NewReno's ssthresh");
    }
};

/// An ACK (TCP, flags ACK) with an IPv4 header and XCP's feedback total.
Ptr<Packet>
MakeAck(double xcpTotal, bool syn = false)
{
    Ptr<Packet> p = Create<Packet>();
    TcpHeader tcp;
    tcp.SetFlags(syn ? (TcpHeader::SYN | TcpHeader::ACK) : TcpHeader::ACK);
    p->AddHeader(tcp);
    Ipv4Header ip;
    ip.SetProtocol(6);
    ip.SetPayloadSize(p->GetSize());
    p->AddHeader(ip);
    ExplicitFeedbackTag fb;
    fb.xcpTotalBytes = xcpTotal;
    p->AddPacketTag(fb);
    return p;
}

/// The ACK loss: each ACK lost with probability p; the survivors' XCP totals lose the shares of
/// the lost ones; SYNs pass.
class AckLossTestCase : public TestCase
{
  public:
    AckLossTestCase()
        : TestCase("ACK loss: independent drops, lost XCP feedback stays lost")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<CellGymAckLossModel> m = CreateObject<CellGymAckLossModel>();
        m->Setup(0.5, 12345);
        NS_TEST_ASSERT_MSG_EQ(m->IsCorrupt(MakeAck(0, true)), false, "a SYN passes");
        NS_TEST_ASSERT_MSG_EQ(m->GetSeen(), 0u, "and is not counted");
        // ACKs carrying totals 100, 200, ..., each share 100: the totals the survivors carry on
        // are the sum of the surviving shares.
        double surviving = 0;
        uint32_t lost = 0;
        const int n = 2000;
        for (int i = 1; i <= n; ++i)
        {
            Ptr<Packet> p = MakeAck(100.0 * i);
            if (m->IsCorrupt(p))
            {
                ++lost;
                continue;
            }
            surviving += 100;
            ExplicitFeedbackTag fb;
            p->PeekPacketTag(fb);
            NS_TEST_ASSERT_MSG_EQ_TOL(fb.xcpTotalBytes, surviving, 1e-6, "survivors' shares");
        }
        NS_TEST_ASSERT_MSG_EQ(m->GetSeen(), uint64_t(n), "every ACK drawn");
        NS_TEST_ASSERT_MSG_EQ(m->GetDropped(), uint64_t(lost), "drops counted");
        // Binomial(2000, 0.5): mean 1000, sd 22.4; 5 sd either side.
        NS_TEST_ASSERT_MSG_EQ_TOL(double(lost), 1000.0, 112.0, "loss rate p");
    }
};

class XcprTestSuite : public TestSuite
{
  public:
    XcprTestSuite()
        : TestSuite("xcpr", Type::UNIT)
    {
        AddTestCase(new XcprReceiverTestCase, Duration::QUICK);
        AddTestCase(new TcpXcprTestCase, Duration::QUICK);
        AddTestCase(new AckLossTestCase, Duration::QUICK);
    }
};

static XcprTestSuite g_xcprTestSuite; //!< registers the suite

} // namespace
