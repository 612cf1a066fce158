// SPDX-License-Identifier: GPL-2.0-only
// The base-station tap on an LTE eNB (cellgym-bs-tap-lte.h). The tap's own logic is in
// cellgym-bs-tap.cc; NR's installer is nr/cellgym-bs-tap-nr.cc.
#include "cellgym-bs-tap-lte.h"

#include "cellgym-capacity-trace.h"
#include "xrc-component-carrier-manager.h"

#include "ns3/lte-amc.h"
#include "ns3/lte-enb-net-device.h"
#include "ns3/lte-enb-phy.h"
#include "ns3/lte-rlc-sdu-status-tag.h"
#include "ns3/lte-ue-net-device.h"
#include "ns3/lte-ue-rrc.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ns3
{

namespace
{
constexpr int kMaxMcs = 28;

/// The TB-size table of one bandwidth, for the agent's RB arithmetic.
struct LteRbTable
{
    uint16_t numRbs{50};                         //!< downlink RBs
    std::vector<std::vector<uint32_t>> tbsBytes; //!< TB bytes by [mcs][nprb]

    /// RBs a TB of `bytes` at `mcs` occupies. Several RB counts can share one TB size (the
    /// table is flat in places): take the largest count with exactly this size, else the
    /// smallest count whose size holds it.
    uint32_t RbsOf(int mcs, uint32_t bytes) const
    {
        const auto& row = tbsBytes[std::clamp(mcs, 0, kMaxMcs)];
        auto upper = std::upper_bound(row.begin() + 1, row.end(), bytes);
        if (upper != row.begin() + 1 && *(upper - 1) == bytes)
        {
            return static_cast<uint32_t>(upper - 1 - row.begin());
        }
        auto it = std::lower_bound(row.begin() + 1, row.end(), bytes);
        return static_cast<uint32_t>(std::min<size_t>(it - row.begin(), numRbs));
    }

    /// Bytes `rbs` (fractional) RBs carry at `mcs`, interpolating between whole RBs.
    double BytesOf(int mcs, double rbs) const
    {
        if (mcs < 0 || rbs <= 0)
        {
            return 0;
        }
        const auto& row = tbsBytes[std::min(mcs, kMaxMcs)];
        const auto whole = static_cast<uint32_t>(std::min<double>(rbs, numRbs));
        const double frac = std::min<double>(rbs, numRbs) - whole;
        const double next = whole < numRbs ? row[whole + 1] : row[whole];
        return row[whole] + frac * (next - row[whole]);
    }
};

void
OnLtePhyTransmission(CellGymBsTap* tap, PhyTransmissionStatParameters p)
{
    // The eNB PHY does not know IMSIs (the trace carries 0): the tap finds the UE by RNTI.
    // Both layers of a MIMO transmission occupy the same RBs: count them once.
    tap->OnTransportBlock(p.m_rnti, p.m_mcs, p.m_size, p.m_layer == 0, p.m_ndi != 0);
}

/// The radio of an eNB of `numRbs` RBs: RBs from the TBS table (or a trace's bytes).
CellGymBsRadio
LteRadio(uint16_t numRbs, std::shared_ptr<const CapacityTrace> trace)
{
    auto table = std::make_shared<LteRbTable>();
    table->numRbs = numRbs;
    CellGymBsRadio radio;
    radio.tti = MilliSeconds(1);
    radio.ttiS = 1e-3;
    // ns-3's schedulers allocate whole resource-block groups (3GPP 36.213 Table 7.1.6.1-1) and
    // drop a trailing partial group: at 50 RBs, 16 groups of 3 = 48 RBs carry data.
    const uint16_t rbgSize = numRbs <= 10 ? 1 : numRbs <= 26 ? 2 : numRbs <= 63 ? 3 : 4;
    radio.usableRbs = static_cast<uint16_t>(numRbs / rbgSize * rbgSize);
    Ptr<LteAmc> amc = CreateObject<LteAmc>();
    table->tbsBytes.assign(kMaxMcs + 1, std::vector<uint32_t>(numRbs + 1, 0));
    for (int mcs = 0; mcs <= kMaxMcs; ++mcs)
    {
        for (int nprb = 1; nprb <= numRbs; ++nprb)
        {
            table->tbsBytes[mcs][nprb] = amc->GetDlTbSizeFromMcs(mcs, nprb) / 8;
        }
    }
    radio.rbsOf = [table](int mcs, uint32_t bytes)
    {
        return table->RbsOf(mcs, bytes);
    };
    radio.bytesOf = [table](int mcs, double rbs)
    {
        return table->BytesOf(mcs, rbs);
    };
    if (trace)
    {
        // The TB of TTI k (sent at k ms) holds its RBs' share of the trace's bytes for k; the
        // tap closes TTI k at k + 0.5 ms: both read the trace at the current time.
        const double usable = radio.usableRbs;
        radio.rbsOf = [trace, usable](int, uint32_t bytes)
        {
            const double cap = trace->BytesAt(Simulator::Now());
            return cap > 0
                       ? static_cast<uint32_t>(std::min(usable, std::round(bytes * usable / cap)))
                       : 0U;
        };
        radio.bytesOf = [trace, usable](int, double rbs)
        {
            return rbs <= 0 ? 0.0
                            : trace->BytesAt(Simulator::Now()) * std::min(rbs, usable) / usable;
        };
    }
    // A PDU queued despite a TxDrop (older than the PDCP discard timer) carries an
    // LteRlcSduStatusTag; a PDU dropped because the buffer was full does not.
    radio.queuedByRlc = [](Ptr<const Packet> p)
    {
        LteRlcSduStatusTag status;
        return p->PeekPacketTag(status);
    };
    radio.rlcPath = "LteEnbRrc/UeMap/*/DataRadioBearerMap/*/LteRlc";
    return radio;
}

/// The RLC watch of the eNB's carrier manager feeds the tap.
void
WatchRlc(CellGymBsTap* tap, Ptr<XrcComponentCarrierManager> ccm)
{
    ccm->SetReportCallback(
        [tap](uint16_t rnti, uint8_t lcid, uint32_t q, uint16_t hol)
        {
            tap->OnBufferStatus(rnti, lcid, q, hol);
        });
    ccm->SetDrainCallback(
        [tap](uint16_t rnti, uint8_t lcid)
        {
            tap->OnBufferDrained(rnti, lcid);
        });
    ccm->SetHeadCallback(
        [tap](uint16_t rnti, uint8_t lcid, std::optional<Time> since)
        {
            tap->OnHeadOfLine(rnti, lcid, since);
        });
    if (tap->WantsSojourns())
    {
        ccm->SetSojournCallback(
            [tap](uint16_t rnti, uint8_t lcid, Time sojourn)
            {
                tap->OnSduSojourn(rnti, lcid, sojourn);
            });
    }
}
} // namespace

void
CellGymLteBsTap::ConfigureLteHelper(Ptr<LteHelper> lteHelper)
{
    lteHelper->SetEnbComponentCarrierManagerType("ns3::XrcComponentCarrierManager");
}

void
CellGymLteBsTap::Install(Ptr<CellGymBsTap> tap,
                         Ptr<NetDevice> enbDevice,
                         Ptr<NetDevice> s1uDevice,
                         uint16_t numRbs,
                         std::shared_ptr<const CapacityTrace> trace)
{
    CellGymBsRadio radio = LteRadio(numRbs, trace);
    Ptr<LteEnbNetDevice> enb = DynamicCast<LteEnbNetDevice>(enbDevice);
    NS_ABORT_MSG_IF(!enb, "CellGymLteBsTap::Install needs an LteEnbNetDevice");
    for (auto& [ccId, cc] : enb->GetCcMap())
    {
        const bool ok = DynamicCast<ComponentCarrierEnb>(cc)->GetPhy()->TraceConnectWithoutContext(
            "DlPhyTransmission", MakeBoundCallback(&OnLtePhyTransmission, PeekPointer(tap)));
        NS_ABORT_MSG_IF(!ok, "cannot connect to LteEnbPhy::DlPhyTransmission");
    }
    Ptr<XrcComponentCarrierManager> ccm
        = DynamicCast<XrcComponentCarrierManager>(enb->GetComponentCarrierManager());
    NS_ABORT_MSG_IF(!ccm, "call CellGymLteBsTap::ConfigureLteHelper before installing the eNB");
    WatchRlc(PeekPointer(tap), ccm);
    tap->InstallRadio(std::move(radio), enbDevice, s1uDevice);
}

uint32_t
CellGymLteBsTap::AddUe(Ptr<CellGymBsTap> tap, Ptr<NetDevice> ueDevice)
{
    Ptr<LteUeNetDevice> ue = DynamicCast<LteUeNetDevice>(ueDevice);
    NS_ABORT_MSG_IF(!ue, "CellGymLteBsTap::AddUe needs an LteUeNetDevice");
    return tap->AddUe(
        [ue]()
        {
            return ue->GetRrc()->GetRnti();
        });
}

} // namespace ns3
