// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-explicit-tags.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(ExplicitHeaderTag);
NS_OBJECT_ENSURE_REGISTERED(ExplicitFeedbackTag);

TypeId
ExplicitHeaderTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ExplicitHeaderTag")
                            .SetParent<Tag>()
                            .SetGroupName("CellGym")
                            .AddConstructor<ExplicitHeaderTag>();
    return tid;
}

TypeId
ExplicitHeaderTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
ExplicitHeaderTag::GetSerializedSize() const
{
    return 3 * sizeof(double);
}

void
ExplicitHeaderTag::Serialize(TagBuffer i) const
{
    i.WriteDouble(cwndBytes);
    i.WriteDouble(rttS);
    i.WriteDouble(segBytes);
}

void
ExplicitHeaderTag::Deserialize(TagBuffer i)
{
    cwndBytes = i.ReadDouble();
    rttS = i.ReadDouble();
    segBytes = i.ReadDouble();
}

void
ExplicitHeaderTag::Print(std::ostream& os) const
{
    os << "cwnd=" << cwndBytes << "B rtt=" << rttS << "s seg=" << segBytes << "B";
}

TypeId
ExplicitFeedbackTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ExplicitFeedbackTag")
                            .SetParent<Tag>()
                            .SetGroupName("CellGym")
                            .AddConstructor<ExplicitFeedbackTag>();
    return tid;
}

TypeId
ExplicitFeedbackTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
ExplicitFeedbackTag::GetSerializedSize() const
{
    return 2 * sizeof(double);
}

void
ExplicitFeedbackTag::Serialize(TagBuffer i) const
{
    i.WriteDouble(xcpTotalBytes);
    i.WriteDouble(rcpRateBps);
}

void
ExplicitFeedbackTag::Deserialize(TagBuffer i)
{
    xcpTotalBytes = i.ReadDouble();
    rcpRateBps = i.ReadDouble();
}

void
ExplicitFeedbackTag::Print(std::ostream& os) const
{
    os << "xcp=" << xcpTotalBytes << "B rcp=" << rcpRateBps << "bps";
}

} // namespace ns3
