"""What drives the agent flow in the calibration's policy rows, the same way on both backends.

Most calibration rows run native senders (ns-3's TCPs, XRC's sender). The rows named in
``DRIVERS`` have an ``agent`` flow instead, driven per step through ``LteCellEnv`` exactly as in
training and evaluation, on ns-3 and on the fast backend:

- ``xrc_policy``: the XRC policy of ``baselines/xrc.py`` (closed loop on the observation);
- ``walk_cwnd``: a fixed, seeded sequence of window targets: the logarithm of the window follows
  a random walk (steps of N(0, 0.1) per 20 ms step, at most a factor ``max_change``) reflected
  into [20, 300] segments, starting from the initial window of 10 segments; each step's action
  moves the observed window to the next target (the flow's window is whole segments, so open-loop
  relative actions would drift down by the rounding);
- ``steps_rate``: a fixed, seeded sequence of pacing-rate actions (``action_mode="rate"``): a new
  level every 2 s, drawn log-uniformly in [5, 45] Mbit/s, reached at most a factor
  ``max_change`` per step from the environment's first rate (1 Mbit/s: no explicit rate is known
  at the start; the environment keeps the rate itself, so these actions are open loop).

The sequences come from ``SEQUENCE_SEED``, not from the run's seed: every seed and both backends
get the same sequence, so seeds differ only in the simulators' own randomness (flow start offsets)
and ns-3's seed-to-seed spread is a noise floor for the same input.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from baselines.base import BaselinePolicy
from cellgym.fields import SEGMENT_BYTES
from cellgym.metrics import EpisodeRecords
from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec
from cellgym.vocab import SpecError
from envs.contract import OBS
from envs.lte_cell import LteCellEnv

#: The largest per-step change factor of the policy rows' environments (the environment default).
MAX_CHANGE = 2.0
#: ``walk_cwnd``: the window's range (segments) and the random walk's step (natural log units).
WALK_RANGE_SEGMENTS: tuple[float, float] = (20.0, 300.0)
WALK_STEP_SIGMA = 0.1
INITIAL_WINDOW_SEGMENTS = 10.0
#: The seed of the fixed sequences (the same for every run seed).
SEQUENCE_SEED = 1
#: ``steps_rate``: the range of the rate levels (Mbit/s), how long each is held (s), and the
#: environment's first rate without an explicit rate (``LteCellEnv._command``).
RATE_RANGE_MBPS: tuple[float, float] = (5.0, 45.0)
RATE_HOLD_S = 2.0
INITIAL_RATE_MBPS = 1.0


@dataclasses.dataclass(frozen=True)
class Driver:
    """A calibration row's agent-flow driver: a policy name and the environment's action mode."""

    name: str
    action_mode: str = "cwnd"


#: Calibration scenario -> the driver of its agent flow (other rows run natively).
DRIVERS: dict[str, Driver] = {
    "xrc_policy": Driver("xrc_policy"),
    "xrc_policy_fluctuating": Driver("xrc_policy"),
    "xrc_policy_vs_cubic": Driver("xrc_policy"),
    "xrc_policy_three_ues": Driver("xrc_policy"),
    "xrc_policy_steps": Driver("xrc_policy"),
    "xrc_policy_att_lte_driving": Driver("xrc_policy"),
    "xrc_policy_irish5g_static": Driver("xrc_policy"),
    "nr_xrc_policy_irish5g_static": Driver("xrc_policy"),
    "agent_walk_cwnd": Driver("walk_cwnd"),
    "agent_steps_rate": Driver("steps_rate", action_mode="rate"),
    "nr_agent_walk_cwnd": Driver("walk_cwnd"),
}


def _rng(seed: int, salt: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), salt])


def walk_cwnd_targets(seed: int, n_steps: int, max_change: float = MAX_CHANGE) -> np.ndarray:
    """``n_steps`` window targets (segments): a reflected random walk of the log window."""
    rng = _rng(seed, 0xC3D)
    lo, hi = (math.log(x) for x in WALK_RANGE_SEGMENTS)
    w = math.log(INITIAL_WINDOW_SEGMENTS)
    unit = math.log(max_change)
    out = np.empty(n_steps)
    for i in range(n_steps):
        target = w + rng.normal(0.0, WALK_STEP_SIGMA)
        if target > hi:
            target = 2 * hi - target
        if target < lo:
            target = 2 * lo - target
        w += min(unit, max(-unit, target - w))
        out[i] = math.exp(w)
    return out


def steps_rate_actions(
    seed: int, n_steps: int, step_s: float, max_change: float = MAX_CHANGE
) -> np.ndarray:
    """``n_steps`` rate actions in [-1, 1]: levels held ``RATE_HOLD_S``, reached by full steps."""
    rng = _rng(seed, 0x5E7)
    lo, hi = (math.log(x) for x in RATE_RANGE_MBPS)
    hold = max(1, round(RATE_HOLD_S / step_s))
    unit = math.log(max_change)
    rate = math.log(INITIAL_RATE_MBPS)
    level = rate
    out = np.empty(n_steps)
    for i in range(n_steps):
        if i % hold == 0:
            level = rng.uniform(lo, hi)
        a = min(1.0, max(-1.0, (level - rate) / unit))
        rate += a * unit
        out[i] = a
    return out


class SequencePolicy(BaselinePolicy):
    """Replays a fixed action sequence, one action per step (the last one after its end)."""

    name = "sequence"

    def __init__(self, actions: np.ndarray) -> None:
        self.actions = np.asarray(actions, dtype=np.float64)
        self._i = 0

    def reset(self) -> None:
        """Start the sequence again."""
        self._i = 0

    def act(self, obs: np.ndarray) -> float:
        """The next action of the sequence."""
        a = float(self.actions[min(self._i, len(self.actions) - 1)])
        self._i += 1
        return a


class WindowTargetPolicy(BaselinePolicy):
    """Moves the observed window to a fixed sequence of targets (segments), one per step."""

    name = "window_targets"

    def __init__(self, targets_segments: np.ndarray, max_change: float = MAX_CHANGE) -> None:
        self.targets = np.asarray(targets_segments, dtype=np.float64)
        self.max_change = float(max_change)
        self._i = 0

    def reset(self) -> None:
        """Start the sequence again."""
        self._i = 0

    def act(self, obs: np.ndarray) -> float:
        """The action that turns the observed window into the next target."""
        target = float(self.targets[min(self._i, len(self.targets) - 1)]) * SEGMENT_BYTES
        self._i += 1
        cwnd = float(obs[OBS["cwnd_bytes"]]) or INITIAL_WINDOW_SEGMENTS * SEGMENT_BYTES
        return min(1.0, max(-1.0, math.log(target / cwnd) / math.log(self.max_change)))


def make_policy(driver: Driver, spec: ScenarioSpec, reward: RewardSpec) -> Any:
    """The policy of ``driver`` for ``spec`` (fixed sequences: from ``SEQUENCE_SEED``)."""
    n = spec.num_steps + 1
    if driver.name == "walk_cwnd":
        return WindowTargetPolicy(walk_cwnd_targets(SEQUENCE_SEED, n))
    if driver.name == "steps_rate":
        return SequencePolicy(steps_rate_actions(SEQUENCE_SEED, n, spec.step_ms / 1000.0))
    from evaluation.rollouts import make_baseline

    return make_baseline(driver.name, spec, reward, MAX_CHANGE)


def drive(
    spec: ScenarioSpec,
    driver: Driver,
    seed: int,
    backend: str,
    knobs: Mapping[str, Any] | None = None,
    reward: RewardSpec | None = None,
    timeout_s: float = 300.0,
) -> EpisodeRecords:
    """Run ``spec`` with its agent flow driven by ``driver``; the records carry the rewards.

    On the fast backend ``knobs`` override ``FastSimParams`` fields. Both backends take the
    seed's draws (``cellgym.draws``).
    """
    if not spec.agent_flows:
        raise SpecError(f"scenario {spec.name!r} has no agent flow for driver {driver.name!r}")
    reward = reward or RewardSpec()
    env = LteCellEnv(
        scenario=spec,
        reward=reward,
        backend=backend,
        action_mode=driver.action_mode,
        max_change=MAX_CHANGE,
        timeout_s=timeout_s,
        fast_params=knobs if backend == "fast" else None,
    )
    policy = make_policy(driver, spec, reward)
    rec = EpisodeRecords(spec=spec, controller=driver.name, seed=seed)
    try:
        obs, info = env.reset(seed=seed)
        rec.append(info["t"], info["flows"], info["ues"])
        policy.reset()
        state, start, done = None, np.array([True]), False
        while not done:
            action, state = policy.predict(obs, state, start, deterministic=True)
            start = np.array([False])
            obs, r, terminated, truncated, info = env.step(action)
            rec.append(info["t"], info["flows"], info["ues"], r)
            done = terminated or truncated
    finally:
        env.close()
    return rec
