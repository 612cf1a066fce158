"""The Zeus paper's delayed-feedback oracle, as a per-step policy (section 3.2).

A hypothetical sender that knows the base station's current capacity, but learns it one one-way
delay late: the base station's estimate has to travel to the sender first. CellGym's environment
exposes exactly that signal: ``fair_rate_mbps``, the XRC agent's estimate of the flow's share of
its UE's capacity (the whole capacity for a flow alone), stamped at the base station and carried
back on uplink ACKs, so it reaches the sender with the real uplink delay.

The oracle paces at that rate: with ``action_mode="rate"`` it sets the pacing rate to the
advertised rate each step (the environment caps the window at twice the rate times the minimum
RTT); with ``action_mode="cwnd"`` it sets the window to the advertised rate times the minimum RTT
(the bandwidth-delay product at the base RTT). One step moves the rate or window by at most the
environment's ``max_change``; give a large ``max_change`` (e.g. 100) for an oracle that follows
every step's capacity at once.

Its offline counterpart, full utilization at the base RTT computed from the trace, is
``cellgym.zeus.offline_optimum``.
"""

from __future__ import annotations

import math

import numpy as np

from baselines.base import BaselinePolicy
from cellgym.vocab import ACTION_MODES, check_above, check_choice, check_max_change
from envs.contract import OBS


class DelayedOraclePolicy(BaselinePolicy):
    """Pace at the base station's capacity as the sender last heard it.

    Args:
        max_change: The environment's ``max_change`` (action 1 multiplies by it).
        action_mode: The environment's ``action_mode``: ``rate`` (pace at the capacity) or
            ``cwnd`` (window = capacity x minimum RTT).
        gain: Multiplier on the target rate (1 = exactly the advertised capacity).
    """

    name = "oracle"

    def __init__(self, max_change: float = 2.0, action_mode: str = "rate", gain: float = 1.0):
        check_max_change(max_change)
        check_choice("action_mode", action_mode, ACTION_MODES)
        check_above("gain", gain, 0.0)
        self.max_change = max_change
        self.action_mode = action_mode
        self.gain = gain

    def act(self, obs: np.ndarray) -> float:
        """The log-ratio of target to current rate (or window), in units of ``log(max_change)``."""
        capacity = obs[OBS["fair_rate_mbps"]]
        if capacity <= 0:
            # No feedback yet: hold the environment's initial pacing rate (a blind ramp would
            # flood the buffer before the first estimate arrives); a window grows as slow start.
            return 0.0 if self.action_mode == "rate" else 1.0
        target = self.gain * capacity
        if self.action_mode == "rate":
            # Before its first action the environment starts the pacing rate at the advertised
            # rate (``LteCellEnv._command``).
            current = obs[OBS["pacing_rate_mbps"]] or capacity
        else:
            rtt_min, current = obs[OBS["rtt_min_ms"]], obs[OBS["cwnd_bytes"]]
            if rtt_min <= 0 or current <= 0:
                return 1.0
            target = target * 1e6 / 8 * rtt_min / 1000.0
        return float(np.clip(math.log(target / current) / math.log(self.max_change), -1.0, 1.0))
