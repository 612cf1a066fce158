"""A test-only toy sender: paces every segment at a constant rate (``RATE_MBPS``).

The worked example of adding a controller (docs/architecture.md, "Add a controller"), as ns-3's
``TcpConstRate`` (``ns3-scenarios/model/tcp-constrate.cc``): once the handshake is done, the
segments leave at the constant rate (``dispatch._paced``) and the window is the receive window,
set before every send (``constrate_pace``), so that no loss cuts it; losses are repaired by the
shared TCP machinery. ``tests/test_controller_recipe.py`` runs it on both backends.
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.params import P_RWND_SEGS
from envs.fastsim.state import I_DATA_MS, X_CWND, X_PACING

#: The pacing rate, payload Mbit/s (ns-3's ``TcpConstRate::kRateBps``).
RATE_MBPS = 5.0
#: The same in the fast model's unit: bytes of payload per ms.
RATE_BYTES_PER_MS = RATE_MBPS * 1e6 / 8.0 / 1e3


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _constrate_pace(b, f, t, p, fi, fx, seg):
    """Before the TTI's sends, once the handshake is done: the rate, and the receive window."""
    if t < fi[b, f, I_DATA_MS]:
        return
    fx[b, f, X_PACING] = RATE_BYTES_PER_MS
    fx[b, f, X_CWND] = p[P_RWND_SEGS] * seg
