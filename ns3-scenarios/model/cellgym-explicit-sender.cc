// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-explicit-sender.h"

namespace ns3
{

uint32_t
CellGymExplicitSender::GetHeaderBytes() const
{
    return 0;
}

CellGymExplicitSender::Pacing
CellGymExplicitSender::GetPacing() const
{
    return Pacing::NONE;
}

void
CellGymExplicitSender::TagSegment(Ptr<const Packet> segment)
{
}

} // namespace ns3
