"""CUBIC as ns-3's ``TcpCubic``: integer ``cnt`` arithmetic, TCP-friendly region, HyStart."""

from __future__ import annotations

import math

from numba import njit

from envs.fastsim.params import P_HYSTART_DELAY
from envs.fastsim.state import (
    I_CWND_LIMITED,
    I_SND_NXT,
    I_UNA,
    X_C_ACKCNT,
    X_C_CNT,
    X_C_CURRRTT,
    X_C_DELAYMIN,
    X_C_ENDSEQ,
    X_C_EPOCH,
    X_C_FOUND,
    X_C_K,
    X_C_LASTACK,
    X_C_LASTMAX,
    X_C_ORIGIN,
    X_C_ROUNDSTART,
    X_C_SAMPLES,
    X_C_TCPCWND,
    X_CWND,
    X_SSTHRESH,
)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _cubic_hystart_reset(fx, fi, b, f, t):
    """ns-3 ``TcpCubic::HystartReset``: a new HyStart round ends at the next segment to send."""
    fx[b, f, X_C_ROUNDSTART] = t
    fx[b, f, X_C_LASTACK] = t
    fx[b, f, X_C_ENDSEQ] = fi[b, f, I_SND_NXT]
    fx[b, f, X_C_CURRRTT] = -1.0
    fx[b, f, X_C_SAMPLES] = 0.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _cubic_pkts_acked(fx, b, f, rtt, t, seg, p):
    """ns-3 ``TcpCubic::PktsAcked``: delay minimum and HyStart (ack train and delay increase)."""
    if fx[b, f, X_C_EPOCH] >= 0 and t - fx[b, f, X_C_EPOCH] < 10.0:
        return
    if fx[b, f, X_C_DELAYMIN] < 0 or fx[b, f, X_C_DELAYMIN] > rtt:
        fx[b, f, X_C_DELAYMIN] = rtt
    cwnd = fx[b, f, X_CWND]
    if cwnd <= fx[b, f, X_SSTHRESH] and cwnd >= 16 * seg and fx[b, f, X_C_FOUND] == 0:
        dmin = fx[b, f, X_C_DELAYMIN]
        if t - fx[b, f, X_C_LASTACK] <= 2.0:
            fx[b, f, X_C_LASTACK] = t
            if t - fx[b, f, X_C_ROUNDSTART] > dmin:
                fx[b, f, X_C_FOUND] = 1.0
        if fx[b, f, X_C_SAMPLES] < 8:
            if fx[b, f, X_C_CURRRTT] < 0 or fx[b, f, X_C_CURRRTT] > rtt:
                fx[b, f, X_C_CURRRTT] = rtt
            fx[b, f, X_C_SAMPLES] += 1.0
        elif p[P_HYSTART_DELAY] > 0 and fx[b, f, X_C_CURRRTT] > dmin + min(max(dmin, 4.0), 1000.0):
            fx[b, f, X_C_FOUND] = 1.0
        if fx[b, f, X_C_FOUND] > 0:
            fx[b, f, X_SSTHRESH] = cwnd


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _cubic_update(fx, b, f, segs, t, seg):
    """ns-3 ``TcpCubic::Update``: ACKs to wait per segment of growth (cubic and TCP-friendly)."""
    seg_cwnd = int(fx[b, f, X_CWND] // seg)
    fx[b, f, X_C_ACKCNT] += segs
    if fx[b, f, X_C_EPOCH] < 0:
        fx[b, f, X_C_EPOCH] = t
        fx[b, f, X_C_ACKCNT] = segs
        fx[b, f, X_C_TCPCWND] = seg_cwnd
        if fx[b, f, X_C_LASTMAX] <= seg_cwnd:
            fx[b, f, X_C_K] = 0.0
            fx[b, f, X_C_ORIGIN] = seg_cwnd
        else:
            fx[b, f, X_C_K] = ((fx[b, f, X_C_LASTMAX] - seg_cwnd) / 0.4) ** (1.0 / 3.0)
            fx[b, f, X_C_ORIGIN] = fx[b, f, X_C_LASTMAX]
    dmin = max(fx[b, f, X_C_DELAYMIN], 0.0)
    ts = (t + dmin - fx[b, f, X_C_EPOCH]) / 1000.0
    k = fx[b, f, X_C_K]
    offs = k - ts if ts < k else ts - k
    delta = math.floor(0.4 * offs * offs * offs)
    origin = fx[b, f, X_C_ORIGIN]
    target = max(origin - delta, 0.0) if ts < k else origin + delta
    if target > seg_cwnd:
        cnt = seg_cwnd // int(target - seg_cwnd)
    else:
        cnt = 100 * seg_cwnd
    if fx[b, f, X_C_LASTMAX] == 0 and cnt > 20:
        cnt = 20
    # TCP friendliness (scale = 8 (1 + beta) / 3 / (1 - beta) in ns-3's integer arithmetic).
    dlt = (seg_cwnd * 15) >> 3
    if dlt < 1:
        dlt = 1
    while fx[b, f, X_C_ACKCNT] > dlt:
        fx[b, f, X_C_ACKCNT] -= dlt
        fx[b, f, X_C_TCPCWND] += 1.0
    if fx[b, f, X_C_TCPCWND] > seg_cwnd:
        max_cnt = seg_cwnd // int(fx[b, f, X_C_TCPCWND] - seg_cwnd)
        if cnt > max_cnt:
            cnt = max_cnt
    return max(cnt, 2)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _cubic_increase(fx, fi, b, f, segs, t, seg):
    """ns-3 ``TcpCubic::IncreaseWindow`` (byte counting in slow start)."""
    if fi[b, f, I_CWND_LIMITED] == 0:
        return
    if fx[b, f, X_CWND] < fx[b, f, X_SSTHRESH]:
        if fi[b, f, I_UNA] > fx[b, f, X_C_ENDSEQ]:
            _cubic_hystart_reset(fx, fi, b, f, t)
        fx[b, f, X_CWND] += segs * seg
        segs = 0
    if fx[b, f, X_CWND] >= fx[b, f, X_SSTHRESH] and segs > 0:
        fx[b, f, X_C_CNT] += segs
        cnt = _cubic_update(fx, b, f, segs, t, seg)
        if fx[b, f, X_C_CNT] >= cnt:
            fx[b, f, X_CWND] += seg
            fx[b, f, X_C_CNT] -= cnt


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _cubic_ssthresh(fx, b, f, seg):
    """ns-3 ``TcpCubic::GetSsThresh``: fast convergence, beta 0.7, end of epoch."""
    seg_cwnd = int(fx[b, f, X_CWND] // seg)
    if seg_cwnd < fx[b, f, X_C_LASTMAX]:
        fx[b, f, X_C_LASTMAX] = math.floor(seg_cwnd * 1.7 / 2.0)
    else:
        fx[b, f, X_C_LASTMAX] = seg_cwnd
    fx[b, f, X_C_EPOCH] = -1.0
    return max(math.floor(seg_cwnd * 0.7), 2) * seg


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _cubic_on_rto(fx, fi, b, f, t):
    """A retransmission timeout: ns-3 ``TcpCubic::CongestionStateSet(CA_LOSS)`` resets CUBIC."""
    fx[b, f, X_C_ORIGIN] = 0.0
    fx[b, f, X_C_K] = 0.0
    fx[b, f, X_C_ACKCNT] = 0.0
    fx[b, f, X_C_TCPCWND] = 0.0
    fx[b, f, X_C_DELAYMIN] = -1.0
    fx[b, f, X_C_FOUND] = 0.0
    _cubic_hystart_reset(fx, fi, b, f, t)
