// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of XRC's base-station agent (xrc-enb-agent.h), fed through a base-station tap
// (cellgym-bs-tap.h) with a made-up radio (bs-tap-test-support.h): 1 ms TTIs, 10 usable resource
// blocks, and an MCS m carrying 10 x m bytes per block (MCS 10: 100 B, MCS 20: 200 B; a TB of b
// bytes occupies ceil(b / (10 m)) blocks). The capacity window is 4 TTIs and a flow is active
// while its packets arrive less than 10 ms apart. The tap's TTI closes at x.5 ms; transport
// blocks come at whole ms. An S1-U stand-in device fires the MacRx / MacTx traces with GTP-U
// packets, as the eNB's S1-U device does. Every value
// checked is worked out in the comments.
#include "bs-tap-test-support.h"
#include "xrc-enb-agent.h"
#include "xrc-feedback-tag.h"

#include "ns3/epc-gtpu-header.h"
#include "ns3/error-model.h"
#include "ns3/ipv4-header.h"
#include "ns3/node.h"
#include "ns3/queue.h"
#include "ns3/simple-channel.h"
#include "ns3/simple-net-device.h"
#include "ns3/simulator.h"
#include "ns3/test.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/traced-callback.h"
#include "ns3/udp-header.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

using namespace ns3;
using namespace ns3::cellgym_test;

namespace
{

/// UE 0 (RNTI 7, address 7.0.0.2) has flows 0 (server 1.0.0.1) and 1 (server 1.0.0.2); UE 1
/// (RNTI 8, 7.0.0.3) has flow 2, declared by its UE end (port 5000) although its server is flow
/// 0's: the UE end takes precedence.
class XrcEnbAgentTestCase : public TestCase
{
  public:
    XrcEnbAgentTestCase()
        : TestCase("XRC agent: capacity window, idle-RB share, fair share, HoL, feedback tags")
    {
    }

  private:
    /// What a check reads from the agent.
    enum Read
    {
        CAPACITY,  //!< GetCapacityBytesPerMs(UE)
        FLOW_RATE, //!< GetFlowRateMbps(flow)
        UE_FLOWS,  //!< the tap's GetUeActiveFlows(flow)
        HOL,       //!< GetHolMs(UE)
        RLC_BYTES, //!< the tap's GetRlcBytes(UE)
    };

    /// A value read at a time, with what it should be.
    struct Check
    {
        double at;      //!< ms
        Read read;      //!< the getter
        uint32_t index; //!< its argument
        double expected;
        double got{NAN};
    };

    std::vector<Check> m_checks;

    void At(double ms, Read read, uint32_t index, double expected)
    {
        m_checks.push_back({ms, read, index, expected});
    }

    static double Get(const CellGymBsTap& tap, const XrcEnbAgent& agent, Read read, uint32_t index)
    {
        switch (read)
        {
            case CAPACITY:
                return agent.GetCapacityBytesPerMs(index);
            case FLOW_RATE:
                return agent.GetFlowRateMbps(index);
            case UE_FLOWS:
                return tap.GetUeActiveFlows(index);
            case HOL:
                return agent.GetHolMs(index);
            case RLC_BYTES:
                return tap.GetRlcBytes(index);
        }
        return NAN;
    }

    Ptr<TestS1uDevice> m_dev;            //!< the S1-U stand-in
    Ptr<CellGymBsTap> m_tap;             //!< the tap that feeds the agent
    Ptr<XrcEnbAgent> m_agent;            //!< the agent under test
    XrcUeStepStats m_step0;              //!< UE 0's step counters at 4.6 ms
    XrcUeStepStats m_step1;              //!< UE 1's ...
    XrcUeStepStats m_step0b;             //!< UE 0's step counters at 5.7 ms
    Ptr<Packet> m_ack0;                  //!< flow 0's ACK at 5.6 ms
    Ptr<Packet> m_ack2;                  //!< flow 2's ACK at 5.6 ms
    Ptr<Packet> m_other;                 //!< an ACK of no flow at 5.6 ms
    std::vector<uint32_t> m_uplinkFlows; //!< the flows the uplink hook saw

