// SPDX-License-Identifier: GPL-2.0-only
// The NR cell (--cellType=nr): one 5G-LENA gNB with its own EPC, the UEs at the configured
// distances, TR 38.901 channel, ideal beamforming, OFDMA PF or RR, RLC UM, the base-station tap's
// NR installer.
#include "cellgym-bs-tap-nr.h"
#include "cellgym-nr-beamforming.h"
#include "cellgym-nr-blockage.h"
#include "cellgym-nr-bsr-retx.h"
#include "cellgym-nr-trace-scheduler.h"
#include "cellgym-radio-cell.h"
#include "xrc-bwp-manager-gnb.h"

#include "ns3/antenna-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/nr-module.h"

#include <cmath>
#include <fstream>
#include <map>
#include <memory>

namespace ns3
{

namespace
{
/// gNB transmit power, dBm (the LTE eNB's 30 dBm).
constexpr double kGnbTxPowerDbm = 30.0;
/// UE transmit power, dBm.
constexpr double kUeTxPowerDbm = 23.0;
/// Uplink MCS: 16QAM at code rate 340/1024 (MCS table 1) or 658/1024 (table 2), decodable at
/// about 3 or 9 dB SINR, which the calibrated cells' UEs have on the uplink.
constexpr uint8_t kUlMcs = 10;
/// Lowest FR2 carrier, GHz (TS 38.101-2): blockage applies from here up.
constexpr double kFr2LowGhz = 24.25;
/// The UEs' buffer status timer (cellgym-nr-bsr-retx.h): 5G-LENA's RLC UM's own 10 ms.
constexpr int64_t kBsrRetxMs = 10;
} // namespace

namespace
{
/// Diagnosis (--nrMacTrace=2): 5G-LENA's uplink MAC and PHY traces (NrUlMacStats.txt,
/// RxPacketTrace.txt: every received TB's SINR, CQI, redundancy version and outcome), and our
/// own CellGymNrCqi.txt (every downlink CQI report a UE sends), CellGymNrHarq.txt (every
/// downlink HARQ feedback at the gNB) and CellGymNrBlockage.txt (blockage transitions), all in
/// the working directory.
void
EnableNrDiagnosticTraces(Ptr<NrHelper> nr, RadioCell& cell, Ptr<CellGymBlockageLoss> blockage)
{
    nr->EnableUlMacSchedTraces();
    nr->EnableDlDataPhyTraces();
    nr->EnableUlPhyTraces();
    auto cqi = std::make_shared<std::ofstream>("CellGymNrCqi.txt");
    *cqi << "time_s\trnti\twbCqi\tmcs\trank\n";
    for (uint32_t u = 0; u < cell.ueDevs.GetN(); ++u)
    {
        DynamicCast<NrUeNetDevice>(cell.ueDevs.Get(u))
            ->GetPhy(0)
            ->TraceConnectWithoutContext("CqiFeedbackTrace",
                                         MakeBoundCallback(
                                             +[](std::shared_ptr<std::ofstream> f,
                                                 uint16_t rnti,
                                                 uint8_t wbCqi,
                                                 uint8_t mcs,
                                                 uint8_t rank)
                                             {
                                                 *f << Simulator::Now().GetSeconds() << '\t' << rnti
                                                    << '\t' << +wbCqi << '\t' << +mcs << '\t'
                                                    << +rank << std::endl;
                                             },
                                             cqi));
    }
    auto harq = std::make_shared<std::ofstream>("CellGymNrHarq.txt");
    *harq << "time_s\trnti\tharqId\tack\tnumRetx\n";
    DynamicCast<NrGnbNetDevice>(cell.bsDevs.Get(0))
        ->GetMac(0)
        ->TraceConnectWithoutContext("DlHarqFeedback",
                                     MakeBoundCallback(
                                         +[](std::shared_ptr<std::ofstream> f, const DlHarqInfo& h)
                                         {
                                             *f << Simulator::Now().GetSeconds() << '\t' << h.m_rnti
                                                << '\t' << +h.m_harqProcessId << '\t'
                                                << (h.IsReceivedOk() ? 1 : 0) << '\t'
                                                << +h.m_numRetx << std::endl;
                                         },
                                         harq));
    if (blockage)
    {
        auto blk = std::make_shared<std::ofstream>("CellGymNrBlockage.txt");
        *blk << "time_s\tblocked\n";
        blockage->TraceConnectWithoutContext(
            "Transition",
            MakeBoundCallback(
                +[](std::shared_ptr<std::ofstream> f, Time t, bool blocked)
                {
                    *f << t.GetSeconds() << '\t' << (blocked ? 1 : 0) << std::endl;
                },
                blk));
    }
}

/// The helpers of the NR cell, and its capacity trace (none: the channel's).
struct NrHelpers
{
    Ptr<NrPointToPointEpcHelper> epc;           //!< the core network
    Ptr<IdealBeamformingHelper> beamforming;    //!< the beams
    Ptr<NrHelper> nr;                           //!< 5G-LENA's helper
    std::shared_ptr<const CapacityTrace> trace; //!< the trace replayed (nullptr: none)
};

/// 5G-LENA's helpers: beamforming, CSI feedback, scheduler, error models and AMC, the uplink's
/// fixed MCS, the trace replay, the PHYs and antennas.
NrHelpers
CreateNrHelpers(const RadioCellConfig& cfg)
{
    NrHelpers h;
    h.epc = CreateObject<NrPointToPointEpcHelper>();
    Ptr<NrPointToPointEpcHelper> epc = h.epc;
    h.beamforming = CreateObject<IdealBeamformingHelper>();
    Ptr<IdealBeamformingHelper> beamforming = h.beamforming;
    // Direct-path beams with one beam identity per UE direction (cellgym-nr-beamforming.h): with
    // 5G-LENA's shared empty identity, its OFDMA scheduler put UEs in different directions in
    // the same symbols, which its PHY sends with one beam, the first UE's.
    beamforming->SetAttribute("BeamformingMethod",
                              TypeIdValue(CellGymDirectPathBeamforming::GetTypeId()));
    h.nr = CreateObject<NrHelper>();
    Ptr<NrHelper> nr = h.nr;
    nr->SetBeamformingHelper(beamforming);
    // Channel state from periodic CSI-RS over the whole carrier, not from the last PDSCH: a CQI
    // measured on the few RBs of a small TB (which get the whole transmit power and, under TR
    // 38.901's frequency-selective fading, may sit on a peak) sent the next full-band TB out at
    // an MCS it could not decode. A report is triggered by the CSI-IM and also by the UE's own
    // PDSCH (CQI_PDSCH_MIMO; the channel is still the CSI-RS's): 5G-LENA sends the CSI-IM report
    // only if the UE's own data is under way when the CSI-IM ends, so a UE whose beam got later
    // symbols of the slot never reported, its CQI expired after 1 s and, at the starting MCS 0,
    // the OFDMA scheduler dropped its DCIs ("TBS < 10").
    nr->SetAttribute("CsiFeedbackFlags", UintegerValue(CQI_CSI_RS | CQI_CSI_IM | CQI_PDSCH_MIMO));
    nr->SetEpcHelper(epc);
    nr->SetSchedulerTypeId(TypeId::LookupByName(
        cfg.scheduler == "rr" ? "ns3::NrMacSchedulerOfdmaRR" : "ns3::NrMacSchedulerOfdmaPF"));
    // MCS table 1 (up to 64-QAM) or 2 (256-QAM), with incremental-redundancy HARQ.
    const std::string errorModel = cfg.mcsTable == "256qam" ? "ns3::NrEesmIrT2" : "ns3::NrEesmIrT1";
    nr->SetDlErrorModel(errorModel);
    nr->SetUlErrorModel(errorModel);
    nr->SetGnbDlAmcAttribute("AmcModel", EnumValue(NrAmc::ErrorModel));
    nr->SetGnbUlAmcAttribute("AmcModel", EnumValue(NrAmc::ErrorModel));
    // The uplink carries the flows' ACKs at a fixed MCS (kUlMcs). With the uplink AMC, a UE
    // spreads its 23 dBm over the RBs in use, so an ACK on a few RBs measures an SINR up to 9 dB
    // above that of a larger uplink TB; the next large TB then fails all four HARQ
    // transmissions without line of sight, its ACKs (or a SYN) are lost and TCP stalls for a
    // retransmission (or connection) timeout of 1-3 s.
    nr->SetSchedulerAttribute("FixedMcsUl", BooleanValue(true));
    nr->SetSchedulerAttribute("StartingMcsUl", UintegerValue(kUlMcs));
    // A capacity trace sizes the downlink TBs, with the error model off (docs/traces.md).
    h.trace = ConfigureNrTraceReplay(nr, cfg);
    nr->SetGnbPhyAttribute("Numerology", UintegerValue(cfg.numerology));
    nr->SetGnbPhyAttribute("TxPower", DoubleValue(kGnbTxPowerDbm));
    nr->SetUePhyAttribute("TxPower", DoubleValue(kUeTxPowerDbm));
    nr->SetGnbAntennaAttribute("NumRows", UintegerValue(4));
    nr->SetGnbAntennaAttribute("NumColumns", UintegerValue(4));
    nr->SetGnbAntennaAttribute("AntennaElement",
                               PointerValue(CreateObject<IsotropicAntennaModel>()));
    nr->SetUeAntennaAttribute("NumRows", UintegerValue(1));
    nr->SetUeAntennaAttribute("NumColumns", UintegerValue(2));
    nr->SetUeAntennaAttribute("AntennaElement",
                              PointerValue(CreateObject<IsotropicAntennaModel>()));

    return h;
}

/// The TR 38.901 channel of the scenario on the band.
Ptr<NrChannelHelper>
CreateNrChannel(const RadioCellConfig& cfg, const std::string& scenario, OperationBandInfo& band)
{
    const std::map<std::string, std::string> conditions{
        {"probabilistic", "Default"},
        {"los", "LOS"},
        {"nlos", "NLOS"},
    };
    Ptr<NrChannelHelper> channel = CreateObject<NrChannelHelper>();
    channel->ConfigureFactories(scenario, conditions.at(cfg.los), "ThreeGpp");
    if (cfg.los == "probabilistic")
    {
        // The LOS condition is drawn once per link (static UEs; a moved UE keeps it).
        channel->SetChannelConditionModelAttribute("UpdatePeriod", TimeValue(MilliSeconds(0)));
    }
    channel->SetPathlossAttribute("ShadowingEnabled", BooleanValue(false));
    channel->AssignChannelsToBands({band});
    return channel;
}

/// FR2 without a trace: human-body blockage after the path loss (nullptr otherwise).
Ptr<CellGymBlockageLoss>
AddNrBlockage(const RadioCellConfig& cfg, bool hasTrace, const BandwidthPartInfoPtrVector& allBwps)
{
    Ptr<CellGymBlockageLoss> blockage;
    if (cfg.frequencyGhz >= kFr2LowGhz && !hasTrace)
    {
        // FR2: human-body blockage after the path loss (the fast backend's process).
        blockage = CreateObject<CellGymBlockageLoss>();
        for (const auto& bwp : allBwps)
        {
            bwp.get()->GetChannel()->AddPropagationLossModel(blockage);
        }
    }
    return blockage;
}

/// The gNB's and UEs' devices, XRC's BWP manager, the UEs' buffer status timers, the random
/// streams.
void
InstallNrDevices(RadioCell& cell,
                 Ptr<NrHelper> nr,
                 const BandwidthPartInfoPtrVector& allBwps,
                 Ptr<CellGymBlockageLoss> blockage)
{
    cell.bsDevs = nr->InstallGnbDevice(cell.bsNodes, allBwps);
    // Our BWP manager hands the base-station tap the RLC's reports (before any UE attaches).
    XrcBwpManagerGnb::Replace(DynamicCast<NrGnbNetDevice>(cell.bsDevs.Get(0)));
    cell.ueDevs = nr->InstallUeDevice(cell.ueNodes, allBwps);
    for (uint32_t u = 0; u < cell.ueDevs.GetN(); ++u)
    {
        CellGymNrBsrRetx::Install(cell.ueDevs.Get(u), MilliSeconds(kBsrRetxMs));
    }
    cell.stream = 1;
    cell.stream += nr->AssignStreams(cell.bsDevs, cell.stream);
    cell.stream += nr->AssignStreams(cell.ueDevs, cell.stream);
    if (blockage)
    {
        cell.stream += blockage->AssignStreams(cell.stream);
    }
}

/// The UEs' IP stacks and routes; each UE attached to the gNB.
void
AttachNrUes(RadioCell& cell,
            const RadioCellConfig& cfg,
            Ptr<NrHelper> nr,
            Ptr<NrPointToPointEpcHelper> epc)
{
    InternetStackHelper internet;
    internet.Install(cell.ueNodes);
    cell.ueIfaces = epc->AssignUeIpv4Address(cell.ueDevs);
    Ipv4StaticRoutingHelper routing;
    for (uint32_t u = 0; u < cfg.numUes; ++u)
    {
        routing.GetStaticRouting(cell.ueNodes.Get(u)->GetObject<Ipv4>())
            ->SetDefaultRoute(epc->GetUeDefaultGatewayAddress(), 1);
        nr->AttachToGnb(cell.ueDevs.Get(u), cell.bsDevs.Get(0));
    }
}

/// 5G-LENA's trace files in the working directory, by --nrMacTrace.
void
EnableNrTraces(const RadioCellConfig& cfg,
               Ptr<NrHelper> nr,
               RadioCell& cell,
               Ptr<CellGymBlockageLoss> blockage)
{
    if (cfg.nrMacTrace >= 1)
    {
        nr->EnableDlMacSchedTraces();
    }
    if (cfg.nrMacTrace >= 2)
    {
        EnableNrDiagnosticTraces(nr, cell, blockage);
    }
    if (cfg.nrMacTrace >= 3)
    {
        // Every control message (SR, BSR, DCI, CQI, HARQ feedback) at both ends' MAC and PHY.
        nr->EnableGnbMacCtrlMsgsTraces();
        nr->EnableUeMacCtrlMsgsTraces();
        nr->EnableGnbPhyCtrlMsgsTraces();
        nr->EnableUePhyCtrlMsgsTraces();
    }
}
} // namespace

RadioCell
BuildNrCell(const RadioCellConfig& given)
{
    // A capacity trace keeps the UEs near the gNB in line of sight (cellgym-nr-trace-scheduler.h).
    const RadioCellConfig cfg = NrTraceCellConfig(given);
    Config::SetDefault("ns3::NrRlcUm::MaxTxBufferSize", UintegerValue(cfg.rlcBufferPkts * 1500));
    Config::SetDefault("ns3::NrGnbRrc::EpsBearerToRlcMapping", EnumValue(NrGnbRrc::RLC_UM_ALWAYS));

    // TR 38.901 Table 7.4.1-1 / 7.2-1: base station heights of the three scenarios.
    const std::map<std::string, std::pair<std::string, double>> scenarios{
        {"umi", {"UMi", 10.0}},
        {"uma", {"UMa", 25.0}},
        {"rma", {"RMa", 35.0}},
    };
    const auto& [scenario, bsHeightM] = scenarios.at(cfg.propagation);
    const NrHelpers h = CreateNrHelpers(cfg);
    const std::shared_ptr<const CapacityTrace> trace = h.trace;

    // One band, one component carrier, one bandwidth part; the 38.901 channel on it.
    CcBwpCreator ccBwpCreator;
    CcBwpCreator::SimpleOperationBandConf bandConf(
        cfg.frequencyGhz * 1e9, cfg.bandwidthMhz * 1e6, 1);
    OperationBandInfo band = ccBwpCreator.CreateOperationBandContiguousCc(bandConf);
    Ptr<NrChannelHelper> channel = CreateNrChannel(cfg, scenario, band);
    auto allBwps = CcBwpCreator::GetAllBwps({band});
    Ptr<CellGymBlockageLoss> blockage = AddNrBlockage(cfg, trace != nullptr, allBwps);

    RadioCell cell;
    cell.keepAlive = {h.nr, h.epc, h.beamforming, channel};
    cell.pgw = h.epc->GetPgwNode();
    cell.bsNodes.Create(1);
    cell.ueNodes.Create(cfg.numUes);
    PlaceNodes(cell, cfg, bsHeightM);
    InstallNrDevices(cell, h.nr, allBwps, blockage);
    AttachNrUes(cell, cfg, h.nr, h.epc);
    EnableNrTraces(cfg, h.nr, cell, blockage);

    // The agent's window is --xrcWindowTtis milliseconds: that many 1-ms TTIs on LTE, 2^mu
    // times as many slots on NR.
    cell.installTap = [cfg, trace](RadioCell& c)
    {
        Ptr<NetDevice> s1u = CreateTap(c, cfg, cfg.xrcWindowTtis << cfg.numerology);
        CellGymNrBsTap::Install(c.tap, c.bsDevs.Get(0), s1u, trace);
        for (uint32_t u = 0; u < cfg.numUes; ++u)
        {
            CellGymNrBsTap::AddUe(c.tap, c.ueDevs.Get(u));
        }
    };
    return cell;
}

} // namespace ns3
