"""The agent's sender: holds the window and pacing rate a Python policy commands.

Outside loss recovery the window is the commanded one; before the first command the flow runs
NewReno (``dispatch``). Commands arrive at step boundaries (``act[b, f]``: window in bytes,
pacing rate in Mbit/s, a flag that a new command is there).
"""

from __future__ import annotations

import math

from numba import njit

from envs.fastsim.codes import ST_OPEN
from envs.fastsim.state import I_CSTATE, X_CMD_CWND, X_CMD_PACE, X_CWND, X_PACING, X_SSTHRESH


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _agent_apply(fx, fi, b, f, seg):
    """The agent's ``Apply``: hold the commanded window outside loss recovery."""
    cmd = fx[b, f, X_CMD_CWND]
    if cmd <= 0:
        return
    fx[b, f, X_PACING] = fx[b, f, X_CMD_PACE]
    if fi[b, f, I_CSTATE] == ST_OPEN:
        fx[b, f, X_CWND] = math.floor(min(max(cmd, seg), 4e9))
        fx[b, f, X_SSTHRESH] = min(fx[b, f, X_CWND], fx[b, f, X_SSTHRESH])


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _agent_command(fx, fi, act, b, f, seg):
    """A new command at the step boundary (absolute window and pacing), applied at once."""
    if act[b, f, 2] > 0:
        fx[b, f, X_CMD_CWND] = max(act[b, f, 0], 1.0)
        fx[b, f, X_CMD_PACE] = max(act[b, f, 1], 0.0) * 1e6 / 8.0 / 1000.0
        act[b, f, 2] = 0.0
        _agent_apply(fx, fi, b, f, seg)
