// SPDX-License-Identifier: GPL-2.0-only
// FR2 blockage of the NR cell: per link, a two-state Markov chain (clear / blocked) with
// exponential sojourns, adding a fixed loss while blocked. The same process, with the same
// parameters, as the fast backend's (envs/fastsim/channel_nr.py, FastSimParams.nr_block_*).
#ifndef CELLGYM_NR_BLOCKAGE_H
#define CELLGYM_NR_BLOCKAGE_H

#include "ns3/nstime.h"
#include "ns3/propagation-loss-model.h"
#include "ns3/random-variable-stream.h"
#include "ns3/traced-callback.h"

#include <map>
#include <utility>

namespace ns3
{

/**
 * A propagation loss (chained after TR 38.901's path loss) of `BlockedLossDb` while a link is
 * blocked. Each link (an unordered pair of mobility models: uplink and downlink share it)
 * starts clear, and stays clear and blocked for exponential times of mean `ClearMeanMs` and
 * `BlockedMeanMs` (at least 1 ms each), drawn when the link is first seen and at each
 * transition. Transitions are evaluated lazily, when a transmission asks for the loss.
 */
class CellGymBlockageLoss : public PropagationLossModel
{
  public:
    static TypeId GetTypeId();
    CellGymBlockageLoss();

    /// Whether the link between `a` and `b` is blocked now (advancing its chain).
    bool IsBlocked(Ptr<MobilityModel> a, Ptr<MobilityModel> b);

  private:
    double
    DoCalcRxPower(double txPowerDbm, Ptr<MobilityModel> a, Ptr<MobilityModel> b) const override;
    int64_t DoAssignStreams(int64_t stream) override;

    /// Link state: blocked or not, and when the current sojourn ends.
    struct Link
    {
        bool blocked{false};
        Time next;
    };

    Time Sojourn(bool blocked) const;
    Link& Advance(Ptr<MobilityModel> a, Ptr<MobilityModel> b) const;

    double m_lossDb;
    double m_blockedMeanMs;
    double m_clearMeanMs;
    Ptr<UniformRandomVariable> m_uniform;
    mutable std::map<std::pair<const MobilityModel*, const MobilityModel*>, Link> m_links;
    /// A link's state changed: when (the end of the sojourn, not when it was noticed) and the
    /// new state (true: blocked).
    TracedCallback<Time, bool> m_transition;
};

} // namespace ns3

#endif // CELLGYM_NR_BLOCKAGE_H
