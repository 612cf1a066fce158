// SPDX-License-Identifier: GPL-2.0-only
#include "xrc-component-carrier-manager.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(XrcComponentCarrierManager);

TypeId
XrcComponentCarrierManager::GetTypeId()
{
    static TypeId tid = TypeId("ns3::XrcComponentCarrierManager")
                            .SetParent<NoOpComponentCarrierManager>()
                            .SetGroupName("CellGym")
                            .AddConstructor<XrcComponentCarrierManager>();
    return tid;
}

void
XrcComponentCarrierManager::SetReportCallback(ReportCallback cb)
{
    m_report = std::move(cb);
}

void
XrcComponentCarrierManager::DoReportBufferStatus(
    LteMacSapProvider::ReportBufferStatusParameters params)
{
    // LCIDs 1 and 2 are signalling bearers; data radio bearers start at 3.
    if (m_report && params.lcid >= 3)
    {
        m_report(params.rnti, params.lcid, params.txQueueSize, params.txQueueHolDelay);
    }
    NoOpComponentCarrierManager::DoReportBufferStatus(params);
}

} // namespace ns3
