"""A run's training cells as one numpy batch, for learners that step thousands of cells.

``FastCells`` holds one ``envs.fastsim.vector_env.FastVecEnv`` per batch of the run (each mixture
entry x fast-model variant, ``agents.mixture.mixture_batches``; or ``cfg.scenario`` alone) and
steps them all with one array of actions. The policy's inputs (``agents.features.transform``),
the raw rewards and the episode ends come back as arrays: no per-cell Python, no info dicts.

It is the SB3 path's environment without its per-step Python: a finished cell is reset within
the step that ends it, exactly as ``FastSb3VecEnv`` does, and cell ``j`` is seeded ``seed + j``
as in ``ConcatVecEnv``. Under the same actions, cell ``j`` here sees the observations, features
and rewards of cell ``j`` of ``agents.factory.make_base_vec_env`` (``tests/learners``).

>>> cells = FastCells([({"flows": [{"cca": "agent"}], "sim_time_s": 1.0}, {}, 4)], seed=0)
>>> cells.reset().shape, cells.num_envs
((4, 11), 4)
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
from gymnasium import spaces

from agents.features import feature_space, transform
from cellgym.scenario import ScenarioSpec
from cellgym.vocab import SpecError
from configs.schema import TrainConfig

#: One batch: the scenario, ``FastSimParams`` knobs (a mixture variant) and its number of cells.
Batch = tuple[ScenarioSpec | Mapping[str, Any], Mapping[str, Any], int]


def config_batches(cfg: TrainConfig, cells_scale: int = 1) -> list[Batch]:
    """The batches of cells the SB3 path trains ``cfg`` on, each ``cells_scale`` times larger.

    A mixture (``cfg.mixture``) gives one batch per scenario entry and variant, in the order of
    ``agents.mixture.mixture_batches``; otherwise ``cfg.scenario`` with ``backend.n_envs`` cells.
    Scaling keeps the mixture's proportions.

    Raises:
        SpecError: A backend other than ``fast``, several agent flows, or ``cells_scale < 1``.
    """
    if cells_scale < 1:
        raise SpecError(f"cells_scale={cells_scale!r}: allowed [1, inf)")
    if cfg.mixture.scenarios:
        from agents.mixture import mixture_batches

        batches: list[Batch] = list(mixture_batches(cfg))
    else:
        if cfg.backend.name != "fast":
            raise SpecError(f"backend={cfg.backend.name!r}: FastCells steps the fast backend only")
        if len(cfg.scenario.agent_flows) != 1:
            raise SpecError("FastCells needs exactly one agent flow per cell")
        batches = [(cfg.scenario, dict(cfg.backend.fast_params), int(cfg.backend.n_envs))]
    return [(spec, knobs, n * cells_scale) for spec, knobs, n in batches]


class FastCells:
    """Batches of fast cells stepped as one: actions ``[N, 1]`` in, arrays out.

    Args:
        batches: ``(scenario, model knobs, cells)`` per batch; cell ``j`` of the whole is cell
            ``j - start_k`` of the ``k``-th batch whose range holds it.
        reward: Reward weights and budget (``cellgym.reward.RewardSpec`` fields).
        features: The policy's input (``agents.features``: ``raw`` or ``derived``).
        action_mode: ``"cwnd"`` or ``"rate"``.
        max_change: Largest factor of one step's change.
        seed: Cell ``j`` is seeded ``seed + j`` at the first ``reset`` (``None``: random).
        parallel: Spread each batch's cells over numba's threads (``None``: the fast
            simulator's rule, ``envs.fastsim.sim.PARALLEL_MIN_CELLS``).

    Attributes:
        timings: Seconds spent in the simulator (steps and resets) and in the feature transform.
    """

    def __init__(
        self,
        batches: Sequence[Batch],
        *,
        reward: Mapping[str, Any] | None = None,
        features: str = "raw",
        action_mode: str = "cwnd",
        max_change: float = 2.0,
        seed: int | None = None,
        parallel: bool | None = None,
    ) -> None:
        from envs.fastsim.params import FastSimParams
        from envs.fastsim.vector_env import FastVecEnv

        if not batches:
            raise SpecError("FastCells needs at least one batch of cells")
        self.venvs: list[FastVecEnv] = []
        for spec, knobs, n in batches:
            spec = ScenarioSpec.from_config(spec)
            self.venvs.append(
                FastVecEnv(
                    spec,
                    num_envs=int(n),
                    reward=dict(reward) if reward is not None else None,
                    action_mode=action_mode,
                    max_change=max_change,
                    params=FastSimParams.from_spec(spec, **dict(knobs)),
                    parallel=parallel,
                )
            )
        sizes = [v.num_envs for v in self.venvs]
        self.starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self._slices = [
            slice(int(a), int(b)) for a, b in zip(self.starts[:-1], self.starts[1:], strict=True)
        ]
        self.num_envs = int(self.starts[-1])
        self.features = features
        raw_space = self.venvs[0].single_observation_space
        assert isinstance(raw_space, spaces.Box)
        self.observation_space = feature_space(raw_space, features)
        self.action_space = self.venvs[0].single_action_space
        self.seed = seed
        self._raw = np.zeros((self.num_envs, raw_space.shape[0]), dtype=np.float32)
        self._reward = np.zeros(self.num_envs, dtype=np.float32)
        self._done = np.zeros(self.num_envs, dtype=np.bool_)
        self.timings: dict[str, float] = {"sim": 0.0, "features": 0.0}

    @classmethod
    def from_config(
        cls, cfg: TrainConfig, seed: int, cells_scale: int = 1, parallel: bool | None = None
    ) -> FastCells:
        """The cells of training config ``cfg`` (``config_batches``), seeded ``seed + j``."""
        return cls(
            config_batches(cfg, cells_scale),
            reward=asdict(cfg.reward),
            features=cfg.features,
            action_mode=cfg.action_mode,
            max_change=cfg.max_change,
            seed=seed,
            parallel=parallel,
        )

    @property
    def obs_dim(self) -> int:
        """Width of the policy's input."""
        return int(self.observation_space.shape[0])

    @property
    def act_dim(self) -> int:
        """Width of an action."""
        return int(self.action_space.shape[0])

    def reset(self) -> np.ndarray:
        """Reset every cell (seeded ``seed + j`` the first time); the policy's inputs ``[N, D]``."""
        t0 = time.perf_counter()
        for venv, s in zip(self.venvs, self._slices, strict=True):
            seed = None if self.seed is None else self.seed + s.start
            self._raw[s], _ = venv.reset(seed=seed)
        self.seed = None  # later resets continue from each cell's generator
        t1 = time.perf_counter()
        out = transform(self._raw, self.features)
        self.timings["sim"] += t1 - t0
        self.timings["features"] += time.perf_counter() - t1
        return out

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Advance every cell one step; reset the finished ones at once.

        Args:
            actions: ``[N, 1]`` (or ``[N]``) relative actions; clipped to [-1, 1] by the cells.

        Returns:
            The policy's inputs ``[N, D]`` (a finished cell's first observation of its next
            episode), the raw rewards ``[N]`` (float32) and the episode ends ``[N]``. An episode
            ends when its simulated time is up, which the environments report as termination
            (SB3's path does not bootstrap it either).
        """
        actions = np.asarray(actions).reshape(self.num_envs, -1)
        t0 = time.perf_counter()
        for venv, s in zip(self.venvs, self._slices, strict=True):
            obs, reward, terminated, truncated, _ = venv.step(actions[s])
            done = terminated | truncated
            if done.any():
                # FastSb3VecEnv.step_wait's same-step reset, without its per-cell info dicts.
                venv._reset_cells(done, [None] * venv.num_envs)
                venv._autoreset[:] = False
                obs = venv._observe()
            self._raw[s] = obs
            self._reward[s] = reward
            self._done[s] = done
        t1 = time.perf_counter()
        out = transform(self._raw, self.features)
        self.timings["sim"] += t1 - t0
        self.timings["features"] += time.perf_counter() - t1
        return out, self._reward.copy(), self._done.copy()

    def close(self) -> None:
        """Close every batch."""
        for venv in self.venvs:
            venv.close()
