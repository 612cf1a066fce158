// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_WIRED_HELPER_H
#define CELLGYM_WIRED_HELPER_H

#include "cellgym-explicit-router.h"
#include "cellgym-scenario-config.h"
#include "cellgym-xcpr-receiver.h"

#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/traffic-control-module.h"

#include <map>
#include <set>

namespace ns3
{

/// XCP's or RCP's router at the wired bottleneck, with the flows it knows by server address.
struct CellGymWiredRouter
{
    Ptr<CellGymExplicitRouter> router;      //!< the router's rules
    std::map<Ipv4Address, uint32_t> flowOf; //!< server address -> flow
    std::set<uint32_t> xcprFlows;           //!< the XCP-r flows
    CellGymXcprPath xcpr;                   //!< XCP-r's header values beside the packets
};

/**
 * @brief The wired side, servers -> router -> (bottleneck) -> PGW, and the helpers the flows
 * are installed with. It must outlive the simulation: traces hold pointers into it.
 */
struct CellGymWiredSide
{
    InternetStackHelper internet;         //!< installs the servers' and sources' stacks
    Ipv4StaticRoutingHelper routing;      //!< their static routes
    Ipv4AddressHelper addr;               //!< their addresses
    Ptr<Node> pgw;                        //!< the cell's gateway
    NodeContainer router;                 //!< the servers' router
    NodeContainer servers;                //!< one server per flow
    NetDeviceContainer coreDevs;          //!< router -> PGW link: the bottleneck
    Ipv4InterfaceContainer coreIfaces;    //!< its addresses
    Ptr<QueueDisc> redQueue;              //!< RED's queue disc (--bottleneckQueue=red) or null
    Ptr<Ipv4StaticRouting> routerRouting; //!< the router's routes
    CellGymWiredRouter explicitRouter;    //!< XCP's or RCP's router at the bottleneck
};

/**
 * @brief Builds the wired side from the configuration: the router and the servers, the
 * bottleneck link (a rate with a drop-tail or RED buffer, or a Mahimahi trace), its queue log,
 * the routes, and XCP's or RCP's router at the bottleneck.
 */
class CellGymWiredHelper
{
  public:
    /**
     * @brief A helper for one scenario.
     * @param cfg the configuration (outlives the helper)
     */
    explicit CellGymWiredHelper(const CellGymScenarioConfig& cfg);

    /**
     * @brief Create the router and one server per flow, the bottleneck link to the PGW with its
     * queues and log, and the routes between them.
     * @param side filled in place
     * @param pgw the cell's gateway
     */
    void Install(CellGymWiredSide& side, Ptr<Node> pgw) const;

    /**
     * @brief XCP's or RCP's router at the bottleneck, when some flow runs XCP, XCP-r or RCP and
     * there is a bottleneck (docs/explicit-feedback.md); else nothing but the XCP-r flows.
     * @param side the installed wired side
     */
    void InstallRouter(CellGymWiredSide& side) const;

  private:
    /// @brief Nodes, stacks and the router -> PGW link (its device queue the drop-tail buffer).
    void InstallCoreLink(CellGymWiredSide& side) const;
    /// @brief RED's queue disc on the bottleneck (--bottleneckQueue=red).
    void InstallRed(CellGymWiredSide& side) const;
    /// @brief The bottleneck's queue log (--bottleneckLogPath), every ms.
    void InstallQueueLog(CellGymWiredSide& side) const;
    /// @brief The trace-driven link's queue disc (--bottleneckTrace).
    void InstallTraceLink(CellGymWiredSide& side) const;
    /// @brief The router at a rate bottleneck: counts at the device, feedback on the ACKs.
    void InstallRateRouter(CellGymWiredSide& side) const;
    /// @brief The router at a trace bottleneck: counts at the queue disc, capacity per tick.
    void InstallTraceRouter(CellGymWiredSide& side) const;

    const CellGymScenarioConfig& m_cfg; //!< the configuration
};

} // namespace ns3

#endif // CELLGYM_WIRED_HELPER_H
