// SPDX-License-Identifier: GPL-2.0-only
// The parts of a cell that do not depend on its type (placement, the base-station tap's and XRC's
// agent's creation), and the LTE cell. The NR cell is nr/cellgym-nr-cell.cc.
#include "cellgym-radio-cell.h"

#include "cellgym-bs-tap-lte.h"
#include "cellgym-capacity-trace.h"
#include "cellgym-trace-scheduler.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/lte-module.h"
#include "ns3/mobility-module.h"
#include "ns3/point-to-point-module.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

namespace
{
constexpr double kUeHeightM = 1.5;
constexpr double kEnbHeightM = 30.0;
/// Farthest UE of a trace-driven LTE cell (Okumura-Hata: CQI 15 out to 120 m).
constexpr double kTraceMaxDistanceM = 100.0;
} // namespace

void
PlaceNodes(RadioCell& cell, const RadioCellConfig& cfg, double bsHeightM)
{
    MobilityHelper mob;
    mob.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mob.Install(cell.bsNodes);
    mob.Install(cell.ueNodes);
    cell.bsNodes.Get(0)->GetObject<MobilityModel>()->SetPosition(Vector(0, 0, bsHeightM));
    cell.angles.assign(cfg.numUes, 0.0);
    for (uint32_t u = 0; u < cfg.numUes; ++u)
    {
        cell.angles[u] = 2 * M_PI * u / cfg.numUes;
        auto m = cell.ueNodes.Get(u)->GetObject<MobilityModel>();
        m->SetPosition(Vector(cfg.distances[u] * std::cos(cell.angles[u]),
                              cfg.distances[u] * std::sin(cell.angles[u]),
                              kUeHeightM));
        cell.ueMobility.push_back(m);
    }
}

Ptr<NetDevice>
CreateTap(RadioCell& cell, const RadioCellConfig& cfg, uint32_t windowTtis)
{
    Ptr<Node> bsNode = cell.bsNodes.Get(0);
    Ptr<NetDevice> s1u;
    for (uint32_t i = 0; i < bsNode->GetNDevices(); ++i)
    {
        if (DynamicCast<PointToPointNetDevice>(bsNode->GetDevice(i)))
        {
            s1u = bsNode->GetDevice(i); // the first point-to-point device is the S1-U link
            break;
        }
    }
    NS_ABORT_MSG_IF(!s1u, "no S1-U point-to-point device on the base station");
    cell.tap = CreateObject<CellGymBsTap>();
    cell.tap->SetActiveTimeoutMs(cfg.activeTimeoutMs);
    cell.agent = CreateObject<XrcEnbAgent>();
    cell.agent->SetWindowTtis(windowTtis);
    cell.agent->SetMaxRlcBytes(cfg.rlcBufferPkts * 1500);
    cell.agent->Attach(cell.tap);
    return s1u;
}

RadioCell
BuildLteCell(const RadioCellConfig& cfg)
{
    Config::SetDefault("ns3::LteEnbRrc::EpsBearerToRlcMapping",
                       EnumValue(LteEnbRrc::RLC_UM_ALWAYS));
    Config::SetDefault("ns3::LteRlcUm::MaxTxBufferSize", UintegerValue(cfg.rlcBufferPkts * 1500));
    Config::SetDefault("ns3::LteEnbRrc::SrsPeriodicity", UintegerValue(cfg.numUes > 20 ? 80 : 20));
    Config::SetDefault("ns3::LteUePhy::TxPower", DoubleValue(23.0));
    Config::SetDefault("ns3::LteEnbPhy::TxPower", DoubleValue(30.0));

    Ptr<LteHelper> lte = CreateObject<LteHelper>();
    Ptr<PointToPointEpcHelper> epc = CreateObject<PointToPointEpcHelper>();
    lte->SetEpcHelper(epc);
    // A capacity trace: a proxy around PF sizes each transport block from the trace, and the
    // PHY's data error model is off (the trace is the delivered capacity; docs/traces.md).
    std::shared_ptr<const CapacityTrace> trace;
    if (!cfg.capacityTrace.empty())
    {
        trace = std::make_shared<const CapacityTrace>(CapacityTrace::Load(cfg.capacityTrace, 1000));
        CellgymTraceFfMacScheduler::SetCapacityTrace(trace);
        Config::SetDefault("ns3::LteSpectrumPhy::DataErrorModelEnabled", BooleanValue(false));
        lte->SetSchedulerType("ns3::CellgymTraceFfMacScheduler");
        lte->SetSchedulerAttribute("InnerType", StringValue("ns3::PfFfMacScheduler"));
    }
    else
    {
        lte->SetSchedulerType("ns3::PfFfMacScheduler");
    }
    lte->SetAttribute("PathlossModel", StringValue("ns3::OkumuraHataPropagationLossModel"));
    lte->SetEnbDeviceAttribute("DlBandwidth", UintegerValue(cfg.rbs));
    lte->SetEnbDeviceAttribute("UlBandwidth", UintegerValue(cfg.rbs));
    CellGymLteBsTap::ConfigureLteHelper(lte);

    RadioCell cell;
    cell.keepAlive = {lte, epc};
    cell.pgw = epc->GetPgwNode();
    cell.bsNodes.Create(1);
    cell.ueNodes.Create(cfg.numUes);
    // On a trace the UEs stay in coverage whatever their distance (docs/traces.md): no farther
    // than kTraceMaxDistanceM, where every UE reports CQI 15 (so PF ranks them by history only,
    // as the fast model does). The trace, not the channel, sizes the blocks.
    RadioCellConfig placed = cfg;
    if (trace)
    {
        for (double& d : placed.distances)
        {
            d = std::min(d, kTraceMaxDistanceM);
        }
    }
    PlaceNodes(cell, placed, kEnbHeightM);

    cell.bsDevs = lte->InstallEnbDevice(cell.bsNodes);
    cell.ueDevs = lte->InstallUeDevice(cell.ueNodes);
    cell.stream = 1;
    cell.stream += lte->AssignStreams(cell.bsDevs, cell.stream);
    cell.stream += lte->AssignStreams(cell.ueDevs, cell.stream);

    InternetStackHelper internet;
    internet.Install(cell.ueNodes);
    cell.ueIfaces = epc->AssignUeIpv4Address(cell.ueDevs);
    Ipv4StaticRoutingHelper routing;
    for (uint32_t u = 0; u < cfg.numUes; ++u)
    {
        routing.GetStaticRouting(cell.ueNodes.Get(u)->GetObject<Ipv4>())
            ->SetDefaultRoute(epc->GetUeDefaultGatewayAddress(), 1);
    }
    lte->Attach(cell.ueDevs, cell.bsDevs.Get(0));

    cell.installTap = [cfg, trace](RadioCell& c)
    {
        Ptr<NetDevice> s1u = CreateTap(c, cfg, cfg.xrcWindowTtis);
        CellGymLteBsTap::Install(
            c.tap, c.bsDevs.Get(0), s1u, static_cast<uint16_t>(cfg.rbs), trace);
        for (uint32_t u = 0; u < cfg.numUes; ++u)
        {
            CellGymLteBsTap::AddUe(c.tap, c.ueDevs.Get(u));
        }
    };
    return cell;
}

#ifndef CELLGYM_HAVE_NR
RadioCell
BuildNrCell(const RadioCellConfig& cfg)
{
    NS_FATAL_ERROR("built without 5G-LENA: no NR cell (the scenario program checks this first)");
}
#endif

} // namespace ns3
