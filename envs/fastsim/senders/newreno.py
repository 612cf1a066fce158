"""NewReno as ns-3's ``TcpNewReno`` (also the model of ``linuxreno`` and ``veno``)."""

from __future__ import annotations

import math

from numba import njit

from envs.fastsim.state import X_CWND, X_SSTHRESH


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _newreno_increase(fx, b, f, segs, seg):
    """ns-3 ``TcpNewReno::IncreaseWindow``: +1 segment per ACK in slow start, then seg^2/cwnd."""
    if fx[b, f, X_CWND] < fx[b, f, X_SSTHRESH] and segs >= 1:
        fx[b, f, X_CWND] += seg
        segs -= 1
    if fx[b, f, X_CWND] >= fx[b, f, X_SSTHRESH] and segs > 0:
        fx[b, f, X_CWND] += math.floor(max(1.0, seg * seg / fx[b, f, X_CWND]))


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _newreno_ssthresh(pipe_bytes, seg):
    """ns-3 ``TcpNewReno::GetSsThresh``: half of what is in flight, at least two segments."""
    return max(2 * seg, math.floor(pipe_bytes / 2.0))
