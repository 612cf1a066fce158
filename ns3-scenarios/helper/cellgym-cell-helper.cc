// SPDX-License-Identifier: GPL-2.0-only
// The cell helpers: one per cell type behind CellGymCellHelper, and the UEs' random moves.
#include "cellgym-cell-helper.h"

#include "ns3/core-module.h"

#include <cmath>

namespace ns3
{

namespace
{

/// A UE's height, m (as the cells place them: cellgym-radio-cell.h PlaceNodes).
constexpr double kUeHeightM = 1.5;

/// A random move: the UE goes to its next drawn distance (--draws), then waits a period.
void
MoveUe(Ptr<MobilityModel> mobility,
       const std::vector<double>* distances,
       size_t next,
       double angle,
       Time period)
{
    if (next >= distances->size())
    {
        return;
    }
    const double d = (*distances)[next];
    mobility->SetPosition(Vector(d * std::cos(angle), d * std::sin(angle), kUeHeightM));
    Simulator::Schedule(period, &MoveUe, mobility, distances, next + 1, angle, period);
}

} // namespace

std::unique_ptr<CellGymCellHelper>
CellGymCellHelper::Create(const std::string& cellType)
{
    if (cellType == "nr")
    {
        return std::make_unique<CellGymNrCellHelper>();
    }
    return std::make_unique<CellGymLteCellHelper>();
}

void
CellGymCellHelper::ScheduleMoves(const RadioCell& cell,
                                 const CellGymScenarioConfig& cfg,
                                 const CellGymDraws& draws)
{
    if (cfg.mobility != "random")
    {
        return;
    }
    // Each UE moves to its drawn distances (--draws) every period.
    for (uint32_t u = 0; u < cfg.numUes; ++u)
    {
        Simulator::Schedule(Seconds(cfg.mobilityPeriodS),
                            &MoveUe,
                            cell.ueMobility[u],
                            &draws.Moves(u),
                            size_t{0},
                            cell.angles[u],
                            Seconds(cfg.mobilityPeriodS));
    }
}

RadioCell
CellGymLteCellHelper::Build(const RadioCellConfig& cfg) const
{
    return BuildLteCell(cfg);
}

RadioCell
CellGymNrCellHelper::Build(const RadioCellConfig& cfg) const
{
    return BuildNrCell(cfg);
}

} // namespace ns3
