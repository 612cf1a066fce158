// SPDX-License-Identifier: GPL-2.0-only
// Unit tests of the agent's congestion control (cellgym-agent-congestion-ops.h): a command sets the
// window at once outside recovery, and one that opens room above the bytes in flight calls the
// send trigger (so the socket sends now, not on the next ACK); a shrinking command, a command in
// loss recovery and a command before Init do not.
#include "cellgym-agent-congestion-ops.h"

#include "ns3/test.h"

using namespace ns3;

namespace
{

/// SetTarget and the send trigger on a bare socket state.
class AgentSendTriggerTestCase : public TestCase
{
  public:
    AgentSendTriggerTestCase()
        : TestCase("agent ops: a command that opens the window triggers a send, others do not")
    {
    }

  private:
    uint32_t m_triggers{0}; //!< calls of the send trigger

    void OnTrigger()
    {
        ++m_triggers;
    }

    void DoRun() override
    {
        auto ops = CreateObject<CellGymAgentCongestionOps>();
        ops->SetSendTrigger(MakeCallback(&AgentSendTriggerTestCase::OnTrigger, this));
        ops->SetTarget(20000, 0); // before Init: remembered, nothing to send into
        NS_TEST_EXPECT_MSG_EQ(m_triggers, 0, "no socket yet");

        auto tcb = CreateObject<TcpSocketState>();
        tcb->m_segmentSize = 1000;
        tcb->m_cWnd = 10000;
        tcb->m_ssThresh = 1000000;
        tcb->m_bytesInFlight = 10000;
        tcb->m_congState = TcpSocketState::CA_OPEN;
        ops->Init(tcb);
        NS_TEST_EXPECT_MSG_EQ(tcb->m_cWnd.Get(), 20000, "Init applies the earlier command");

        ops->SetTarget(30000, 0); // 10 kB in flight, window 30 kB: room, send now
        NS_TEST_EXPECT_MSG_EQ(tcb->m_cWnd.Get(), 30000, "the commanded window, at once");
        NS_TEST_EXPECT_MSG_EQ(m_triggers, 1, "an opened window triggers a send");

        tcb->m_bytesInFlight = 30000;
        ops->SetTarget(21000, 0); // shrinks below what is in flight: nothing to send
        NS_TEST_EXPECT_MSG_EQ(tcb->m_cWnd.Get(), 21000, "a shrunk window, at once");
        NS_TEST_EXPECT_MSG_EQ(m_triggers, 1, "no send into a window below the bytes in flight");

        tcb->m_congState = TcpSocketState::CA_RECOVERY;
        tcb->m_bytesInFlight = 5000;
        ops->SetTarget(50000, 0); // in recovery the socket's recovery owns the window
        NS_TEST_EXPECT_MSG_EQ(tcb->m_cWnd.Get(), 21000, "recovery keeps its window");
        NS_TEST_EXPECT_MSG_EQ(m_triggers, 1, "no send triggered in recovery");

        tcb->m_congState = TcpSocketState::CA_OPEN;
        ops->SetTarget(50000, 0);
        NS_TEST_EXPECT_MSG_EQ(m_triggers, 2, "open again: the opened window triggers a send");
    }
};

class AgentCongestionOpsTestSuite : public TestSuite
{
  public:
    AgentCongestionOpsTestSuite()
        : TestSuite("agent-congestion-ops", Type::UNIT)
    {
        AddTestCase(new AgentSendTriggerTestCase, Duration::QUICK);
    }
};

static AgentCongestionOpsTestSuite g_agentCongestionOpsTestSuite; //!< registers the suite

} // namespace
