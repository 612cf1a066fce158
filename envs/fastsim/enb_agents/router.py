"""The bottleneck's explicit-feedback router (XCP, RCP): where it sits, what it measures, when.

On only when a flow runs XCP or RCP (``P_ROUTER``), called once per 1 ms tick after the tick's
arrivals and the XRC agent's capacity (``driver.step_cell``). The router sits at the scenario's
bottleneck:

- a wired bottleneck (``bottleneck.py``): one router for every flow, its queue the link's
  drop-tail buffer, its capacity the link's rate (a trace: the delivery opportunities of the
  interval), packets of ``BN_WIRE_BYTES``;
- otherwise the cell's downlink at the base station: one router per UE, its queue the UE's RLC
  buffer, its capacity what the MAC serves the UE as XRC's agent estimates it (new transport
  blocks plus the UE's share of idle resource blocks over ``xrc_window_ttis``), packets of
  ``P_PDU_BYTES``.

A packet counts at the router when it reaches the queue (``rlc._arrive``), with the congestion
header its sender wrote when it sent it (``FB_H_CWND``, ``FB_H_RTT`` one downlink delay
earlier); XCP's feedback of the packet is computed then. Per flow the router keeps the feedback
its packets collected (``X_RT_FB``); it and the router's RCP rate are stored by time in ``fbr``,
and the sender reads them off the ACKs that pass the router ``FC_D_SRV_UP_MS`` before they reach
it (as XRC's agent stamps its ACKs): docs/explicit-feedback.md says what this shortens.
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.bottleneck import BN_MODE, BN_TX_MS, BN_WIRE_BYTES, BS_LEN, _bn_opportunities
from envs.fastsim.codes import BN_NONE, BN_TRACE, ROUTER_RCP, ROUTER_XCP
from envs.fastsim.enb_agents.rcp import _rcp_update
from envs.fastsim.enb_agents.xcp import _xcp_control, _xcp_packet_feedback
from envs.fastsim.params import (
    FC_D_DOWN_MS,
    FC_UE,
    P_PDU_BYTES,
    P_ROUTER,
    P_SEG_BYTES,
    P_SLOTS_PER_MS,
    P_WINDOW_TTIS,
)
from envs.fastsim.router_params import RP_ALPHA, RP_BETA, RP_KIND, RP_RCP_UPDATE_MS, RP_XCP_SHUFFLE
from envs.fastsim.state import (
    BS_RT0,
    FB_H_CWND,
    FB_H_RTT,
    FB_RCP,
    FB_XCP,
    I_RT_ARR,
    RT_C,
    RT_CAPACC,
    RT_D,
    RT_IN,
    RT_QMIN,
    RT_RATE,
    RT_RTT_BYTES,
    RT_START,
    RT_SUM_RS,
    RT_SUM_RSC,
    RT_XIN,
    RT_XIP,
    U_CAP_SUM,
    U_RLC_BYTES,
    U_RT0,
    X_RT_FB,
)

#: The first control interval, before any packet has carried an RTT, ms.
FIRST_INTERVAL_MS = 10.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _router_packets(b, t, p, fc, fi, fx, ue, bqs, fbr, wired, s):
    """The tick's packets at the router(s): the interval's sums, XCP's feedback per packet."""
    mode = p[P_ROUTER + RP_KIND]
    seg = p[P_SEG_BYTES]
    ring = fbr.shape[2]
    slot = t & (ring - 1)
    for f in range(fi.shape[1]):
        if wired:
            row = bqs[b]
            base = BS_RT0
        else:
            row = ue[b, int(fc[f, FC_UE])]
            base = U_RT0
        n = fi[b, f, I_RT_ARR]
        if n > 0:
            fi[b, f, I_RT_ARR] = 0
            hs = (t - int(fc[f, FC_D_DOWN_MS])) & (ring - 1)
            rtt = fbr[b, f, hs, FB_H_RTT]
            cwnd = fbr[b, f, hs, FB_H_CWND] / seg * s  # the header's window, in wire bytes
            nb = n * s
            row[base + RT_IN] += nb
            if rtt > 0 and cwnd > 0:
                row[base + RT_RTT_BYTES] += nb
                row[base + RT_SUM_RS] += rtt * nb
                row[base + RT_SUM_RSC] += rtt * nb / cwnd
                if mode == ROUTER_XCP:
                    fb = _xcp_packet_feedback(row[base + RT_XIP], row[base + RT_XIN], rtt, cwnd, s)
                    fx[b, f, X_RT_FB] += n * fb * seg / s
        fbr[b, f, slot, FB_XCP] = fx[b, f, X_RT_FB]
        fbr[b, f, slot, FB_RCP] = row[base + RT_RATE] * seg / s


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _router_interval(row, base, t, p, s, q, cap, opp_bytes):
    """One router closes tick ``t``: the persistent queue, and the control at an interval's end.

    ``q``: its queue now, bytes; ``cap``: its capacity, bytes per ms (< 0: the delivery
    opportunities' bytes ``opp_bytes`` summed over the interval).
    """
    mode = p[P_ROUTER + RP_KIND]
    if row[base + RT_D] <= 0:
        row[base + RT_D] = FIRST_INTERVAL_MS
        row[base + RT_START] = float(t)
        row[base + RT_QMIN] = q
    row[base + RT_QMIN] = min(row[base + RT_QMIN], q)
    row[base + RT_CAPACC] += opp_bytes
    elapsed = t + 1.0 - row[base + RT_START]
    period = row[base + RT_D]
    if mode == ROUTER_RCP and p[P_ROUTER + RP_RCP_UPDATE_MS] > 0:
        period = p[P_ROUTER + RP_RCP_UPDATE_MS]
    if elapsed < period:
        return
    if cap < 0:
        cap = row[base + RT_CAPACC] / elapsed
    rb = row[base + RT_RTT_BYTES]
    d = row[base + RT_SUM_RS] / rb if rb > 0 else row[base + RT_D]
    d = max(d, 1.0)
    y_rate = row[base + RT_IN] / elapsed
    alpha = p[P_ROUTER + RP_ALPHA]
    beta = p[P_ROUTER + RP_BETA]
    if mode == ROUTER_XCP:
        shuffle = p[P_ROUTER + RP_XCP_SHUFFLE]
        _xcp_control(row, base, cap, y_rate, elapsed, d, alpha, beta, shuffle)
    else:
        _rcp_update(row, base, cap, y_rate, q, elapsed, d, alpha, beta, s)
    row[base + RT_C] = cap
    row[base + RT_D] = d
    row[base + RT_START] = t + 1.0
    row[base + RT_IN] = 0.0
    row[base + RT_RTT_BYTES] = 0.0
    row[base + RT_SUM_RS] = 0.0
    row[base + RT_SUM_RSC] = 0.0
    row[base + RT_CAPACC] = 0.0
    row[base + RT_QMIN] = q


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _router_tick(b, t, p, fc, fi, fx, ue, bnp, bqs, fbr):
    """The router(s) of the scenario's bottleneck in tick ``t`` (XCP or RCP; off: no call)."""
    wired = bnp[BN_MODE] != BN_NONE
    s = float(BN_WIRE_BYTES) if wired else p[P_PDU_BYTES]
    _router_packets(b, t, p, fc, fi, fx, ue, bqs, fbr, wired, s)
    if wired:
        if bnp[BN_MODE] == BN_TRACE:
            cap = -1.0
            opp = _bn_opportunities(t, bnp) * s
        else:
            cap = s / bnp[BN_TX_MS]
            opp = 0.0
        _router_interval(bqs[b], BS_RT0, t, p, s, bqs[b, BS_LEN] * s, cap, opp)
    else:
        per_ms = p[P_SLOTS_PER_MS] / p[P_WINDOW_TTIS]
        for u in range(ue.shape[1]):
            cap = ue[b, u, U_CAP_SUM] * per_ms
            _router_interval(ue[b, u], U_RT0, t, p, s, ue[b, u, U_RLC_BYTES], cap, 0.0)
