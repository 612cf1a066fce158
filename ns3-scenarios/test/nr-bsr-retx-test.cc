// SPDX-License-Identifier: GPL-2.0-only
// Unit test of the NR UE's buffer status timer (nr/cellgym-nr-bsr-retx.h), between an RLC
// stand-in (the test calls the proxy as the UE's RLC entities would) and a recording MAC. A
// data bearer (LCID 3) whose reports go unanswered is reported again with `expBsrTimer` every
// 10 ms, from its first report after its last transmission opportunity, until an opportunity
// comes or a report says its buffer is empty; a bearer served within 10 ms, and the signalling
// bearers, never are. Built only with 5G-LENA (CELLGYM_HAVE_NR).
#ifdef CELLGYM_HAVE_NR
#include "cellgym-nr-bsr-retx.h"

#include "ns3/nr-mac-sap.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/test.h"

#include <tuple>
#include <utility>
#include <vector>

using namespace ns3;

namespace
{

/// The UE's MAC: records each report (LCID, expiry flag, time in ms) and each PDU's LCID.
class TestMac : public NrMacSapProvider
{
  public:
    std::vector<std::tuple<uint8_t, bool, int64_t>> reports; //!< (LCID, expBsrTimer, ms)
    std::vector<uint8_t> pdus;                               //!< LCIDs of the PDUs received

    void TransmitPdu(TransmitPduParameters params) override
    {
        pdus.push_back(params.lcid);
    }

    void BufferStatusReport(BufferStatusReportParameters params) override
    {
        reports.emplace_back(params.lcid, params.expBsrTimer, Simulator::Now().GetMilliSeconds());
    }
};

NrMacSapProvider::BufferStatusReportParameters
Report(uint8_t lcid, uint32_t bytes)
{
    NrMacSapProvider::BufferStatusReportParameters r{};
    r.rnti = 1;
    r.lcid = lcid;
    r.txQueueSize = bytes;
    r.expBsrTimer = false;
    return r;
}

NrMacSapProvider::TransmitPduParameters
Pdu(uint8_t lcid, uint32_t bytes)
{
    NrMacSapProvider::TransmitPduParameters p{};
    p.pdu = Create<Packet>(bytes);
    p.rnti = 1;
    p.lcid = lcid;
    return p;
}

/// The repeats of `lcid` (reports with the expiry flag), as their times in ms.
std::vector<int64_t>
Repeats(const TestMac& mac, uint8_t lcid)
{
    std::vector<int64_t> at;
    for (const auto& [l, expired, ms] : mac.reports)
    {
        if (l == lcid && expired)
        {
            at.push_back(ms);
        }
    }
    return at;
}

class NrBsrRetxTestCase : public TestCase
{
  public:
    NrBsrRetxTestCase()
        : TestCase("NR UE buffer status timer")
    {
    }

  private:
    void DoRun() override
    {
        TestMac mac;
        CellGymNrBsrRetx proxy(&mac, MilliSeconds(10));
        auto at = [&proxy](int64_t ms, auto call)
        {
            Simulator::Schedule(MilliSeconds(ms),
                                [&proxy, call]()
                                {
                                    call(proxy);
                                });
        };
        // LCID 3 (stranded): data from 2 ms, a new ACK at 6 ms (the RLC's own timer cancelled),
        // no opportunity until 37 ms: repeats at 12, 22 and 32 ms, none after the opportunity.
        at(2,
           [](CellGymNrBsrRetx& p)
           {
               p.BufferStatusReport(Report(3, 120));
           });
        at(6,
           [](CellGymNrBsrRetx& p)
           {
               p.BufferStatusReport(Report(3, 180));
           });
        at(37,
           [](CellGymNrBsrRetx& p)
           {
               p.TransmitPdu(Pdu(3, 180));
           });
        // LCID 4 (served): reports answered within 10 ms, then an empty report: no repeat.
        at(3,
           [](CellGymNrBsrRetx& p)
           {
               p.BufferStatusReport(Report(4, 60));
           });
        at(8,
           [](CellGymNrBsrRetx& p)
           {
               p.TransmitPdu(Pdu(4, 60));
           });
        at(9,
           [](CellGymNrBsrRetx& p)
           {
               p.BufferStatusReport(Report(4, 60));
           });
        at(15,
           [](CellGymNrBsrRetx& p)
           {
               p.BufferStatusReport(Report(4, 0));
           });
        // LCID 1 (signalling radio bearer): left alone.
        at(1,
           [](CellGymNrBsrRetx& p)
           {
               p.BufferStatusReport(Report(1, 40));
           });
        Simulator::Stop(MilliSeconds(80));
        Simulator::Run();
        Simulator::Destroy();

        const std::vector<int64_t> stranded{12, 22, 32};
        NS_TEST_EXPECT_MSG_EQ((Repeats(mac, 3) == stranded), true, "stranded bearer repeats");
        NS_TEST_EXPECT_MSG_EQ(Repeats(mac, 4).size(), 0, "a served bearer is never repeated");
        NS_TEST_EXPECT_MSG_EQ(Repeats(mac, 1).size(), 0, "signalling bearers are left alone");
        NS_TEST_EXPECT_MSG_EQ(proxy.Repeats(), 3, "repeats counted");
        // Every call reached the MAC unchanged: 6 reports and 2 PDUs, plus the 3 repeats.
        NS_TEST_EXPECT_MSG_EQ(mac.reports.size(), 9, "reports forwarded");
        NS_TEST_EXPECT_MSG_EQ(mac.pdus.size(), 2, "PDUs forwarded");
    }
};

class NrBsrRetxTestSuite : public TestSuite
{
  public:
    NrBsrRetxTestSuite()
        : TestSuite("nr-bsr-retx", Type::UNIT)
    {
        AddTestCase(new NrBsrRetxTestCase, Duration::QUICK);
    }
};

static NrBsrRetxTestSuite g_nrBsrRetxTestSuite; //!< registers the suite

} // namespace

#endif // CELLGYM_HAVE_NR
