"""The send path shared by the senders: one flow's server in one TTI.

The retransmission timeout (``recovery``), the application's data (``app``), the pacing token
bucket of the models that pace (``dispatch._paced``), then retransmissions (lowest sequence
first) and new segments while the window, the pacing tokens and the receive window allow;
segments reach the eNB ``server_delay_ms + delay_ms`` later (``dl``/``rtx`` rings).
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.app import _application, _would_hand
from envs.fastsim.codes import LOST_NEED, LOST_RETX, RECOVERY_NS3_PRR, ST_LOSS, ST_RECOVERY
from envs.fastsim.loss_record import _pipe
from envs.fastsim.params import (
    FC_CCA,
    FC_D_DOWN_MS,
    FC_STOP_MS,
    P_DUPTHRESH,
    P_RECOVERY,
    P_RWND_SEGS,
    P_SEG_BYTES,
)
from envs.fastsim.senders.dispatch import _keeps_tokens, _own_recovery, _paced
from envs.fastsim.senders.recovery import _rto_check
from envs.fastsim.state import (
    I_CSTATE,
    I_CWND_LIMITED,
    I_DATA_MS,
    I_HANDED,
    I_LOST_HEAD,
    I_LOST_LEN,
    I_PRE_SEND,
    I_RTO_AT_MS,
    I_RTO_MS,
    I_RTX_HEAD,
    I_RTX_LEN,
    I_RUNNING,
    I_SND_NXT,
    I_START_MS,
    I_UNA,
    I_VIEW_HIGH,
    X_CWND,
    X_FCT_S,
    X_O_RETX,
    X_PACING,
    X_PRR_OUT,
    X_TOKENS,
)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _sender_send(b, f, t, p, fc, fi, fx, rng, dl, rtx, lost):
    """RTO check, application data, then retransmissions and new segments within the window."""
    seg = p[P_SEG_BYTES]
    cca = int(fc[f, FC_CCA])
    k = lost.shape[2]
    ring = dl.shape[2]
    dupthresh = int(p[P_DUPTHRESH])
    start = fi[b, f, I_START_MS]
    stop = fc[f, FC_STOP_MS]
    running = t >= start and (stop < 0 or t < stop) and fx[b, f, X_FCT_S] < 0
    fi[b, f, I_RUNNING] = 1 if running else 0
    if t < fi[b, f, I_DATA_MS]:
        return
    _rto_check(b, f, t, p, cca, fi, fx, lost, seg)
    # The application keeps about two windows plus a chunk queued in the socket.
    cwnd = fx[b, f, X_CWND]
    if running:
        _application(b, f, t, p, fc, fi, fx, cwnd, start, seg)
    # Pacing tokens.
    pace = fx[b, f, X_PACING]
    paced = pace > 0 and _paced(cca)
    if paced:
        fx[b, f, X_TOKENS] = min(fx[b, f, X_TOKENS] + pace, pace + seg)
    pipe = _pipe(fi, lost, b, f, dupthresh, p[P_RECOVERY] == RECOVERY_NS3_PRR)
    pipe0 = pipe
    d_down = int(fc[f, FC_D_DOWN_MS])
    arrive = t + d_down
    limited = False
    # New segments the ACKs before the one that entered fast recovery let out (``ack``): they
    # left before the fast retransmission.
    first = fi[b, f, I_SND_NXT]
    nxt = first
    handed = fi[b, f, I_HANDED]
    rwnd_end = fi[b, f, I_UNA] + int(p[P_RWND_SEGS])  # the receive window's right edge
    pre = fi[b, f, I_PRE_SEND]
    fi[b, f, I_PRE_SEND] = 0
    while pre > 0 and nxt < handed and nxt < rwnd_end:
        nxt += 1
        pipe += 1
        pre -= 1
    n_pre = nxt - first
    # Retransmissions first, lowest sequence first.
    prr = (
        p[P_RECOVERY] == RECOVERY_NS3_PRR
        and not _own_recovery(cca)
        and fi[b, f, I_CSTATE] == ST_RECOVERY
    )
    i = _next_hole(b, f, 0, fi, lost, dupthresh)
    while i >= 0:
        j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
        i = _next_hole(b, f, i + 1, fi, lost, dupthresh)
        if cwnd - pipe * seg < seg:
            limited = True
            break
        if paced and fx[b, f, X_TOKENS] <= 0:
            break
        if fi[b, f, I_RTX_LEN] >= k:
            break
        lost[b, f, j, 1] = LOST_RETX
        r = (fi[b, f, I_RTX_HEAD] + fi[b, f, I_RTX_LEN]) & (k - 1)
        rtx[b, f, r, 0] = lost[b, f, j, 0]
        rtx[b, f, r, 1] = arrive
        rtx[b, f, r, 2] = t
        fi[b, f, I_RTX_LEN] += 1
        fx[b, f, X_O_RETX] += 1.0
        pipe += 1
        if prr:
            fx[b, f, X_PRR_OUT] += seg
        if paced:
            fx[b, f, X_TOKENS] -= seg
    # New data.
    while nxt < handed and nxt < rwnd_end:
        if cwnd - pipe * seg < seg:
            limited = True
            break
        if paced and fx[b, f, X_TOKENS] <= 0:
            break
        nxt += 1
        pipe += 1
        if prr:
            fx[b, f, X_PRR_OUT] += seg
        if paced:
            fx[b, f, X_TOKENS] -= seg
    if nxt > first:
        if first == fi[b, f, I_UNA] and fi[b, f, I_RTX_LEN] == 0:
            fi[b, f, I_RTO_AT_MS] = t + fi[b, f, I_RTO_MS]
        slot = arrive & (ring - 1)
        dl[b, f, slot, 0] = first
        dl[b, f, slot, 1] = nxt
        dl[b, f, slot, 2] = t
        dl[b, f, slot, 3] = n_pre
        fi[b, f, I_SND_NXT] = nxt
    elif fi[b, f, I_RTO_AT_MS] < 0 and fi[b, f, I_SND_NXT] > fi[b, f, I_UNA]:
        fi[b, f, I_RTO_AT_MS] = t + fi[b, f, I_RTO_MS]
    # ns-3 (``TcpSocketBase::SendDataPacket``) sets ``m_isCwndLimited`` on every segment it sends
    # (whether less than a segment of window is left), and leaves it as it is when none is sent.
    if pipe > pipe0:
        fi[b, f, I_CWND_LIMITED] = 1 if (limited or pipe * seg + seg > cwnd) else 0
    if not paced and not _keeps_tokens(cca):
        fx[b, f, X_TOKENS] = 0.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _next_hole(b, f, start, fi, lost, dupthresh):
    """The loss list's next hole from position ``start`` that may be resent now; -1 if none.

    Holes are taken in sequence: one already resent or below the cumulative ACK is passed over,
    and outside loss recovery by timeout the first hole that is not yet ``dupthresh`` segments
    below the highest SACKed one ends the search (it and the holes above it wait).
    """
    k = lost.shape[2]
    high = fi[b, f, I_VIEW_HIGH]
    loss_state = fi[b, f, I_CSTATE] == ST_LOSS
    for i in range(start, fi[b, f, I_LOST_LEN]):
        j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
        if lost[b, f, j, 1] != LOST_NEED or lost[b, f, j, 0] < fi[b, f, I_UNA]:
            continue
        if not (loss_state or lost[b, f, j, 0] + dupthresh < high):
            return -1
        return i
    return -1


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _sendable(b, f, p, fc, fi, fx, lost, dupthresh, seg):
    """Segments the sender could send now if the window allowed: holes to resend, then new data.

    The rules of ``_sender_send`` (retransmissions in sequence while the dupthresh rule holds,
    new data the application has handed or would hand at once, within the receive window),
    without sending: ``ack._sender_acks`` asks it for a bunch of ACKs, where ns-3 sends after
    each ACK (``dispatch._on_acks``).
    """
    n = 0
    i = _next_hole(b, f, 0, fi, lost, dupthresh)
    while i >= 0:
        n += 1
        i = _next_hole(b, f, i + 1, fi, lost, dupthresh)
    handed = fi[b, f, I_HANDED]
    if fi[b, f, I_RUNNING] == 1:
        handed += _would_hand(b, f, p, fc, fi, fx, fx[b, f, X_CWND], seg)
    nxt = fi[b, f, I_SND_NXT]
    rwnd_end = fi[b, f, I_UNA] + int(p[P_RWND_SEGS])
    return n + max(min(handed, rwnd_end) - nxt, 0)
