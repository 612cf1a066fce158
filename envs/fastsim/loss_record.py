"""The per-flow loss record: the segments the eNB dropped and what became of their retransmission.

A ring of ``[seq, state]`` entries (``lost[b, f]``, ``I_LOST_HEAD``/``I_LOST_LEN``, states
``codes.LOST_*``): the RLC buffer writes a dropped segment (``rlc._rlc_push``), the sender marks
its retransmission (``senders/send.py``), the receiver marks it delivered (``receiver._receive``).
The sender reads it only as far as its SACK view allows (``_pipe``).
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.codes import LOST_DONE, LOST_NEED, ST_LOSS
from envs.fastsim.state import (
    I_CSTATE,
    I_LOST_HEAD,
    I_LOST_LEN,
    I_SACKED,
    I_SND_NXT,
    I_UNA,
    I_VIEW_HIGH,
)


@njit(cache=True, error_model="numpy", _nrt=False)
def _lost_slot(fi, lost, b, f, seq):
    """Index of segment ``seq`` in the flow's loss record, or -1 when it is not there."""
    k = lost.shape[2]
    for i in range(fi[b, f, I_LOST_LEN]):
        j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
        if lost[b, f, j, 0] == seq:
            return j
    return -1


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _pipe(fi, lost, b, f, dupthresh, ns3):
    """Segments in flight: sent, not (s)acked and not known lost (RFC 6675 style).

    With ``ns3`` as ns-3.44's ``TcpTxBuffer::BytesInFlight`` (sent - sacked - lost + retrans):
    a retransmitted segment counts until it is cumulatively acknowledged, also once SACKed (its
    ``m_retrans`` byte count is only removed by ``DiscardUpTo``; an RTO clears them all).
    """
    n = fi[b, f, I_SND_NXT] - fi[b, f, I_UNA] - fi[b, f, I_SACKED]
    high = fi[b, f, I_VIEW_HIGH]
    loss_state = fi[b, f, I_CSTATE] == ST_LOSS
    k = lost.shape[2]
    for i in range(fi[b, f, I_LOST_LEN]):
        j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
        if lost[b, f, j, 0] < fi[b, f, I_UNA]:
            continue
        st = lost[b, f, j, 1]
        if st == LOST_NEED:
            if loss_state or lost[b, f, j, 0] + dupthresh < high:
                n -= 1
        elif ns3 and st == LOST_DONE and not loss_state:
            n += 1
    return max(n, 0)
