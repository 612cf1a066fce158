// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_OPENGYM_BRIDGE_H
#define CELLGYM_OPENGYM_BRIDGE_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ns3
{
namespace cellgym
{

/**
 * @brief A named DOUBLE box: the only space/data kind CellGym's scenarios exchange.
 *
 * Encoded on the wire as ns3-gym's BoxSpace / BoxDataContainer (dtype DOUBLE).
 */
struct NamedBox
{
    std::string name;            //!< element name in the DictSpace / DictDataContainer
    std::vector<uint32_t> shape; //!< shape, row-major
    std::vector<double> data;    //!< row-major values (empty in a space description)
    double low{-1.0};            //!< space lower bound (space description only)
    double high{1e12};           //!< space upper bound (space description only)
};

/// @brief What Python answered to one EnvStateMsg.
struct GymAction
{
    std::vector<uint32_t> shape; //!< shape of the action box
    std::vector<double> data;    //!< row-major action values (DOUBLE or FLOAT on the wire)
    bool stop{false};            //!< Python asked the simulation to stop (stopSimReq)
};

/**
 * @brief Client side of the ns3-gym wire protocol (ZeroMQ REQ to 127.0.0.1, ns3opengym protobuf).
 *
 * Construction connects; Init sends SimInitMsg and waits for SimInitAck. Every receive has a
 * timeout; when it expires, or when the parent process dies, the program exits with an error
 * message on stderr rather than hanging.
 */
class OpenGymBridge
{
  public:
    /**
     * @brief Connect to the Python side.
     * @param port TCP port on 127.0.0.1 where Python's REP socket listens
     * @param recvTimeoutMs receive timeout in ms (<= 0: wait forever)
     */
    OpenGymBridge(uint16_t port, int recvTimeoutMs);
    ~OpenGymBridge();

    /**
     * @brief Send SimInitMsg with a DictSpace observation space and a Box action space.
     *
     * simProcessId is this process's pid; wafShellProcessId is 0 (there is no waf shell, and
     * ns3-gym's client would signal whatever pid it names when it closes).
     * @param obsSpace the Dict's elements (shape, low, high; data ignored)
     * @param actSpace the action Box (shape, low, high)
     * @return false if Python answered stopSimReq
     */
    bool Init(const std::vector<NamedBox>& obsSpace, const NamedBox& actSpace);

    /**
     * @brief Send one EnvStateMsg (observation as a DictDataContainer) and wait for EnvActMsg.
     * @param obs the Dict's elements with data
     * @param gameOver isGameOver flag (reason SimulationEnd)
     * @param info JSON text for the info field
     * @return the action
     */
    GymAction Step(const std::vector<NamedBox>& obs, bool gameOver, const std::string& info);

  private:
    struct Impl;
    std::unique_ptr<Impl> m_impl; //!< the REQ connection and reused messages
};

} // namespace cellgym
} // namespace ns3

#endif // CELLGYM_OPENGYM_BRIDGE_H
