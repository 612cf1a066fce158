// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-bs-tap-nr.h"

#include "cellgym-capacity-trace.h"
#include "xrc-bwp-manager-gnb.h"

#include "ns3/nr-amc.h"
#include "ns3/nr-gnb-mac.h"
#include "ns3/nr-gnb-net-device.h"
#include "ns3/nr-gnb-phy.h"
#include "ns3/nr-mac-scheduler-ns3.h"
#include "ns3/nr-phy-mac-common.h"
#include "ns3/nr-rlc-sdu-status-tag.h"
#include "ns3/nr-ue-net-device.h"
#include "ns3/nr-ue-rrc.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <vector>

namespace ns3
{

namespace
{
/// Data symbols of a slot: 14 less one downlink and one uplink control symbol (5G-LENA's
/// defaults, "F" slots).
constexpr uint32_t kDataSymbols = 12;

/// TB sizes of the scheduler's AMC by [mcs][RB-symbols], filled on first use of an MCS.
struct NrRbTable
{
    Ptr<const NrAmc> amc;                     //!< the scheduler's downlink AMC
    uint32_t units{0};                        //!< RB-symbols of a slot
    int maxMcs{28};                           //!< highest MCS of the table
    std::vector<std::vector<uint32_t>> bytes; //!< [mcs][units] -> TB bytes (empty: not yet)

    const std::vector<uint32_t>& Row(int mcs)
    {
        auto& row = bytes[std::clamp(mcs, 0, maxMcs)];
        if (row.empty())
        {
            row.assign(units + 1, 0);
            for (uint32_t n = 1; n <= units; ++n)
            {
                row[n]
                    = amc->CalculateTbSize(static_cast<uint8_t>(std::clamp(mcs, 0, maxMcs)), 1, n);
            }
        }
        return row;
    }

    /// RB-symbols a TB of `tb` bytes occupies: the fewest whose TB size holds it.
    uint32_t UnitsOf(int mcs, uint32_t tb)
    {
        const auto& row = Row(mcs);
        auto it = std::lower_bound(row.begin() + 1, row.end(), tb);
        return static_cast<uint32_t>(std::min<size_t>(it - row.begin(), units));
    }

    /// Bytes `n` (fractional) RB-symbols carry at `mcs`.
    double BytesOf(int mcs, double n)
    {
        if (mcs < 0 || n <= 0)
        {
            return 0;
        }
        const auto& row = Row(mcs);
        const double clamped = std::min<double>(n, units);
        const auto whole = static_cast<uint32_t>(clamped);
        const double next = whole < units ? row[whole + 1] : row[whole];
        return row[whole] + (clamped - whole) * (next - row[whole]);
    }
};

/**
 * Data symbols of each slot, by direction. 5G-LENA's MAC traces a slot's downlink TBs in that
 * slot, and uplink TBs when it schedules them, a few slots ahead (K2); both carry the slot's
 * frame, subframe and slot numbers. The tap closes one TTI per slot, mid-slot.
 */
struct NrSlotSymbols
{
    uint32_t mu{0};                        //!< numerology
    int64_t current{-1};                   //!< the slot last closed (-1: none yet)
    uint32_t dlSymbols{0};                 //!< the most symbols a downlink TB of it spans
    std::map<int64_t, uint32_t> ulSymbols; //!< slot -> the most symbols an uplink TB spans

    /// Slots in 2^16 frames, where the 16-bit frame number of 5G-LENA's scheduling traces
    /// (`NrSchedulingCallbackInfo`) wraps; `SfnSf`'s own frame number does not wrap.
    int64_t Wrap() const
    {
        return (int64_t{UINT16_MAX} + 1) * 10 << mu;
    }

    int64_t SlotOf(const NrSchedulingCallbackInfo& info) const
    {
        return ((int64_t{info.m_frameNum} * 10 + info.m_subframeNum) << mu) + info.m_slotNum;
    }

    int64_t SlotOf(const SfnSf& sfn) const
    {
        return (((int64_t{sfn.GetFrame()} * 10 + sfn.GetSubframe()) << mu) + sfn.GetSlot())
               % Wrap();
    }

