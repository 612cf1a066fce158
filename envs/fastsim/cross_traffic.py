"""ON/OFF UDP cross traffic through the wired bottleneck (the XCP-r paper's unregulated sources).

``ScenarioSpec.udp_sources`` sources, each sending ``udp_rate_mbps`` of 1500-byte IP packets while
on and nothing while off, without congestion control, retransmission or ACKs. Each source is on
from ``udp_start_s`` for an on period, then off for an off period, and so on; the periods are
``udp_on_s`` and ``udp_off_s`` exactly (``udp_periods: fixed``: the sources switch together, a
square wave of capacity) or exponential with those means (``exponential``): the run's draws per
source (``cellgym.draws``, the same as ns-3's; the cell's row of the draws table ``dr``, from
``P_DRAW_UDP0``, ``P_DRAW_UDP`` periods per source; the means past them). Their packets join
the bottleneck's drop-tail buffer before the tick's TCP segments (a full buffer drops them,
counted in the bottleneck's drops), take their turn on the link, and then leave towards their own
receivers: they do not enter the cell. An XCP or RCP router counts them in its input traffic
(they are part of what the link carries), and they get no feedback.

State: per cell the bytes not yet sent (``BS_UDP_CREDIT``), and per source its state (1 on, 0 off),
the time of its next switch and the periods it has taken, from ``BS_WIDTH`` in ``bqs``.
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.bottleneck import (
    BN_UDP_EXP,
    BN_UDP_N,
    BN_UDP_OFF_MS,
    BN_UDP_ON_MS,
    BN_UDP_RATE,
    BN_UDP_START_MS,
    BN_WIRE_BYTES,
    _bn_push,
)
from envs.fastsim.codes import ROUTER_NONE
from envs.fastsim.params import P_DRAW_UDP, P_DRAW_UDP0, P_ROUTER
from envs.fastsim.router_params import RP_KIND
from envs.fastsim.state import BS_RT0, BS_UDP_COLS, BS_UDP_CREDIT, BS_WIDTH, RT_IN


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _udp_period(b, k, c, mean_ms, exponential, p, bqs, dr):
    """Source ``k``'s next on or off period, ms: the mean itself, or its next drawn period."""
    if not exponential:
        return mean_ms
    n = int(p[P_DRAW_UDP])
    i = int(bqs[b, c + 2])
    bqs[b, c + 2] = i + 1
    if i >= n:
        return mean_ms
    return dr[b, int(p[P_DRAW_UDP0]) + k * n + i]


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _udp_active(b, t, p, bnp, bqs, dr):
    """Sources on in tick ``t`` (switching those whose period ended)."""
    start = bnp[BN_UDP_START_MS]
    if t < start:
        return 0
    exp = bnp[BN_UDP_EXP] > 0
    on_ms = bnp[BN_UDP_ON_MS]
    off_ms = bnp[BN_UDP_OFF_MS]
    active = 0
    for k in range(int(bnp[BN_UDP_N])):
        c = BS_WIDTH + BS_UDP_COLS * k
        if bqs[b, c + 1] <= 0:  # not started yet: on from the start
            bqs[b, c] = 1.0
            bqs[b, c + 1] = start + _udp_period(b, k, c, on_ms, exp, p, bqs, dr)
        while t >= bqs[b, c + 1]:
            if bqs[b, c] > 0:
                bqs[b, c] = 0.0
                bqs[b, c + 1] += _udp_period(b, k, c, off_ms, exp, p, bqs, dr)
            else:
                bqs[b, c] = 1.0
                bqs[b, c + 1] += _udp_period(b, k, c, on_ms, exp, p, bqs, dr)
        if bqs[b, c] > 0:
            active += 1
    return active


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _udp_tick(b, t, p, bnp, bqs, bq, rng, dr):
    """The sources' packets of tick ``t`` join the bottleneck's buffer (or are dropped)."""
    active = _udp_active(b, t, p, bnp, bqs, dr)
    w = float(BN_WIRE_BYTES)
    credit = bqs[b, BS_UDP_CREDIT] + active * bnp[BN_UDP_RATE]
    sent = 0
    while credit >= w:
        credit -= w
        _bn_push(b, -1, 0, t, False, t, bnp, bqs, bq, rng)
        sent += 1
    bqs[b, BS_UDP_CREDIT] = credit
    if sent > 0 and p[P_ROUTER + RP_KIND] != ROUTER_NONE:
        bqs[b, BS_RT0 + RT_IN] += sent * w
