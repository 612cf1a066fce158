// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_RADIO_CELL_H
#define CELLGYM_RADIO_CELL_H

#include "cellgym-bs-tap.h"
#include "xrc-enb-agent.h"

#include "ns3/ipv4-interface-container.h"
#include "ns3/mobility-model.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"

#include <functional>
#include <string>
#include <vector>

namespace ns3
{

/// What the scenario asks of its cell, whatever the cell type (--cellType).
struct RadioCellConfig
{
    uint32_t numUes{1};               //!< UEs
    std::vector<double> distances;    //!< initial distance of each UE from the base station, m
    uint32_t rlcBufferPkts{128};      //!< RLC UM transmit buffer per bearer, 1500-B packets
    uint32_t xrcWindowTtis{40};       //!< XRC capacity window, 1-ms TTIs
    double activeTimeoutMs{200};      //!< XRC flow activity timeout
    uint32_t rbs{50};                 //!< LTE: bandwidth in resource blocks
    uint32_t numerology{1};           //!< NR: mu
    double bandwidthMhz{20};          //!< NR: channel bandwidth
    double frequencyGhz{3.5};         //!< NR: carrier frequency
    std::string propagation{"umi"};   //!< NR: TR 38.901 scenario (umi, uma, rma)
    std::string los{"probabilistic"}; //!< NR: line of sight (probabilistic, los, nlos)
    std::string scheduler{"pf"};      //!< NR: OFDMA scheduler (pf, rr)
    std::string mcsTable{"64qam"};    //!< NR: MCS table (64qam: table 1, 256qam: table 2)
    std::string capacityTrace;        //!< capacity file replayed per TTI/slot (empty: channel)
    uint32_t nrMacTrace{0}; //!< NR traces in the cwd: 1 MAC DL, 2 + PHY, CQI, HARQ, 3 + ctrl
};

/// A built cell: one base station with its core network, the UEs attached, the tap hooked in.
struct RadioCell
{
    Ptr<Node> pgw;                              //!< the core's gateway towards the servers
    NodeContainer bsNodes;                      //!< the base station
    NodeContainer ueNodes;                      //!< the UEs
    NetDeviceContainer bsDevs;                  //!< the base station's radio device
    NetDeviceContainer ueDevs;                  //!< the UEs' radio devices
    Ipv4InterfaceContainer ueIfaces;            //!< the UEs' addresses
    std::vector<Ptr<MobilityModel>> ueMobility; //!< per UE
    std::vector<double> angles;                 //!< per UE: bearing from the base station, rad
    int64_t stream{1};                          //!< next free random stream
    std::vector<Ptr<Object>> keepAlive;         //!< helpers that must outlive the simulation
    Ptr<CellGymBsTap> tap;                      //!< the base station's tap, once installTap ran
    Ptr<XrcEnbAgent> agent;                     //!< XRC's agent, its first subscriber
    /// Create the base-station tap and XRC's agent, and hook the tap into the base station
    /// through the cell type's installer (called after the wired side is built, as the LTE cell
    /// always did). Other base-station controllers subscribe to the tap after it.
    std::function<void(RadioCell&)> installTap;
};

/// @brief Position the base station at (0, 0, height) and UE u at distances[u], bearing
/// 2 pi u / numUes, height 1.5 m; fill ueMobility and angles.
void PlaceNodes(RadioCell& cell, const RadioCellConfig& cfg, double bsHeightM);

/// @brief Create the cell's base-station tap (flow activity timeout) and XRC's agent (window in
/// TTIs or slots, RLC size), the agent subscribed to the tap, before an installer installs the
/// tap; return the base station's S1-U device (its first point-to-point device).
Ptr<NetDevice> CreateTap(RadioCell& cell, const RadioCellConfig& cfg, uint32_t windowTtis);

/// @brief The LTE cell (cellgym-lte-cell.cc): one eNB, EPC, PF scheduler, Okumura-Hata.
RadioCell BuildLteCell(const RadioCellConfig& cfg);

/// @brief The NR cell (nr/cellgym-nr-cell.cc, built only with 5G-LENA: CELLGYM_HAVE_NR).
RadioCell BuildNrCell(const RadioCellConfig& cfg);

} // namespace ns3

#endif // CELLGYM_RADIO_CELL_H
