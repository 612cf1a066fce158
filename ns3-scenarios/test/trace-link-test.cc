// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of the Mahimahi trace link (cellgym-trace-link.h): the reader folds the last
// timestamp into ms 0 of the next period and names what is wrong with a bad file; the queue disc
// lets packets leave only at the schedule's opportunities, one each, loses the opportunities that
// find it empty and drops what overflows its buffer. Expected values are worked out in comments.
#include "cellgym-trace-link.h"

#include "ns3/ipv4-header.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/packet.h"
#include "ns3/queue-size.h"
#include "ns3/simulator.h"
#include "ns3/test.h"

#include <fstream>
#include <string>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{

/// The reader, on files written by the test.
class MahimahiReaderTestCase : public TestCase
{
  public:
    MahimahiReaderTestCase()
        : TestCase("Mahimahi reader: opportunities per ms of the period, and bad files named")
    {
    }

  private:
    std::string Write(const std::string& name, const std::string& text)
    {
        const std::string path = CreateTempDirFilename(name);
        std::ofstream(path) << text;
        return path;
    }

    /// The error of reading `text` (empty: none).
    std::string ErrorOf(const std::string& text)
    {
        std::string error;
        const auto s = ReadMahimahiSchedule(Write("bad.trace", text), error);
        return s.perMs.empty() ? error : "";
    }

    void DoRun() override
    {
        std::string error;
        // Stamps 0, 2, 4: the period is the last stamp, 4 ms; stamp 4 falls in ms 0 of the next
        // period: ms 0 has 2 opportunities, ms 2 one; 3 per period.
        auto s = ReadMahimahiSchedule(Write("a.trace", "0\n2\n4\n"), error);
        NS_TEST_ASSERT_MSG_EQ(error, "", "a good file");
        NS_TEST_ASSERT_MSG_EQ(s.perMs.size(), 4, "period of 4 ms");
        NS_TEST_EXPECT_MSG_EQ(s.perMs[0], 2, "ms 0: stamp 0 and stamp 4 folded");
        NS_TEST_EXPECT_MSG_EQ(s.perMs[1], 0, "ms 1");
        NS_TEST_EXPECT_MSG_EQ(s.perMs[2], 1, "ms 2");
        NS_TEST_EXPECT_MSG_EQ(s.perMs[3], 0, "ms 3");
        NS_TEST_EXPECT_MSG_EQ(s.total, 3, "opportunities per period");
        // Stamps 1, 1, 3 (repeats are several opportunities in one ms): period 3, ms 1 has two,
        // stamp 3 goes to ms 0.
        s = ReadMahimahiSchedule(Write("b.trace", "1\n1\n3\n"), error);
        NS_TEST_ASSERT_MSG_EQ(s.perMs.size(), 3, "period of 3 ms");
        NS_TEST_EXPECT_MSG_EQ(s.perMs[0], 1, "ms 0: the folded stamp 3");
        NS_TEST_EXPECT_MSG_EQ(s.perMs[1], 2, "ms 1: two opportunities");
        NS_TEST_EXPECT_MSG_EQ(s.perMs[2], 0, "ms 2");
        NS_TEST_EXPECT_MSG_EQ(s.total, 3, "three opportunities");

        // What is wrong is named, with the entry's number.
        s = ReadMahimahiSchedule(CreateTempDirFilename("absent.trace"), error);
        NS_TEST_EXPECT_MSG_EQ(s.perMs.size(), 0, "a missing file");
        NS_TEST_EXPECT_MSG_EQ(error, "cannot open the file", "a missing file is named");
        NS_TEST_EXPECT_MSG_EQ(ErrorOf(""), "it holds no delivery opportunity", "an empty file");
        NS_TEST_EXPECT_MSG_EQ(
            ErrorOf("0\n0\n"), "it lasts 0 ms: its last timestamp must be > 0", "a period of 0 ms");
        NS_TEST_EXPECT_MSG_EQ(ErrorOf("5\n3\n"),
                              "entry 2 (3) is below the previous one (5): timestamps must be "
                              "non-decreasing",
                              "a decreasing stamp");
        const std::string notStamp = "') is not a timestamp in ms (an integer in [0, 1e9])";
        NS_TEST_EXPECT_MSG_EQ(ErrorOf("1\n-2\n"), "entry 2 ('-2" + notStamp, "a negative one");
        NS_TEST_EXPECT_MSG_EQ(ErrorOf("1\nx\n"), "entry 2 ('x" + notStamp, "a word");
        NS_TEST_EXPECT_MSG_EQ(ErrorOf("1.5\n"), "entry 1 ('1.5" + notStamp, "a fraction");
        NS_TEST_EXPECT_MSG_EQ(
            ErrorOf("2000000000\n"), "entry 1 ('2000000000" + notStamp, "above 1e9");
    }
};

