"""ON/OFF UDP cross traffic through the wired bottleneck (the XCP-r paper's unregulated sources).

``ScenarioSpec.udp_sources`` sources, each sending ``udp_rate_mbps`` of 1500-byte IP packets while
on and nothing while off, without congestion control, retransmission or ACKs. Each source is on
from ``udp_start_s`` for an on period, then off for an off period, and so on; the periods are
``udp_on_s`` and ``udp_off_s`` exactly (``udp_periods: fixed``: the sources switch together, a
square wave of capacity) or exponential with those means (``exponential``), drawn per source from
the cell's generator. Their packets join the bottleneck's drop-tail buffer before the tick's TCP
segments (a full buffer drops them, counted in the bottleneck's drops), take their turn on the
link, and then leave towards their own receivers: they do not enter the cell. An XCP or RCP router
counts them in its input traffic (they are part of what the link carries), and they get no
feedback.

State: per cell the bytes not yet sent (``BS_UDP_CREDIT``), and per source its state (1 on, 0 off)
and the time of its next switch, from ``BS_WIDTH`` in ``bqs``.
"""

from __future__ import annotations

import math

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
from envs.fastsim.params import P_ROUTER
from envs.fastsim.rng import _rand
from envs.fastsim.router_params import RP_KIND
from envs.fastsim.state import BS_RT0, BS_UDP_CREDIT, BS_WIDTH, RT_IN


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _udp_period(mean_ms, exponential, rng, b):
    """One on or off period, ms: the mean itself, or an exponential draw with that mean."""
    if exponential:
        return max(-mean_ms * math.log(1.0 - _rand(rng, b)), 1e-3)
    return mean_ms


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _udp_active(b, t, bnp, bqs, rng):
    """Sources on in tick ``t`` (switching those whose period ended)."""
    start = bnp[BN_UDP_START_MS]
    if t < start:
        return 0
    exp = bnp[BN_UDP_EXP] > 0
    active = 0
    for k in range(int(bnp[BN_UDP_N])):
        c = BS_WIDTH + 2 * k
        if bqs[b, c + 1] <= 0:  # not started yet: on from the start
            bqs[b, c] = 1.0
            bqs[b, c + 1] = start + _udp_period(bnp[BN_UDP_ON_MS], exp, rng, b)
        while t >= bqs[b, c + 1]:
            if bqs[b, c] > 0:
                bqs[b, c] = 0.0
                bqs[b, c + 1] += _udp_period(bnp[BN_UDP_OFF_MS], exp, rng, b)
            else:
                bqs[b, c] = 1.0
                bqs[b, c + 1] += _udp_period(bnp[BN_UDP_ON_MS], exp, rng, b)
        if bqs[b, c] > 0:
            active += 1
    return active


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _udp_tick(b, t, p, bnp, bqs, bq, rng):
    """The sources' packets of tick ``t`` join the bottleneck's buffer (or are dropped)."""
    active = _udp_active(b, t, bnp, bqs, rng)
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
