// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of the RLC watch (xrc-rlc-watch.h) that both carrier managers call: which buffer
// status reports reach XRC's agent, when a transmit opportunity says the buffer ran empty, and
// the exact age of the head of line from its copy of the RLC UM transmit queue. Each call and its
// expected effect are worked out in the comments. UE 7 (RNTI), data bearer LCID 3; LCIDs 1 and 2
// are signalling bearers. The RLC's slack is 4 bytes.
#include "xrc-rlc-watch.h"

#include "ns3/simulator.h"
#include "ns3/test.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{

/// Reports: only data bearers pass, with their values unchanged.
class RlcWatchReportTestCase : public TestCase
{
  public:
    RlcWatchReportTestCase()
        : TestCase("RLC watch: data-bearer reports reach the agent, signalling ones do not")
    {
    }

  private:
    void DoRun() override
    {
        XrcRlcWatch watch;
        // No receiver yet: a report goes nowhere (and does not crash).
        watch.Report(7, 3, 1000, 5);
        std::vector<std::tuple<uint16_t, uint8_t, uint32_t, uint16_t>> seen;
        watch.report = [&seen](uint16_t rnti, uint8_t lcid, uint32_t bytes, uint16_t hol)
        {
            seen.emplace_back(rnti, lcid, bytes, hol);
        };
        watch.Report(7, 1, 50, 1);       // SRB1: dropped
        watch.Report(7, 2, 60, 2);       // SRB2: dropped
        watch.Report(7, 3, 12000, 14);   // the first data bearer: passed as is
        watch.Report(9, 4, 0, 0);        // another UE's second data bearer, empty: passed
        watch.Report(7, 3, 70000, 1000); // a large queue and delay: passed as is
        NS_TEST_ASSERT_MSG_EQ(seen.size(), 3, "three data-bearer reports");
        NS_TEST_ASSERT_MSG_EQ(std::get<0>(seen[0]), 7, "RNTI");
        NS_TEST_ASSERT_MSG_EQ(static_cast<int>(std::get<1>(seen[0])), 3, "LCID");
        NS_TEST_ASSERT_MSG_EQ(std::get<2>(seen[0]), 12000, "queue bytes");
        NS_TEST_ASSERT_MSG_EQ(std::get<3>(seen[0]), 14, "HoL ms");
        NS_TEST_ASSERT_MSG_EQ(std::get<0>(seen[1]), 9, "second report's RNTI");
        NS_TEST_ASSERT_MSG_EQ(static_cast<int>(std::get<1>(seen[1])), 4, "second report's LCID");
        NS_TEST_ASSERT_MSG_EQ(std::get<2>(seen[1]), 0, "an empty queue is reported too");
        NS_TEST_ASSERT_MSG_EQ(std::get<2>(seen[2]), 70000, "third report's bytes");
        NS_TEST_ASSERT_MSG_EQ(std::get<3>(seen[2]), 1000, "third report's HoL");
    }
};

/// Transmit opportunities: the buffer ran empty when the RLC answers with less than the
/// opportunity minus its 4 bytes of slack.
class RlcWatchDrainTestCase : public TestCase
{
  public:
    RlcWatchDrainTestCase()
        : TestCase("RLC watch: an opportunity answered short of its slack drains the buffer")
    {
    }

  private:
    /// One opportunity of `bytes` to (7, 3), answered by `pdus` (rnti, lcid, bytes).
    void Op(XrcRlcWatch& w,
            uint32_t bytes,
            const std::vector<std::tuple<uint16_t, uint8_t, uint32_t>>& pdus,
            uint8_t lcid = 3)
    {
        w.BeginTxOp(7, lcid);
        for (const auto& [rnti, l, b] : pdus)
        {
            w.Pdu(rnti, l, b);
        }
        w.EndTxOp(7, lcid, bytes);
    }

