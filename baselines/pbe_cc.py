"""PBE-CC's sender rules (docs/pbe-cc.md) as a per-step policy over ``LteCellEnv`` observations.

The native PBE-CC (``cca: pbecc``, fast backend) reads the rate its UE measured from the cell's
control channel on every ACK. This policy sees one observation per environment step and takes
the closest signal the observation carries: ``fair_rate_mbps``, the base station's estimate of
the flow's share of its UE's capacity (new transport blocks plus the UE's share of the idle
resource blocks, carried back on the ACKs, so it arrives one uplink delay late). The rules:

- PBE mode: pace at ``pacing_gain x rate`` (``action_mode="rate"``), or set the window to
  ``cwnd_gain x rate x RTT_min`` (``action_mode="cwnd"``);
- the RTT the rate explains is ``max(RTT_min, in flight / rate)``; when the step's mean RTT
  exceeds it by more than ``margin_ms`` for ``hold_rtts`` min RTTs, the queue is elsewhere (an
  Internet bottleneck): fall back to a BBR-like probe, the highest delivery rate of the last
  ``filter_steps`` steps times the gain cycle 1.25, 0.75, 1 x 6 (one phase per step);
- leave the fallback when that bandwidth reaches ``return_share`` of the rate.

Every number is a documented constructor argument (the paper's introduction gives none).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from baselines.base import BaselinePolicy
from cellgym.vocab import ACTION_MODES, check_above, check_choice, check_max_change, check_range
from envs.contract import OBS

#: The BBR-like fallback's pacing gains, one per step.
PROBE_GAINS: tuple[float, ...] = (1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)


class PbeCcPolicy(BaselinePolicy):
    """Pace at the measured share of the cell; BBR-like when the delay says the cell is not it.

    Args:
        max_change: The environment's ``max_change`` (action 1 multiplies by it).
        action_mode: The environment's ``action_mode``: ``rate`` or ``cwnd``.
        step_ms: The environment's step interval, in ms.
        pacing_gain: Multiplier on the rate in the PBE mode. ``fair_rate_mbps`` counts whole
            PDCP packets (1502 bytes) and the pacing rate payload (1448): 0.96 ~ 1448 / 1502.
        cwnd_gain: Window = rate x RTT_min x this (``cwnd`` mode).
        margin_ms: RTT beyond what the rate explains before the fallback counts, in ms.
        hold_rtts: Min RTTs the unexplained delay must last before the fallback.
        return_share: The fallback ends when its bandwidth reaches this share of the rate.
        filter_steps: Steps of the fallback's max-delivery-rate filter.
    """

    name = "pbecc_policy"

    def __init__(
        self,
        max_change: float = 2.0,
        action_mode: str = "rate",
        step_ms: float = 20.0,
        pacing_gain: float = 0.96,
        cwnd_gain: float = 1.25,
        margin_ms: float = 10.0,
        hold_rtts: float = 2.0,
        return_share: float = 0.9,
        filter_steps: int = 10,
    ) -> None:
        check_max_change(max_change)
        check_choice("action_mode", action_mode, ACTION_MODES)
        for name, value in (
            ("step_ms", step_ms),
            ("pacing_gain", pacing_gain),
            ("hold_rtts", hold_rtts),
            ("return_share", return_share),
        ):
            check_above(name, value, 0.0)
        check_range("cwnd_gain", cwnd_gain, 1.0, 4.0)
        check_range("margin_ms", margin_ms, 0.0)
        check_range("filter_steps", filter_steps, 1)
        self.max_change = max_change
        self.action_mode = action_mode
        self.step_ms = step_ms
        self.pacing_gain = pacing_gain
        self.cwnd_gain = cwnd_gain
        self.margin_ms = margin_ms
        self.hold_rtts = hold_rtts
        self.return_share = return_share
        self.filter_steps = filter_steps
        self.reset()

    def reset(self) -> None:
        """Forget the per-episode state."""
        self.mode = "start"
        self._unexplained_ms = 0.0
        self._delivery: deque[float] = deque(maxlen=self.filter_steps)
        self._phase = 0

    def target(self, obs: np.ndarray) -> float:
        """The pacing rate (Mbit/s; ``cwnd`` mode: the window in bytes) for the next step."""
        rate = float(obs[OBS["fair_rate_mbps"]])
        rtt_min = float(obs[OBS["rtt_min_ms"]])
        rtt = float(obs[OBS["rtt_mean_ms"]] or obs[OBS["rtt_last_ms"]])
        delivered = float(obs[OBS["delivery_rate_mbps"]])
        self._delivery.append(delivered)
        btlbw = max(self._delivery)
        if rate <= 0 or rtt_min <= 0:
            self.mode = "start"
            return 0.0
        if self.mode == "fallback":
            if btlbw >= self.return_share * rate:
                self.mode = "pbe"
                self._unexplained_ms = 0.0
        else:
            self.mode = "pbe"
            inflight = float(obs[OBS["bytes_in_flight"]])
            explained = max(rtt_min, inflight / (rate * 1e3 / 8.0))  # bytes / (bytes per ms)
            if rtt - explained > self.margin_ms:
                self._unexplained_ms += self.step_ms
                if self._unexplained_ms >= self.hold_rtts * rtt_min:
                    self.mode = "fallback"
                    self._phase = 0
            else:
                self._unexplained_ms = 0.0
        if self.mode == "fallback":
            out = PROBE_GAINS[self._phase] * max(btlbw, 1e-3)
            self._phase = (self._phase + 1) % len(PROBE_GAINS)
        else:
            out = self.pacing_gain * rate
        if self.action_mode == "cwnd":
            gain = self.cwnd_gain if self.mode == "pbe" else 2.0
            return gain * out * 1e6 / 8.0 * rtt_min / 1e3
        return out

    def act(self, obs: np.ndarray) -> float:
        """The log-ratio of target to current rate (or window), in units of ``log(max_change)``."""
        target = self.target(obs)
        if target <= 0:
            # No estimate yet: hold the environment's initial rate; a window grows as slow start.
            return 0.0 if self.action_mode == "rate" else 1.0
        if self.action_mode == "rate":
            current = float(obs[OBS["pacing_rate_mbps"]]) or target
        else:
            current = float(obs[OBS["cwnd_bytes"]])
            if current <= 0:
                return 1.0
        return float(np.clip(math.log(target / current) / math.log(self.max_change), -1.0, 1.0))
