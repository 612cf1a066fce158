// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_CELL_HELPER_H
#define CELLGYM_CELL_HELPER_H

#include "cellgym-draws.h"
#include "cellgym-radio-cell.h"
#include "cellgym-scenario-config.h"

#include <memory>
#include <string>

namespace ns3
{

/**
 * @brief Builds the scenario's cell, one subclass per cell type (--cellType): the base station
 * with its core network and the UEs (model/cellgym-radio-cell.h). The program picks one with
 * Create() and sees only this interface.
 */
class CellGymCellHelper
{
  public:
    virtual ~CellGymCellHelper() = default;

    /**
     * @brief The helper of a cell type.
     * @param cellType lte or nr (checked by ParseScenarioConfig)
     * @return the helper
     */
    static std::unique_ptr<CellGymCellHelper> Create(const std::string& cellType);

    /**
     * @brief Build the cell: base station, core network, UEs placed and attached. The
     * base-station tap (and XRC's agent on it) is installed later, through
     * RadioCell::installTap, once the wired side is built.
     * @param cfg what the scenario asks of the cell
     * @return the built cell
     */
    virtual RadioCell Build(const RadioCellConfig& cfg) const = 0;

    /**
     * @brief With --mobility=random, schedule each UE's moves to its drawn distances (--draws),
     * one every --mobilityPeriodS, along its bearing.
     * @param cell the built cell
     * @param cfg the configuration
     * @param draws the run's draws (outlive the simulation)
     */
    static void ScheduleMoves(const RadioCell& cell,
                              const CellGymScenarioConfig& cfg,
                              const CellGymDraws& draws);
};

/// @brief ns-3's LTE: one eNB, EPC, PF scheduler, Okumura-Hata (BuildLteCell).
class CellGymLteCellHelper : public CellGymCellHelper
{
  public:
    RadioCell Build(const RadioCellConfig& cfg) const override;
};

/// @brief 5G-LENA's NR: one gNB (BuildNrCell; without 5G-LENA the configuration has already
/// exited with status 4).
class CellGymNrCellHelper : public CellGymCellHelper
{
  public:
    RadioCell Build(const RadioCellConfig& cfg) const override;
};

} // namespace ns3

#endif // CELLGYM_CELL_HELPER_H
