// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of the trace-driven LTE downlink (cellgym-trace-scheduler.h): the proxy resizes the
// inner scheduler's blocks to the trace and hands the inner scheduler the true view of the RLC
// queue before its next decision. A recording inner scheduler stands in for PF: it answers each
// trigger with the DCI the test queued and records every buffer report and trigger it receives.
// The trace carries 1000 bytes in every TTI; the cell has 50 RBs (16 usable RB groups of 3).
#include "cellgym-capacity-trace.h"
#include "cellgym-trace-scheduler.h"

#include "ns3/object-factory.h"
#include "ns3/string.h"
#include "ns3/test.h"

#include <deque>
#include <fstream>
#include <vector>

using namespace ns3;

namespace
{

/// What the recording scheduler saw, and the DCIs it is to answer with.
struct InnerLog
{
    std::vector<FfMacSchedSapProvider::SchedDlRlcBufferReqParameters> reports;
    std::vector<FfMacSchedSapProvider::SchedDlTriggerReqParameters> triggers;
    std::deque<std::vector<BuildDataListElement_s>> answers;
};

InnerLog* g_log = nullptr; //!< the log of the recording scheduler being built

/// An inner scheduler that records what reaches it and answers triggers from InnerLog.
class RecordingFfMacScheduler : public FfMacScheduler
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("ns3::CellgymTestRecordingFfMacScheduler")
                                .SetParent<FfMacScheduler>()
                                .AddConstructor<RecordingFfMacScheduler>();
        return tid;
    }

    RecordingFfMacScheduler()
        : m_log(g_log)
        , m_sched(this)
        , m_csched()
    {
    }

    void SetFfMacCschedSapUser(FfMacCschedSapUser*) override {}

    void SetFfMacSchedSapUser(FfMacSchedSapUser* s) override
    {
        m_user = s;
    }

    FfMacCschedSapProvider* GetFfMacCschedSapProvider() override
    {
        return &m_csched;
    }

    FfMacSchedSapProvider* GetFfMacSchedSapProvider() override
    {
        return &m_sched;
    }

    void SetLteFfrSapProvider(LteFfrSapProvider*) override {}

    LteFfrSapUser* GetLteFfrSapUser() override
    {
        return nullptr;
    }

  private:
    class Sched : public FfMacSchedSapProvider
    {
      public:
        explicit Sched(RecordingFfMacScheduler* s)
            : m_s(s)
        {
        }

        void SchedDlRlcBufferReq(const SchedDlRlcBufferReqParameters& p) override
        {
            m_s->m_log->reports.push_back(p);
        }

        void SchedDlTriggerReq(const SchedDlTriggerReqParameters& p) override
        {
            m_s->m_log->triggers.push_back(p);
            FfMacSchedSapUser::SchedDlConfigIndParameters out;
            if (!m_s->m_log->answers.empty())
            {
                out.m_buildDataList = m_s->m_log->answers.front();
                m_s->m_log->answers.pop_front();
            }
            m_s->m_user->SchedDlConfigInd(out);
        }

        void SchedDlPagingBufferReq(const SchedDlPagingBufferReqParameters&) override {}

        void SchedDlMacBufferReq(const SchedDlMacBufferReqParameters&) override {}

        void SchedDlRachInfoReq(const SchedDlRachInfoReqParameters&) override {}

        void SchedDlCqiInfoReq(const SchedDlCqiInfoReqParameters&) override {}

        void SchedUlTriggerReq(const SchedUlTriggerReqParameters&) override {}

        void SchedUlNoiseInterferenceReq(const SchedUlNoiseInterferenceReqParameters&) override {}

        void SchedUlSrInfoReq(const SchedUlSrInfoReqParameters&) override {}

        void SchedUlMacCtrlInfoReq(const SchedUlMacCtrlInfoReqParameters&) override {}

        void SchedUlCqiInfoReq(const SchedUlCqiInfoReqParameters&) override {}

      private:
        RecordingFfMacScheduler* m_s;
    };

    class Csched : public FfMacCschedSapProvider
    {
      public:
        void CschedCellConfigReq(const CschedCellConfigReqParameters&) override {}

        void CschedUeConfigReq(const CschedUeConfigReqParameters&) override {}

        void CschedLcConfigReq(const CschedLcConfigReqParameters&) override {}

        void CschedLcReleaseReq(const CschedLcReleaseReqParameters&) override {}

        void CschedUeReleaseReq(const CschedUeReleaseReqParameters&) override {}
    };

    InnerLog* m_log;
    Sched m_sched;
    Csched m_csched;
    FfMacSchedSapUser* m_user{nullptr};
};

