"""RCP's sender: paces at the rate R(t) of the bottleneck's router, carried back on the ACKs.

RCP is rate-based: the segments leave at the router's common rate R (``dispatch._paced``), read
off every batch of ACKs (``rcp_feedback``); a new flow starts at the R its SYN-ACK carried (the
router's rate one uplink delay before its first segment, ``rcp_start``), not with a slow start.
The window only bounds what is outstanding: the receive window. The header (RTT for the router's
average, 16 bytes of the payload, ``codes.RCP_HEADER_BYTES``) is XCP's (``xcp._xcp_header``).
Losses are repaired by the shared TCP machinery; the rate is not cut (the evaluation paper
leaves RCP's reaction to loss unspecified). The router's side is ``enb_agents/rcp.py``.
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.params import FC_D_SRV_UP_MS, P_RWND_SEGS
from envs.fastsim.state import FB_RCP, I_DATA_MS, X_CWND, X_PACING, X_TOKENS


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _rcp_feedback(fx, b, f, fbr, fslot):
    """ACKs arrive: pace at the rate they carry (bytes of payload per ms)."""
    rate = fbr[b, f, fslot, FB_RCP]
    if rate > 0:
        fx[b, f, X_PACING] = rate


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _rcp_window(fx, b, f, p, seg):
    """The window: the receive window once a rate paces the flow (before, the initial window)."""
    if fx[b, f, X_PACING] > 0:
        fx[b, f, X_CWND] = p[P_RWND_SEGS] * seg


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _rcp_start(b, f, t, p, fc, fi, fx, fbr, seg):
    """Before the first ACK: the rate the SYN-ACK brought (the router's R when it passed)."""
    if fx[b, f, X_PACING] > 0 or t < fi[b, f, I_DATA_MS]:
        return
    tf = t - int(fc[f, FC_D_SRV_UP_MS])
    if tf < 0:
        return
    rate = fbr[b, f, tf & (fbr.shape[2] - 1), FB_RCP]
    if rate > 0:
        fx[b, f, X_PACING] = rate
        fx[b, f, X_TOKENS] = seg
        _rcp_window(fx, b, f, p, seg)
