// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_XRC_RLC_WATCH_H
#define CELLGYM_XRC_RLC_WATCH_H

#include "ns3/nstime.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <utility>

namespace ns3
{

/**
 * @brief What a base station's carrier manager sees of the RLC, for XRC's agent: every buffer
 * status report of a data bearer, the moment a bearer's buffer runs empty, and the exact age of
 * the head of line of each bearer's transmit queue.
 *
 * Shared by the LTE (XrcComponentCarrierManager) and NR (XrcBwpManagerGnb) carrier managers,
 * which relay reports and transmit opportunities between the RLC and the MAC and call this.
 *
 * The RLC reports only when a PDCP PDU arrives and every 10 ms while its buffer is not empty, so
 * the last report of a buffer that drains is stale (non-zero). The watch therefore also follows
 * the transmit opportunities relayed from the MAC to the RLC: when the RLC answers one with less
 * than the opportunity minus the RLC's few bytes of slack, its buffer has run empty.
 *
 * The head-of-line delay the RLC reports is truncated to whole ms and refreshed only on those
 * reports: it cannot resolve NR's sub-millisecond slots. The watch keeps its own copy of each data
 * bearer's RLC UM transmit queue instead (a FIFO of SDUs with their arrival instants):
 * - a report whose size exceeds the copy's is a PDCP PDU arriving (the RLC reports at once, in
 *   the same event): an SDU of the growth less the RLC's 2 bytes of header estimate joins the
 *   back, arrived now;
 * - a PDU passed from the RLC to the MAC takes its data bytes from the front (the PDU less its
 *   RLC UM header: 2 fixed bytes, then 1.5 bytes, rounded up, per SDU or segment after the
 *   first, as `LteRlcUm`/`NrRlcUm::DoNotifyTxOpportunity` build it); a segmented SDU's rest
 *   stays at the front with its arrival instant, as the RLC keeps it;
 * - every report then sets the copy's size to the reported one (from the front when it holds
 *   more), and a drained buffer empties it.
 * The head's age at any instant is then now minus the front SDU's arrival, at the simulator's
 * resolution; `head` is told every time the front changes.
 */
class XrcRlcWatch
{
  public:
    /// Callback: rnti, lcid, tx queue bytes, tx queue HoL delay in ms (the RLC's, truncated).
    using ReportCallback = std::function<void(uint16_t, uint8_t, uint32_t, uint16_t)>;
    /// Callback: rnti, lcid of a data bearer whose RLC transmit buffer has just run empty.
    using DrainCallback = std::function<void(uint16_t, uint8_t)>;
    /// Callback: rnti, lcid, arrival instant of the bearer's new head of line (none: empty).
    using HeadCallback = std::function<void(uint16_t, uint8_t, std::optional<Time>)>;
    /// Callback: rnti, lcid, the sojourn in the RLC of an SDU whose first byte has just left
    /// (the carrier managers measure it from the PDCP's timestamp on the SDU).
    using SojournCallback = std::function<void(uint16_t, uint8_t, Time)>;

    /// Data radio bearers start at LCID 3 (1 and 2 are signalling bearers).
    static constexpr uint8_t kFirstDrbLcid = 3;
    /// An RLC UM with data left may leave up to 2 bytes of an opportunity unused (fixed header
    /// without room for data); allow a little more for length indicators.
    static constexpr uint32_t kRlcSlackBytes = 4;
    /// The RLC UM's estimate of its header per queued SDU, counted in its reports.
    static constexpr uint32_t kReportHeaderBytes = 2;
    /// A report growing by less than this is a correction, not a PDCP PDU (at least a PDCP
    /// header and an IPv4 header).
    static constexpr uint32_t kMinSduBytes = 20;

    ReportCallback report;   //!< receiver of the reports
    DrainCallback drain;     //!< receiver of buffer-empty events
    HeadCallback head;       //!< receiver of head-of-line changes
    SojournCallback sojourn; //!< receiver of SDU sojourns (a diagnostic; may stay unset)