    /// @brief Call `f` at `ms`.
    static void Do(double ms, std::function<void()> f)
    {
        Simulator::Schedule(MicroSeconds(static_cast<int64_t>(ms * 1000)), f);
    }

    /// @brief The S1-U device receives the downlink packet `p` at `ms`.
    void Rx(double ms, Ptr<Packet> p)
    {
        Ptr<TestS1uDevice> dev = m_dev;
        Do(ms,
           [dev, p]
           {
               dev->macRx(p);
           });
    }

    /// The tap (1 ms TTIs, 10 ms activity timeout), the agent (a 4-TTI window), two UEs, three
    /// flows.
    void Build()
    {
        Ptr<Node> node = CreateObject<Node>();
        m_dev = CreateObject<TestS1uDevice>();
        Ptr<TestS1uDevice> dev = m_dev;
        node->AddDevice(dev);
        m_tap = CreateObject<CellGymBsTap>();
        Ptr<CellGymBsTap> tap = m_tap;
        tap->SetActiveTimeoutMs(10);
        m_agent = CreateObject<XrcEnbAgent>();
        Ptr<XrcEnbAgent> agent = m_agent;
        agent->SetWindowTtis(4);
        agent->Attach(tap);
        tap->InstallRadio(TestRadio(), dev, dev);
        const uint32_t ue0 = tap->AddUe(
            []
            {
                return uint16_t{7};
            });
        const uint32_t ue1 = tap->AddUe(
            []
            {
                return uint16_t{8};
            });
        NS_TEST_ASSERT_MSG_EQ(ue0, 0, "first UE");
        NS_TEST_ASSERT_MSG_EQ(ue1, 1, "second UE");
        tap->AddFlow(0, 0, Ipv4Address("1.0.0.1"));
        tap->AddFlow(1, 0, Ipv4Address("1.0.0.2"));
        tap->AddFlow(2, 1, Ipv4Address("7.0.0.3"), 5000);
    }

