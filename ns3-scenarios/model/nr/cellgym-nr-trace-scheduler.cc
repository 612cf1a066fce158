// SPDX-License-Identifier: GPL-2.0-only
// 5G-LENA's OFDMA schedulers with each new downlink TB sized from a capacity trace
// (cellgym-nr-trace-scheduler.h, docs/traces.md).
#include "cellgym-nr-trace-scheduler.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/log.h"
#include "ns3/nr-module.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CellgymNrTraceScheduler");

namespace
{
/// The capacity the next schedulers replay (SetCapacityTrace).
std::shared_ptr<const CapacityTrace> g_nrTrace;
/// 5G-LENA's smallest downlink TB (NrMacSchedulerOfdma::CreateDlDci: 3 bytes of MAC and 2 of
/// RLC header, and at least 3 per logical channel after them).
constexpr uint64_t kMinTbBytes = 10;
/// The downlink MCS of a trace-driven cell: QPSK at code rate 308/1024 (table 1) or 602/1024
/// (table 2), 6.6 or 12.9 bits per RB-symbol, so that one RBG over the 4 or more symbols the
/// downlink has in a slot already holds the 24-bit CRC.
constexpr uint8_t kTraceDlMcs = 4;
/// Farthest UE of a trace-driven cell (the LTE cell's bound).
constexpr double kTraceMaxDistanceM = 100.0;
} // namespace

template <class Base>
CellgymNrTraceScheduler<Base>::CellgymNrTraceScheduler()
    : m_trace(g_nrTrace)
{
    NS_ABORT_MSG_IF(!m_trace, "CellgymNrTraceScheduler: call SetCapacityTrace first");
}

template <class Base>
void
CellgymNrTraceScheduler<Base>::SetCapacityTrace(std::shared_ptr<const CapacityTrace> trace)
{
    g_nrTrace = std::move(trace);
}

template <class Base>
void
CellgymNrTraceScheduler<Base>::DoSchedDlTriggerReq(
    const NrMacSchedSapProvider::SchedDlTriggerReqParameters& p)
{
    m_slot = p.m_snfSf.Normalize();
    Base::DoSchedDlTriggerReq(p);
}

template <class Base>
NrMacSchedulerNs3::BeamSymbolMap
CellgymNrTraceScheduler<Base>::AssignDLRBG(uint32_t symAvail,
                                           const NrMacSchedulerNs3::ActiveUeMap& activeDl) const
{
    auto symPerBeam = Base::AssignDLRBG(symAvail, activeDl);
    m_assigned = 0;
    for (const auto& beam : activeDl)
    {
        for (const auto& ue : beam.second)
        {
            m_assigned += ue.first->m_dlRBG.size();
        }
    }
    return symPerBeam;
}

template <class Base>
NrMacSchedulerNs3::BeamSymbolMap
CellgymNrTraceScheduler<Base>::AssignULRBG(uint32_t symAvail,
                                           const NrMacSchedulerNs3::ActiveUeMap& activeUl) const
{
    // The uplink DCIs span the symbols this returns (NrMacSchedulerNs3::DoScheduleUlData).
    return Base::AssignULRBG(std::max<uint32_t>(symAvail / 2, 1), activeUl);
}

template <class Base>
std::shared_ptr<DciInfoElementTdma>
CellgymNrTraceScheduler<Base>::CreateDlDci(NrMacSchedulerNs3::PointInFTPlane* spoint,
                                           const std::shared_ptr<NrMacSchedulerUeInfo>& ueInfo,
                                           uint32_t maxSym) const
{
    auto dci = Base::CreateDlDci(spoint, ueInfo, maxSym);
    if (!dci)
    {
        return dci;
    }
    // The UE's RBG-symbols (m_dlRBG holds an RBG once per symbol it is assigned on) against those
    // assigned to every UE in the slot; at most what the UE has queued (and at least the floor).
    const uint64_t total = std::max<uint64_t>(m_assigned, 1);
    const uint64_t used = std::min<uint64_t>(ueInfo->m_dlRBG.size(), total);
    const uint64_t share
        = std::min<uint64_t>(m_trace->BytesAt(m_slot) * used / total,
                             std::max<uint64_t>(ueInfo->GetTotalDlBuffer(), kMinTbBytes));
    // What the UE's DCI of the slot before was too small to carry joins this TB.
    uint64_t bytes = share;
    auto carried = m_carry.find(ueInfo->m_rnti);
    if (carried != m_carry.end())
    {
        bytes += carried->second.first + 1 == m_slot ? carried->second.second : 0;
        m_carry.erase(carried);
    }
    NS_LOG_DEBUG("slot " << m_slot << " UE " << ueInfo->m_rnti << " " << used << "/" << total
                         << " RBG-symbols: TB " << dci->m_tbSize << " -> " << bytes << " bytes");
    if (bytes < kMinTbBytes)
    {
        m_carry[ueInfo->m_rnti] = {m_slot, bytes};
        m_withheld(m_slot, ueInfo->m_rnti, static_cast<uint32_t>(share));
        ueInfo->m_dlTbSize = 0;
        return nullptr; // the caller resets the UE's metric and skips it
    }
    auto sized = std::make_shared<DciInfoElementTdma>(dci->m_rnti,
                                                      dci->m_format,
                                                      dci->m_symStart,
                                                      dci->m_numSym,
                                                      dci->m_mcs,
                                                      dci->m_rank,
                                                      dci->m_precMats,
                                                      static_cast<uint32_t>(bytes),
                                                      dci->m_ndi,
                                                      dci->m_rv,
                                                      dci->m_type,
                                                      dci->m_bwpIndex,
                                                      dci->m_tpc);
    sized->m_harqProcess = dci->m_harqProcess;
    sized->m_rbgBitmask = dci->m_rbgBitmask;
    return sized;
}

