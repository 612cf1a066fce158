// SPDX-License-Identifier: GPL-2.0-only
// Unit test of the NR bandwidth-part manager that feeds XRC's agent (nr/xrc-bwp-manager-gnb.h),
// the NR counterpart of xrc-carrier-manager-test.cc, wired as XrcBwpManagerGnb::Replace wires it
// (static BWP algorithm: every bearer on BWP 0), between a recording MAC and an RLC stand-in that
// answers each transmit opportunity synchronously with one PDU of a size the test sets. One UE
// (RNTI 7) with a data bearer (LCID 3). What reaches the agent's callbacks and what reaches the MAC
// is worked out in the comments: the reports and PDUs go on unchanged (scheduling is not affected).
// Built only with 5G-LENA (CELLGYM_HAVE_NR).
#ifdef CELLGYM_HAVE_NR
#include "xrc-bwp-manager-gnb.h"

#include "ns3/bwp-manager-algorithm.h"
#include "ns3/nr-ccm-rrc-sap.h"
#include "ns3/nr-eps-bearer.h"
#include "ns3/nr-gnb-cmac-sap.h"
#include "ns3/nr-gnb-rrc.h"
#include "ns3/nr-mac-sap.h"
#include "ns3/packet.h"
#include "ns3/test.h"

#include <tuple>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{

/// The gNB RRC as the manager sees it: asked nothing here (the BWP comes from the algorithm).
class TestRrc : public NrCcmRrcSapUser
{
  public:
    uint8_t AddUeMeasReportConfigForComponentCarrier(NrRrcSap::ReportConfigEutra) override
    {
        return 0;
    }

    void TriggerComponentCarrier(uint16_t, uint16_t) override {}

    void AddLcs(std::vector<NrGnbRrcSapProvider::LogicalChannelConfig>) override {}

    void ReleaseLcs(uint16_t, uint8_t) override {}

    Ptr<NrUeManager> GetUeManager(uint16_t) override
    {
        return nullptr;
    }

    void SetNumberOfComponentCarriers(uint16_t) override {}
};

/// The MAC of carrier 0: records what the carrier manager passes on.
class TestMac : public NrMacSapProvider
{
  public:
    std::vector<BufferStatusReportParameters> reports; //!< buffer reports received
    std::vector<std::pair<uint8_t, uint32_t>> pdus;    //!< (LCID, bytes) of PDUs received

    void TransmitPdu(TransmitPduParameters params) override
    {
        pdus.emplace_back(params.lcid, params.pdu->GetSize());
    }

    void BufferStatusReport(BufferStatusReportParameters params) override
    {
        reports.push_back(params);
    }
};

/// The RLC of the bearer: answers every opportunity with one PDU of `answer` bytes (0: none).
class TestRlc : public NrMacSapUser
{
  public:
    NrMacSapProvider* ccm{nullptr}; //!< the carrier manager's MAC-side provider
    uint32_t answer{0};             //!< bytes to send in the next opportunity
    std::vector<uint32_t> offered;  //!< bytes of each opportunity received

    void NotifyTxOpportunity(TxOpportunityParameters params) override
    {
        offered.push_back(params.bytes);
        if (answer > 0)
        {
            NrMacSapProvider::TransmitPduParameters pdu;
            pdu.pdu = Create<Packet>(answer);
            pdu.rnti = params.rnti;
            pdu.lcid = params.lcid;
            pdu.layer = params.layer;
            pdu.harqProcessId = params.harqId;
            pdu.componentCarrierId = params.componentCarrierId;
            ccm->TransmitPdu(pdu);
        }
    }

    void NotifyHarqDeliveryFailure() override {}

    void ReceivePdu(ReceivePduParameters) override {}
};

class XrcBwpManagerTestCase : public TestCase
{
  public:
    XrcBwpManagerTestCase()
        : TestCase("NR BWP manager: reports and drained buffers reach XRC, unchanged MAC")
    {
    }

  private:
    static NrMacSapProvider::BufferStatusReportParameters
    Report(uint8_t lcid, uint32_t bytes, uint16_t holMs)
    {
        NrMacSapProvider::BufferStatusReportParameters p{};
        p.rnti = 7;
        p.lcid = lcid;
        p.txQueueSize = bytes;
        p.txQueueHolDelay = holMs;
        p.retxQueueSize = 5;
        return p;
    }

