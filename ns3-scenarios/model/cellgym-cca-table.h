// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_CCA_TABLE_H
#define CELLGYM_CCA_TABLE_H

#include <map>
#include <string>

namespace ns3
{

/**
 * How a controller of the table paces: by its own rule (none, or an explicit sender's, which it
 * states through CellGymExplicitSender), always (BBR's model needs pacing), or as the agent's
 * commands say (its flows switch pacing on and off per command).
 */
enum class CcaPacing
{
    OWN,
    ALWAYS,
    COMMANDED,
};

/// One controller of the table: its TypeId and how it paces.
struct CcaType
{
    std::string typeId;               //!< the TcpCongestionOps TypeId the sender is created with
    CcaPacing pacing{CcaPacing::OWN}; //!< how it paces
};

/**
 * @brief The congestion controls a flow's sender is created with, by the registry's name
 * (`cellgym/controllers.py`; `tests/ns3_scenarios` checks that the two name the same senders).
 * The sender app reads a controller's properties here, never by comparing its name.
 */
const std::map<std::string, CcaType>& CcaTypes();

/// How the controller `cca` paces (CcaPacing::OWN for a name outside the table).
CcaPacing PacingOf(const std::string& cca);

} // namespace ns3

#endif // CELLGYM_CCA_TABLE_H