    /// @brief A buffer status report on its way from the RLC to the MAC.
    void Report(uint16_t rnti, uint8_t lcid, uint32_t txQueueSize, uint16_t txQueueHolDelay)
    {
        if (lcid < kFirstDrbLcid)
        {
            return;
        }
        Reconcile(rnti, lcid, txQueueSize);
        if (report)
        {
            report(rnti, lcid, txQueueSize, txQueueHolDelay);
        }
    }

    /// @brief A transmit opportunity is about to be relayed to the RLC (it answers synchronously).
    void BeginTxOp(uint16_t rnti, uint8_t lcid)
    {
        m_inTxOp = true;
        m_txOpRnti = rnti;
        m_txOpLcid = lcid;
        m_txOpSent = 0;
    }

    /// @brief A PDU passes from the RLC to the MAC.
    void Pdu(uint16_t rnti, uint8_t lcid, uint32_t bytes)
    {
        if (m_inTxOp && rnti == m_txOpRnti && lcid == m_txOpLcid)
        {
            m_txOpSent += bytes;
        }
        if (lcid >= kFirstDrbLcid)
        {
            Consume(rnti, lcid, bytes);
        }
    }

    /// @brief The RLC has answered the opportunity of `bytes`.
    void EndTxOp(uint16_t rnti, uint8_t lcid, uint32_t bytes)
    {
        m_inTxOp = false;
        // An opportunity of 2 bytes or less is refused whatever the buffer holds.
        if (lcid >= kFirstDrbLcid && bytes > 2 && m_txOpSent + kRlcSlackBytes < bytes)
        {
            auto it = m_queues.find({rnti, lcid});
            if (it != m_queues.end() && !it->second.sdus.empty())
            {
                it->second.sdus.clear();
                it->second.bytes = 0;
                TellHead(rnti, lcid, it->second);
            }
            if (drain)
            {
                drain(rnti, lcid);
            }
        }
    }

    /// @brief An SDU whose first byte has just left for the MAC arrived at the RLC at `since`.
    void SduLeft(uint16_t rnti, uint8_t lcid, Time since)
    {
        if (sojourn && lcid >= kFirstDrbLcid)
        {
            sojourn(rnti, lcid, Simulator::Now() - since);
        }
    }

    /// @return the arrival instant of the bearer's head of line (none: its queue is empty)
    std::optional<Time> HeadSince(uint16_t rnti, uint8_t lcid) const
    {
        auto it = m_queues.find({rnti, lcid});
        if (it == m_queues.end() || it->second.sdus.empty())
        {
            return std::nullopt;
        }
        return it->second.sdus.front().since;
    }

    /// @return the bytes the bearer's copy holds, counted as the RLC reports them
    uint32_t QueuedBytes(uint16_t rnti, uint8_t lcid) const
    {
        auto it = m_queues.find({rnti, lcid});
        return it == m_queues.end() ? 0 : it->second.Reported();
    }

    /**
     * @brief RLC UM header bytes of a PDU carrying `fields` SDUs or segments: 2 fixed bytes,
     * then an extension bit and an 11-bit length indicator per field after the first (2 bytes
     * for the first such pair, 1 for the second, and so on).
     * @param fields the PDU's data fields (at least 1)
     * @return the header's bytes
     */
    static uint32_t UmHeaderBytes(uint32_t fields)
    {
        const uint32_t pairs = fields > 0 ? fields - 1 : 0;
        return 2 + pairs + (pairs + 1) / 2;
    }

  private:
    /// One SDU (or the rest of a segmented one) in the copy of a transmit queue.
    struct Sdu
    {
        Time since;     //!< its arrival at the RLC
        uint32_t bytes; //!< its bytes still queued
    };

    /// The copy of one bearer's RLC transmit queue.
    struct Queue
    {
        std::deque<Sdu> sdus; //!< oldest first
        uint64_t bytes{0};    //!< sum of their bytes

        /// @return the size the RLC reports for this queue (data plus its header estimate)
        uint32_t Reported() const
        {
            return static_cast<uint32_t>(bytes + kReportHeaderBytes * sdus.size());
        }
    };

    /// Tell the head receiver the queue's (new) front.
    void TellHead(uint16_t rnti, uint8_t lcid, const Queue& q)
    {
        if (head)
        {
            head(rnti,
                 lcid,
                 q.sdus.empty() ? std::nullopt : std::optional<Time>(q.sdus.front().since));
        }
    }