    /// Capacity window, idle-RB share and fair share: the transport blocks and downlink packets.
    void ScheduleCapacity()
    {
        Ptr<TestS1uDevice> dev = m_dev;
        Ptr<CellGymBsTap> tap = m_tap;
        Ptr<XrcEnbAgent> agent = m_agent;
        // 0.1 ms: downlink packets of flow 0 and of flow 2 (the same server, UE 1's end).
        Rx(0.1, Gtpu("1.0.0.1", 80, "7.0.0.2", 6000));
        Rx(0.1, Gtpu("1.0.0.1", 80, "7.0.0.3", 5000));
        // 1 ms: UE 0 a new TB of 300 B at MCS 10 (3 RBs) and a second-layer TB of 200 B (new
        // capacity, no RBs); UE 1 a HARQ retransmission of 400 B at MCS 20 (2 RBs, no capacity,
        // and no MCS for it yet).
        Do(1,
           [tap]
           {
               tap->OnTransportBlock(7, 10, 300, true, true);
               tap->OnTransportBlock(7, 10, 200, false, true);
               tap->OnTransportBlock(8, 20, 400, true, false);
               tap->OnTransportBlock(99, 20, 4000, true, true); // an unknown RNTI: ignored
           });
        // TTI closing at 1.5: used 3 + 2 = 5 of 10, idle 5; both UEs have an active flow, so
        // each is offered 5 / 2 = 2.5 RBs. UE 0: 500 + 2.5 x 100 = 750 B; UE 1: no MCS, 0 B.
        // 2 ms: UE 1 a new TB of 400 B at MCS 20 (2 RBs).
        Do(2,
           [tap]
           {
               tap->OnTransportBlock(8, 20, 400, true, true);
           });
        // 2.5: idle 8, 4 RBs each. UE 0: 4 x 100 = 400; UE 1: 400 + 4 x 200 = 1200.
        // 3.5 and 4.5: idle 10, 5 RBs each. UE 0: 500; UE 1: 1000.
        // At 4.6 the windows hold UE 0 [750, 400, 500, 500] = 2150 B over 4 ms: 4.3 Mbit/s,
        // 537.5 B/ms; UE 1 [0, 1200, 1000, 1000] = 3200 B: 6.4 Mbit/s, 800 B/ms.
        At(4.6, CAPACITY, 0, 537.5); // UE 0 capacity, B/ms
        At(4.6, CAPACITY, 1, 800);   // UE 1 capacity, B/ms
        // Flow 0 is UE 0's one active flow: 4.3. Flow 1 has sent nothing: it is offered what it
        // would get by starting, 4.3 / 2 = 2.15. Flow 2: 6.4.
        At(4.6, FLOW_RATE, 0, 4.3);  // flow 0 rate
        At(4.6, FLOW_RATE, 1, 2.15); // flow 1 rate (idle)
        At(4.6, FLOW_RATE, 2, 6.4);  // flow 2 rate
        At(4.6, UE_FLOWS, 0, 1);     // UE 0 flows seen by flow 0
        At(4.6, UE_FLOWS, 1, 2);     // UE 0 flows seen by flow 1
        // The step's counters over TTIs 0.5 to 4.5 (5 ms; TTI 0.5 offered 0 B, no MCS known
        // yet): UE 0 capacity 2150 B -> 3.44 Mbit/s, new TBs 500 B -> 0.8 Mbit/s; UE 1 3200 B ->
        // 5.12, new TBs 400 B -> 0.64 (the retransmission does not count).
        Do(4.6,
           [this, agent]
           {
               m_step0 = agent->TakeStepStats(0);
               m_step1 = agent->TakeStepStats(1);
           });
        // 5.0: flow 1's first packet: UE 0 has two active flows; until the next TTI closes the
        // capacity stays 4.3, so flows 0 and 1 get 2.15 each.
        Rx(5.0, Gtpu("1.0.0.2", 80, "7.0.0.2", 6001));
        At(5.1, FLOW_RATE, 0, 2.15); // flow 0 rate, two flows
        At(5.1, FLOW_RATE, 1, 2.15); // flow 1 rate, active
        At(5.1, UE_FLOWS, 0, 2);     // UE 0 active flows
        // 5.5: idle 10, 5 each: UE 0's oldest TTI (750) leaves, 500 enters: 1900 B = 3.8 Mbit/s,
        // 1.9 per flow. UE 1: 0 leaves, 1000 enters: 4200 B = 8.4 Mbit/s.
        At(5.6, FLOW_RATE, 0, 1.9); // flow 0 rate, window slid
        At(5.6, FLOW_RATE, 2, 8.4); // flow 2 rate, window slid
    }

    /// The head of line as the watch tells its changes, and the buffer reports.
    void ScheduleHol()
    {
        Ptr<TestS1uDevice> dev = m_dev;
        Ptr<CellGymBsTap> tap = m_tap;
        Ptr<XrcEnbAgent> agent = m_agent;
        // HoL: the exact age of the head of UE 0's data bearer, as the watch tells its changes.
        // 0.2: an SDU arrives at the empty queue (the head since 0.2). Buffer reports at 5.2
        // (5000 B, 12 ms) and 5.4 (2000 B, 8 ms) give the queue; their whole-ms HoL is not used.
        // 5.3: the head leaves at 5.1 ms of age, the next arrived at 3.05. At 5.45 the head is
        // 2.4 ms old; UE 1 has none.
        Do(0.2,
           [tap]
           {
               tap->OnHeadOfLine(7, 3, MicroSeconds(200));
           });
        At(4.6, HOL, 0, 4.4); // UE 0 HoL, the first head (4.6 - 0.2)
        Do(5.2,
           [tap]
           {
               tap->OnBufferStatus(7, 3, 5000, 12);
           });
        Do(5.3,
           [tap]
           {
               tap->OnHeadOfLine(7, 3, MicroSeconds(3050));
           });
        Do(5.4,
           [tap]
           {
               tap->OnBufferStatus(7, 3, 2000, 8);
               tap->OnBufferStatus(99, 3, 9999, 99);        // an unknown RNTI: ignored
               tap->OnHeadOfLine(99, 3, MicroSeconds(100)); // ignored too
           });
        At(5.45, HOL, 0, 2.4);        // UE 0 HoL (5.45 - 3.05)
        At(5.45, RLC_BYTES, 0, 2000); // UE 0 RLC bytes
        At(5.45, HOL, 1, 0);          // UE 1 HoL
    }

