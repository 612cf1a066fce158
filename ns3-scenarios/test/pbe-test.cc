// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of PBE-CC's UE monitor and its rate's way to the sender (cellgym-pbe-monitor.h)
// against a hand-worked sequence: the expected values after each slot are worked out in the
// comments. Knobs: a 2-slot window, 1 slot per ms, active within 2 ms, no header overheads and
// 1000-byte PDUs carrying 1000 bytes of payload (so PDCP bytes = payload bytes).
#include "cellgym-pbe-monitor.h"
#include "tcp-pbe.h"

#include "ns3/test.h"

#include <vector>

using namespace ns3;

namespace
{

PbeMonitorKnobs
Knobs()
{
    PbeMonitorKnobs k;
    k.windowSlots = 2;
    k.activeMs = 2;
    k.slotsPerMs = 1;
    k.tbOverheadBytes = 0;
    k.sduOverheadBytes = 0;
    k.pduBytes = 1000;
    k.segPayloadBytes = 1000;
    return k;
}

/// The monitor's rule, slot by slot, for two UEs (UE 0's MCS carries 1000 bytes over the 10
/// usable units, UE 1's 500).
class PbeMonitorTestCase : public TestCase
{
  public:
    PbeMonitorTestCase()
        : TestCase(
            "PBE-CC monitor: own blocks, idle share, fair-share claim, activity, uplink slots")
    {
    }

  private:
    void DoRun() override
    {
        CellGymPbeMonitor m(2, Knobs());
        using A = PbeSlotAllocation; // {newRbs, newBytes, retxRbs, fullBytes}
        // Slot 0 (usable 10): UE 0 gets 4 units (400 bytes). Window sums: offered 10 / 2 = 5
        // per slot, used 4 / 2 = 2, idle 3; active UEs: UE 0.
        // UE 0: n = 1, fair 5, own 2, base 2 + 3 = 5 -> share 5;
        //       rate 400 / 2 + (5 - 2) / 5 x 1000 / 2 = 200 + 300 = 500.
        // UE 1 (inactive, counted: n = 2): fair 2.5, own 0, base 1.5; UE 0 holds
        //       2 + 1.5 - 2.5 = 1 above its fair share -> share min(2.5, 2.5) = 2.5;
        //       rate 0 + 2.5 / 5 x 500 / 2 = 125.
        m.OnSlot({A{4, 400, 0, 1000}, A{0, 0, 0, 500}}, 10);
        NS_TEST_ASSERT_MSG_EQ_TOL(m.RateBytesPerMs(0), 500.0, 1e-9, "slot 0, UE 0");
        NS_TEST_ASSERT_MSG_EQ_TOL(m.RateBytesPerMs(1), 125.0, 1e-9, "slot 0, UE 1");
        // Slot 1 (usable 10): UE 0 6 units (600 bytes); UE 1 2 new units (100 bytes) and a
        // 2-unit HARQ retransmission (used, no capacity). Offered 20 / 2 = 10, used
        // (10 + 2 + 2) / 2 = 7, idle 3, both active (n = 2, fair 5).
        // UE 0: own 5, base 5 + 1.5 = 6.5 -> share 6.5; rate 1000 / 2 + 1.5 / 10 x 2000 / 2 = 650.
        // UE 1: own 1, base 2.5; UE 0 over by 5 + 1.5 - 5 = 1.5 -> share 4;
        //       rate 100 / 2 + 3 / 10 x 1000 / 2 = 50 + 150 = 200.
        m.OnSlot({A{6, 600, 0, 1000}, A{2, 100, 2, 500}}, 10);
        NS_TEST_ASSERT_MSG_EQ_TOL(m.RateBytesPerMs(0), 650.0, 1e-9, "slot 1, UE 0");
        NS_TEST_ASSERT_MSG_EQ_TOL(m.RateBytesPerMs(1), 200.0, 1e-9, "slot 1, UE 1");
        // Slot 2, an uplink slot (usable 0, nothing scheduled): it replaces slot 0. Offered
        // (0 + 10) / 2 = 5, used (6 + 2 + 2) / 2 = 5, idle 0; both still active (scheduled
        // 1 slot ago), fair 2.5.
        // UE 0: own 3 -> share 3; rate 600 / 2 = 300 (not 500: the uplink slot is no idle
        //       capacity).
        // UE 1: own 1; UE 0 over by 3 - 2.5 = 0.5 -> share 1.5; rate 100 / 2 + 0.5 / 5 x 500 / 2
        //       = 75.
        m.OnSlot({A{0, 0, 0, 0}, A{0, 0, 0, 0}}, 0);
        NS_TEST_ASSERT_MSG_EQ_TOL(m.RateBytesPerMs(0), 300.0, 1e-9, "slot 2, UE 0");
        NS_TEST_ASSERT_MSG_EQ_TOL(m.RateBytesPerMs(1), 75.0, 1e-9, "slot 2, UE 1");
        // Slot 3 (usable 10, nobody scheduled): replaces slot 1. Offered 5, used 0, idle 5;
        // both last scheduled 2 slots ago: inactive (each counts itself: n = 1).
        // UE 0: share 5, rate 5 / 5 x 1000 / 2 = 500; UE 1: 5 / 5 x 500 / 2 = 250.
        m.OnSlot({A{0, 0, 0, 1000}, A{0, 0, 0, 500}}, 10);
        NS_TEST_ASSERT_MSG_EQ_TOL(m.RateBytesPerMs(0), 500.0, 1e-9, "slot 3, UE 0");
        NS_TEST_ASSERT_MSG_EQ_TOL(m.RateBytesPerMs(1), 250.0, 1e-9, "slot 3, UE 1");
        // A flow's rate: 500 bytes per ms of payload over 2 active flows = 2 Mbit/s.
        NS_TEST_ASSERT_MSG_EQ_TOL(m.FlowRateBps(0, 2), 2e6, 1e-6, "split among the UE's flows");
    }
};

/// Header bytes taken off: a block's MAC/RLC header, and each PDU's share of RLC headers.
class PbeOverheadTestCase : public TestCase
{
  public:
    PbeOverheadTestCase()
        : TestCase("PBE-CC monitor: PDCP bytes of a block, payload of a PDU")
    {
    }

