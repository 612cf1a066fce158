// SPDX-License-Identifier: GPL-2.0-only
// A proxy FfMacScheduler that sizes each downlink transport block from a capacity trace while
// the real scheduler (PF, RR) decides the allocation (cellgym-trace-scheduler.h).
#include "cellgym-trace-scheduler.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/object-factory.h"
#include "ns3/simulator.h"
#include "ns3/string.h"

#include <algorithm>
#include <bitset>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CellgymTraceFfMacScheduler");
NS_OBJECT_ENSURE_REGISTERED(CellgymTraceFfMacScheduler);

namespace
{
/// The capacity the next cells replay (SetCapacityTrace).
std::shared_ptr<const CapacityTrace> g_trace;
/// A transport block smaller than this carries no RLC PDU (UM header 2 bytes + data).
constexpr uint32_t kMinTbBytes = 4;
/// The RLC header bytes of a PDU at least (the inner schedulers' own estimate).
constexpr uint32_t kRlcHeaderBytes = 2;
/// Subframes in ns-3's frame-number cycle (1024 frames of 10).
constexpr uint64_t kSfnCycle = 10240;
} // namespace

/// The SCHED SAP the MAC calls: the downlink trigger passes through the proxy, the rest goes on.
class TraceSchedSapProvider : public FfMacSchedSapProvider
{
  public:
    explicit TraceSchedSapProvider(CellgymTraceFfMacScheduler* s)
        : m_s(s)
    {
    }

    FfMacSchedSapProvider* Inner() const
    {
        return m_s->m_inner->GetFfMacSchedSapProvider();
    }

    void SchedDlRlcBufferReq(const SchedDlRlcBufferReqParameters& p) override
    {
        m_s->OnRlcBuffer(p);
    }

    void SchedDlPagingBufferReq(const SchedDlPagingBufferReqParameters& p) override
    {
        Inner()->SchedDlPagingBufferReq(p);
    }

    void SchedDlMacBufferReq(const SchedDlMacBufferReqParameters& p) override
    {
        Inner()->SchedDlMacBufferReq(p);
    }

    void SchedDlTriggerReq(const SchedDlTriggerReqParameters& p) override
    {
        m_s->OnDlTrigger(p);
    }

    void SchedDlRachInfoReq(const SchedDlRachInfoReqParameters& p) override
    {
        Inner()->SchedDlRachInfoReq(p);
    }

    void SchedDlCqiInfoReq(const SchedDlCqiInfoReqParameters& p) override
    {
        Inner()->SchedDlCqiInfoReq(p);
    }

    void SchedUlTriggerReq(const SchedUlTriggerReqParameters& p) override
    {
        Inner()->SchedUlTriggerReq(p);
    }

    void SchedUlNoiseInterferenceReq(const SchedUlNoiseInterferenceReqParameters& p) override
    {
        Inner()->SchedUlNoiseInterferenceReq(p);
    }

    void SchedUlSrInfoReq(const SchedUlSrInfoReqParameters& p) override
    {
        Inner()->SchedUlSrInfoReq(p);
    }

    void SchedUlMacCtrlInfoReq(const SchedUlMacCtrlInfoReqParameters& p) override
    {
        Inner()->SchedUlMacCtrlInfoReq(p);
    }

    void SchedUlCqiInfoReq(const SchedUlCqiInfoReqParameters& p) override
    {
        Inner()->SchedUlCqiInfoReq(p);
    }

  private:
    CellgymTraceFfMacScheduler* m_s; //!< the proxy
};

/// The CSCHED SAP the MAC calls: the cell configuration is read on its way through.
class TraceCschedSapProvider : public FfMacCschedSapProvider
{
  public:
    explicit TraceCschedSapProvider(CellgymTraceFfMacScheduler* s)
        : m_s(s)
    {
    }

    FfMacCschedSapProvider* Inner() const
    {
        return m_s->m_inner->GetFfMacCschedSapProvider();
    }

    void CschedCellConfigReq(const CschedCellConfigReqParameters& p) override
    {
        m_s->OnCellConfig(p);
        Inner()->CschedCellConfigReq(p);
    }

    void CschedUeConfigReq(const CschedUeConfigReqParameters& p) override
    {
        Inner()->CschedUeConfigReq(p);
    }