    void DoRun() override
    {
        Ptr<XrcBwpManagerGnb> ccm = CreateObject<XrcBwpManagerGnb>();
        ccm->SetBwpManagerAlgorithm(CreateObject<BwpManagerAlgorithmStatic>());
        TestRrc rrc;
        ccm->SetNrCcmRrcSapUser(&rrc);
        ccm->SetNumberOfComponentCarriers(1);
        TestMac mac;
        ccm->SetMacSapProvider(0, &mac);
        TestRlc rlc;
        rlc.ccm = ccm->GetNrMacSapProvider();
        ccm->GetNrCcmRrcSapProvider()->AddUe(7, NrUeManager::CONNECTED_NORMALLY);
        const auto lcs = ccm->GetNrCcmRrcSapProvider()->SetupDataRadioBearer(
            NrEpsBearer(NrEpsBearer::NGBR_VIDEO_TCP_DEFAULT), 1, 7, 3, 2, &rlc);
        NS_TEST_ASSERT_MSG_EQ(lcs.size(), 1, "one bandwidth part");
        // SRB1 (LCID 1), as the RRC configures a signalling bearer: its reports have a BWP too.
        NrGnbCmacSapProvider::LcInfo srb1{};
        srb1.rnti = 7;
        srb1.lcId = 1;
        srb1.qci = NrEpsBearer::NGBR_VIDEO_TCP_DEFAULT;
        ccm->GetNrCcmRrcSapProvider()->AddLc(srb1, &rlc);
        NrMacSapUser* fromMac = lcs[0].msu; // what the MAC calls for this bearer

        std::vector<std::tuple<uint16_t, uint8_t, uint32_t, uint16_t>> reports;
        std::vector<std::tuple<uint16_t, uint8_t, std::size_t>> drained; // with PDUs sent so far
        ccm->Watch().report = [&reports](uint16_t r, uint8_t l, uint32_t b, uint16_t h)
        {
            reports.emplace_back(r, l, b, h);
        };
        ccm->Watch().drain = [&drained, &mac](uint16_t r, uint8_t l)
        {
            drained.emplace_back(r, l, mac.pdus.size());
        };

        // The RLC reports 12,000 B queued, HoL 14 ms: the agent gets (7, 3, 12000, 14); the MAC
        // the same report, its retransmission queue (5 B) included. A report of SRB1 (LCID 1)
        // goes to the MAC only.
        rlc.ccm->BufferStatusReport(Report(3, 12000, 14));
        rlc.ccm->BufferStatusReport(Report(1, 40, 2));
        NS_TEST_ASSERT_MSG_EQ(reports.size(), 1, "the data bearer's report reaches the agent");
        NS_TEST_EXPECT_MSG_EQ(std::get<0>(reports[0]), 7, "RNTI");
        NS_TEST_EXPECT_MSG_EQ(static_cast<int>(std::get<1>(reports[0])), 3, "LCID");
        NS_TEST_EXPECT_MSG_EQ(std::get<2>(reports[0]), 12000, "queue");
        NS_TEST_EXPECT_MSG_EQ(std::get<3>(reports[0]), 14, "HoL");
        NS_TEST_ASSERT_MSG_EQ(mac.reports.size(), 2, "both reports reach the MAC");
        NS_TEST_EXPECT_MSG_EQ(mac.reports[0].txQueueSize, 12000, "unchanged queue");
        NS_TEST_EXPECT_MSG_EQ(mac.reports[0].txQueueHolDelay, 14, "unchanged HoL");
        NS_TEST_EXPECT_MSG_EQ(mac.reports[0].retxQueueSize, 5, "unchanged retransmissions");
        NS_TEST_EXPECT_MSG_EQ(static_cast<int>(mac.reports[1].lcid), 1, "SRB1's report");

        using Op = NrMacSapUser::TxOpportunityParameters; // bytes, layer, HARQ, BWP, RNTI, LCID
        // Opportunity of 1000 B answered with 1000: relayed, the PDU reaches the MAC, no drain.
        rlc.answer = 1000;
        fromMac->NotifyTxOpportunity(Op(1000, 0, 1, 0, 7, 3));
        // 1000 answered with 400: 400 + 4 < 1000, drained after the PDU went to the MAC.
        rlc.answer = 400;
        fromMac->NotifyTxOpportunity(Op(1000, 0, 2, 0, 7, 3));
        // 1000 answered with 997: within the RLC's slack (997 + 4 >= 1000), not drained.
        rlc.answer = 997;
        fromMac->NotifyTxOpportunity(Op(1000, 0, 3, 0, 7, 3));
        // 500 answered with nothing: drained, no PDU.
        rlc.answer = 0;
        fromMac->NotifyTxOpportunity(Op(500, 0, 4, 0, 7, 3));

        NS_TEST_ASSERT_MSG_EQ(rlc.offered.size(), 4, "every opportunity reaches the RLC");
        NS_TEST_EXPECT_MSG_EQ(rlc.offered[3], 500, "unchanged");
        NS_TEST_ASSERT_MSG_EQ(mac.pdus.size(), 3, "every PDU reaches the MAC");
        NS_TEST_EXPECT_MSG_EQ(mac.pdus[0].second, 1000, "first PDU");
        NS_TEST_EXPECT_MSG_EQ(mac.pdus[1].second, 400, "second PDU");
        NS_TEST_EXPECT_MSG_EQ(mac.pdus[2].second, 997, "third PDU");
        NS_TEST_ASSERT_MSG_EQ(drained.size(), 2, "two opportunities left the buffer empty");
        NS_TEST_EXPECT_MSG_EQ(std::get<0>(drained[0]), 7, "RNTI");
        NS_TEST_EXPECT_MSG_EQ(static_cast<int>(std::get<1>(drained[0])), 3, "LCID");
        NS_TEST_EXPECT_MSG_EQ(std::get<2>(drained[0]), 2, "after the 400-B PDU was passed on");
        NS_TEST_EXPECT_MSG_EQ(std::get<2>(drained[1]), 3, "the unanswered opportunity");
    }
};

class XrcBwpManagerTestSuite : public TestSuite
{
  public:
    XrcBwpManagerTestSuite()
        : TestSuite("xrc-bwp-manager", Type::UNIT)
    {
        AddTestCase(new XrcBwpManagerTestCase, Duration::QUICK);
    }
};

static XrcBwpManagerTestSuite g_xrcBwpManagerTestSuite; //!< registers the suite

} // namespace

#endif // CELLGYM_HAVE_NR
