// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-version.h"

namespace ns3
{
namespace cellgym
{

const char*
Version()
{
    return "0.1.0";
}

} // namespace cellgym
} // namespace ns3