    void DoRun() override
    {
        XrcRlcWatch w;
        // No receiver: an opportunity answered with nothing drains nothing (and does not crash).
        Op(w, 1000, {});
        std::vector<std::pair<uint16_t, uint8_t>> drained;
        w.drain = [&drained](uint16_t rnti, uint8_t lcid)
        {
            drained.emplace_back(rnti, lcid);
        };

        // 1000 offered, 500 sent: 500 + 4 < 1000 -> drained (1).
        Op(w, 1000, {{7, 3, 500}});
        NS_TEST_ASSERT_MSG_EQ(drained.size(), 1, "half an opportunity used: drained");
        NS_TEST_ASSERT_MSG_EQ(drained[0].first, 7, "the opportunity's RNTI");
        NS_TEST_ASSERT_MSG_EQ(static_cast<int>(drained[0].second), 3, "the opportunity's LCID");
        // 1000 offered, 997 sent: 997 + 4 = 1001 >= 1000 -> the slack, not empty (still 1).
        Op(w, 1000, {{7, 3, 997}});
        NS_TEST_ASSERT_MSG_EQ(drained.size(), 1, "within the slack: not drained");
        // 1000 offered, 996 sent: 996 + 4 = 1000, not below 1000 -> not empty (still 1).
        Op(w, 1000, {{7, 3, 996}});
        NS_TEST_ASSERT_MSG_EQ(drained.size(), 1, "exactly the slack left: not drained");
        // 1000 offered, 995 sent: 995 + 4 = 999 < 1000 -> drained (2).
        Op(w, 1000, {{7, 3, 995}});
        NS_TEST_ASSERT_MSG_EQ(drained.size(), 2, "one byte beyond the slack: drained");
        // Two PDUs of 600 and 400 fill 1000 exactly (still 2).
        Op(w, 1000, {{7, 3, 600}, {7, 3, 400}});
        NS_TEST_ASSERT_MSG_EQ(drained.size(), 2, "two PDUs filling it: not drained");
        // PDUs of another UE or another bearer during the opportunity do not count: 0 of this
        // bearer's bytes sent -> drained (3).
        Op(w, 1000, {{8, 3, 1000}, {7, 4, 1000}});
        NS_TEST_ASSERT_MSG_EQ(drained.size(), 3, "other bearers' PDUs do not count");
        // An opportunity of 2 bytes is refused whatever the buffer holds (still 3); one of 5
        // answered with nothing is 0 + 4 < 5 -> drained (4); one of 4 is 0 + 4 = 4 (still 4).
        Op(w, 2, {});
        NS_TEST_ASSERT_MSG_EQ(drained.size(), 3, "a 2-byte opportunity says nothing");
        Op(w, 5, {});
        NS_TEST_ASSERT_MSG_EQ(drained.size(), 4, "a 5-byte opportunity left unused: drained");
        Op(w, 4, {});
        NS_TEST_ASSERT_MSG_EQ(drained.size(), 4, "a 4-byte one unused: within the slack");
        // A signalling bearer's unused opportunity is not a data bearer draining (still 4).
        Op(w, 1000, {}, 2);
        NS_TEST_ASSERT_MSG_EQ(drained.size(), 4, "signalling bearers are not watched");
        // PDUs between opportunities do not carry over: 1000 bytes outside, then an opportunity
        // of 1000 answered with nothing -> drained (5).
        w.Pdu(7, 3, 1000);
        Op(w, 1000, {});
        NS_TEST_ASSERT_MSG_EQ(drained.size(), 5, "PDUs outside an opportunity do not count");
    }
};

/// The head of line: the watch's copy of the RLC UM transmit queue, at NR's 125 us slots (mu 3).
class RlcWatchHeadTestCase : public TestCase
{
  public:
    RlcWatchHeadTestCase()
        : TestCase("RLC watch: the head of line's exact age from reports and PDUs")
    {
    }

  private:
    /// Run `f` at `us` microseconds.
    static void At(int64_t us, std::function<void()> f)
    {
        Simulator::Schedule(MicroSeconds(us), f);
    }

