// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of the RLC watch (xrc-rlc-watch.h) that both carrier managers call: which buffer
// status reports reach XRC's agent, and when a transmit opportunity says the buffer ran empty.
// Each call and its expected effect are worked out in the comments. UE 7 (RNTI), data bearer
// LCID 3; LCIDs 1 and 2 are signalling bearers. The RLC's slack is 4 bytes.
#include "xrc-rlc-watch.h"

#include "ns3/test.h"

#include <cstdint>
#include <tuple>
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

class XrcRlcWatchTestSuite : public TestSuite
{
  public:
    XrcRlcWatchTestSuite()
        : TestSuite("xrc-rlc-watch", Type::UNIT)
    {
        AddTestCase(new RlcWatchReportTestCase, Duration::QUICK);
        AddTestCase(new RlcWatchDrainTestCase, Duration::QUICK);
    }
};

static XrcRlcWatchTestSuite g_xrcRlcWatchTestSuite; //!< registers the suite

} // namespace