namespace
{
/// The registered type name of the trace scheduler over each 5G-LENA scheduler.
template <class Base>
const char* TraceSchedulerName();

template <>
const char*
TraceSchedulerName<NrMacSchedulerOfdmaPF>()
{
    return "ns3::CellgymNrTraceSchedulerOfdmaPF";
}

template <>
const char*
TraceSchedulerName<NrMacSchedulerOfdmaRR>()
{
    return "ns3::CellgymNrTraceSchedulerOfdmaRR";
}
} // namespace

template <class Base>
TypeId
CellgymNrTraceScheduler<Base>::GetTypeId()
{
    static TypeId tid
        = TypeId(TraceSchedulerName<Base>())
              .template SetParent<Base>()
              .template AddConstructor<CellgymNrTraceScheduler<Base>>()
              .AddTraceSource("WithheldTb",
                              "A downlink TB under 10 bytes was withheld (its bytes carry over)",
                              MakeTraceSourceAccessor(&CellgymNrTraceScheduler<Base>::m_withheld),
                              "ns3::CellgymNrTraceScheduler::WithheldTracedCallback");
    return tid;
}

template class CellgymNrTraceScheduler<NrMacSchedulerOfdmaPF>;
template class CellgymNrTraceScheduler<NrMacSchedulerOfdmaRR>;
NS_OBJECT_ENSURE_REGISTERED(CellgymNrTraceSchedulerOfdmaPF);
NS_OBJECT_ENSURE_REGISTERED(CellgymNrTraceSchedulerOfdmaRR);

std::shared_ptr<const CapacityTrace>
ConfigureNrTraceReplay(Ptr<NrHelper> nr, const RadioCellConfig& cfg)
{
    if (cfg.capacityTrace.empty())
    {
        return nullptr;
    }
    // Slots of 1000 / 2^mu us (mu <= 3: whole microseconds).
    auto trace = std::make_shared<const CapacityTrace>(
        CapacityTrace::Load(cfg.capacityTrace, 1000U >> cfg.numerology));
    CellgymNrTraceScheduler<NrMacSchedulerOfdmaPF>::SetCapacityTrace(trace);
    nr->SetSchedulerTypeId(cfg.scheduler == "rr" ? CellgymNrTraceSchedulerOfdmaRR::GetTypeId()
                                                 : CellgymNrTraceSchedulerOfdmaPF::GetTypeId());
    // The trace is the delivered capacity: no TB fails (downlink and uplink), none is
    // retransmitted, and the downlink MCS only ranks how many RBGs a UE's buffer needs.
    Config::SetDefault("ns3::NrSpectrumPhy::DataErrorModelEnabled", BooleanValue(false));
    nr->SetSchedulerAttribute("FixedMcsDl", BooleanValue(true));
    nr->SetSchedulerAttribute("StartingMcsDl", UintegerValue(kTraceDlMcs));
    return trace;
}

RadioCellConfig
NrTraceCellConfig(const RadioCellConfig& cfg)
{
    RadioCellConfig out = cfg;
    if (!cfg.capacityTrace.empty())
    {
        out.los = "los";
        for (double& d : out.distances)
        {
            d = std::min(d, kTraceMaxDistanceM);
        }
    }
    return out;
}

} // namespace ns3