    /// One opportunity of `bytes` to (7, 3), answered with one PDU of `pdu` bytes (0: none).
    static void Op(XrcRlcWatch& w, uint32_t bytes, uint32_t pdu)
    {
        w.BeginTxOp(7, 3);
        if (pdu > 0)
        {
            w.Pdu(7, 3, pdu);
        }
        w.EndTxOp(7, 3, bytes);
    }

    XrcRlcWatch m_w;                                  //!< the watch under test
    std::vector<std::pair<int64_t, int64_t>> m_heads; //!< (time, new head's arrival or -1), us
    std::vector<int64_t> m_sojourns;                  //!< the SDUs' sojourns, us
    uint32_t m_drains{0};                             //!< buffers drained
    std::optional<Time> m_head500;                    //!< the head at 500 us
    uint32_t m_bytes500{0};                           //!< the queue at 500 us
    std::optional<Time> m_head800;                    //!< the head at 800 us
    uint32_t m_bytes800{0};                           //!< the queue at 800 us

    /// The watch's callbacks write down its head changes, sojourns and drains.
    void Watch()
    {
        m_w.head = [this](uint16_t rnti, uint8_t lcid, std::optional<Time> since)
        {
            m_heads.emplace_back(Simulator::Now().GetMicroSeconds(),
                                 since ? since->GetMicroSeconds() : -1);
        };
        m_w.sojourn = [this](uint16_t, uint8_t, Time t)
        {
            m_sojourns.push_back(t.GetMicroSeconds());
        };
        m_w.drain = [this](uint16_t, uint8_t)
        {
            ++m_drains;
        };
    }

    /// Two SDUs arrive at an empty queue; the head is segmented, then both leave.
    void ScheduleFirstQueue()
    {
        // 100 us: an SDU of 1000 B reaches the empty queue; the RLC reports 1000 + 2 at once:
        // head since 100 (event 1).
        At(100,
           [this]
           {
               m_w.Report(7, 3, 1002, 0);
           });
        // 350: an SDU of 500 B: 1002 + 502 = 1504; the head stays. 400: the RLC's timer
        // reports the same 1504: nothing arrived. A signalling bearer's report is not copied.
        At(350,
           [this]
           {
               m_w.Report(7, 3, 1504, 0);
           });
        At(400,
           [this]
           {
               m_w.Report(7, 3, 1504, 0);
               m_w.Report(7, 1, 70, 0);
           });
        // 500: an opportunity of 600 B; the RLC segments the head: a PDU of 2 + 598. The head's
        // rest (402 B) keeps its arrival: 402 + 2 + 500 + 2 = 906 as the RLC would report.
        At(500,
           [this]
           {
               Op(m_w, 600, 600);
               m_w.SduLeft(7, 3, MicroSeconds(100)); // the head's first byte left after 400 us
               m_head500 = m_w.HeadSince(7, 3);
               m_bytes500 = m_w.QueuedBytes(7, 3);
           });
        // 625 (the next slot): 1000 B offered; the RLC sends the rest and the second SDU,
        // 2 + 2 + 402 + 500 = 906 (n = 1 fields would hold 904 > 402 B; n = 2 hold 902 = 902):
        // the queue is empty (event 2), the opportunity drained it (906 + 4 < 1000).
        At(625,
           [this]
           {
               Op(m_w, 1000, 906);
               m_w.SduLeft(7, 3, MicroSeconds(350));
           });
    }

