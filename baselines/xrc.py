"""XRC's sender (XRC paper, section III.B) as a per-step policy over ``LteCellEnv`` observations.

The native XRC sender reacts on every ACK; this policy sees one observation per environment step
(20 ms by default) and commands the window for the next step, exactly as a learned policy does. The
rules are the paper's:

- target window ``twnd = R_exp * RTT_min`` (equation 2);
- queueing-delay estimate ``delta = max(mean RTT - RTT_min, HoL_exp)`` (equation 3), here over the
  step's RTT samples rather than a window of data;
- bottleneck location: cellular when ``HoL_exp > budget``; Internet when ``HoL_exp <= budget`` and
  the end-to-end queueing delay exceeds ``HoL_exp`` by more than the budget;
- congestion avoidance with weight alpha: while ``cwnd < twnd`` and ``delta < budget`` the window
  closes the gap to ``twnd`` within ``ramp_rtts`` RTTs; past ``twnd`` it grows one segment per RTT;
  when ``delta`` exceeds the budget the window is reset to ``twnd``; with an Internet bottleneck it
  behaves as standard TCP (alpha = 1: one segment per RTT, halving on loss);
- unfairness mode: only at a cellular bottleneck (``HoL_exp > budget``; the paper: "when XRC flow
  competes with non-XRC flows at a wireless bottleneck"), after ``unfair_rtts`` RTTs in which the
  delay stays above the budget although the window sits at ``twnd`` (a competitor is filling the
  buffer), alpha becomes ``unfair_alpha`` until the delay falls below the budget, the head of the
  RLC queue falls within the budget, or a loss occurs. An end-to-end delay above the budget while
  the RLC head is within it (the scheduler's turn-taking among many UEs, delayed ACKs) resets the
  window to ``twnd`` but never counts toward the unfairness mode;
- before the first feedback, TCP's slow start: the window grows by the bytes acknowledged in the
  step (one doubling per RTT, clocked by the ACKs, as the native sender's NewReno start);
- loss recovery is left to ns-3's TCP machinery, which the agent's congestion ops follow in
  recovery.

Where the paper is silent (the per-step form, the ramp length, the size of the unfair alpha) the
choice is a documented constructor argument.
"""

from __future__ import annotations

import math

import numpy as np

from baselines.base import BaselinePolicy
from cellgym.fields import SEGMENT_BYTES
from cellgym.vocab import check_above, check_max_change, check_range
from envs.contract import OBS


class XrcPolicy(BaselinePolicy):
    """XRC's congestion-avoidance rules, one decision per environment step.

    Args:
        max_change: The environment's ``max_change`` (action 1 multiplies the window by it).
        step_ms: The environment's step interval, in ms.
        budget_ms: Queueing-delay budget, in ms (paper: 10 ms).
        ramp_rtts: RTTs in which the window closes the gap to ``twnd`` (paper: "within 2 RTTs").
        unfair_rtts: RTTs of high delay at ``twnd`` before the unfairness mode (paper: N = 10).
        unfair_alpha: Segments per RTT added in unfairness mode (paper: "temporarily large").
    """

    name = "xrc"

    def __init__(
        self,
        max_change: float = 2.0,
        step_ms: float = 20.0,
        budget_ms: float = 10.0,
        ramp_rtts: float = 2.0,
        unfair_rtts: int = 10,
        unfair_alpha: float = 20.0,
    ) -> None:
        check_max_change(max_change)
        for name, value in (
            ("step_ms", step_ms),
            ("budget_ms", budget_ms),
            ("ramp_rtts", ramp_rtts),
            ("unfair_alpha", unfair_alpha),
        ):
            check_above(name, value, 0.0)
        check_range("unfair_rtts", unfair_rtts, 1)
        self.max_change = max_change
        self.step_ms = step_ms
        self.budget_ms = budget_ms
        self.ramp_rtts = ramp_rtts
        self.unfair_rtts = unfair_rtts
        self.unfair_alpha = unfair_alpha
        self.reset()

    def reset(self) -> None:
        """Forget the per-episode state."""
        self._high_delay_ms = 0.0  # time spent at twnd with delay above budget
        self._unfair = False
        self.mode = "start"

    def target_cwnd(self, obs: np.ndarray) -> float:
        """The window XRC commands for the next step, in bytes."""
        rate = obs[OBS["fair_rate_mbps"]]
        hol = obs[OBS["hol_delay_ms"]]
        rtt_min = obs[OBS["rtt_min_ms"]]
        rtt_mean = obs[OBS["rtt_mean_ms"]] or obs[OBS["rtt_last_ms"]]
        cwnd = float(obs[OBS["cwnd_bytes"]])
        if rate <= 0 or rtt_min <= 0 or cwnd <= 0:
            # No feedback yet: TCP's slow start, which the paper keeps ("XRC follows standard
            # TCP's loss recovery and slow start mechanism"): the window grows by the bytes
            # acknowledged in the step (doubling once per RTT, clocked by the ACKs).
            self.mode = "start"
            acked = obs[OBS["delivery_rate_mbps"]] * 1e6 / 8 * self.step_ms / 1000.0
            return max(cwnd, SEGMENT_BYTES) + acked
        twnd = rate * 1e6 / 8 * rtt_min / 1000.0
        e2e = max(0.0, rtt_mean - rtt_min)
        delta = max(e2e, hol)
        rtts = self.step_ms / max(rtt_mean, rtt_min)  # RTTs elapsed in one step
        per_rtt = SEGMENT_BYTES * rtts  # one segment per RTT, over this step

        if obs[OBS["loss_events"]] > 0:
            self._unfair = False
            self._high_delay_ms = 0.0
        internet = hol <= self.budget_ms and e2e - hol > self.budget_ms
        if internet:
            self.mode = "internet"
            self._unfair = False
            return cwnd + per_rtt  # alpha = 1: standard TCP; losses halve it in ns-3's recovery
        if hol <= self.budget_ms:  # not a cellular bottleneck: no competitor to push back
            self._high_delay_ms = 0.0
            self._unfair = False
        if delta > self.budget_ms:
            if cwnd <= twnd * 1.05 and hol > self.budget_ms:
                self._high_delay_ms += self.step_ms
            if self._high_delay_ms >= self.unfair_rtts * rtt_min:
                self._unfair = True
            if self._unfair:
                self.mode = "unfair"
                return max(cwnd, twnd) + self.unfair_alpha * per_rtt
            self.mode = "reset"
            return twnd
        self._high_delay_ms = 0.0
        self._unfair = False
        if cwnd < twnd:
            self.mode = "ramp"
            return cwnd + (twnd - cwnd) * min(1.0, rtts / self.ramp_rtts)
        self.mode = "probe"
        return cwnd + per_rtt

    def act(self, obs: np.ndarray) -> float:
        """Return the log-ratio of the commanded to the current window, in ``log(max_change)``."""
        cwnd = float(obs[OBS["cwnd_bytes"]]) or SEGMENT_BYTES
        target = max(2.0 * SEGMENT_BYTES, self.target_cwnd(obs))
        return float(np.clip(math.log(target / cwnd) / math.log(self.max_change), -1.0, 1.0))
