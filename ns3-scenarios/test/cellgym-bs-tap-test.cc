// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of the base-station tap (cellgym-bs-tap.h) with the made-up radio of
// bs-tap-test-support.h (1 ms TTIs, 10 usable RBs, MCS m carries 10 x m bytes per RB). UE 0 has
// RNTI 7, UE 1 RNTI 8. The tap's TTI closes at x.5 ms; transport blocks come at whole ms. Every
// value checked is worked out in the comments.
#include "bs-tap-test-support.h"
#include "cellgym-bs-tap.h"

#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/test.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

using namespace ns3;
using namespace ns3::cellgym_test;

namespace
{

/// A subscriber that writes down what the tap tells it, one line per event.
class RecordingSubscriber : public CellGymBsTapSubscriber
{
  public:
    std::vector<std::string> log;                  //!< the events, in order
    std::vector<std::vector<CellGymBsUeTti>> ttis; //!< every TTI's report
    std::vector<uint32_t> usables;                 //!< ... and its usable units
    bool sojourns{false};                          //!< WantsSojourns' answer

    void OnUeAdded(uint32_t ue) override
    {
        log.push_back("ue " + std::to_string(ue));
    }

    void OnTti(const std::vector<CellGymBsUeTti>& ues, uint32_t usable) override
    {
        ttis.push_back(ues);
        usables.push_back(usable);
    }

    void OnRlcTailDrop(uint32_t ue) override
    {
        log.push_back("drop " + std::to_string(ue));
    }

    void OnRlcDrained(uint32_t ue) override
    {
        log.push_back("drained " + std::to_string(ue));
    }

    void OnHeadOfLine(uint32_t ue, uint8_t lcid, std::optional<Time> since) override
    {
        log.push_back("head " + std::to_string(ue) + " "
                      + (since ? std::to_string(since->GetMicroSeconds()) : std::string("none")));
    }

    void OnSduSojourn(uint32_t ue, uint8_t lcid, Time sojourn) override
    {
        log.push_back("sojourn " + std::to_string(ue) + " "
                      + std::to_string(sojourn.GetMicroSeconds()));
    }

    bool WantsSojourns() const override
    {
        return sojourns;
    }

    void OnDownlink(uint32_t flow, double bytes, Ptr<const Packet>) override
    {
        log.push_back("down " + std::to_string(flow) + " "
                      + std::to_string(static_cast<int>(bytes)));
    }

    void OnUplink(uint32_t flow, Ptr<const Packet>) override
    {
        log.push_back("up " + std::to_string(flow));
    }
};

/// The tap's own logic: RNTIs to UEs, TTI reports, RLC events, flows, subscribers' order.
class CellGymBsTapTestCase : public TestCase
{
  public:
    CellGymBsTapTestCase()
        : TestCase("base-station tap: TTI reports, RLC events, flows, subscribers in order")
    {
    }

  private:
    Ptr<TestS1uDevice> m_dev;         //!< the S1-U stand-in
    Ptr<CellGymBsTap> m_tap;          //!< the tap under test
    RecordingSubscriber m_first;      //!< subscribed before the UEs are declared
    RecordingSubscriber m_second;     //!< subscribed after; wants the sojourns
    std::vector<std::string> m_order; //!< the uplink hooks' calls, in order
    double m_rlcAfterReport{-1};      //!< the tap's RLC queue after a report
    double m_rlcAfterDrain{-1};       //!< ... after the queue drained
    bool m_active5{false};            //!< both flows active at 5 ms
    uint32_t m_ueFlows5{0};           //!< UE 0's active flows at 5 ms
    bool m_active102{true};           //!< a UE with an active flow at 10.2 ms
    uint32_t m_ueFlows102{0};         //!< flow 0's UE's flows at 10.2 ms, itself counted

    static void At(double ms, std::function<void()> f)
    {
        Simulator::Schedule(MicroSeconds(static_cast<int64_t>(ms * 1000)), f);
    }

