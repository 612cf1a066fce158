"""Two policies written as a new user would write their own: examples, not registry controllers.

Neither is in ``cellgym.controllers``: a user's class runs by reference, e.g.
``python -m evaluation.transfer --controllers evaluation.example_policies:PaceAtExplicitRate``
(or ``path/to/my_policy.py:MyPolicy`` for a file of one's own; ``evaluation.user_policies`` says
what such a class may declare). Each reads the environment's raw observation by column name
(``envs.contract.OBS``) and returns SB3's ``(action, state)``:

- ``PaceAtExplicitRate`` (rate mode): pace at 90 % of the explicit rate the base station
  advertises (``fair_rate_mbps``);
- ``DelayAimd`` (window mode): additive increase, multiplicative decrease on the queueing delay
  the step's RTTs show (mean RTT minus the minimum RTT), against the reward's delay budget.

The transfer report (``docs/transfer/``) runs both on both backends: a twin that is right only
for the controllers it was calibrated with would show here. The tests use them as the user
policies of ``tests/evaluation/test_transfer.py``.
"""

from __future__ import annotations

import math

import numpy as np

from cellgym.fields import SEGMENT_BYTES
from envs.contract import OBS


def _step(target: float, current: float, max_change: float) -> float:
    """The action in [-1, 1] moving ``current`` toward ``target`` (by ``max_change ** a``)."""
    return float(np.clip(math.log(target / current) / math.log(max_change), -1.0, 1.0))


class PaceAtExplicitRate:
    """Pace at a share (90 %) of the base station's explicit rate, every step.

    Args:
        max_change: The environment's largest per-step factor (an action of 1 multiplies by it).
        share: The fraction of the advertised rate to pace at.
    """

    name = "pace90"
    action_mode = "rate"

    def __init__(self, max_change: float = 2.0, share: float = 0.9) -> None:
        self.max_change = max_change
        self.share = share

    def predict(self, observation, state=None, episode_start=None, deterministic=True):
        """SB3's ``predict`` on one raw observation: ``(array([a]), state)``."""
        obs = np.asarray(observation, dtype=np.float64)
        rate = obs[OBS["fair_rate_mbps"]]
        if rate <= 0:  # no feedback yet: keep the environment's initial rate
            return np.array([0.0], dtype=np.float32), state
        current = obs[OBS["pacing_rate_mbps"]] or rate
        a = _step(self.share * rate, current, self.max_change)
        return np.array([a], dtype=np.float32), state


class DelayAimd:
    """Delay-based AIMD on the window: grow while the queue is short, back off when it is not.

    Each step the window grows by ``increase_segments``; when the step's queueing delay (mean
    RTT minus minimum RTT) exceeds ``budget_ms``, it is multiplied by ``decrease`` instead, at most
    once per minimum RTT.

    Args:
        max_change: The environment's largest per-step factor.
        budget_ms: The queueing delay to stay under (the reward's delay budget).
        step_ms: The environment's step (to back off at most once per RTT).
        increase_segments: Additive increase per step, in segments.
        decrease: Multiplicative decrease factor.
    """

    name = "delay_aimd"
    action_mode = "cwnd"

    def __init__(
        self,
        max_change: float = 2.0,
        budget_ms: float = 10.0,
        step_ms: float = 20.0,
        increase_segments: float = 2.0,
        decrease: float = 0.7,
    ) -> None:
        self.max_change = max_change
        self.budget_ms = budget_ms
        self.step_ms = step_ms
        self.increase_segments = increase_segments
        self.decrease = decrease
        self.reset()

    def reset(self) -> None:
        """Forget the last back-off (a new episode)."""
        self._since_decrease_ms = math.inf

    def predict(self, observation, state=None, episode_start=None, deterministic=True):
        """SB3's ``predict`` on one raw observation: ``(array([a]), state)``."""
        if episode_start is not None and np.any(episode_start):
            self.reset()
        obs = np.asarray(observation, dtype=np.float64)
        cwnd, rtt_min = obs[OBS["cwnd_bytes"]], obs[OBS["rtt_min_ms"]]
        rtt_mean = obs[OBS["rtt_mean_ms"]]
        self._since_decrease_ms += self.step_ms
        if cwnd <= 0 or rtt_min <= 0:  # no ACK yet: grow
            return np.array([1.0], dtype=np.float32), state
        target = cwnd + self.increase_segments * SEGMENT_BYTES
        if rtt_mean > 0 and rtt_mean - rtt_min > self.budget_ms:
            if self._since_decrease_ms >= rtt_min:
                target = cwnd * self.decrease
                self._since_decrease_ms = 0.0
            else:
                target = cwnd  # backed off less than an RTT ago: hold
        a = _step(target, cwnd, self.max_change)
        return np.array([a], dtype=np.float32), state