    void CschedLcConfigReq(const CschedLcConfigReqParameters& p) override
    {
        Inner()->CschedLcConfigReq(p);
    }

    void CschedLcReleaseReq(const CschedLcReleaseReqParameters& p) override
    {
        Inner()->CschedLcReleaseReq(p);
    }

    void CschedUeReleaseReq(const CschedUeReleaseReqParameters& p) override
    {
        Inner()->CschedUeReleaseReq(p);
    }

  private:
    CellgymTraceFfMacScheduler* m_s; //!< the proxy
};

namespace
{
/// The SCHED SAP the inner scheduler answers on: its downlink decision goes through the proxy.
class TraceSchedSapUser : public FfMacSchedSapUser
{
  public:
    TraceSchedSapUser(CellgymTraceFfMacScheduler* s, FfMacSchedSapUser** mac)
        : m_s(s)
        , m_mac(mac)
    {
    }

    void SchedDlConfigInd(const SchedDlConfigIndParameters& p) override
    {
        m_s->OnDlConfig(p);
    }

    void SchedUlConfigInd(const SchedUlConfigIndParameters& p) override
    {
        (*m_mac)->SchedUlConfigInd(p);
    }

  private:
    CellgymTraceFfMacScheduler* m_s; //!< the proxy
    FfMacSchedSapUser** m_mac;       //!< the MAC's user, once set
};

/// The CSCHED SAP the inner scheduler answers on: straight to the MAC.
class TraceCschedSapUser : public FfMacCschedSapUser
{
  public:
    explicit TraceCschedSapUser(FfMacCschedSapUser** mac)
        : m_mac(mac)
    {
    }

    void CschedCellConfigCnf(const CschedCellConfigCnfParameters& p) override
    {
        (*m_mac)->CschedCellConfigCnf(p);
    }

    void CschedUeConfigCnf(const CschedUeConfigCnfParameters& p) override
    {
        (*m_mac)->CschedUeConfigCnf(p);
    }

    void CschedLcConfigCnf(const CschedLcConfigCnfParameters& p) override
    {
        (*m_mac)->CschedLcConfigCnf(p);
    }

    void CschedLcReleaseCnf(const CschedLcReleaseCnfParameters& p) override
    {
        (*m_mac)->CschedLcReleaseCnf(p);
    }

    void CschedUeReleaseCnf(const CschedUeReleaseCnfParameters& p) override
    {
        (*m_mac)->CschedUeReleaseCnf(p);
    }

    void CschedUeConfigUpdateInd(const CschedUeConfigUpdateIndParameters& p) override
    {
        (*m_mac)->CschedUeConfigUpdateInd(p);
    }

    void CschedCellConfigUpdateInd(const CschedCellConfigUpdateIndParameters& p) override
    {
        (*m_mac)->CschedCellConfigUpdateInd(p);
    }

  private:
    FfMacCschedSapUser** m_mac; //!< the MAC's user, once set
};
} // namespace

TypeId
CellgymTraceFfMacScheduler::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::CellgymTraceFfMacScheduler")
              .SetParent<FfMacScheduler>()
              .AddConstructor<CellgymTraceFfMacScheduler>()
              .AddAttribute("InnerType",
                            "TypeId of the scheduler that allocates the resource blocks",
                            StringValue("ns3::PfFfMacScheduler"),
                            MakeStringAccessor(&CellgymTraceFfMacScheduler::m_innerType),
                            MakeStringChecker());
    return tid;
}

CellgymTraceFfMacScheduler::CellgymTraceFfMacScheduler()
    : m_trace(g_trace)
{
    m_schedProvider = std::make_unique<TraceSchedSapProvider>(this);
    m_cschedProvider = std::make_unique<TraceCschedSapProvider>(this);
    m_schedUser = std::make_unique<TraceSchedSapUser>(this, &m_macSchedUser);
    m_cschedUser = std::make_unique<TraceCschedSapUser>(&m_macCschedUser);
}

CellgymTraceFfMacScheduler::~CellgymTraceFfMacScheduler() = default;

void
CellgymTraceFfMacScheduler::SetCapacityTrace(std::shared_ptr<const CapacityTrace> trace)
{
    g_trace = std::move(trace);
}

