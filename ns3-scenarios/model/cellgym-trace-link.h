// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_TRACE_LINK_H
#define CELLGYM_TRACE_LINK_H

#include "ns3/event-id.h"
#include "ns3/queue-disc.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @brief A Mahimahi trace's delivery opportunities per ms of one period.
 *
 * A Mahimahi trace holds one line per delivery opportunity of one 1500-byte packet: the time in
 * ms since the start, non-decreasing; several opportunities in one ms repeat it. Mahimahi restarts
 * the schedule at the last timestamp T, so the period is T ms and the opportunities stamped T
 * fall in ms 0 of the next period (as cellgym.traces.parse_mahimahi counts them).
 */
struct MahimahiSchedule
{
    std::vector<uint32_t> perMs; //!< opportunities in each ms of the period (size: the period)
    uint64_t total{0};           //!< opportunities in one period
};

/**
 * @brief Read a Mahimahi trace file.
 * @param path the file
 * @param error set to what is wrong when the file cannot be used
 * @return the schedule; empty (perMs.size() == 0) on error
 */
MahimahiSchedule ReadMahimahiSchedule(const std::string& path, std::string& error);

/**
 * @brief A Mahimahi-style trace-driven link as a queue disc: a drop-tail FIFO of MaxSize packets
 * whose packets leave only at the trace's delivery opportunities, one packet each.
 *
 * Installed on a device much faster than the trace (the scenario's 100 Gbit/s router -> PGW
 * link), it is that link's rate: at each ms of the looped schedule with n opportunities, up to n
 * queued packets go to the device; an opportunity that finds the queue empty is lost, as in
 * Mahimahi's link. The schedule starts at simulation time 0.
 */
class CellGymTraceQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId();
    CellGymTraceQueueDisc();
    ~CellGymTraceQueueDisc() override;

    /**
     * @brief Set the delivery schedule and start replaying it (call once, before the start).
     * @param schedule opportunities per ms of one period (at least one opportunity)
     */
    void SetSchedule(const MahimahiSchedule& schedule);

    /// @return the packets that have left at opportunities
    uint64_t GetDelivered() const;

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    Ptr<const QueueDiscItem> DoPeek() override;
    bool CheckConfig() override;
    void InitializeParams() override;
    void DoDispose() override;

    /// Open the opportunities of the ms at index m_next of the busy ms list, then schedule the
    /// next.
    void Opportunities();

    std::vector<uint32_t> m_busyMs; //!< ms of the period with opportunities, ascending
    std::vector<uint32_t> m_counts; //!< their opportunities
    uint64_t m_periodMs{0};         //!< period of the schedule
    std::size_t m_next{0};          //!< index of the next busy ms
    uint64_t m_loop{0};             //!< periods replayed before the next busy ms
    uint32_t m_credits{0};          //!< opportunities open now
    uint64_t m_delivered{0};        //!< packets sent at opportunities
    EventId m_event;                //!< the next opportunities
};

} // namespace ns3

#endif // CELLGYM_TRACE_LINK_H