  private:
    void DoRun() override
    {
        PbeMonitorKnobs k; // 3 bytes per block, 2 per PDU, 1502-byte PDUs, 1448 bytes payload
        k.windowSlots = 1;
        CellGymPbeMonitor m(1, k);
        // Alone, all 50 units, a 3011-byte block: (3011 - 3) x 1502 / 1504 = 3004 PDCP bytes.
        m.OnSlot({PbeSlotAllocation{50, 3011, 0, 3011}}, 50);
        NS_TEST_ASSERT_MSG_EQ_TOL(m.RateBytesPerMs(0), 3004.0, 1e-9, "PDCP bytes per ms");
        // Payload: 3004 x 1448 / 1502 bytes per ms, in bit/s.
        NS_TEST_ASSERT_MSG_EQ_TOL(m.FlowRateBps(0, 1), 3004.0 * 1448 / 1502 * 8e3, 1e-3, "bit/s");
    }
};

/// The rate's way from the UE's ACKs to the base station, keyed by acknowledgement number.
class PbeAckPathTestCase : public TestCase
{
  public:
    PbeAckPathTestCase()
        : TestCase("PBE-CC: the rate on each ACK the UE sent; ACKs lost in the uplink skipped")
    {
    }

  private:
    void DoRun() override
    {
        CellGymPbeMonitor m(1, Knobs());
        m.OnUeAck(7, 1001, 1e6);
        m.OnUeAck(7, 1001, 2e6); // a duplicate ACK, lost in the uplink below
        m.OnUeAck(7, 3001, 3e6);
        m.OnUeAck(7, 5001, 0); // no estimate yet: carries nothing
        double bps = 0;
        NS_TEST_ASSERT_MSG_EQ(m.RateOfAck(7, 1001, bps), true, "the first ACK");
        NS_TEST_ASSERT_MSG_EQ_TOL(bps, 1e6, 1e-9, "its rate");
        NS_TEST_ASSERT_MSG_EQ(m.RateOfAck(7, 3001, bps), true, "after a lost duplicate");
        NS_TEST_ASSERT_MSG_EQ_TOL(bps, 3e6, 1e-9, "its rate");
        NS_TEST_ASSERT_MSG_EQ(m.RateOfAck(7, 1001, bps), false, "the lost one's record dropped");
        NS_TEST_ASSERT_MSG_EQ(m.RateOfAck(7, 5001, bps), false, "no rate recorded");
        NS_TEST_ASSERT_MSG_EQ(m.RateOfAck(8, 1001, bps), false, "another flow");
    }
};

} // namespace