    /// The feedback tags on the uplink ACKs, a drained buffer, the idle window.
    void ScheduleFeedback()
    {
        Ptr<TestS1uDevice> dev = m_dev;
        Ptr<CellGymBsTap> tap = m_tap;
        Ptr<XrcEnbAgent> agent = m_agent;
        // 5.6: uplink ACKs leave with the feedback of their flow: flow 0 (UE 0's end, to server
        // 1.0.0.1): 1.9 Mbit/s, HoL 2.55 ms; flow 2 (UE 1's end 7.0.0.3:5000): 8.4, HoL 0; a packet
        // of no declared flow gets no tag.
        m_ack0 = Gtpu("7.0.0.2", 6000, "1.0.0.1", 80);
        m_ack2 = Gtpu("7.0.0.3", 5000, "1.0.0.1", 80);
        m_other = Gtpu("7.0.0.9", 1, "2.0.0.9", 80);
        tap->AddPacketHooks(nullptr,
                            [this](uint32_t flow, Ptr<const Packet>)
                            {
                                m_uplinkFlows.push_back(flow);
                            });
        Do(5.6,
           [dev, ack0 = m_ack0, ack2 = m_ack2, other = m_other]
           {
               dev->macTx(ack0);
               dev->macTx(ack2);
               dev->macTx(other);
           });
        // The step from 4.6 to 5.7 holds one TTI (5.5): 500 B in 1 ms = 4.0 Mbit/s; HoL 2.65
        // (5.7 - 3.05), its maximum 5.1 (the head that left at 5.3), 2000 B queued.
        Do(5.7,
           [this, agent]
           {
               m_step0b = agent->TakeStepStats(0);
           });
        // 5.8: the buffer ran empty: HoL and queue drop to 0 (no report says so).
        Do(5.8,
           [tap]
           {
               tap->OnBufferDrained(7, 3);
           });
        At(5.9, HOL, 0, 0);       // UE 0 HoL after draining
        At(5.9, RLC_BYTES, 0, 0); // UE 0 RLC bytes after draining
        // From 15.0 no flow is active (last packets at 0.1 and 5.0 ms, 10 ms timeout). TTIs 15.5
        // to 19.5 are idle and nobody shares: each UE is offered all 10 RBs. At 19.6 the windows
        // hold 16.5 to 19.5: UE 0 4 x 1000 B = 8.0 Mbit/s, UE 1 4 x 2000 B = 16.0 Mbit/s; an
        // idle flow is offered its UE's whole capacity.
        At(19.6, FLOW_RATE, 0, 8.0);  // flow 0 rate, all idle
        At(19.6, FLOW_RATE, 1, 8.0);  // flow 1 rate, all idle
        At(19.6, FLOW_RATE, 2, 16.0); // flow 2 rate, all idle
        At(19.6, UE_FLOWS, 0, 1);     // UE 0 flows when idle
    }

    /// Every At() read, against its expected value.
    void CheckReads()
    {
        for (const auto& c : m_checks)
        {
            // Read (enum Read) of index at ms: the comment beside the At() call says what.
            NS_TEST_EXPECT_MSG_EQ(std::isnan(c.got), false, "read " << c.read << " at " << c.at);
            NS_TEST_EXPECT_MSG_EQ_TOL(c.got,
                                      c.expected,
                                      1e-9,
                                      "read " << c.read << " of " << c.index << " at " << c.at
                                              << " ms");
        }
    }

