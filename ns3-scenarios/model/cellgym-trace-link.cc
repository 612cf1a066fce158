// SPDX-License-Identifier: GPL-2.0-only
#include "cellgym-trace-link.h"

#include "ns3/drop-tail-queue.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <fstream>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CellGymTraceQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(CellGymTraceQueueDisc);

MahimahiSchedule
ReadMahimahiSchedule(const std::string& path, std::string& error)
{
    MahimahiSchedule out;
    std::ifstream in(path);
    if (!in)
    {
        error = "cannot open the file";
        return out;
    }
    std::vector<uint64_t> stamps;
    std::string token;
    uint64_t lineNo = 0;
    while (in >> token)
    {
        ++lineNo;
        uint64_t value = 0;
        std::size_t used = 0;
        try
        {
            if (token.empty() || token[0] == '-')
            {
                throw std::invalid_argument("negative");
            }
            value = std::stoull(token, &used);
        }
        catch (const std::exception&)
        {
            used = 0;
        }
        if (used != token.size() || value > 1'000'000'000ULL)
        {
            std::ostringstream msg;
            msg << "entry " << lineNo << " ('" << token
                << "') is not a timestamp in ms (an integer in [0, 1e9])";
            error = msg.str();
            return out;
        }
        if (!stamps.empty() && value < stamps.back())
        {
            std::ostringstream msg;
            msg << "entry " << lineNo << " (" << value << ") is below the previous one ("
                << stamps.back() << "): timestamps must be non-decreasing";
            error = msg.str();
            return out;
        }
        stamps.push_back(value);
    }
    if (stamps.empty())
    {
        error = "it holds no delivery opportunity";
        return out;
    }
    const uint64_t period = stamps.back();
    if (period == 0)
    {
        error = "it lasts 0 ms: its last timestamp must be > 0";
        return out;
    }
    out.perMs.assign(period, 0);
    for (uint64_t s : stamps)
    {
        ++out.perMs[s % period];
    }
    out.total = stamps.size();
    return out;
}

TypeId
CellGymTraceQueueDisc::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::CellGymTraceQueueDisc")
              .SetParent<QueueDisc>()
              .SetGroupName("CellGym")
              .AddConstructor<CellGymTraceQueueDisc>()
              .AddAttribute("MaxSize",
                            "The drop-tail buffer: packets waiting for an opportunity",
                            QueueSizeValue(QueueSize("100p")),
                            MakeQueueSizeAccessor(&QueueDisc::SetMaxSize, &QueueDisc::GetMaxSize),
                            MakeQueueSizeChecker());
    return tid;
}

CellGymTraceQueueDisc::CellGymTraceQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE)
{
}

CellGymTraceQueueDisc::~CellGymTraceQueueDisc() = default;

void
CellGymTraceQueueDisc::SetSchedule(const MahimahiSchedule& schedule)
{
    NS_ABORT_MSG_IF(schedule.total == 0, "CellGymTraceQueueDisc: a schedule without opportunities");
    m_busyMs.clear();
    m_counts.clear();
    for (std::size_t ms = 0; ms < schedule.perMs.size(); ++ms)
    {
        if (schedule.perMs[ms] > 0)
        {
            m_busyMs.push_back(static_cast<uint32_t>(ms));
            m_counts.push_back(schedule.perMs[ms]);
        }
    }
    m_periodMs = schedule.perMs.size();
    m_next = 0;
    m_loop = 0;
    m_event.Cancel();
    const Time at = MilliSeconds(m_busyMs[0]);
    m_event
        = Simulator::Schedule(at - Simulator::Now(), &CellGymTraceQueueDisc::Opportunities, this);
}

uint64_t
CellGymTraceQueueDisc::GetDelivered() const
{
    return m_delivered;
}

void
CellGymTraceQueueDisc::Opportunities()
{
    m_credits = m_counts[m_next];
    Run();         // up to m_credits queued packets leave now
    m_credits = 0; // the unused opportunities are lost
    if (++m_next == m_busyMs.size())
    {
        m_next = 0;
        ++m_loop;
    }
    const Time at = MilliSeconds(static_cast<int64_t>(m_loop * m_periodMs + m_busyMs[m_next]));
    m_event
        = Simulator::Schedule(at - Simulator::Now(), &CellGymTraceQueueDisc::Opportunities, this);
}

bool
CellGymTraceQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    if (GetCurrentSize() + item > GetMaxSize())
    {
        DropBeforeEnqueue(item, "Trace link buffer full");
        return false;
    }
    return GetInternalQueue(0)->Enqueue(item);
}

Ptr<QueueDiscItem>
CellGymTraceQueueDisc::DoDequeue()
{
    if (m_credits == 0)
    {
        return nullptr;
    }
    Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
    if (item)
    {
        --m_credits;
        ++m_delivered;
    }
    return item;
}

Ptr<const QueueDiscItem>
CellGymTraceQueueDisc::DoPeek()
{
    return m_credits == 0 ? nullptr : GetInternalQueue(0)->Peek();
}

bool
CellGymTraceQueueDisc::CheckConfig()
{
    if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0)
    {
        NS_LOG_ERROR("CellGymTraceQueueDisc takes no classes or packet filters");
        return false;
    }
    if (GetNInternalQueues() == 0)
    {
        AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
            "MaxSize", QueueSizeValue(GetMaxSize())));
    }
    return GetNInternalQueues() == 1;
}

void
CellGymTraceQueueDisc::InitializeParams()
{
}

void
CellGymTraceQueueDisc::DoDispose()
{
    m_event.Cancel();
    QueueDisc::DoDispose();
}

} // namespace ns3
