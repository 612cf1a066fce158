// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_DRAWS_H
#define CELLGYM_DRAWS_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @brief The run's random draws of the scenario, written by Python (cellgym/draws.py,
 * `--draws`): the flows' start offsets, the UEs' random moves, the Pareto streams' arrivals and
 * sizes, the exponential ON/OFF periods of the UDP sources. The fast model reads the same draws,
 * so a seed gives both backends the same scenario (docs/scenario-contract.md, "--draws").
 */
class CellGymDraws
{
  public:
    /// @brief What the file must match: the run's other arguments.
    struct Expect
    {
        uint64_t rngRun{1};            //!< --simSeed
        uint32_t numFlows{0};          //!< flows of --flows
        uint32_t numUes{0};            //!< --numUes
        uint32_t moves{0};             //!< random moves in the run (0: static)
        double periodS{0};             //!< --mobilityPeriodS (with moves)
        double minDistance{1};         //!< --minDistance
        double maxDistance{600};       //!< --maxDistance
        uint32_t streams{0};           //!< Pareto flow streams of --flows
        uint32_t udpExpSources{0};     //!< --udpSources with --udpPeriods=exponential
        std::vector<bool> paretoFlows; //!< per flow: a pareto slot (offset 0)
    };

    /// @brief A Pareto stream's arrivals.
    struct Stream
    {
        std::vector<double> afterMs;    //!< arrival, ms after the stream's start (non-decreasing)
        std::vector<uint64_t> sizePkts; //!< size, packets (>= 1)
    };

    /**
     * @brief Read `path` and check it against `expect`; exit with status 2 and a message naming
     * --draws when the file is missing, is not a draws file, was drawn for another RngRun, or
     * its counts or values do not fit the run.
     */
    static CellGymDraws Load(const std::string& path, const Expect& expect);

    /// @brief No file: no start offsets and nothing else drawn (see `Needed`).
    static CellGymDraws None();

    /**
     * @brief Exit with status 2 naming --draws when the run needs draws and has none.
     * @param expect the run
     */
    void Needed(const Expect& expect) const;

    /// @return flow `flow`'s start offset, s
    double StartOffsetS(uint32_t flow) const;
    /// @return UE `ue`'s distances at its moves 1, 2, ...
    const std::vector<double>& Moves(uint32_t ue) const;
    /// @return stream `k`'s arrivals
    const Stream& ParetoStream(uint32_t k) const;
    /// @return UDP source `k`'s ON, OFF, ON, ... periods, s
    const std::vector<double>& UdpPeriods(uint32_t k) const;

  private:
    bool m_present{false};
    std::vector<uint32_t> m_offsetMs;
    std::vector<std::vector<double>> m_moves;
    std::vector<Stream> m_streams;
    std::vector<std::vector<double>> m_udp;
};

} // namespace ns3

#endif // CELLGYM_DRAWS_H