    /// The step counters.
    void CheckSteps()
    {
        // The step counters.
        NS_TEST_EXPECT_MSG_EQ_TOL(m_step0.capacityMbps, 3.44, 1e-9, "UE 0 step capacity");
        NS_TEST_EXPECT_MSG_EQ_TOL(m_step0.txMbps, 0.8, 1e-9, "UE 0 step new-TB rate");
        NS_TEST_EXPECT_MSG_EQ_TOL(m_step1.capacityMbps, 5.12, 1e-9, "UE 1 step capacity");
        NS_TEST_EXPECT_MSG_EQ_TOL(m_step1.txMbps, 0.64, 1e-9, "UE 1 step new-TB rate");
        NS_TEST_EXPECT_MSG_EQ_TOL(m_step0.holMs, 4.4, 1e-9, "the first head's age at 4.6");
        NS_TEST_EXPECT_MSG_EQ_TOL(m_step0.holMaxMs, 4.4, 1e-9, "no head left before 4.6");
        NS_TEST_EXPECT_MSG_EQ_TOL(m_step0b.capacityMbps, 4.0, 1e-9, "one TTI's capacity");
        NS_TEST_EXPECT_MSG_EQ(m_step0b.txMbps, 0, "no new TB in that TTI");
        NS_TEST_EXPECT_MSG_EQ_TOL(m_step0b.holMs, 2.65, 1e-9, "the head's age at the step's end");
        NS_TEST_EXPECT_MSG_EQ_TOL(m_step0b.holMaxMs, 5.1, 1e-9, "the step's largest HoL");
        NS_TEST_EXPECT_MSG_EQ(m_step0b.rlcBytes, 2000, "the latest queue");
        NS_TEST_EXPECT_MSG_EQ(m_step0b.rlcDrops, 0, "no drop");
    }

    /// The feedback tags and the uplink hook.
    void CheckTags()
    {
        // The feedback tags.
        XrcFeedbackTag tag;
        NS_TEST_ASSERT_MSG_EQ(m_ack0->PeekPacketTag(tag), true, "flow 0's ACK is tagged");
        NS_TEST_EXPECT_MSG_EQ_TOL(tag.rateMbps, 1.9, 1e-9, "flow 0's fair share");
        NS_TEST_EXPECT_MSG_EQ_TOL(tag.holMs, 2.55, 1e-9, "UE 0's HoL (5.6 - 3.05)");
        NS_TEST_EXPECT_MSG_EQ_TOL(tag.stampS, 0.0056, 1e-12, "the time it left");
        NS_TEST_ASSERT_MSG_EQ(m_ack2->PeekPacketTag(tag), true, "flow 2's ACK is tagged");
        NS_TEST_EXPECT_MSG_EQ_TOL(tag.rateMbps, 8.4, 1e-9, "flow 2's fair share");
        NS_TEST_EXPECT_MSG_EQ(tag.holMs, 0, "UE 1's HoL");
        NS_TEST_EXPECT_MSG_EQ(m_other->PeekPacketTag(tag), false, "no flow, no tag");
        NS_TEST_ASSERT_MSG_EQ(m_uplinkFlows.size(), 2, "the uplink hook sees the two flows");
        NS_TEST_EXPECT_MSG_EQ(m_uplinkFlows[0], 0, "flow 0 first");
        NS_TEST_EXPECT_MSG_EQ(m_uplinkFlows[1], 2, "flow 2 by its UE end");
    }

    void DoRun() override
    {
        Build();
        ScheduleCapacity();
        ScheduleHol();
        ScheduleFeedback();
        Ptr<CellGymBsTap> tap = m_tap;
        Ptr<XrcEnbAgent> agent = m_agent;
        for (auto& c : m_checks)
        {
            Simulator::Schedule(MicroSeconds(static_cast<int64_t>(std::lround(c.at * 1000))),
                                [&c, tap, agent]
                                {
                                    c.got = Get(*tap, *agent, c.read, c.index);
                                });
        }
        Simulator::Stop(MilliSeconds(20));
        Simulator::Run();
        Simulator::Destroy();
        CheckReads();
        CheckSteps();
        CheckTags();
        m_checks.clear();
        m_dev = nullptr;
        m_tap = nullptr;
        m_agent = nullptr;
    }
};

class XrcEnbAgentTestSuite : public TestSuite
{
  public:
    XrcEnbAgentTestSuite()
        : TestSuite("xrc-enb-agent", Type::UNIT)
    {
        AddTestCase(new XrcEnbAgentTestCase, Duration::QUICK);
    }
};

static XrcEnbAgentTestSuite g_xrcEnbAgentTestSuite; //!< registers the suite

} // namespace