/// The queue disc replaying stamps 0, 2, 4 (ms 0: 2 opportunities, ms 2: 1; period 4 ms) with
/// a buffer of 3 packets. Packets are told apart by their size (100 + their number).
class TraceQueueDiscTestCase : public TestCase
{
  public:
    TraceQueueDiscTestCase()
        : TestCase("Trace link: packets leave only at opportunities; empty ones are lost")
    {
    }

  private:
    void DoRun() override
    {
        MahimahiSchedule schedule;
        schedule.perMs = {2, 0, 1, 0};
        schedule.total = 3;
        Ptr<CellGymTraceQueueDisc> qd = CreateObject<CellGymTraceQueueDisc>();
        qd->SetMaxSize(QueueSize("3p"));
        std::vector<std::pair<int64_t, uint32_t>> sent; // (ms, packet number)
        qd->SetSendCallback(
            [&sent](Ptr<QueueDiscItem> item)
            {
                // The item's IPv4 header (20 B) is on the packet once it leaves.
                sent.emplace_back(Simulator::Now().GetMilliSeconds(),
                                  item->GetPacket()->GetSize() - 20 - 100);
            });
        qd->Initialize();
        qd->SetSchedule(schedule);
        std::vector<bool> accepted;
        // Enqueue packet k and let the queue disc run, as the traffic-control layer does.
        auto enqueue = [&accepted, qd](uint32_t k)
        {
            Ipv4Header h;
            accepted.push_back(qd->Enqueue(
                Create<Ipv4QueueDiscItem>(Create<Packet>(100 + k), Address(), 0x0800, h)));
            qd->Run();
        };
        // Before 0 ms: packets 0..4 arrive; the buffer takes 0, 1, 2 and drops 3 and 4.
        for (uint32_t k = 0; k < 5; ++k)
        {
            enqueue(k);
        }
        // 0 ms: 2 opportunities: 0 and 1 leave. 2 ms: 1: packet 2 leaves. 4 ms: 2 opportunities
        // find the queue empty: lost. 5 ms: packets 5 and 6 arrive and wait (no opportunity).
        // 6 ms: 5 leaves. 8 ms: 6 leaves, one opportunity is lost. 9 ms: 7, 8, 9 arrive, 10 is
        // dropped. 10 ms: 7 leaves. 12 ms: 8 and 9 leave.
        Simulator::Schedule(MilliSeconds(5),
                            [&enqueue]
                            {
                                enqueue(5);
                                enqueue(6);
                            });
        Simulator::Schedule(MilliSeconds(9),
                            [&enqueue]
                            {
                                for (uint32_t k = 7; k <= 10; ++k)
                                {
                                    enqueue(k);
                                }
                            });
        uint64_t deliveredAt7 = 0;
        Simulator::Schedule(MilliSeconds(7),
                            [&deliveredAt7, qd]
                            {
                                deliveredAt7 = qd->GetDelivered();
                            });
        Simulator::Stop(MicroSeconds(12500));
        Simulator::Run();

        const std::vector<std::pair<int64_t, uint32_t>> expected
            = {{0, 0}, {0, 1}, {2, 2}, {6, 5}, {8, 6}, {10, 7}, {12, 8}, {12, 9}};
        NS_TEST_ASSERT_MSG_EQ(sent.size(), expected.size(), "eight packets left");
        for (std::size_t i = 0; i < expected.size(); ++i)
        {
            NS_TEST_EXPECT_MSG_EQ(sent[i].first, expected[i].first, "departure " << i << ", ms");
            NS_TEST_EXPECT_MSG_EQ(sent[i].second, expected[i].second, "departure " << i);
        }
        const std::vector<bool> acceptedExpected
            = {true, true, true, false, false, true, true, true, true, true, false};
        NS_TEST_EXPECT_MSG_EQ((accepted == acceptedExpected), true, "the buffer holds 3");
        NS_TEST_EXPECT_MSG_EQ(qd->GetStats().nTotalDroppedPackets, 3, "3, 4 and 10 dropped");
        NS_TEST_EXPECT_MSG_EQ(deliveredAt7, 4, "0, 1, 2 and 5 by 7 ms");
        NS_TEST_EXPECT_MSG_EQ(qd->GetDelivered(), 8, "all accepted packets delivered");
        NS_TEST_EXPECT_MSG_EQ(qd->GetNPackets(), 0, "nothing left");
        Simulator::Destroy();
    }
};

class TraceLinkTestSuite : public TestSuite
{
  public:
    TraceLinkTestSuite()
        : TestSuite("trace-link", Type::UNIT)
    {
        AddTestCase(new MahimahiReaderTestCase, Duration::QUICK);
        AddTestCase(new TraceQueueDiscTestCase, Duration::QUICK);
    }
};

static TraceLinkTestSuite g_traceLinkTestSuite; //!< registers the suite

} // namespace
