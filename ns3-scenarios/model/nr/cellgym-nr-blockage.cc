// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-nr-blockage.h"

#include "ns3/double.h"
#include "ns3/mobility-model.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(CellGymBlockageLoss);

TypeId
CellGymBlockageLoss::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::CellGymBlockageLoss")
              .SetParent<PropagationLossModel>()
              .AddConstructor<CellGymBlockageLoss>()
              .AddAttribute("BlockedLossDb",
                            "Loss while a link is blocked, dB",
                            DoubleValue(25.0),
                            MakeDoubleAccessor(&CellGymBlockageLoss::m_lossDb),
                            MakeDoubleChecker<double>(0.0))
              .AddAttribute("BlockedMeanMs",
                            "Mean blocked sojourn, ms",
                            DoubleValue(250.0),
                            MakeDoubleAccessor(&CellGymBlockageLoss::m_blockedMeanMs),
                            MakeDoubleChecker<double>(1.0))
              .AddAttribute("ClearMeanMs",
                            "Mean unblocked sojourn, ms",
                            DoubleValue(2000.0),
                            MakeDoubleAccessor(&CellGymBlockageLoss::m_clearMeanMs),
                            MakeDoubleChecker<double>(1.0))
              .AddTraceSource("Transition",
                              "A link turned blocked (true) or clear (false), "
                              "at the given time",
                              MakeTraceSourceAccessor(&CellGymBlockageLoss::m_transition),
                              "ns3::CellGymBlockageLoss::TransitionCallback");
    return tid;
}

CellGymBlockageLoss::CellGymBlockageLoss()
    : m_lossDb(25.0)
    , m_blockedMeanMs(250.0)
    , m_clearMeanMs(2000.0)
    , m_uniform(CreateObject<UniformRandomVariable>())
{
}

Time
CellGymBlockageLoss::Sojourn(bool blocked) const
{
    const double mean = blocked ? m_blockedMeanMs : m_clearMeanMs;
    const double u = m_uniform->GetValue(0.0, 1.0);
    return MicroSeconds(std::llround(1e3 * std::max(-mean * std::log(1.0 - u), 1.0)));
}

CellGymBlockageLoss::Link&
CellGymBlockageLoss::Advance(Ptr<MobilityModel> a, Ptr<MobilityModel> b) const
{
    const MobilityModel* pa = PeekPointer(a);
    const MobilityModel* pb = PeekPointer(b);
    const auto key = std::minmax(pa, pb);
    const Time now = Simulator::Now();
    auto [it, fresh] = m_links.try_emplace({key.first, key.second});
    Link& link = it->second;
    if (fresh)
    {
        link.next = now + Sojourn(false);
    }
    while (now >= link.next)
    {
        link.blocked = !link.blocked;
        m_transition(link.next, link.blocked);
        link.next += Sojourn(link.blocked);
    }
    return link;
}

bool
CellGymBlockageLoss::IsBlocked(Ptr<MobilityModel> a, Ptr<MobilityModel> b)
{
    return Advance(a, b).blocked;
}

double
CellGymBlockageLoss::DoCalcRxPower(double txPowerDbm,
                                   Ptr<MobilityModel> a,
                                   Ptr<MobilityModel> b) const
{
    return txPowerDbm - (Advance(a, b).blocked ? m_lossDb : 0.0);
}

int64_t
CellGymBlockageLoss::DoAssignStreams(int64_t stream)
{
    m_uniform->SetStream(stream);
    return 1;
}

} // namespace ns3