void
CellgymTraceFfMacScheduler::NotifyConstructionCompleted()
{
    NS_ABORT_MSG_IF(!m_trace, "CellgymTraceFfMacScheduler: call SetCapacityTrace first");
    ObjectFactory factory;
    factory.SetTypeId(m_innerType);
    m_inner = factory.Create<FfMacScheduler>();
    NS_ABORT_MSG_IF(!m_inner, "InnerType " << m_innerType << " is not an FfMacScheduler");
    m_inner->SetFfMacSchedSapUser(m_schedUser.get());
    m_inner->SetFfMacCschedSapUser(m_cschedUser.get());
    FfMacScheduler::NotifyConstructionCompleted();
}

void
CellgymTraceFfMacScheduler::DoDispose()
{
    if (m_inner)
    {
        m_inner->Dispose();
        m_inner = nullptr;
    }
    FfMacScheduler::DoDispose();
}

void
CellgymTraceFfMacScheduler::SetFfMacCschedSapUser(FfMacCschedSapUser* s)
{
    m_macCschedUser = s;
}

void
CellgymTraceFfMacScheduler::SetFfMacSchedSapUser(FfMacSchedSapUser* s)
{
    m_macSchedUser = s;
}

FfMacCschedSapProvider*
CellgymTraceFfMacScheduler::GetFfMacCschedSapProvider()
{
    return m_cschedProvider.get();
}

FfMacSchedSapProvider*
CellgymTraceFfMacScheduler::GetFfMacSchedSapProvider()
{
    return m_schedProvider.get();
}

void
CellgymTraceFfMacScheduler::SetLteFfrSapProvider(LteFfrSapProvider* s)
{
    m_inner->SetLteFfrSapProvider(s);
}

LteFfrSapUser*
CellgymTraceFfMacScheduler::GetLteFfrSapUser()
{
    return m_inner->GetLteFfrSapUser();
}

void
CellgymTraceFfMacScheduler::OnCellConfig(
    const FfMacCschedSapProvider::CschedCellConfigReqParameters& params)
{
    m_numRbs = params.m_dlBandwidth;
    m_rbgSize = m_numRbs <= 10 ? 1 : m_numRbs <= 26 ? 2 : m_numRbs <= 63 ? 3 : 4;
}

void
CellgymTraceFfMacScheduler::OnRlcBuffer(
    const FfMacSchedSapProvider::SchedDlRlcBufferReqParameters& params)
{
    m_view[{params.m_rnti, params.m_logicalChannelIdentity}] = params;
    m_inner->GetFfMacSchedSapProvider()->SchedDlRlcBufferReq(params);
}

void
CellgymTraceFfMacScheduler::Debit(uint16_t rnti, uint8_t lcid, uint32_t bytes)
{
    auto it = m_view.find({rnti, lcid});
    if (it == m_view.end())
    {
        return;
    }
    auto& v = it->second;
    uint32_t left = bytes > kRlcHeaderBytes ? bytes - kRlcHeaderBytes : 0;
    const auto take = [&left](auto& queue)
    {
        const uint32_t d = std::min<uint32_t>(queue, left);
        queue -= d;
        left -= d;
    };
    take(v.m_rlcStatusPduSize);
    take(v.m_rlcRetransmissionQueueSize);
    take(v.m_rlcTransmissionQueueSize);
}

void
CellgymTraceFfMacScheduler::OnDlTrigger(
    const FfMacSchedSapProvider::SchedDlTriggerReqParameters& params)
{
    // The trigger names the subframe it schedules (frame << 4 | subframe, both from 1; the PHY
    // starts frame 1, subframe 1 at t = 0): its absolute index is the next one at or after now
    // with that position in the 1024-frame cycle. The PHY sends it then.
    const uint64_t now = Simulator::Now().GetMicroSeconds() / 1000;
    const uint64_t frame = (params.m_sfnSf >> 4) & 0x3FF;
    const uint64_t subframe = params.m_sfnSf & 0xF;
    const uint64_t target = ((frame + 1023) % 1024) * 10 + (subframe + 9) % 10;
    m_dlTti = now + (target + kSfnCycle - now % kSfnCycle) % kSfnCycle;
    // The inner scheduler took its own blocks' bytes off its view of the RLC queues; the RLC
    // sent the resized blocks' bytes (none for a withheld DCI): give it the true view (no report
    // may come from the RLC for up to its 10 ms status timer).
    for (const auto& key : m_touched)
    {
        auto it = m_view.find(key);
        if (it != m_view.end())
        {
            m_inner->GetFfMacSchedSapProvider()->SchedDlRlcBufferReq(it->second);
        }
    }
    m_touched.clear();
    if (m_pendingAcks.empty())
    {
        m_inner->GetFfMacSchedSapProvider()->SchedDlTriggerReq(params);
        return;
    }
    FfMacSchedSapProvider::SchedDlTriggerReqParameters withAcks = params;
    withAcks.m_dlInfoList.insert(
        withAcks.m_dlInfoList.end(), m_pendingAcks.begin(), m_pendingAcks.end());
    m_pendingAcks.clear();
    m_inner->GetFfMacSchedSapProvider()->SchedDlTriggerReq(withAcks);
}

