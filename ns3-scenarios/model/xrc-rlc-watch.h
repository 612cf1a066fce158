// SPDX-License-Identifier: GPL-2.0-only
#ifndef CELLGYM_XRC_RLC_WATCH_H
#define CELLGYM_XRC_RLC_WATCH_H

#include <cstdint>
#include <functional>

namespace ns3
{

/**
 * @brief What a base station's carrier manager sees of the RLC, for XRC's agent: every buffer
 * status report of a data bearer, and the moment a bearer's buffer runs empty.
 *
 * Shared by the LTE (XrcComponentCarrierManager) and NR (XrcBwpManagerGnb) carrier managers,
 * which relay reports and transmit opportunities between the RLC and the MAC and call this.
 *
 * The RLC reports only when a PDCP PDU arrives and every 10 ms while its buffer is not empty, so
 * the last report of a buffer that drains is stale (non-zero). The watch therefore also follows
 * the transmit opportunities relayed from the MAC to the RLC: when the RLC answers one with less
 * than the opportunity minus the RLC's few bytes of slack, its buffer has run empty.
 */
class XrcRlcWatch
{
  public:
    /// Callback: rnti, lcid, tx queue bytes, tx queue HoL delay in ms.
    using ReportCallback = std::function<void(uint16_t, uint8_t, uint32_t, uint16_t)>;
    /// Callback: rnti, lcid of a data bearer whose RLC transmit buffer has just run empty.
    using DrainCallback = std::function<void(uint16_t, uint8_t)>;

    /// Data radio bearers start at LCID 3 (1 and 2 are signalling bearers).
    static constexpr uint8_t kFirstDrbLcid = 3;
    /// An RLC UM with data left may leave up to 2 bytes of an opportunity unused (fixed header
    /// without room for data); allow a little more for length indicators.
    static constexpr uint32_t kRlcSlackBytes = 4;

    ReportCallback report; //!< receiver of the reports
    DrainCallback drain;   //!< receiver of buffer-empty events

    /// @brief A buffer status report on its way from the RLC to the MAC.
    void Report(uint16_t rnti, uint8_t lcid, uint32_t txQueueSize, uint16_t txQueueHolDelay)
    {
        if (report && lcid >= kFirstDrbLcid)
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
    }

    /// @brief The RLC has answered the opportunity of `bytes`.
    void EndTxOp(uint16_t rnti, uint8_t lcid, uint32_t bytes)
    {
        m_inTxOp = false;
        // An opportunity of 2 bytes or less is refused whatever the buffer holds.
        if (drain && lcid >= kFirstDrbLcid && bytes > 2 && m_txOpSent + kRlcSlackBytes < bytes)
        {
            drain(rnti, lcid);
        }
    }

  private:
    bool m_inTxOp{false};   //!< a transmit opportunity is being relayed to the RLC
    uint16_t m_txOpRnti{0}; //!< RNTI of that opportunity
    uint8_t m_txOpLcid{0};  //!< LCID of that opportunity
    uint32_t m_txOpSent{0}; //!< PDU bytes the RLC sent in answer to it
};

} // namespace ns3

#endif // CELLGYM_XRC_RLC_WATCH_H