    /// The downlink's RB-symbols of the slot that closes now, then start the next slot.
    uint32_t TakeUnits(uint32_t rbs)
    {
        uint32_t dl = kDataSymbols;
        if (dlSymbols > 0)
        {
            // OFDMA: the slot's downlink TBs share their symbols; the uplink has the rest.
            dl = std::min(dlSymbols, kDataSymbols);
        }
        else if (current >= 0)
        {
            // No downlink TB: the slot after the last one, less what the uplink took of it.
            current = (current + 1) % Wrap();
            auto it = ulSymbols.find(current);
            dl = kDataSymbols - std::min(it == ulSymbols.end() ? 0 : it->second, kDataSymbols);
        }
        ulSymbols.erase(current);
        while (ulSymbols.size() > 64) // slots passed while none was closed
        {
            ulSymbols.erase(ulSymbols.begin());
        }
        dlSymbols = 0;
        return rbs * dl;
    }
};

/**
 * Between 5G-LENA's scheduler and its gNB MAC: forwards everything, and hands the tap each
 * downlink HARQ retransmission the scheduler allocates. `NrGnbMac`'s `DlScheduling` trace fires
 * for new data only, so without this a slot that carries a retransmission looked idle to XRC's
 * agent and was counted as capacity the flow did not get.
 */
class XrcNrSchedSapProxy : public NrMacSchedSapUser
{
  public:
    XrcNrSchedSapProxy(NrMacSchedSapUser* mac,
                       CellGymBsTap* tap,
                       std::shared_ptr<NrSlotSymbols> slot)
        : m_mac(mac)
        , m_tap(tap)
        , m_slot(std::move(slot))
    {
    }

    void SchedConfigInd(const SchedConfigIndParameters& params) override
    {
        for (const auto& alloc : params.m_slotAllocInfo.m_varTtiAllocInfo)
        {
            const auto& dci = alloc.m_dci;
            if (dci && dci->m_type == DciInfoElementTdma::DATA
                && dci->m_format == DciInfoElementTdma::DL && dci->m_ndi == 0 && dci->m_tbSize > 0)
            {
                m_slot->current = m_slot->SlotOf(params.m_sfnSf);
                m_slot->dlSymbols = std::max<uint32_t>(m_slot->dlSymbols, dci->m_numSym);
                m_tap->OnTransportBlock(dci->m_rnti, dci->m_mcs, dci->m_tbSize, true, false);
            }
        }
        m_mac->SchedConfigInd(params);
    }

    Ptr<const SpectrumModel> GetSpectrumModel() const override
    {
        return m_mac->GetSpectrumModel();
    }

    uint32_t GetNumRbPerRbg() const override
    {
        return m_mac->GetNumRbPerRbg();
    }

    uint8_t GetNumHarqProcess() const override
    {
        return m_mac->GetNumHarqProcess();
    }

    uint16_t GetBwpId() const override
    {
        return m_mac->GetBwpId();
    }

    uint16_t GetCellId() const override
    {
        return m_mac->GetCellId();
    }

    uint32_t GetSymbolsPerSlot() const override
    {
        return m_mac->GetSymbolsPerSlot();
    }

    Time GetSlotPeriod() const override
    {
        return m_mac->GetSlotPeriod();
    }

    void BuildRarList(SlotAllocInfo& slotAllocInfo) override
    {
        m_mac->BuildRarList(slotAllocInfo);
    }