    /// Take `bytes` from the front; return whether the front SDU changed.
    static bool TakeFront(Queue& q, uint64_t bytes)
    {
        bool changed = false;
        while (bytes > 0 && !q.sdus.empty())
        {
            Sdu& front = q.sdus.front();
            if (bytes >= front.bytes)
            {
                bytes -= front.bytes;
                q.bytes -= front.bytes;
                q.sdus.pop_front();
                changed = true;
            }
            else
            {
                front.bytes -= static_cast<uint32_t>(bytes);
                q.bytes -= bytes;
                bytes = 0;
            }
        }
        return changed;
    }

    /// Make the copy agree with a report of `reported` bytes.
    void Reconcile(uint16_t rnti, uint8_t lcid, uint32_t reported)
    {
        Queue& q = m_queues[{rnti, lcid}];
        const uint32_t mine = q.Reported();
        if (reported == mine)
        {
            return;
        }
        const bool wasEmpty = q.sdus.empty();
        bool changed = false;
        if (reported == 0)
        {
            q.sdus.clear();
            q.bytes = 0;
            changed = !wasEmpty;
        }
        else if (reported > mine)
        {
            const uint32_t growth = reported - mine;
            if (wasEmpty || growth >= kMinSduBytes)
            {
                // A PDCP PDU has just arrived.
                const uint32_t data = growth > kReportHeaderBytes ? growth - kReportHeaderBytes : 1;
                q.sdus.push_back({Simulator::Now(), data});
                q.bytes += data;
                changed = wasEmpty;
            }
            else
            {
                q.sdus.back().bytes += growth; // the copy sent a few bytes too many
                q.bytes += growth;
            }
        }
        else
        {
            // The copy holds more than the RLC: what is missing left from the front, SDUs with
            // their header estimate.
            uint32_t excess = mine - reported;
            while (excess > 0 && !q.sdus.empty())
            {
                Sdu& front = q.sdus.front();
                if (excess >= front.bytes + kReportHeaderBytes)
                {
                    excess -= front.bytes + kReportHeaderBytes;
                    q.bytes -= front.bytes;
                    q.sdus.pop_front();
                    changed = true;
                }
                else
                {
                    const uint32_t cut = std::min(excess, front.bytes - 1);
                    front.bytes -= cut;
                    q.bytes -= cut;
                    excess = 0;
                }
            }
        }
        if (changed)
        {
            TellHead(rnti, lcid, q);
        }
    }

    /// A PDU of `pduBytes` left: take its data bytes from the front of the copy.
    void Consume(uint16_t rnti, uint8_t lcid, uint32_t pduBytes)
    {
        auto it = m_queues.find({rnti, lcid});
        if (it == m_queues.end() || it->second.sdus.empty())
        {
            return;
        }
        Queue& q = it->second;
        // The PDU carries the first n fields, n the fewest whose bytes hold its data field: the
        // RLC ends a PDU only when its data field is full or its queue empty.
        uint64_t data = 0;
        uint64_t held = 0;
        uint32_t fields = 0;
        for (const Sdu& sdu : q.sdus)
        {
            ++fields;
            held += sdu.bytes;
            const uint32_t header = UmHeaderBytes(fields);
            data = pduBytes > header ? pduBytes - header : 0;
            if (data <= held)
            {
                break;
            }
        }
        if (TakeFront(q, std::min(data, held)))
        {
            TellHead(rnti, lcid, q);
        }
    }

    bool m_inTxOp{false};   //!< a transmit opportunity is being relayed to the RLC
    uint16_t m_txOpRnti{0}; //!< RNTI of that opportunity
    uint8_t m_txOpLcid{0};  //!< LCID of that opportunity
    uint32_t m_txOpSent{0}; //!< PDU bytes the RLC sent in answer to it
    std::map<std::pair<uint16_t, uint8_t>, Queue> m_queues; //!< (rnti, lcid) -> queue copy
};

} // namespace ns3

#endif // CELLGYM_XRC_RLC_WATCH_H