    /// The tap with two UEs (RNTIs 7 and 8), two flows, two subscribers and two uplink hooks.
    void Build()
    {
        Ptr<Node> node = CreateObject<Node>();
        m_dev = CreateObject<TestS1uDevice>();
        node->AddDevice(m_dev);
        m_tap = CreateObject<CellGymBsTap>();
        m_tap->SetActiveTimeoutMs(10);
        m_tap->Subscribe(&m_first);
        NS_TEST_EXPECT_MSG_EQ(m_tap->WantsSojourns(), false, "nobody wants sojourns yet");
        m_tap->InstallRadio(TestRadio(), m_dev, m_dev);
        m_tap->AddUe(
            []
            {
                return uint16_t{7};
            });
        m_tap->AddUe(
            []
            {
                return uint16_t{8};
            });
        // A late subscriber is told the UEs declared so far; it wants the sojourns.
        m_second.sojourns = true;
        m_tap->Subscribe(&m_second);
        NS_TEST_EXPECT_MSG_EQ(m_tap->WantsSojourns(), true, "the second wants sojourns");
        NS_TEST_EXPECT_MSG_EQ(m_tap->GetNUes(), 2, "two UEs");
        NS_TEST_EXPECT_MSG_EQ(m_tap->GetTti(), MilliSeconds(1), "the radio's TTI");
        // Flow 0 by its server; flow 1 by its UE end (UE 1, 7.0.0.3:5000), although its server
        // is flow 0's: the UE end takes precedence.
        m_tap->AddFlow(0, 0, Ipv4Address("1.0.0.1"));
        m_tap->AddFlow(1, 1, Ipv4Address("7.0.0.3"), 5000);
        NS_TEST_EXPECT_MSG_EQ(m_tap->GetFlowUe(1), 1, "flow 1 is UE 1's");
        // Uplink subscribers run in subscription order, after the two above.
        for (const char* name : {"a", "b"})
        {
            m_tap->AddPacketHooks(nullptr,
                                  [this, name](uint32_t flow, Ptr<const Packet>)
                                  {
                                      m_order.push_back(name + std::to_string(flow));
                                  });
        }
    }

    /// The packets, transport blocks and RLC events, and the reads of the flows' activity.
    void Schedule()
    {
        Ptr<TestS1uDevice> dev = m_dev;
        Ptr<CellGymBsTap> tap = m_tap;
        // 0.1 ms: a downlink packet of flow 0 (inner IPv4 packet: 20 B header + 20 B), of flow 1
        // (by its UE end) and of no flow.
        At(0.1,
           [dev]
           {
               dev->macRx(Gtpu("1.0.0.1", 80, "7.0.0.2", 6000));
               dev->macRx(Gtpu("1.0.0.1", 80, "7.0.0.3", 5000));
               dev->macRx(Gtpu("2.0.0.9", 80, "7.0.0.9", 1));
           });
        // 1 ms: UE 0 a new TB of 300 B at MCS 10 (3 RBs) and a second layer's 200 B (no RBs);
        // UE 1 a HARQ retransmission of 400 B at MCS 20 (2 RBs); an unknown RNTI's TB.
        At(1,
           [tap]
           {
               tap->OnTransportBlock(7, 10, 300, true, true);
               tap->OnTransportBlock(7, 10, 200, false, true);
               tap->OnTransportBlock(8, 20, 400, true, false);
               tap->OnTransportBlock(99, 20, 4000, true, true);
           });
        // 2 ms: RLC events of UE 0 (an unknown RNTI's are ignored): a report of 5000 B, a new
        // head that arrived at 1.5 ms, a sojourn of 0.3 ms, then the queue drains.
        At(2,
           [this, tap]
           {
               tap->OnBufferStatus(7, 3, 5000, 12);
               tap->OnBufferStatus(99, 3, 9999, 99);
               m_rlcAfterReport = tap->GetRlcBytes(0);
               tap->OnHeadOfLine(7, 3, MicroSeconds(1500));
               tap->OnHeadOfLine(99, 3, MicroSeconds(1500));
               tap->OnSduSojourn(7, 3, MicroSeconds(300));
               tap->OnBufferDrained(7, 3);
               tap->OnBufferDrained(99, 3);
               m_rlcAfterDrain = tap->GetRlcBytes(0);
           });
        // 3 ms: uplink ACKs of flows 1 and 0, and of no flow.
        At(3,
           [dev]
           {
               dev->macTx(Gtpu("7.0.0.3", 5000, "1.0.0.1", 80));
               dev->macTx(Gtpu("7.0.0.2", 6000, "1.0.0.1", 80));
               dev->macTx(Gtpu("7.0.0.9", 1, "2.0.0.9", 80));
           });
        // Flow activity (10 ms timeout): at 5 ms both flows are active, UE 0 has one active
        // flow; at 10.2 ms none is, and a flow's UE counts the flow itself.
        At(5,
           [this, tap]
           {
               const Time now = Simulator::Now();
               m_active5 = tap->IsFlowActive(0, now) && tap->IsFlowActive(1, now);
               m_ueFlows5 = tap->ActiveFlows(0, now);
           });
        At(10.2,
           [this, tap]
           {
               const Time now = Simulator::Now();
               m_active102 = tap->UeHasActiveFlow(0, now) || tap->UeHasActiveFlow(1, now);
               m_ueFlows102 = tap->GetUeActiveFlows(0);
           });
    }

