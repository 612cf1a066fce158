// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_NR_TRACE_SCHEDULER_H
#define CELLGYM_NR_TRACE_SCHEDULER_H

#include "cellgym-capacity-trace.h"
#include "cellgym-radio-cell.h"

#include "ns3/nr-mac-scheduler-ofdma-pf.h"
#include "ns3/nr-mac-scheduler-ofdma-rr.h"
#include "ns3/traced-callback.h"

#include <map>
#include <memory>

namespace ns3
{

class NrHelper;

/**
 * @brief A trace-driven NR downlink: 5G-LENA's own OFDMA scheduler (`Base`: PF or RR) decides
 * who gets which RBGs and symbols, and each new downlink DCI's transport block is then sized
 * from the capacity trace instead of the MCS.
 *
 * The TB of a UE holding `u` of the `U` RBG-symbols the base class assigned in slot `k` (to every
 * UE together) is `bytes[k] * u / U`, at most the UE's buffer (the RLC's report, headers
 * included): `CreateDlDci` resizes the DCI the base class builds, before `NrMacSchedulerNs3`
 * books its HARQ process and asks the RLC for that many bytes (`AssignBytesToDlLC` reads
 * `m_tbSize`). The base class gives a UE RBGs until the fixed MCS's TB holds its buffer, so a UE
 * with a short queue holds a few of the slot's RBG-symbols: its share is of those assigned, not of
 * the slot's `R x S`, so that a lone UE gets the whole trace whatever its queue (as on the fast
 * model), and a slot's bytes go to the UEs that have data. A TB
 * below 10 bytes (5G-LENA's own floor for a DCI: MAC and RLC headers) is withheld: no DCI, no
 * HARQ process, the scheduler's view of the RLC queue stays, and its bytes carry over to the UE's
 * TB in the next slot (dropped when the UE gets no DCI then), so that a trace of under 10 bytes
 * per slot (160 kbit/s at 0.5 ms) still gets through. `WithheldTb` names each withheld share
 * (the base-station tap's NR installer counts its units as used, the TB that carries it counts its
 * bytes). Slot `k` is the one the trigger schedules (`SfnSf::Normalize`: slot 0 starts at t = 0).
 *
 * The trace is the downlink's capacity in every slot, as in the fast model, so the uplink data
 * (the flows' ACKs) gets at most half of a slot's data symbols (`AssignULRBG`): 5G-LENA's OFDMA
 * uplink otherwise spreads a grant over all of them, and in one slot of about six the downlink
 * had no symbol and its trace bytes were lost (a backlogged flow got 83 % of the trace).
 *
 * The cell turns the PHY's data error model off (`NrSpectrumPhy::DataErrorModelEnabled`: the
 * trace is the delivered capacity, so nothing is retransmitted) and fixes the downlink MCS at
 * 4 (ConfigureNrTraceReplay): the base class gives a UE RBGs until the MCS's TB holds
 * its buffer, so at a low MCS a UE with more than a few hundred bytes queued gets the whole slot
 * and every UE's need counts alike (PF ranks them by their history only). Not MCS 0: its
 * smallest TBs fall under the 24-bit CRC, where 5G-LENA's TB size shrinks as RBGs are added, and
 * the base class then stops after one RBG.
 */
template <class Base>
class CellgymNrTraceScheduler : public Base
{
  public:
    static TypeId GetTypeId();
    CellgymNrTraceScheduler();

    /// @brief The capacity every scheduler built from now on replays (before InstallGnbDevice).
    static void SetCapacityTrace(std::shared_ptr<const CapacityTrace> trace);

    /// Signature of `WithheldTb`: the slot's absolute index, the UE, the share withheld (bytes).
    using WithheldTracedCallback = void (*)(uint64_t slot, uint16_t rnti, uint32_t bytes);

    /// Remember the slot being scheduled, then schedule it.
    void DoSchedDlTriggerReq(const NrMacSchedSapProvider::SchedDlTriggerReqParameters& p) override;

  protected:
    /// Assign the RBGs (the base class), then count the RBG-symbols assigned to all UEs.
    NrMacSchedulerNs3::BeamSymbolMap
    AssignDLRBG(uint32_t symAvail, const NrMacSchedulerNs3::ActiveUeMap& activeDl) const override;
    /// Assign the uplink RBGs on at most half of the symbols (the rest stays the downlink's).
    NrMacSchedulerNs3::BeamSymbolMap
    AssignULRBG(uint32_t symAvail, const NrMacSchedulerNs3::ActiveUeMap& activeUl) const override;
    /// The base class's DCI with the TB sized from the trace (nullptr: too small a share).
    std::shared_ptr<DciInfoElementTdma>
    CreateDlDci(NrMacSchedulerNs3::PointInFTPlane* spoint,
                const std::shared_ptr<NrMacSchedulerUeInfo>& ueInfo,
                uint32_t maxSym) const override;

  private:
    std::shared_ptr<const CapacityTrace> m_trace; //!< bytes per slot
    uint64_t m_slot{0};                           //!< absolute index of the slot scheduled
    mutable uint64_t m_assigned{0}; //!< RBG-symbols the base class assigned in it, all UEs
    /// Per UE: the bytes withheld in the slot named (they join its TB in the next slot).
    mutable std::map<uint16_t, std::pair<uint64_t, uint64_t>> m_carry;
    /// A TB under the floor was withheld (WithheldTracedCallback).
    TracedCallback<uint64_t, uint16_t, uint32_t> m_withheld;
};

/// The trace-driven OFDMA proportional-fair scheduler (`ns3::CellgymNrTraceSchedulerOfdmaPF`).
using CellgymNrTraceSchedulerOfdmaPF = CellgymNrTraceScheduler<NrMacSchedulerOfdmaPF>;
/// The trace-driven OFDMA round-robin scheduler (`ns3::CellgymNrTraceSchedulerOfdmaRR`).
using CellgymNrTraceSchedulerOfdmaRR = CellgymNrTraceScheduler<NrMacSchedulerOfdmaRR>;

/**
 * @brief Make `nr` replay `cfg.capacityTrace` (when set): read the file at the numerology's slot
 * (exits with status 2 naming --capacityTrace when it does not fit), select the trace variant of
 * `cfg.scheduler`, turn the data error model off and fix the downlink MCS. Call after the
 * helper's own scheduler settings and before installing devices.
 * @return the trace, or nullptr for the channel's own capacity
 */
std::shared_ptr<const CapacityTrace> ConfigureNrTraceReplay(Ptr<NrHelper> nr,
                                                            const RadioCellConfig& cfg);

/**
 * @brief The cell a trace replays on: `cfg` itself without a trace; with one, the UEs in line
 * of sight and no farther than 100 m (as on LTE), so that every UE reports a CQI above 0 on
 * every RBG (5G-LENA's OFDMA scheduler skips RBGs of CQI 0) whatever its configured distance.
 */
RadioCellConfig NrTraceCellConfig(const RadioCellConfig& cfg);

} // namespace ns3

#endif // CELLGYM_NR_TRACE_SCHEDULER_H
