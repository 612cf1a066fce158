"""A simple explicit-rate follower: the window that carries the advertised rate at the minimum RTT.

Each step it moves the congestion window toward ``twnd = R_exp * RTT_min`` (XRC's target window,
equation 2 of the XRC paper), without XRC's delay control, bottleneck detection or fairness modes:
the simplest policy that uses the base station's explicit feedback, for demonstrations and as a
sanity check of the bridge.
"""

from __future__ import annotations

import math

import numpy as np

from baselines.base import BaselinePolicy
from cellgym.vocab import check_above, check_max_change
from envs.contract import OBS


class ExplicitRatePolicy(BaselinePolicy):
    """Set cwnd to ``fair_rate * rtt_min`` (times ``gain``) each step.

    Args:
        max_change: The environment's ``max_change`` (action 1 multiplies the window by it).
        gain: Multiplier on the target window (1 = exactly the bandwidth-delay product).
    """

    name = "explicit_rate"

    def __init__(self, max_change: float = 2.0, gain: float = 1.0) -> None:
        check_max_change(max_change)
        check_above("gain", gain, 0.0)
        self.max_change = max_change
        self.gain = gain

    def act(self, obs: np.ndarray) -> float:
        """Return the log-ratio of target to current window, in units of ``log(max_change)``."""
        rate, rtt_min, cwnd = (
            obs[OBS["fair_rate_mbps"]],
            obs[OBS["rtt_min_ms"]],
            obs[OBS["cwnd_bytes"]],
        )
        if rate <= 0 or rtt_min <= 0 or cwnd <= 0:
            return 1.0  # no feedback yet: grow as fast as allowed, like slow start
        target = self.gain * rate * 1e6 / 8 * rtt_min / 1000.0
        return float(np.clip(math.log(target / cwnd) / math.log(self.max_change), -1.0, 1.0))
