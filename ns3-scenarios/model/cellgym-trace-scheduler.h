// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_TRACE_SCHEDULER_H
#define CELLGYM_TRACE_SCHEDULER_H

#include "cellgym-capacity-trace.h"

#include "ns3/ff-mac-csched-sap.h"
#include "ns3/ff-mac-sched-sap.h"
#include "ns3/ff-mac-scheduler.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @brief A trace-driven LTE downlink: a proxy FfMacScheduler around the real one (PF or RR).
 *
 * Every CSCHED/SCHED request of the eNB MAC goes to the inner scheduler, which decides who gets
 * which resource-block groups. On the way back to the MAC, each new downlink DCI's transport
 * block is resized to the trace's bytes for its subframe times the DCI's share of the usable
 * RBs, and the RLC PDU sizes of its build data scale with it: the MAC asks the RLC for exactly
 * that much, the PHY sends what the RLC returned and reports the DCI's size (the base-station
 * tap's LTE installer reads it). A DCI whose share is too small for an RLC PDU is withheld, and the
 * inner scheduler gets an ACK for its HARQ process with the next trigger. The PHY's data error
 * model must be off (the trace is the delivered capacity). See docs/traces.md.
 *
 * The inner scheduler debits its own view of each RLC queue by the blocks it allocated, before
 * the proxy resizes them. The proxy keeps the true view (the RLC's latest report less the PDU
 * bytes actually granted since) and hands it to the inner scheduler before the next decision,
 * so that a shrunk or withheld block never leaves data in the RLC that the scheduler believes
 * sent (the UE would wait unserved for the RLC's next report).
 */
class CellgymTraceFfMacScheduler : public FfMacScheduler
{
  public:
    static TypeId GetTypeId();
    CellgymTraceFfMacScheduler();
    ~CellgymTraceFfMacScheduler() override;
    void DoDispose() override;

    /// @brief The capacity every cell built from now on replays (before installing the eNB).
    static void SetCapacityTrace(std::shared_ptr<const CapacityTrace> trace);

    void SetFfMacCschedSapUser(FfMacCschedSapUser* s) override;
    void SetFfMacSchedSapUser(FfMacSchedSapUser* s) override;
    FfMacCschedSapProvider* GetFfMacCschedSapProvider() override;
    FfMacSchedSapProvider* GetFfMacSchedSapProvider() override;
    void SetLteFfrSapProvider(LteFfrSapProvider* s) override;
    LteFfrSapUser* GetLteFfrSapUser() override;

    /// The MAC's cell configuration (the bandwidth) on its way to the inner scheduler.
    void OnCellConfig(const FfMacCschedSapProvider::CschedCellConfigReqParameters& params);
    /// An RLC buffer report: it is the true view of that queue from now on; forward it.
    void OnRlcBuffer(const FfMacSchedSapProvider::SchedDlRlcBufferReqParameters& params);
    /// A downlink trigger: remember its subframe, give the inner scheduler the true view of the
    /// queues the last decision touched, add the ACKs of withheld DCIs, forward.
    void OnDlTrigger(const FfMacSchedSapProvider::SchedDlTriggerReqParameters& params);
    /// The inner scheduler's downlink decision: resize it to the trace, pass it to the MAC.
    void OnDlConfig(const FfMacSchedSapUser::SchedDlConfigIndParameters& params);

  protected:
    void NotifyConstructionCompleted() override;

  private:
    std::string m_innerType;                                  //!< TypeId name of the real scheduler
    Ptr<FfMacScheduler> m_inner;                              //!< the real scheduler
    std::shared_ptr<const CapacityTrace> m_trace;             //!< the capacity per TTI
    FfMacSchedSapUser* m_macSchedUser{nullptr};               //!< the MAC's SCHED user
    FfMacCschedSapUser* m_macCschedUser{nullptr};             //!< the MAC's CSCHED user
    std::unique_ptr<FfMacSchedSapProvider> m_schedProvider;   //!< what the MAC calls
    std::unique_ptr<FfMacCschedSapProvider> m_cschedProvider; //!< what the MAC calls
    std::unique_ptr<FfMacSchedSapUser> m_schedUser;           //!< what the inner one calls
    std::unique_ptr<FfMacCschedSapUser> m_cschedUser;         //!< what the inner one calls
    uint32_t m_numRbs{50};                                    //!< downlink RBs
    uint32_t m_rbgSize{3}; //!< RBs per group (36.213 Table 7.1.6.1-1)
    uint64_t m_dlTti{0};   //!< absolute index of the subframe being scheduled
    std::vector<DlInfoListElement_s> m_pendingAcks; //!< HARQ ACKs for withheld DCIs
    /// Debit a queue's true view by an RLC PDU of `bytes` (the RLC sends status, then
    /// retransmissions, then new data; each PDU carries at least a 2-byte header).
    void Debit(uint16_t rnti, uint8_t lcid, uint32_t bytes);

    using FlowKey = std::pair<uint16_t, uint8_t>; //!< (RNTI, LCID)
    /// The true view of each queue: the RLC's latest report less the PDU bytes granted since
    std::map<FlowKey, FfMacSchedSapProvider::SchedDlRlcBufferReqParameters> m_view;
    /// Queues whose view the inner scheduler must get again before its next decision
    std::vector<FlowKey> m_touched;

    friend class TraceSchedSapProvider;
    friend class TraceCschedSapProvider;
};

} // namespace ns3

#endif // CELLGYM_TRACE_SCHEDULER_H
