// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of the explicit-feedback sender interface (cellgym-explicit-sender.h): what each
// controller tells the sender application (header bytes, pacing) and what it reads from an ACK's
// tags, worked out from each controller's rules in the comments.
#include "cellgym-explicit-sender.h"
#include "cellgym-explicit-tags.h"
#include "cellgym-pbe-monitor.h"
#include "tcp-pbe.h"
#include "tcp-rcp.h"
#include "tcp-xcp.h"
#include "tcp-xcpr.h"
#include "tcp-xrc.h"

#include "ns3/packet.h"
#include "ns3/test.h"

#include <vector>

using namespace ns3;

namespace
{

using Pacing = CellGymExplicitSender::Pacing;

/// An ACK with every controller's feedback on it.
Ptr<Packet>
TaggedAck()
{
    Ptr<Packet> ack = Create<Packet>(0);
    ExplicitFeedbackTag fb;
    fb.xcpTotalBytes = 3000;
    fb.rcpRateBps = 8e6;
    ack->AddPacketTag(fb);
    XcprWindowTag window;
    window.cwndBytes = 12000;
    window.epoch = 1;
    ack->AddPacketTag(window);
    PbeRateTag pbe;
    pbe.rateBps = 5e6;
    ack->AddPacketTag(pbe);
    return ack;
}

/// Every sender reads the same ACK.
void
ReadFeedback(const std::vector<CellGymExplicitSender*>& senders, Ptr<const Packet> ack)
{
    for (CellGymExplicitSender* s : senders)
    {
        s->ReadFeedback(ack);
    }
}

/// Header bytes and pacing: XCP and XCP-r carry a 20-byte header, RCP a 16-byte one and paces
/// after the initial window, PBE-CC paces every segment, XRC needs neither.
class ExplicitSenderContractTestCase : public TestCase
{
  public:
    ExplicitSenderContractTestCase()
        : TestCase("explicit senders: header bytes and pacing")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<TcpXcp> xcp = CreateObject<TcpXcp>();
        Ptr<TcpXcpr> xcpr = CreateObject<TcpXcpr>();
        Ptr<TcpRcp> rcp = CreateObject<TcpRcp>();
        Ptr<TcpPbe> pbe = CreateObject<TcpPbe>();
        Ptr<TcpXrc> xrc = CreateObject<TcpXrc>();
        NS_TEST_EXPECT_MSG_EQ(xcp->GetHeaderBytes(), 20U, "XCP's header");
        NS_TEST_EXPECT_MSG_EQ(xcpr->GetHeaderBytes(), 20U, "XCP-r's header: XCP's");
        NS_TEST_EXPECT_MSG_EQ(rcp->GetHeaderBytes(), 16U, "RCP's header");
        NS_TEST_EXPECT_MSG_EQ(pbe->GetHeaderBytes(), 0U, "PBE-CC: no header");
        NS_TEST_EXPECT_MSG_EQ(xrc->GetHeaderBytes(), 0U, "XRC: no header");
        NS_TEST_EXPECT_MSG_EQ((rcp->GetPacing() == Pacing::AFTER_INITIAL_WINDOW), true, "RCP");
        NS_TEST_EXPECT_MSG_EQ((pbe->GetPacing() == Pacing::ALL), true, "PBE-CC");
        NS_TEST_EXPECT_MSG_EQ((xcp->GetPacing() == Pacing::NONE), true, "XCP");
        NS_TEST_EXPECT_MSG_EQ((xrc->GetPacing() == Pacing::NONE), true, "XRC");
    }
};

/// Each controller reads its own tag from an ACK that carries them all: XCP's pending feedback
/// is the total's change (0 -> 3000), RCP's rate R = 8 Mbit/s, PBE-CC's rate 5 Mbit/s, XCP-r's
/// window 12,000 (epoch 1 = no reset yet + 1, in sync). An ACK without tags changes none.
class ExplicitSenderFeedbackTestCase : public TestCase
{
  public:
    ExplicitSenderFeedbackTestCase()
        : TestCase("explicit senders: each reads its feedback from the ACK")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<TcpXcp> xcp = CreateObject<TcpXcp>();
        Ptr<TcpXcpr> xcpr = CreateObject<TcpXcpr>();
        Ptr<TcpRcp> rcp = CreateObject<TcpRcp>();
        Ptr<TcpPbe> pbe = CreateObject<TcpPbe>();
        const std::vector<CellGymExplicitSender*> senders{
            PeekPointer(xcp), PeekPointer(xcpr), PeekPointer(rcp), PeekPointer(pbe)};
        ReadFeedback(senders, Create<Packet>(0));
        NS_TEST_EXPECT_MSG_EQ_TOL(xcp->GetPending(), 0, 1e-9, "no tag: no XCP feedback");
        NS_TEST_EXPECT_MSG_EQ_TOL(rcp->GetRate(), 0, 1e-9, "no tag: no RCP rate");
        ReadFeedback(senders, TaggedAck());
        NS_TEST_EXPECT_MSG_EQ_TOL(xcp->GetPending(), 3000, 1e-9, "XCP: the total's change");
        NS_TEST_EXPECT_MSG_EQ_TOL(rcp->GetRate(), 8e6, 1e-3, "RCP: the router's R");
        NS_TEST_EXPECT_MSG_EQ_TOL(pbe->GetRate(), 5e6, 1e-3, "PBE-CC: the UE's rate");
        NS_TEST_EXPECT_MSG_EQ_TOL(xcpr->GetPendingWindow(), 12000, 1e-9, "XCP-r: cwnd'");
    }
};

/// Only XCP-r tags its segments beyond the congestion header: the flag (no reset: epoch 1).
class ExplicitSenderTagTestCase : public TestCase
{
  public:
    ExplicitSenderTagTestCase()
        : TestCase("explicit senders: XCP-r flags its segments")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<TcpXcp> xcp = CreateObject<TcpXcp>();
        Ptr<TcpXcpr> xcpr = CreateObject<TcpXcpr>();
        Ptr<Packet> a = Create<Packet>(100);
        Ptr<Packet> b = Create<Packet>(100);
        xcp->TagSegment(a);
        xcpr->TagSegment(b);
        XcprHeaderTag flag;
        NS_TEST_EXPECT_MSG_EQ(a->PeekPacketTag(flag), false, "XCP adds no tag of its own");
        NS_TEST_EXPECT_MSG_EQ(b->PeekPacketTag(flag), true, "XCP-r adds its flag");
        NS_TEST_EXPECT_MSG_EQ(flag.epoch, 1U, "no reset yet: epoch 1");
    }
};

class ExplicitSenderTestSuite : public TestSuite
{
  public:
    ExplicitSenderTestSuite()
        : TestSuite("explicit-sender", Type::UNIT)
    {
        AddTestCase(new ExplicitSenderContractTestCase(), Duration::QUICK);
        AddTestCase(new ExplicitSenderFeedbackTestCase(), Duration::QUICK);
        AddTestCase(new ExplicitSenderTagTestCase(), Duration::QUICK);
    }
};

} // namespace

static ExplicitSenderTestSuite g_explicitSenderTestSuite; //!< registers the suite