void
CellgymTraceFfMacScheduler::OnDlConfig(const FfMacSchedSapUser::SchedDlConfigIndParameters& params)
{
    FfMacSchedSapUser::SchedDlConfigIndParameters out = params;
    out.m_buildDataList.clear();
    const uint32_t usableRbgs = m_numRbs / m_rbgSize;
    const uint64_t capacity = m_trace->BytesAt(m_dlTti);
    for (const auto& bd : params.m_buildDataList)
    {
        const auto& dci = bd.m_dci;
        bool newData = !dci.m_ndi.empty();
        for (auto ndi : dci.m_ndi)
        {
            newData = newData && ndi == 1;
        }
        if (!newData || dci.m_resAlloc != 0)
        {
            out.m_buildDataList.push_back(bd); // a retransmission keeps its block
            continue;
        }
        const uint32_t rbgs = std::bitset<32>(dci.m_rbBitmap).count();
        const uint64_t bytes = capacity * std::min(rbgs, usableRbgs) / usableRbgs;
        const size_t layers = dci.m_tbsSize.size();
        BuildDataListElement_s resized = bd;
        bool tooSmall = false;
        for (size_t k = 0; k < layers; ++k)
        {
            const uint64_t tb = bytes / layers + (k == 0 ? bytes % layers : 0);
            NS_ABORT_MSG_IF(tb > UINT16_MAX,
                            "--capacityTrace: " << tb << " bytes in one TTI exceed an LTE DCI's "
                                                << UINT16_MAX << " (scale the trace down)");
            tooSmall = tooSmall || tb < kMinTbBytes;
            const uint64_t old = std::max<uint64_t>(dci.m_tbsSize[k], 1);
            resized.m_dci.m_tbsSize[k] = static_cast<uint16_t>(tb);
            for (auto& lc : resized.m_rlcPduList)
            {
                if (k < lc.size())
                {
                    lc[k].m_size = static_cast<uint16_t>(lc[k].m_size * tb / old);
                }
            }
        }
        if (tooSmall)
        {
            // No data this TTI: withhold the DCI; the inner scheduler's HARQ process is freed
            // by an ACK with the next trigger (nothing was sent, nothing can fail).
            DlInfoListElement_s ack;
            ack.m_rnti = dci.m_rnti;
            ack.m_harqProcessId = dci.m_harqProcess;
            ack.m_harqStatus.assign(layers, DlInfoListElement_s::ACK);
            m_pendingAcks.push_back(ack);
            for (const auto& lc : bd.m_rlcPduList)
            {
                for (const auto& pdu : lc)
                {
                    m_touched.emplace_back(dci.m_rnti, pdu.m_logicalChannelIdentity);
                }
            }
            continue;
        }
        // The RLC answers with the resized PDUs (synchronously, inside the MAC's call below,
        // where a report it sends replaces this view): debit them now.
        for (const auto& lc : resized.m_rlcPduList)
        {
            for (const auto& pdu : lc)
            {
                Debit(dci.m_rnti, pdu.m_logicalChannelIdentity, pdu.m_size);
                m_touched.emplace_back(dci.m_rnti, pdu.m_logicalChannelIdentity);
            }
        }
        out.m_buildDataList.push_back(std::move(resized));
    }
    m_macSchedUser->SchedDlConfigInd(out);
}

} // namespace ns3
