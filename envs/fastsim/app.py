"""The servers' applications: what each flow's socket has to send.

``bulk`` keeps the socket backlogged, ``video`` adds ``video_rate_mbps`` every 10 ms tick of its
ON periods, ``short`` hands over ``size_bytes`` once (its completion time is taken at the
receiver), ``pareto`` hands over each flow's size the workload gives its slot (``workload``).
The application keeps about two windows plus a chunk queued in the socket, at most its send
buffer.
"""

from __future__ import annotations

import math

from numba import njit

from envs.fastsim.codes import TRAFFIC_BULK, TRAFFIC_PARETO, TRAFFIC_SHORT, TRAFFIC_VIDEO
from envs.fastsim.params import (
    FC_TRAFFIC,
    FC_VIDEO_ON_MS,
    FC_VIDEO_PERIOD_MS,
    FC_VIDEO_RATE_BPMS,
    P_APP_CHUNK_BYTES,
    P_RWND_SEGS,
    P_VIDEO_TICK_MS,
)
from envs.fastsim.state import I_HANDED, I_UNA, X_BUDGET, X_O_SENT


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _application(b, f, t, p, fc, fi, fx, cwnd, start, seg):
    """A running flow's application hands segments to the socket (``I_HANDED``)."""
    traffic = int(fc[f, FC_TRAFFIC])
    if traffic == TRAFFIC_VIDEO:
        tick = int(p[P_VIDEO_TICK_MS])
        since = t - start
        if since % tick == 0 and (since % int(fc[f, FC_VIDEO_PERIOD_MS])) < fc[f, FC_VIDEO_ON_MS]:
            fx[b, f, X_BUDGET] += fc[f, FC_VIDEO_RATE_BPMS] * tick
    give = _would_hand(b, f, p, fc, fi, fx, cwnd, seg)
    if give > 0:
        if traffic == TRAFFIC_BULK:
            fx[b, f, X_O_SENT] += give * seg
        else:
            nbytes = min(give * seg, fx[b, f, X_BUDGET])
            fx[b, f, X_BUDGET] -= nbytes
            fx[b, f, X_O_SENT] += nbytes
        fi[b, f, I_HANDED] += give


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _would_hand(b, f, p, fc, fi, fx, cwnd, seg):
    """Segments ``_application`` would hand to the socket now (without handing them)."""
    traffic = int(fc[f, FC_TRAFFIC])
    # At most about two windows plus a chunk beyond the cumulative ACK, and never more than the
    # send buffer holds (``SndBufSize``, the size of the receive window): a window that jumps
    # to an unset ssthresh (BBR leaving a recovery in startup) still finds the socket full.
    ahead = int(math.ceil((2.0 * cwnd + p[P_APP_CHUNK_BYTES]) / seg))
    limit = fi[b, f, I_UNA] + min(ahead, int(p[P_RWND_SEGS]))
    room = limit - fi[b, f, I_HANDED]
    if room <= 0:
        return 0
    if traffic == TRAFFIC_BULK:
        return room
    budget = fx[b, f, X_BUDGET]
    if traffic == TRAFFIC_SHORT or traffic == TRAFFIC_PARETO:
        return min(room, int(math.ceil(budget / seg)))
    return min(room, int(budget // seg))
