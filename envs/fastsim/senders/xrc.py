"""CellGym's XRC sender (``TcpXrc``): twnd = C_i x RTT_min from the base station's feedback.

Ramp to twnd, probe above it, reset to twnd when the delay exceeds the budget, an unfairness
mode after a long high delay, and standard TCP behind an Internet bottleneck; NewReno until the
first feedback. The base station's side (the explicit rate and HoL) is ``enb_agents/xrc.py``.
"""

from __future__ import annotations

import math

from numba import njit

from envs.fastsim.codes import NO_RTT
from envs.fastsim.params import (
    P_XRC_BUDGET_MS,
    P_XRC_RAMP_RTTS,
    P_XRC_UNFAIR_ALPHA,
    P_XRC_UNFAIR_RTTS,
)
from envs.fastsim.senders.newreno import _newreno_increase
from envs.fastsim.state import (
    X_CWND,
    X_FB_HOL,
    X_FB_RATE,
    X_MIN_RTT,
    X_SSTHRESH,
    X_X_HASFB,
    X_X_HIGHDELAY,
    X_X_LASTUPD,
    X_X_MODE,
    X_X_RAMPFROM,
    X_X_RTTCNT,
    X_X_RTTSUM,
    X_X_TWND,
    X_X_UNFAIR,
    X_X_WINACKED,
    X_X_WINMEAN,
)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xrc_pkts_acked(fx, b, f, segs, rtt, seg):
    """``TcpXrc::PktsAcked``: mean RTT over one window of data (equation 3 of the paper)."""
    if rtt > 0:
        fx[b, f, X_X_RTTSUM] += rtt
        fx[b, f, X_X_RTTCNT] += 1.0
    fx[b, f, X_X_WINACKED] += segs * seg
    if fx[b, f, X_X_WINACKED] >= fx[b, f, X_CWND] and fx[b, f, X_X_RTTCNT] > 0:
        fx[b, f, X_X_WINMEAN] = fx[b, f, X_X_RTTSUM] / fx[b, f, X_X_RTTCNT]
        fx[b, f, X_X_RTTSUM] = 0.0
        fx[b, f, X_X_RTTCNT] = 0.0
        fx[b, f, X_X_WINACKED] = 0.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xrc_increase(fx, b, f, segs, t, seg, p):
    """``TcpXrc::IncreaseWindow``: twnd = R_exp RTT_min, ramp, probe, reset, unfairness mode."""
    elapsed = t - fx[b, f, X_X_LASTUPD] if fx[b, f, X_X_LASTUPD] >= 0 else 0.0
    fx[b, f, X_X_LASTUPD] = t
    rate = fx[b, f, X_FB_RATE]
    min_rtt = fx[b, f, X_MIN_RTT]
    if fx[b, f, X_X_HASFB] == 0 or rate <= 0 or min_rtt >= NO_RTT or segs == 0:
        fx[b, f, X_X_MODE] = 0.0
        _newreno_increase(fx, b, f, segs, seg)
        return
    budget = p[P_XRC_BUDGET_MS]
    cwnd = fx[b, f, X_CWND]
    hol = fx[b, f, X_FB_HOL]
    twnd = rate * 1e6 / 8.0 * min_rtt / 1e3
    fx[b, f, X_X_TWND] = twnd
    if fx[b, f, X_X_WINMEAN] > 0:
        mean = fx[b, f, X_X_WINMEAN]
    elif fx[b, f, X_X_RTTCNT] > 0:
        mean = fx[b, f, X_X_RTTSUM] / fx[b, f, X_X_RTTCNT]
    else:
        mean = min_rtt
    e2e = max(0.0, mean - min_rtt)
    delta = max(e2e, hol)
    per_seg = seg * seg / cwnd
    if hol <= budget and e2e - hol > budget:
        fx[b, f, X_X_MODE] = 6.0  # Internet bottleneck: standard TCP
        fx[b, f, X_X_UNFAIR] = 0.0
        fx[b, f, X_X_HIGHDELAY] = 0.0
        _newreno_increase(fx, b, f, segs, seg)
        return
    if cwnd < fx[b, f, X_SSTHRESH]:
        if cwnd < twnd and delta <= budget:
            fx[b, f, X_X_MODE] = 1.0
            _newreno_increase(fx, b, f, segs, seg)
            return
        fx[b, f, X_SSTHRESH] = cwnd
    nxt = cwnd
    if hol <= budget:  # the unfairness mode belongs to a cellular bottleneck (HoL > budget)
        fx[b, f, X_X_HIGHDELAY] = 0.0
        fx[b, f, X_X_UNFAIR] = 0.0
    if delta > budget:
        if cwnd <= 1.05 * twnd and hol > budget:
            fx[b, f, X_X_HIGHDELAY] += elapsed
        if fx[b, f, X_X_HIGHDELAY] >= p[P_XRC_UNFAIR_RTTS] * min_rtt:
            fx[b, f, X_X_UNFAIR] = 1.0
        fx[b, f, X_X_RAMPFROM] = 0.0
        if fx[b, f, X_X_UNFAIR] > 0:
            fx[b, f, X_X_MODE] = 5.0
            nxt = max(cwnd, twnd) + p[P_XRC_UNFAIR_ALPHA] * per_seg * segs
        else:
            fx[b, f, X_X_MODE] = 4.0
            nxt = twnd
    else:
        fx[b, f, X_X_HIGHDELAY] = 0.0
        fx[b, f, X_X_UNFAIR] = 0.0
        if cwnd < twnd:
            fx[b, f, X_X_MODE] = 2.0
            if fx[b, f, X_X_RAMPFROM] <= 0:
                fx[b, f, X_X_RAMPFROM] = cwnd
            step = (twnd - fx[b, f, X_X_RAMPFROM]) / p[P_XRC_RAMP_RTTS] * seg / cwnd * segs
            nxt = min(twnd, cwnd + max(step, per_seg * segs))
        else:
            fx[b, f, X_X_MODE] = 3.0
            fx[b, f, X_X_RAMPFROM] = 0.0
            nxt = cwnd + max(1.0, per_seg * segs)
    fx[b, f, X_CWND] = math.floor(min(max(nxt, 2 * seg), 4e9))


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xrc_on_loss(fx, b, f):
    """``TcpXrc::CongestionStateSet`` on entering recovery or loss: leave the delay modes."""
    fx[b, f, X_X_UNFAIR] = 0.0
    fx[b, f, X_X_HIGHDELAY] = 0.0
    fx[b, f, X_X_RAMPFROM] = 0.0