NS_OBJECT_ENSURE_REGISTERED(RecordingFfMacScheduler);

/// The MAC's side: the downlink decisions that reach it.
class MacUser : public FfMacSchedSapUser
{
  public:
    void SchedDlConfigInd(const SchedDlConfigIndParameters& p) override
    {
        decisions.push_back(p);
    }

    void SchedUlConfigInd(const SchedUlConfigIndParameters&) override {}

    std::vector<SchedDlConfigIndParameters> decisions;
};

/// A new-data DCI for RNTI 1, LCID 3: `rbgs` RB groups from the first, one RLC PDU.
BuildDataListElement_s
Dci(uint32_t rbgs, uint16_t tbBytes, uint16_t pduBytes, uint8_t harq)
{
    BuildDataListElement_s bd;
    bd.m_rnti = 1;
    bd.m_dci.m_rnti = 1;
    bd.m_dci.m_rbBitmap = (1u << rbgs) - 1;
    bd.m_dci.m_resAlloc = 0;
    bd.m_dci.m_tbsSize = {tbBytes};
    bd.m_dci.m_mcs = {28};
    bd.m_dci.m_ndi = {1};
    bd.m_dci.m_rv = {0};
    bd.m_dci.m_harqProcess = harq;
    RlcPduListElement_s pdu;
    pdu.m_logicalChannelIdentity = 3;
    pdu.m_size = pduBytes;
    bd.m_rlcPduList = {{pdu}};
    return bd;
}

FfMacSchedSapProvider::SchedDlRlcBufferReqParameters
Report(uint32_t txQueueBytes)
{
    FfMacSchedSapProvider::SchedDlRlcBufferReqParameters r;
    r.m_rnti = 1;
    r.m_logicalChannelIdentity = 3;
    r.m_rlcTransmissionQueueSize = txQueueBytes;
    r.m_rlcTransmissionQueueHolDelay = 0;
    r.m_rlcRetransmissionQueueSize = 0;
    r.m_rlcRetransmissionHolDelay = 0;
    r.m_rlcStatusPduSize = 0;
    return r;
}

class TraceSchedulerViewTestCase : public TestCase
{
  public:
    TraceSchedulerViewTestCase()
        : TestCase("trace scheduler: resized blocks, withheld DCIs and the RLC queue's true view")
    {
    }