    /// TTIs closed at 0.5, 1.5, ..., 10.5: 11 reports, each of both UEs, 10 RBs usable.
    void CheckTtis()
    {
        NS_TEST_ASSERT_MSG_EQ(m_first.ttis.size(), 11, "one report per TTI");
        NS_TEST_EXPECT_MSG_EQ(m_first.usables[1], 10, "usable RBs");
        const auto& t15 = m_first.ttis[1];
        NS_TEST_ASSERT_MSG_EQ(t15.size(), 2, "one entry per UE");
        // 1.5: UE 0 500 new bytes on 3 RBs at MCS 10; UE 1 2 retransmitted RBs and no MCS yet.
        NS_TEST_EXPECT_MSG_EQ(t15[0].newBytes, 500, "UE 0 new bytes");
        NS_TEST_EXPECT_MSG_EQ(t15[0].rbs, 3, "UE 0 RBs (the second layer occupies none)");
        NS_TEST_EXPECT_MSG_EQ(t15[0].retxRbs, 0, "UE 0 retransmitted RBs");
        NS_TEST_EXPECT_MSG_EQ(t15[0].lastMcs, 10, "UE 0 MCS");
        NS_TEST_EXPECT_MSG_EQ(t15[1].newBytes, 0, "UE 1 new bytes");
        NS_TEST_EXPECT_MSG_EQ(t15[1].rbs, 2, "UE 1 RBs");
        NS_TEST_EXPECT_MSG_EQ(t15[1].retxRbs, 2, "UE 1 retransmitted RBs");
        NS_TEST_EXPECT_MSG_EQ(t15[1].lastMcs, -1, "UE 1 has no MCS");
        // 2.5: the counters restarted; the MCS stays.
        NS_TEST_EXPECT_MSG_EQ(m_first.ttis[2][0].newBytes, 0, "UE 0 restarted");
        NS_TEST_EXPECT_MSG_EQ(m_first.ttis[2][0].rbs, 0, "UE 0 RBs restarted");
        NS_TEST_EXPECT_MSG_EQ(m_first.ttis[2][0].lastMcs, 10, "UE 0 keeps its MCS");
        NS_TEST_EXPECT_MSG_EQ(m_second.ttis.size(), 11, "the second sees every TTI too");
    }

    /// Compare a subscriber's events with the expected ones.
    void CheckLog(const RecordingSubscriber& sub, const std::vector<std::string>& want)
    {
        NS_TEST_EXPECT_MSG_EQ(sub.log.size(), want.size(), "the number of events");
        for (size_t i = 0; i < std::min(sub.log.size(), want.size()); ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(sub.log[i], want[i], "event " << i);
        }
    }

    /// The RLC and packet events, in order (the sojourn to the subscriber that wants it).
    void CheckEvents()
    {
        CheckLog(
            m_first,
            {"ue 0", "ue 1", "down 0 40", "down 1 40", "head 0 1500", "drained 0", "up 1", "up 0"});
        CheckLog(m_second,
                 {"ue 0",
                  "ue 1",
                  "down 0 40",
                  "down 1 40",
                  "head 0 1500",
                  "sojourn 0 300",
                  "drained 0",
                  "up 1",
                  "up 0"});
        const std::vector<std::string> hooks{"a1", "b1", "a0", "b0"};
        NS_TEST_EXPECT_MSG_EQ((m_order == hooks), true, "hooks in subscription order");
        NS_TEST_EXPECT_MSG_EQ(m_rlcAfterReport, 5000, "the report's queue");
        NS_TEST_EXPECT_MSG_EQ(m_rlcAfterDrain, 0, "drained");
        NS_TEST_EXPECT_MSG_EQ(m_active5, true, "both flows active at 5 ms");
        NS_TEST_EXPECT_MSG_EQ(m_ueFlows5, 1, "UE 0's active flows at 5 ms");
        NS_TEST_EXPECT_MSG_EQ(m_active102, false, "no flow active at 10.2 ms");
        NS_TEST_EXPECT_MSG_EQ(m_ueFlows102, 1, "an idle flow counts itself");
    }

    void DoRun() override
    {
        Build();
        Schedule();
        Simulator::Stop(MilliSeconds(11));
        Simulator::Run();
        Simulator::Destroy();
        CheckTtis();
        CheckEvents();
        m_tap = nullptr;
        m_dev = nullptr;
    }
};

/// The tap's test suite.
class CellGymBsTapTestSuite : public TestSuite
{
  public:
    CellGymBsTapTestSuite()
        : TestSuite("cellgym-bs-tap", Type::UNIT)
    {
        AddTestCase(new CellGymBsTapTestCase, Duration::QUICK);
    }
};

static CellGymBsTapTestSuite g_cellGymBsTapTestSuite; //!< registers the suite

} // namespace