    /// Three SDUs; a PDU takes the first and part of the second; the reports shrink the queue.
    void ScheduleSecondQueue()
    {
        // 700, 710, 720: SDUs of 1200, 1400 and 60 B (reports 1202, 2604, 2666): head since
        // 700 (event 3).
        At(700,
           [this]
           {
               m_w.Report(7, 3, 1202, 0);
           });
        At(710,
           [this]
           {
               m_w.Report(7, 3, 2604, 0);
           });
        At(720,
           [this]
           {
               m_w.Report(7, 3, 2666, 0);
           });
        // 750: a PDU of 2000 B: 2 fields, 4 + 1996 bytes: the first SDU whole and 796 B of the
        // second: head since 710 (event 4), 604 + 2 + 60 + 2 = 668 queued.
        At(750,
           [this]
           {
               Op(m_w, 2000, 2000);
           });
        At(800,
           [this]
           {
               m_head800 = m_w.HeadSince(7, 3);
               m_bytes800 = m_w.QueuedBytes(7, 3);
           });
        // 875: the RLC reports 62 B, less than the copy's 668: 606 B left from the front (the
        // second SDU's rest with its estimate): head since 720 (event 5).
        At(875,
           [this]
           {
               m_w.Report(7, 3, 62, 0);
           });
        // 1000: the RLC reports an empty queue: no head (event 6).
        At(1000,
           [this]
           {
               m_w.Report(7, 3, 0, 0);
           });
    }

    /// The heads, queues, drains and sojourns seen.
    void CheckHeads()
    {
        NS_TEST_ASSERT_MSG_EQ(m_head500.has_value(), true, "a head at 500 us");
        NS_TEST_EXPECT_MSG_EQ(m_head500->GetMicroSeconds(), 100, "the segmented head's arrival");
        NS_TEST_EXPECT_MSG_EQ(m_bytes500, 906, "the rest and the second SDU, as reported");
        NS_TEST_ASSERT_MSG_EQ(m_head800.has_value(), true, "a head at 800 us");
        NS_TEST_EXPECT_MSG_EQ(m_head800->GetMicroSeconds(), 710, "the second SDU of three");
        NS_TEST_EXPECT_MSG_EQ(m_bytes800, 668, "its rest and the third");
        NS_TEST_EXPECT_MSG_EQ(m_drains, 1, "the 1000-B opportunity drained the buffer");
        const std::vector<std::pair<int64_t, int64_t>> want{
            {100, 100}, {625, -1}, {700, 700}, {750, 710}, {875, 720}, {1000, -1}};
        NS_TEST_ASSERT_MSG_EQ(m_heads.size(), want.size(), "six head changes");
        for (std::size_t i = 0; i < want.size(); ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(m_heads[i].first, want[i].first, "time of head change " << i);
            NS_TEST_EXPECT_MSG_EQ(m_heads[i].second, want[i].second, "head of change " << i);
        }
        NS_TEST_ASSERT_MSG_EQ(m_sojourns.size(), 2, "two SDUs' first bytes left");
        NS_TEST_EXPECT_MSG_EQ(m_sojourns[0], 400, "the first SDU's sojourn");
        NS_TEST_EXPECT_MSG_EQ(m_sojourns[1], 275, "the second's");
    }

    void DoRun() override
    {
        // The RLC UM header of a PDU of n fields: 2 fixed bytes, then 2, 1, 2, ... bytes per
        // length indicator (one per field after the first).
        NS_TEST_EXPECT_MSG_EQ(XrcRlcWatch::UmHeaderBytes(1), 2, "one field");
        NS_TEST_EXPECT_MSG_EQ(XrcRlcWatch::UmHeaderBytes(2), 4, "two fields");
        NS_TEST_EXPECT_MSG_EQ(XrcRlcWatch::UmHeaderBytes(3), 5, "three fields");
        NS_TEST_EXPECT_MSG_EQ(XrcRlcWatch::UmHeaderBytes(4), 7, "four fields");
        Watch();
        ScheduleFirstQueue();
        ScheduleSecondQueue();
        Simulator::Run();
        Simulator::Destroy();
        CheckHeads();
    }
};

class XrcRlcWatchTestSuite : public TestSuite
{
  public:
    XrcRlcWatchTestSuite()
        : TestSuite("xrc-rlc-watch", Type::UNIT)
    {
        AddTestCase(new RlcWatchReportTestCase, Duration::QUICK);
        AddTestCase(new RlcWatchDrainTestCase, Duration::QUICK);
        AddTestCase(new RlcWatchHeadTestCase, Duration::QUICK);
    }
};

static XrcRlcWatchTestSuite g_xrcRlcWatchTestSuite; //!< registers the suite

} // namespace