  private:
    void DoRun() override
    {
        const std::string path = CreateTempDirFilename("capacity.txt");
        {
            std::ofstream f(path);
            f << "# cellgym-capacity v1\n# interval_us: 1000\n1000\n";
        }
        CellgymTraceFfMacScheduler::SetCapacityTrace(
            std::make_shared<const CapacityTrace>(CapacityTrace::Load(path, 1000)));
        InnerLog log;
        g_log = &log;
        auto proxy = CreateObjectWithAttributes<CellgymTraceFfMacScheduler>(
            "InnerType", StringValue("ns3::CellgymTestRecordingFfMacScheduler"));
        MacUser mac;
        proxy->SetFfMacSchedSapUser(&mac);
        FfMacCschedSapProvider::CschedCellConfigReqParameters cell;
        cell.m_dlBandwidth = 50;
        proxy->GetFfMacCschedSapProvider()->CschedCellConfigReq(cell);
        auto* sched = proxy->GetFfMacSchedSapProvider();
        FfMacSchedSapProvider::SchedDlTriggerReqParameters trigger;
        trigger.m_sfnSf = (1 << 4) | 1; // frame 1, subframe 1: TTI 0 at t = 0

        // The RLC reports 10000 bytes: forwarded as it is.
        sched->SchedDlRlcBufferReq(Report(10000));
        NS_TEST_ASSERT_MSG_EQ(log.reports.size(), 1, "the RLC's report reaches the scheduler");
        // TTI 0: the inner scheduler gives the whole band (16 groups, 4395 bytes, one PDU of
        // 4393). The trace has 1000 bytes: the block becomes 1000, the PDU 4393 x 1000 / 4395
        // = 999 (integer), which carries 999 - 2 = 997 bytes of the queue: 10000 - 997 = 9003.
        log.answers.push_back({Dci(16, 4395, 4393, 0)});
        sched->SchedDlTriggerReq(trigger);
        NS_TEST_ASSERT_MSG_EQ(mac.decisions.size(), 1, "one decision reaches the MAC");
        const auto& tb = mac.decisions[0].m_buildDataList.at(0);
        NS_TEST_ASSERT_MSG_EQ(tb.m_dci.m_tbsSize[0], 1000, "the block is the trace's bytes");
        NS_TEST_ASSERT_MSG_EQ(tb.m_rlcPduList[0][0].m_size, 999, "the PDU scales with it");
        // TTI 1: before deciding, the inner scheduler gets the true view (9003), not the
        // 10000 - 4391 it debited itself. It now gives one group (tb 100, PDU 98): the trace's
        // share is 1000 x 1 / 16 = 62 bytes, the PDU 98 x 62 / 100 = 60, the queue 9003 - 58.
        log.answers.push_back({Dci(1, 100, 98, 1)});
        sched->SchedDlTriggerReq(trigger);
        NS_TEST_ASSERT_MSG_EQ(log.reports.size(), 2, "the view is given before TTI 1");
        NS_TEST_ASSERT_MSG_EQ(log.reports[1].m_rlcTransmissionQueueSize,
                              9003,
                              "the RLC's report less the resized PDU granted");
        NS_TEST_ASSERT_MSG_EQ(mac.decisions[1].m_buildDataList.at(0).m_dci.m_tbsSize[0],
                              62,
                              "one group's share of the trace");
        // TTI 2: a DCI without groups has no share of the trace: withheld (nothing is sent).
        log.answers.push_back({Dci(0, 100, 98, 2)});
        sched->SchedDlTriggerReq(trigger);
        NS_TEST_ASSERT_MSG_EQ(log.reports.size(), 3, "the view is given before TTI 2");
        NS_TEST_ASSERT_MSG_EQ(log.reports[2].m_rlcTransmissionQueueSize, 8945, "9003 - 58");
        NS_TEST_ASSERT_MSG_EQ(mac.decisions[2].m_buildDataList.size(), 0, "the DCI is withheld");
        // TTI 3: the view again, unchanged (the RLC kept the withheld block's bytes), and an
        // ACK frees the withheld DCI's HARQ process.
        sched->SchedDlTriggerReq(trigger);
        NS_TEST_ASSERT_MSG_EQ(log.reports.size(), 4, "the view is given before TTI 3");
        NS_TEST_ASSERT_MSG_EQ(log.reports[3].m_rlcTransmissionQueueSize, 8945, "no bytes sent");
        NS_TEST_ASSERT_MSG_EQ(log.triggers[3].m_dlInfoList.size(), 1, "one ACK with TTI 3");
        NS_TEST_ASSERT_MSG_EQ(+log.triggers[3].m_dlInfoList[0].m_harqProcessId,
                              2,
                              "for the withheld DCI's HARQ process");
        // A new RLC report replaces the view; a TTI without a decision re-sends nothing.
        sched->SchedDlRlcBufferReq(Report(20000));
        sched->SchedDlTriggerReq(trigger);
        NS_TEST_ASSERT_MSG_EQ(log.reports.size(), 5, "the report only, nothing re-sent");
        NS_TEST_ASSERT_MSG_EQ(log.reports[4].m_rlcTransmissionQueueSize, 20000, "the report");
        // An upsized block (the trace above the inner scheduler's block) debits what was sent.
        sched->SchedDlRlcBufferReq(Report(3000));
        log.answers.push_back({Dci(16, 500, 498, 3)});
        sched->SchedDlTriggerReq(trigger);
        sched->SchedDlTriggerReq(trigger);
        // PDU 498 x 1000 / 500 = 996: 3000 - 994 = 2006.
        NS_TEST_ASSERT_MSG_EQ(log.reports.back().m_rlcTransmissionQueueSize, 2006, "upsized");
        proxy->Dispose();
        g_log = nullptr;
    }
};

class TraceSchedulerTestSuite : public TestSuite
{
  public:
    TraceSchedulerTestSuite()
        : TestSuite("trace-scheduler", Type::UNIT)
    {
        AddTestCase(new TraceSchedulerViewTestCase(), TestCase::Duration::QUICK);
    }
};

TraceSchedulerTestSuite g_traceSchedulerTestSuite;

} // namespace
