"""Loss recovery shared by the senders, as ns-3.44's ``TcpSocketBase`` and ``TcpPrrRecovery``.

Loss detection on each bunch of ACKs (a hole with ``dupthresh`` segments SACKed above it, or
ns-3's duplicate-ACK rule), proportional rate reduction in fast recovery, and the
retransmission timeout. What a congestion control does on these events is in ``dispatch``.
"""

from __future__ import annotations

import math

from numba import njit

from envs.fastsim.codes import LOST_AGAIN, LOST_NEED, LOST_RETX, RECOVERY_NS3_PRR, ST_LOSS
from envs.fastsim.loss_record import _lost_slot, _pipe
from envs.fastsim.params import P_DUPTHRESH, P_RECOVERY
from envs.fastsim.senders.dispatch import _on_rto, _ssthresh_on_loss
from envs.fastsim.state import (
    I_CSTATE,
    I_DUPACK_CNT,
    I_LOST_HEAD,
    I_LOST_LEN,
    I_RECOVER,
    I_RTO_AT_MS,
    I_RTO_MS,
    I_SND_NXT,
    I_UNA,
    X_CWND,
    X_O_LOSS,
    X_PRR_DELIV,
    X_PRR_OUT,
    X_PRR_RFS,
    X_SSTHRESH,
)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _loss_trigger(b, f, fi, lost, una, v_cum, v_high, new_dupacks, dupthresh, prr_mode):
    """Whether a bunch of ACKs starts fast recovery: a hole with dupthresh segments above it."""
    k = lost.shape[2]
    trigger = False
    for i in range(fi[b, f, I_LOST_LEN]):
        j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
        if (
            lost[b, f, j, 1] == LOST_NEED
            and lost[b, f, j, 0] >= una
            and lost[b, f, j, 0] + dupthresh < v_high
        ):
            trigger = True
            break
    # ns-3 (``TcpSocketBase::DupAck``) also enters recovery on the third duplicate ACK
    # (``m_dupAckCount``, reset when recovery ends or a cumulative ACK carries no new SACK
    # information) while a hole is open at the cumulative ACK, whether or not that segment
    # was retransmitted already: a hole beyond the recovery point still open when recovery
    # ends starts a new recovery (a second reduction), and the head is sent again.
    if prr_mode:
        if new_dupacks == 0 and v_cum > una:
            fi[b, f, I_DUPACK_CNT] = 0
        fi[b, f, I_DUPACK_CNT] += max(new_dupacks, 0)
    dup_rule = fi[b, f, I_DUPACK_CNT] >= dupthresh
    if prr_mode and not trigger and v_cum < v_high and (dup_rule or new_dupacks > 0):
        j = _lost_slot(fi, lost, b, f, v_cum)
        # ``IsLost(HighACK)``: the head keeps ns-3's lost mark after its retransmission, so
        # any duplicate ACK re-enters recovery.
        if j >= 0 and (dup_rule or v_cum + dupthresh < v_high):
            trigger = True
            if lost[b, f, j, 1] == LOST_RETX or lost[b, f, j, 1] == LOST_AGAIN:
                lost[b, f, j, 1] = LOST_NEED
    return trigger


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _pre_entry_sends(b, f, fi, fx, pipe_segs, new_acks, delivered_segs, dupthresh, seg):
    """New segments the ACKs of a bunch before the one that enters fast recovery let out.

    ns-3 takes a TTI's ACKs one by one (``ProcessAck``): each before the entering one (in
    CA_OPEN or CA_DISORDER) frees what it delivered and ``SendPendingData`` fills the window
    with new data at once; the entering ACK then sends the fast retransmission, behind them on
    the way to the RLC (a 64-packet buffer, ``cubic_buffer64`` seed 1: three new segments and
    then the retransmission, dropped, an RTO a second later). In flight at the last of those
    ACKs: the bunch's final pipe plus the segments the ACKs from the entering one SACKed and
    the head, lost only from the entering ACK on. The ACKs from the entering one are counted
    as ``_prr_on_ack``'s caller does (the duplicate ACK that reached ``dupthresh``). A window
    that was open before the bunch (a paced sender, an agent's new window) is not these ACKs'
    doing: they let out at most what they delivered.
    """
    after = min(max(fi[b, f, I_DUPACK_CNT] - dupthresh + 1, 1), new_acks)
    if new_acks <= after:
        return 0
    free = int(fx[b, f, X_CWND] // seg) - (pipe_segs + after + 1)
    return max(min(free, delivered_segs - after), 0)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _prr_on_ack(fx, fi, lost, b, f, entered, delivered_segs, dupacks, una_before, acked, seg, p):
    """ns-3.44 ``TcpPrrRecovery`` (``EnterRecovery``/``DoRecovery``) for one bunch of ACKs.

    On the bunch that enters recovery, ``delivered_segs`` and ``dupacks`` are those of the ACKs
    from the one that entered on (``ack._sender_acks``): ns-3 takes ACKs one by one, and those
    before it leave the socket in CA_DISORDER, outside PRR.

    RFC 6937 proportional rate reduction with ns-3.44's integer arithmetic, which matters here:
    (1) ``prr_delivered`` gains, for every duplicate ACK while it is below RecoverFS (the bytes in
    flight when recovery began), one segment more than the SACK-derived delivery (the non-SACK
    estimate applied to SACK too); (2) the proportional quota ``ceil(prr_delivered * ssthresh /
    RecoverFS) - prr_out`` multiplies two ``uint32_t`` byte counts, so the product wraps modulo
    2^32: once ``prr_delivered * ssthresh`` passes 4.29e9 (about 25 segments at a 120-segment
    ssthresh) the quota falls below what was sent and the sender stops until in flight reaches
    ssthresh; (3) below ssthresh PRR-CRB takes ``max(prr_delivered - prr_out, delivered)`` in
    ``uint32_t`` (a negative difference wraps and wins: no send), plus a segment once a
    retransmission is cumulatively ACKed (PRR-SSRB). The window is in flight plus the quota;
    sends in recovery count into ``prr_out`` (``_sender_send``). Net effect against a step to
    ssthresh: a burst of about 1.4 segments per delivered one on the first ACKs of recovery, into
    a buffer that just overflowed, then silence; segments of that burst are lost and found after
    recovery ends, a second reduction within about one RTT (ns-3 traces show both).
    """
    dupthresh = int(p[P_DUPTHRESH])
    iseg = int(seg)
    pipe = _pipe(fi, lost, b, f, dupthresh, True) * iseg
    if entered:
        fx[b, f, X_PRR_OUT] = 0.0
        fx[b, f, X_PRR_DELIV] = 0.0
        fx[b, f, X_PRR_RFS] = max(pipe, iseg)
        dupacks = max(dupacks, 1)  # EnterRecovery calls DoRecovery as for a duplicate ACK
    dsegs = max(delivered_segs, 0)
    deliv = dsegs * iseg
    if deliv <= 0 and dupacks <= 0:
        return
    rfs = int(fx[b, f, X_PRR_RFS])
    prr_del = int(fx[b, f, X_PRR_DELIV])
    if dupacks > 0:
        base = dsegs // dupacks
        extra = dsegs - base * dupacks
        for i in range(dupacks):
            if prr_del < rfs:
                prr_del += iseg
            prr_del += (base + (1 if i < extra else 0)) * iseg
    else:
        prr_del += deliv
    fx[b, f, X_PRR_DELIV] = prr_del
    ss = int(fx[b, f, X_SSTHRESH])
    prr_out = int(fx[b, f, X_PRR_OUT])
    if pipe > ss:
        prod = (prr_del * ss) & 0xFFFFFFFF  # uint32_t * uint32_t in ns-3.44
        send = int(math.ceil(prod / rfs)) - prr_out
    else:
        d = prr_del - prr_out
        limit = max(d, deliv) if d >= 0 else d  # std::max of two uint32_t
        # safeACK: the ACK cumulatively acknowledged a retransmitted segment (PRR-SSRB).
        if acked > 0:
            k = lost.shape[2]
            for i in range(fi[b, f, I_LOST_LEN]):
                j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
                sq = lost[b, f, j, 0]
                if sq >= una_before and sq < fi[b, f, I_UNA] and lost[b, f, j, 1] != LOST_NEED:
                    limit += iseg
                    break
        send = min(limit, ss - pipe)
    if prr_out <= 0:
        send = max(send, iseg)  # force the fast retransmission on entering recovery
    elif acked > 0 and not entered and fi[b, f, I_UNA] < fi[b, f, I_RECOVER]:
        # A partial ACK whose new head was not retransmitted yet retransmits once outside the
        # window (``ProcessAck``: ``DoRetransmit`` unless ``IsRetransmittedDataAcked``).
        j = _lost_slot(fi, lost, b, f, fi[b, f, I_UNA])
        head_rtx = j >= 0 and (lost[b, f, j, 1] == LOST_RETX or lost[b, f, j, 1] == LOST_AGAIN)
        if not head_rtx:
            send = max(send, iseg)
    fx[b, f, X_CWND] = max(pipe + send, iseg)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _rto_check(b, f, t, p, cca, fi, fx, lost, seg):
    """The retransmission timeout: window to one segment, every lost mark to be resent."""
    k = lost.shape[2]
    dupthresh = int(p[P_DUPTHRESH])
    outstanding = fi[b, f, I_SND_NXT] > fi[b, f, I_UNA]
    if outstanding and fi[b, f, I_RTO_AT_MS] >= 0 and t >= fi[b, f, I_RTO_AT_MS]:
        pipe_bytes = _pipe(fi, lost, b, f, dupthresh, p[P_RECOVERY] == RECOVERY_NS3_PRR) * seg
        fx[b, f, X_O_LOSS] += 1.0
        # ns-3 ``ReTxTimeout`` keeps ssthresh on a repeated timeout of the retransmitted head.
        if not (p[P_RECOVERY] == RECOVERY_NS3_PRR and fi[b, f, I_CSTATE] == ST_LOSS):
            fx[b, f, X_SSTHRESH] = _ssthresh_on_loss(fx, b, f, cca, pipe_bytes, seg)
        fx[b, f, X_CWND] = seg
        fi[b, f, I_DUPACK_CNT] = 0
        fi[b, f, I_CSTATE] = ST_LOSS
        fi[b, f, I_RECOVER] = fi[b, f, I_SND_NXT]
        fi[b, f, I_RTO_MS] = min(2 * fi[b, f, I_RTO_MS], 60000)
        fi[b, f, I_RTO_AT_MS] = t + fi[b, f, I_RTO_MS]
        for i in range(fi[b, f, I_LOST_LEN]):
            j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
            if lost[b, f, j, 1] == LOST_RETX or lost[b, f, j, 1] == LOST_AGAIN:
                lost[b, f, j, 1] = LOST_NEED
        _on_rto(fx, fi, b, f, cca, t)
