"""Training on a distribution of scenarios and fast-model variants, as one SB3 ``VecEnv``.

``make_mixture_vec_env(cfg, seed)`` builds one batch of fast cells
(``envs.fastsim.vector_env.FastSb3VecEnv``) per entry of ``cfg.mixture.scenarios`` and per model
variant of ``cfg.mixture.variants`` (domain randomisation over ``envs.fastsim.params.FastSimParams``
fields, e.g. ``uplink`` periodic and bsr), and
``ConcatVecEnv`` puts their cells side by side: every PPO rollout holds every scenario and
variant in fixed proportions. Cell ``j`` of the whole vector is seeded ``seed + j``, as in a
single batch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from cellgym.scenario import ScenarioSpec
from cellgym.vocab import SpecError
from configs.schema import TrainConfig


class ConcatVecEnv(VecEnv):
    """Several SB3 ``VecEnv``s with the same spaces, stepped as one (their envs concatenated).

    Args:
        venvs: The vector envs, in order; env ``j`` of the whole is env ``j - start_k`` of the
            ``k``-th one whose range holds it.
    """

    def __init__(self, venvs: Sequence[VecEnv]) -> None:
        if not venvs:
            raise ValueError("ConcatVecEnv needs at least one vector env")
        first = venvs[0]
        for k, v in enumerate(venvs[1:], start=1):
            if v.observation_space != first.observation_space:
                raise ValueError(f"venvs[{k}] has another observation space than venvs[0]")
            if v.action_space != first.action_space:
                raise ValueError(f"venvs[{k}] has another action space than venvs[0]")
        self.venvs = list(venvs)
        sizes = [v.num_envs for v in self.venvs]
        self.starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        super().__init__(int(self.starts[-1]), first.observation_space, first.action_space)
        self._actions: np.ndarray | None = None

    def _slices(self) -> list[slice]:
        return [slice(self.starts[k], self.starts[k + 1]) for k in range(len(self.venvs))]

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed env ``j`` with ``seed + j`` (at the next reset)."""
        out: list[int | None] = []
        for k, v in enumerate(self.venvs):
            out.extend(v.seed(None if seed is None else seed + int(self.starts[k])))
        return out

    def reset(self) -> np.ndarray:
        """Reset every vector env and concatenate their observations."""
        return np.concatenate([v.reset() for v in self.venvs])

    def step_async(self, actions: np.ndarray) -> None:
        """Hand each vector env its slice of the actions."""
        actions = np.asarray(actions)
        for v, s in zip(self.venvs, self._slices(), strict=True):
            v.step_async(actions[s])

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Wait for every vector env; concatenate observations, rewards, dones and infos."""
        parts = [v.step_wait() for v in self.venvs]
        infos: list[dict[str, Any]] = []
        for p in parts:
            infos.extend(p[3])
        return (
            np.concatenate([p[0] for p in parts]),
            np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]),
            infos,
        )

    def close(self) -> None:
        """Close every vector env."""
        for v in self.venvs:
            v.close()

    def _locate(self, indices: Any) -> list[tuple[int, int]]:
        """``(vector env, index in it)`` of each selected env."""
        if indices is None:
            indices = range(self.num_envs)
        elif isinstance(indices, int | np.integer):
            indices = [int(indices)]
        out = []
        for j in indices:
            k = int(np.searchsorted(self.starts, j, side="right") - 1)
            out.append((k, int(j - self.starts[k])))
        return out

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The attribute of each selected env."""
        return [self.venvs[k].get_attr(attr_name, i)[0] for k, i in self._locate(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set the attribute on each selected env."""
        for k, i in self._locate(indices):
            self.venvs[k].set_attr(attr_name, value, i)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call a method of each selected env."""
        return [
            self.venvs[k].env_method(method_name, *method_args, indices=i, **method_kwargs)[0]
            for k, i in self._locate(indices)
        ]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """Whether each selected env is wrapped in ``wrapper_class``."""
        return [self.venvs[k].env_is_wrapped(wrapper_class, i)[0] for k, i in self._locate(indices)]


def model_variants(variants: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fast-model variants of a mixture (``[{}]``, the calibrated model, when none).

    Raises:
        SpecError: A key that is no ``FastSimParams`` field (naming the variant, the key and the
            allowed ones).
    """
    from envs.fastsim.params import FastSimParams

    known = sorted(f.name for f in dataclasses.fields(FastSimParams) if f.name != "spec")
    for i, variant in enumerate(variants):
        for key in variant:
            if key not in known:
                raise SpecError(
                    f"mixture.variants[{i}].{key} is not a fast-model parameter: allowed "
                    f"{', '.join(known)}"
                )
    return [dict(v) for v in variants] or [{}]


def mixture_batches(cfg: TrainConfig) -> list[tuple[ScenarioSpec, dict[str, Any], int]]:
    """``(scenario, model knobs, cells)`` of every batch: entries x variants.

    Builds each batch's ``FastSimParams`` once to check it, so a bad value fails here, naming
    the variant and its value (``mixture.variants[1] (uplink='x') ...``) and the scenario entry.
    """
    from envs.fastsim.params import FastSimParams

    base = dict(cfg.backend.fast_params)
    variants = [{**base, **v} for v in model_variants(list(cfg.mixture.variants))]
    batches = []
    for i, (entry, spec) in enumerate(
        zip(cfg.mixture.scenarios, cfg.training_scenarios(), strict=True)
    ):
        for j, knobs in enumerate(variants):
            try:
                FastSimParams.from_spec(spec, **knobs)
            except (SpecError, TypeError, ValueError) as exc:
                where = ", ".join(f"{k}={v!r}" for k, v in knobs.items()) or "the defaults"
                raise SpecError(
                    f"mixture.variants[{j}] ({where}) on mixture.scenarios[{i}] "
                    f"({entry.scenario}): {exc}"
                ) from exc
            batches.append((spec, knobs, int(entry.n_envs)))
    return batches


def make_mixture_vec_env(cfg: TrainConfig, seed: int, env_kwargs: dict[str, Any]) -> VecEnv:
    """All batches of the mixture as one SB3 ``VecEnv`` (raw observations, no wrappers).

    Args:
        cfg: The training config (``mixture``, ``reward``).
        seed: Cell ``j`` of the concatenation is seeded ``seed + j``.
        env_kwargs: ``action_mode`` and ``max_change``.
    """
    from envs.fastsim.params import FastSimParams
    from envs.fastsim.vector_env import make_fast_vec_env

    reward = asdict(cfg.reward)
    venvs = [
        make_fast_vec_env(
            spec,
            n,
            sb3=True,
            reward=reward,
            params=FastSimParams.from_spec(spec, **knobs),
            **env_kwargs,
        )
        for spec, knobs, n in mixture_batches(cfg)
    ]
    out = ConcatVecEnv(venvs)
    out.seed(seed)
    return out
