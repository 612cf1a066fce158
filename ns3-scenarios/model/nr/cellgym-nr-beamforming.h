// SPDX-License-Identifier: GPL-2.0-only
// Ideal direct-path beamforming with one beam identity per direction, so that 5G-LENA's OFDMA
// scheduler gives UEs in different directions different symbols.
#ifndef CELLGYM_NR_BEAMFORMING_H
#define CELLGYM_NR_BEAMFORMING_H

#include "ns3/ideal-beamforming-algorithm.h"

namespace ns3
{

/**
 * 5G-LENA's `DirectPathBeamforming` (the same antenna weights, steered along the direct path)
 * with a beam identity per direction: the gNB's `BeamId` is the direction from the gNB to the
 * UE (azimuth in tenths of a degree as the sector, zenith angle in degrees as the elevation).
 *
 * 5G-LENA's `DirectPathBeamforming` gives every UE the empty `BeamId`. Its OFDMA schedulers
 * share a slot's symbols among the UEs of one beam (frequency division) and give different
 * beams different symbols, while its gNB PHY applies one analog beam per symbol: the first
 * scheduled UE's. With the shared empty identity, UEs in other directions were served through
 * that UE's beam (measured in docs/nr.md, `nr_four_ues`).
 */
class CellGymDirectPathBeamforming : public DirectPathBeamforming
{
  public:
    static TypeId GetTypeId();

    BeamformingVectorPair
    GetBeamformingVectors(const Ptr<NrSpectrumPhy>& gnbSpectrumPhy,
                          const Ptr<NrSpectrumPhy>& ueSpectrumPhy) const override;
};

} // namespace ns3

#endif // CELLGYM_NR_BEAMFORMING_H
