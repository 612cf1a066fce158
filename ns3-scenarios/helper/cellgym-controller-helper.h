// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_CONTROLLER_HELPER_H
#define CELLGYM_CONTROLLER_HELPER_H

#include "cellgym-explicit-router.h"
#include "cellgym-radio-cell.h"
#include "cellgym-scenario-config.h"
#include "cellgym-wired-helper.h"
#include "xrc-enb-agent.h"

#include <vector>

namespace ns3
{

/// The base of the flows' TCP ports at the UEs: flow f's sink listens on kCellGymBasePort + f.
constexpr uint16_t kCellGymBasePort = 5000;

/**
 * @brief Installs the controllers that live outside the senders: XCP's or RCP's router per UE
 * at the base station, XCP-r's receivers at the UEs, PBE-CC's monitor (docs/explicit-feedback.md,
 * docs/xcp-r.md, docs/pbe-cc.md). The senders' own congestion controls are set by the flows.
 */
class CellGymControllerHelper
{
  public:
    /**
     * @brief A helper for one scenario.
     * @param cfg the configuration (outlives the helper)
     */
    explicit CellGymControllerHelper(const CellGymScenarioConfig& cfg);

    /**
     * @brief Without a wired bottleneck: XCP's or RCP's router per UE at the base station, its
     * queue the UE's RLC buffer (the tap's), its capacity the XRC agent's estimate, its packets
     * the tap's. Nothing otherwise.
     * @param ueRouters filled with the routers (outlives the simulation: hooks index it)
     * @param wired the wired side (its XCP-r flows and path; outlives the simulation)
     * @param cell the cell (its tap and XRC's agent)
     */
    void InstallBaseStationRouters(std::vector<Ptr<CellGymExplicitRouter>>& ueRouters,
                                   CellGymWiredSide& wired,
                                   const RadioCell& cell) const;

    /**
     * @brief XCP-r's receivers: the UEs' IP layers read the data segments and send the ACKs
     * (nothing without XCP-r flows).
     * @param wired the wired side (its XCP-r flows and path; outlives the simulation)
     * @param cell the cell (its UEs)
     */
    void InstallXcprReceivers(CellGymWiredSide& wired, const RadioCell& cell) const;

    /**
     * @brief PBE-CC: every UE's monitor decodes the scheduler's allocations of each TTI (the
     * base-station tap's view of them); the UE stamps its rate on the ACKs it sends, and the
     * base station puts it on them as they leave for the server (nothing without pbecc flows).
     * @param cell the cell (its UEs and tap)
     */
    void InstallPbe(const RadioCell& cell) const;

  private:
    const CellGymScenarioConfig& m_cfg; //!< the configuration
};

} // namespace ns3

#endif // CELLGYM_CONTROLLER_HELPER_H
