// SPDX-License-Identifier: GPL-2.0-only
#include "xrc-feedback-tag.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(XrcFeedbackTag);

TypeId
XrcFeedbackTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::XrcFeedbackTag")
                            .SetParent<Tag>()
                            .SetGroupName("CellGym")
                            .AddConstructor<XrcFeedbackTag>();
    return tid;
}

TypeId
XrcFeedbackTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
XrcFeedbackTag::GetSerializedSize() const
{
    return 3 * sizeof(double);
}

void
XrcFeedbackTag::Serialize(TagBuffer i) const
{
    i.WriteDouble(rateMbps);
    i.WriteDouble(holMs);
    i.WriteDouble(stampS);
}

void
XrcFeedbackTag::Deserialize(TagBuffer i)
{
    rateMbps = i.ReadDouble();
    holMs = i.ReadDouble();
    stampS = i.ReadDouble();
}

void
XrcFeedbackTag::Print(std::ostream& os) const
{
    os << "rate=" << rateMbps << "Mbps hol=" << holMs << "ms at=" << stampS << "s";
}

} // namespace ns3
