// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_VERSION_H
#define CELLGYM_VERSION_H

namespace ns3
{
namespace cellgym
{
/// @brief CellGym's scenario version, reported in the first observation's info.
const char* Version();
} // namespace cellgym
} // namespace ns3

#endif // CELLGYM_VERSION_H