  private:
    NrMacSchedSapUser* m_mac;              //!< the MAC's own end
    CellGymBsTap* m_tap;                   //!< fed the retransmissions
    std::shared_ptr<NrSlotSymbols> m_slot; //!< the slots' symbols, shared with the traces
};

void
OnUlScheduling(std::shared_ptr<NrSlotSymbols> slot, NrSchedulingCallbackInfo info)
{
    auto& sym = slot->ulSymbols[slot->SlotOf(info)];
    sym = std::max<uint32_t>(sym, info.m_numSym);
}

void
OnDlScheduling(CellGymBsTap* tap,
               std::shared_ptr<NrSlotSymbols> slot,
               NrSchedulingCallbackInfo info)
{
    slot->current = slot->SlotOf(info);
    slot->dlSymbols = std::max<uint32_t>(slot->dlSymbols, info.m_numSym);
    // 5G-LENA traces new transmissions only (NrGnbMac::DoSchedConfigIndication, NDI = 1).
    tap->OnTransportBlock(info.m_rnti, info.m_mcs, info.m_tbSize, true, info.m_ndi != 0);
}

/// Trace replay: the MAC traces a TB when it schedules it, a few slots ahead; the tap gets it at
/// the start of the slot it is sent in, whose trace bytes sized it.
void
OnDlSchedulingTrace(CellGymBsTap* tap, Time slot, uint32_t mu, NrSchedulingCallbackInfo info)
{
    const int64_t wrap = (int64_t{UINT16_MAX} + 1) * 10 << mu; // the trace's 16-bit frames
    const int64_t now = Simulator::Now().GetTimeStep() / slot.GetTimeStep();
    const int64_t sent
        = ((int64_t{info.m_frameNum} * 10 + info.m_subframeNum) << mu) + info.m_slotNum;
    const int64_t ahead = ((sent - now) % wrap + wrap) % wrap;
    Simulator::Schedule(slot * (now + ahead) - Simulator::Now(),
                        &CellGymBsTap::OnTransportBlock,
                        tap,
                        info.m_rnti,
                        static_cast<int>(info.m_mcs),
                        info.m_tbSize,
                        true,
                        info.m_ndi != 0);
}

/// Trace replay: a TB the scheduler withheld (under 10 bytes) occupies its units in its slot and
/// carries nothing; its bytes count in the UE's next TB (CellgymNrTraceScheduler).
void
OnWithheldTrace(CellGymBsTap* tap, Time slot, uint64_t index, uint16_t rnti, uint32_t bytes)
{
    Simulator::Schedule(slot * static_cast<int64_t>(index) - Simulator::Now(),
                        &CellGymBsTap::OnTransportBlock,
                        tap,
                        rnti,
                        -1,
                        bytes,
                        true,
                        false);
}

/// The radio of a gNB: a slot's resource units are its RB-symbols, valued with the scheduler's
/// AMC (or a trace's bytes).
CellGymBsRadio
NrRadio(Ptr<NrGnbPhy> phy, Ptr<NrMacSchedulerNs3> sched, std::shared_ptr<const CapacityTrace> trace)
{
    auto table = std::make_shared<NrRbTable>();
    table->amc = sched->GetDlAmc();
    table->units = phy->GetRbNum() * kDataSymbols;
    table->maxMcs = static_cast<int>(table->amc->GetMaxMcs());
    table->bytes.resize(table->maxMcs + 1);

    CellGymBsRadio radio;
    radio.tti = phy->GetSlotPeriod();
    radio.ttiS = 1e-3 / std::pow(2.0, phy->GetNumerology());
    radio.usableRbs = table->units;
    radio.rbsOf = [table](int mcs, uint32_t bytes)
    {
        return table->UnitsOf(mcs, bytes);
    };
    radio.bytesOf = [table](int mcs, double n)
    {
        return table->BytesOf(mcs, n);
    };
    radio.queuedByRlc = [](Ptr<const Packet> p)
    {
        NrRlcSduStatusTag status;
        return p->PeekPacketTag(status);
    };
    radio.rlcPath = "NrGnbRrc/UeMap/*/DataRadioBearerMap/*/NrRlc";
    if (trace)
    {
        // CellgymNrTraceScheduler: a TB holds its share of the slot's trace bytes, idle units
        // carry theirs (docs/traces.md). The tap closes slot k mid-slot and gets k's TBs at its
        // start: both read the trace at the current time.
        const double usable = radio.usableRbs;
        radio.usableRbsNow = nullptr;
        radio.rbsOf = [trace, usable](int, uint32_t bytes)
        {
            const double cap = trace->BytesAt(Simulator::Now());
            return cap > 0
                       ? static_cast<uint32_t>(std::min(usable, std::round(bytes * usable / cap)))
                       : 0U;
        };
        radio.bytesOf = [trace, usable](int, double n)
        {
            return n <= 0 ? 0.0 : trace->BytesAt(Simulator::Now()) * std::min(n, usable) / usable;
        };
    }
    return radio;
}

/// Trace replay: each TB in the slot it is sent in, and the TBs the scheduler withheld.
void
ConnectTraceScheduling(CellGymBsTap* tap,
                       Ptr<NrGnbNetDevice> gnb,
                       Ptr<NrMacSchedulerNs3> sched,
                       Time slot,
                       uint32_t mu)
{
    const bool ok = gnb->GetMac(0)->TraceConnectWithoutContext(
        "DlScheduling", MakeBoundCallback(&OnDlSchedulingTrace, tap, slot, mu));
    NS_ABORT_MSG_IF(!ok, "cannot connect to NrGnbMac::DlScheduling");
    const bool okWithheld = sched->TraceConnectWithoutContext(
        "WithheldTb", MakeBoundCallback(&OnWithheldTrace, tap, slot));
    NS_ABORT_MSG_IF(!okWithheld, "a trace needs CellgymNrTraceScheduler (WithheldTb)");
}

/// The channel's capacity: new TBs and both directions' symbols from the MAC's traces, HARQ
/// retransmissions from a proxy; the slot's downlink units from the symbols.
void
ConnectScheduling(CellGymBsTap* tap,
                  Ptr<NrGnbNetDevice> gnb,
                  Ptr<NrMacSchedulerNs3> sched,
                  uint32_t rbs,
                  uint32_t mu,
                  CellGymBsRadio& radio)
{
    // Uplink data (the flows' ACKs) takes symbols, or whole slots, of the same "F" slots:
    // 5G-LENA's MAC traces both directions' allocations of a slot together.
    auto slot = std::make_shared<NrSlotSymbols>();
    slot->mu = mu;
    const bool ok = gnb->GetMac(0)->TraceConnectWithoutContext(
        "DlScheduling", MakeBoundCallback(&OnDlScheduling, tap, slot));
    NS_ABORT_MSG_IF(!ok, "cannot connect to NrGnbMac::DlScheduling");
    const bool okUl = gnb->GetMac(0)->TraceConnectWithoutContext(
        "UlScheduling", MakeBoundCallback(&OnUlScheduling, slot));
    NS_ABORT_MSG_IF(!okUl, "cannot connect to NrGnbMac::UlScheduling");
    // HARQ retransmissions, which DlScheduling does not trace: the proxy sits between the
    // scheduler and the MAC for the tap's lifetime (the radio's callbacks hold it).
    auto proxy
        = std::make_shared<XrcNrSchedSapProxy>(gnb->GetMac(0)->GetNrMacSchedSapUser(), tap, slot);
    sched->SetMacSchedSapUser(proxy.get());
    radio.usableRbsNow = [slot, rbs, proxy]()
    {
        return slot->TakeUnits(rbs);
    };
}

/// The RLC watch of the gNB's bandwidth-part manager feeds the tap.
void
WatchRlc(CellGymBsTap* tap, Ptr<XrcBwpManagerGnb> ccm)
{
    ccm->Watch().report = [tap](uint16_t rnti, uint8_t lcid, uint32_t q, uint16_t hol)
    {
        tap->OnBufferStatus(rnti, lcid, q, hol);
    };
    ccm->Watch().drain = [tap](uint16_t rnti, uint8_t lcid)
    {
        tap->OnBufferDrained(rnti, lcid);
    };
    ccm->Watch().head = [tap](uint16_t rnti, uint8_t lcid, std::optional<Time> since)
    {
        tap->OnHeadOfLine(rnti, lcid, since);
    };
    if (tap->WantsSojourns())
    {
        ccm->Watch().sojourn = [tap](uint16_t rnti, uint8_t lcid, Time sojourn)
        {
            tap->OnSduSojourn(rnti, lcid, sojourn);
        };
    }
}
} // namespace

void
CellGymNrBsTap::Install(Ptr<CellGymBsTap> tap,
                        Ptr<NetDevice> gnbDevice,
                        Ptr<NetDevice> s1uDevice,
                        std::shared_ptr<const CapacityTrace> trace)
{
    Ptr<NrGnbNetDevice> gnb = DynamicCast<NrGnbNetDevice>(gnbDevice);
    NS_ABORT_MSG_IF(!gnb, "CellGymNrBsTap::Install needs an NrGnbNetDevice");
    Ptr<XrcBwpManagerGnb> ccm = DynamicCast<XrcBwpManagerGnb>(gnb->GetBwpManager());
    NS_ABORT_MSG_IF(!ccm, "call XrcBwpManagerGnb::Replace before CellGymNrBsTap::Install");
    Ptr<NrGnbPhy> phy = gnb->GetPhy(0);
    Ptr<NrMacSchedulerNs3> sched = DynamicCast<NrMacSchedulerNs3>(gnb->GetScheduler(0));
    NS_ABORT_MSG_IF(!sched, "CellGymNrBsTap needs one of 5G-LENA's NrMacSchedulerNs3 schedulers");

    CellGymBsRadio radio = NrRadio(phy, sched, trace);
    CellGymBsTap* t = PeekPointer(tap);
    if (trace)
    {
        ConnectTraceScheduling(t, gnb, sched, radio.tti, phy->GetNumerology());
    }
    else
    {
        ConnectScheduling(t, gnb, sched, phy->GetRbNum(), phy->GetNumerology(), radio);
    }
    WatchRlc(t, ccm);
    tap->InstallRadio(std::move(radio), gnbDevice, s1uDevice);
}

uint32_t
CellGymNrBsTap::AddUe(Ptr<CellGymBsTap> tap, Ptr<NetDevice> ueDevice)
{
    Ptr<NrUeNetDevice> ue = DynamicCast<NrUeNetDevice>(ueDevice);
    NS_ABORT_MSG_IF(!ue, "CellGymNrBsTap::AddUe needs an NrUeNetDevice");
    return tap->AddUe(
        [ue]()
        {
            return ue->GetRrc()->GetRnti();
        });
}

} // namespace ns3
