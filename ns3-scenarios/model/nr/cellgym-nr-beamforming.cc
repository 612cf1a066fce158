// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-nr-beamforming.h"

#include "ns3/angles.h"
#include "ns3/mobility-model.h"
#include "ns3/nr-spectrum-phy.h"

#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CellGymDirectPathBeamforming);

TypeId
CellGymDirectPathBeamforming::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CellGymDirectPathBeamforming")
                            .SetParent<DirectPathBeamforming>()
                            .AddConstructor<CellGymDirectPathBeamforming>();
    return tid;
}

BeamformingVectorPair
CellGymDirectPathBeamforming::GetBeamformingVectors(const Ptr<NrSpectrumPhy>& gnbSpectrumPhy,
                                                    const Ptr<NrSpectrumPhy>& ueSpectrumPhy) const
{
    BeamformingVectorPair pair
        = DirectPathBeamforming::GetBeamformingVectors(gnbSpectrumPhy, ueSpectrumPhy);
    const Angles toUe(ueSpectrumPhy->GetMobility()->GetPosition(),
                      gnbSpectrumPhy->GetMobility()->GetPosition());
    double azimuthDeg = RadiansToDegrees(toUe.GetAzimuth());
    azimuthDeg = std::fmod(azimuthDeg + 360.0, 360.0);
    const auto sector = static_cast<uint16_t>(std::lround(azimuthDeg * 10.0) % 3600);
    pair.first.second = BeamId(sector, RadiansToDegrees(toUe.GetInclination()));
    return pair;
}

} // namespace ns3
