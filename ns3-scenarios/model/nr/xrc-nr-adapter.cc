// SPDX-License-Identifier: GPL-2.0-only
#include "xrc-nr-adapter.h"

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

#include <algorithm>
#include <cmath>
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

void
OnDlScheduling(XrcEnbAgent* agent, NrSchedulingCallbackInfo info)
{
    // 5G-LENA traces new transmissions only (NrGnbMac::DoSchedConfigIndication, NDI = 1).
    agent->OnTransportBlock(info.m_rnti, info.m_mcs, info.m_tbSize, true, info.m_ndi != 0);
}
} // namespace

void
XrcNrAdapter::Install(Ptr<XrcEnbAgent> agent, Ptr<NetDevice> gnbDevice, Ptr<NetDevice> s1uDevice)
{
    Ptr<NrGnbNetDevice> gnb = DynamicCast<NrGnbNetDevice>(gnbDevice);
    NS_ABORT_MSG_IF(!gnb, "XrcNrAdapter::Install needs an NrGnbNetDevice");
    Ptr<XrcBwpManagerGnb> ccm = DynamicCast<XrcBwpManagerGnb>(gnb->GetBwpManager());
    NS_ABORT_MSG_IF(!ccm, "call XrcBwpManagerGnb::Replace before XrcNrAdapter::Install");
    Ptr<NrGnbPhy> phy = gnb->GetPhy(0);
    Ptr<NrMacSchedulerNs3> sched = DynamicCast<NrMacSchedulerNs3>(gnb->GetScheduler(0));
    NS_ABORT_MSG_IF(!sched, "XrcNrAdapter needs one of 5G-LENA's NrMacSchedulerNs3 schedulers");

    auto table = std::make_shared<NrRbTable>();
    table->amc = sched->GetDlAmc();
    table->units = phy->GetRbNum() * kDataSymbols;
    table->maxMcs = static_cast<int>(table->amc->GetMaxMcs());
    table->bytes.resize(table->maxMcs + 1);

    XrcRadio radio;
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

    const bool ok = gnb->GetMac(0)->TraceConnectWithoutContext(
        "DlScheduling", MakeBoundCallback(&OnDlScheduling, PeekPointer(agent)));
    NS_ABORT_MSG_IF(!ok, "cannot connect to NrGnbMac::DlScheduling");
    XrcEnbAgent* a = PeekPointer(agent);
    ccm->Watch().report = [a](uint16_t rnti, uint8_t lcid, uint32_t q, uint16_t hol)
    {
        a->OnBufferStatus(rnti, lcid, q, hol);
    };
    ccm->Watch().drain = [a](uint16_t rnti, uint8_t lcid)
    {
        a->OnBufferDrained(rnti, lcid);
    };
    agent->InstallRadio(std::move(radio), gnbDevice, s1uDevice);
}

uint32_t
XrcNrAdapter::AddUe(Ptr<XrcEnbAgent> agent, Ptr<NetDevice> ueDevice)
{
    Ptr<NrUeNetDevice> ue = DynamicCast<NrUeNetDevice>(ueDevice);
    NS_ABORT_MSG_IF(!ue, "XrcNrAdapter::AddUe needs an NrUeNetDevice");
    return agent->AddUe(
        [ue]()
        {
            return ue->GetRrc()->GetRnti();
        });
}

} // namespace ns3
