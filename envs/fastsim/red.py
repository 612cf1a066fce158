"""RED (random early detection) at the wired bottleneck: ``bottleneck_queue: red``.

Floyd and Jacobson's gateway with the gentle variant, parameters as ns-3's ``RedQueueDisc`` names
them (``ScenarioSpec.red_*``; defaults MinTh 5, MaxTh 15, LInterm 50 -> max_p 0.02, QW 0.002).
Per arriving packet, before the buffer's own tail drop (``bottleneck_buffer_pkts`` is the limit):

1. The average queue: ``avg <- (1 - w) avg + w n``, ``n`` the packets the arrival finds (the one on
   the wire included). An arrival that finds the link idle first decays the average as if
   ``m = idle time / packet time`` empty arrivals had passed: ``avg <- (1 - w)^m avg``.
2. ``avg < min_th``: accept (the count restarts). ``avg >= 2 max_th``: drop. Otherwise the drop
   probability ``pb = max_p (avg - min_th) / (max_th - min_th)`` below ``max_th``, and
   ``max_p + (1 - max_p) (avg - max_th) / max_th`` from ``max_th`` to ``2 max_th`` (gentle); it is
   spread by the count of packets accepted since the last drop, ``pa = pb / (1 - count pb)``
   (1 when ``count pb >= 1``); the packet is dropped when a uniform draw is below ``pa``, and the
   count restarts.

The drop-tail path never calls this (one skipped branch per arrival).
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.rng import _rand

# Indices repeated from ``bottleneck`` (which imports this module).
_BN_TX_MS = 1
_BN_RED_MIN = 11
_BN_RED_MAX = 12
_BN_RED_MAXP = 13
_BN_RED_W = 14
_BS_RED_AVG = 7
_BS_RED_COUNT = 8
_BS_RED_IDLE_MS = 9


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _red_average(avg, n, idle_ms, tx_ms, w):
    """The average after an arrival that finds ``n`` packets (``idle_ms``: the link was idle)."""
    if n == 0 and idle_ms > 0 and tx_ms > 0:
        avg *= (1.0 - w) ** (idle_ms / tx_ms)
    return (1.0 - w) * avg + w * n


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _red_probability(avg, count, min_th, max_th, max_p):
    """RED's drop probability ``pa`` of an arrival (``avg`` at least ``min_th``)."""
    if avg >= 2.0 * max_th:
        return 1.0
    if avg < max_th:
        pb = max_p * (avg - min_th) / (max_th - min_th)
    else:
        pb = max_p + (1.0 - max_p) * (avg - max_th) / max_th
    if count * pb >= 1.0:
        return 1.0
    return pb / (1.0 - count * pb)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _red_decide(avg, count, u, min_th, max_th, max_p):
    """``(drop, new count)`` of an arrival with average ``avg`` and uniform draw ``u``."""
    if avg < min_th:
        return False, 0.0
    if u < _red_probability(avg, count, min_th, max_th, max_p):
        return True, 0.0
    return False, count + 1.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _red_arrival(b, t, n, bnp, bqs, rng):
    """A packet reaches a RED bottleneck finding ``n`` packets: ``True`` when RED drops it."""
    idle = max(float(t) - bqs[b, _BS_RED_IDLE_MS], 0.0) if n == 0 else 0.0
    avg = _red_average(bqs[b, _BS_RED_AVG], n, idle, bnp[_BN_TX_MS], bnp[_BN_RED_W])
    bqs[b, _BS_RED_AVG] = avg
    lo = bnp[_BN_RED_MIN]
    hi = bnp[_BN_RED_MAX]
    if avg < lo:
        bqs[b, _BS_RED_COUNT] = 0.0
        return False
    u = _rand(rng, b) if avg < 2.0 * hi else 0.0
    drop, count = _red_decide(avg, bqs[b, _BS_RED_COUNT], u, lo, hi, bnp[_BN_RED_MAXP])
    bqs[b, _BS_RED_COUNT] = count
    return drop