namespace ns3
{

/// The sender's delivery-rate filter (TcpPbe::DeliveryBps, the BBR-like fallback's bottleneck
/// estimate): bytes acknowledged over two min RTTs, the largest rate of the last ten min RTTs.
/// Min RTT 10 ms: a span of 20 ms, a window of 100 ms.
class PbeDeliveryRateTestCase : public TestCase
{
  public:
    PbeDeliveryRateTestCase()
        : TestCase("PBE-CC: the delivery rate is the largest over ten min RTTs; old ones expire")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<TcpPbe> pbe = CreateObject<TcpPbe>();
        const Time rtt = MilliSeconds(10);
        auto at = [&](int64_t ms, uint64_t delivered)
        {
            return pbe->DeliveryBps(MilliSeconds(ms), rtt, delivered);
        };
        NS_TEST_ASSERT_MSG_EQ_TOL(at(0, 0), 0.0, 1e-9, "no span yet: no rate");
        // (0, 0) -> (20, 25000): 25,000 B in 20 ms.
        NS_TEST_ASSERT_MSG_EQ_TOL(at(20, 25000), 10e6, 1e-3, "the first rate");
        // (0, 0) -> (30, 30000): 8 Mbit/s, less than the 10 kept.
        NS_TEST_ASSERT_MSG_EQ_TOL(at(30, 30000), 10e6, 1e-3, "the largest so far");
        // The oldest record is 20 ms back from 20: (20, 25000) -> (40, 55000) is 12 Mbit/s.
        NS_TEST_ASSERT_MSG_EQ_TOL(at(40, 55000), 12e6, 1e-3, "a larger one");
        // (40, 55000) -> (130, 60000): 5,000 B in 90 ms; 12 Mbit/s (at 40) is 90 ms old: kept.
        NS_TEST_ASSERT_MSG_EQ_TOL(at(130, 60000), 12e6, 1e-3, "within ten min RTTs");
        // (40, 55000) -> (141, 61000): 6,000 B in 101 ms; 12 Mbit/s is now 101 ms old: gone,
        // and 5,000 B / 90 ms (at 130) is smaller than the new one.
        NS_TEST_ASSERT_MSG_EQ_TOL(at(141, 61000), 6000 * 8 / 0.101, 1e-3, "expired");
    }
};

} // namespace ns3

namespace
{

class PbeTestSuite : public TestSuite
{
  public:
    PbeTestSuite()
        : TestSuite("pbe", Type::UNIT)
    {
        AddTestCase(new PbeMonitorTestCase, Duration::QUICK);
        AddTestCase(new PbeOverheadTestCase, Duration::QUICK);
        AddTestCase(new PbeAckPathTestCase, Duration::QUICK);
        AddTestCase(new PbeDeliveryRateTestCase, Duration::QUICK);
    }
};

static PbeTestSuite g_pbeTestSuite; //!< registers the suite

} // namespace
