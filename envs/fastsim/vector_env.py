"""Vectorised environments over B cells of the fast simulator.

``FastVecEnv`` is a ``gymnasium.vector.VectorEnv`` whose cell ``i`` behaves exactly like
``LteCellEnv(scenario, backend="fast")`` reset with the same seed: same observation, action,
reward and episode end, computed for all cells at once (one compiled call per step).
``FastSb3VecEnv`` adapts it to Stable-Baselines3's ``VecEnv`` (same-step autoreset with
``terminal_observation`` in the infos). ``make_fast_vec_env`` builds either.

>>> from envs.fastsim.vector_env import make_fast_vec_env
>>> env = make_fast_vec_env({"flows": [{"cca": "agent"}], "sim_time_s": 1.0}, num_envs=4, seed=0)
>>> obs, info = env.reset(seed=0)
>>> obs.shape, env.single_action_space.shape
((4, 11), (1,))
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils.seeding import np_random
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from cellgym.fields import UE
from cellgym.reward import RewardSpec, fairness_groups
from cellgym.scenario import ScenarioSpec
from cellgym.seeding import draw_rng_run
from cellgym.vocab import SpecError, check_range, check_type
from envs.contract import REWARD_TERMS, action_space, agent_flow, check_env_args, observation_space
from envs.fastsim.params import FastSimParams
from envs.fastsim.sim import FastCellBatch
from envs.fastsim.single import EnvStepper

#: Most cells in one vector env.
MAX_NUM_ENVS = 65_536


class FastVecEnv(gym.vector.VectorEnv):
    """B independent cells of one scenario, each the ``LteCellEnv`` of the fast backend.

    Args:
        scenario: The cell (``ScenarioSpec`` or a mapping); exactly one ``agent`` flow.
        num_envs: Number of cells ``B`` (1 to ``MAX_NUM_ENVS``).
        reward: Reward weights and budget.
        action_mode: ``"cwnd"`` or ``"rate"`` (as ``LteCellEnv``).
        max_change: Largest factor by which one step changes the window or rate.
        params: Fast-simulator model knobs (built from ``scenario`` when ``None``).
        parallel: Spread cells over threads; ``None`` decides by ``num_envs``.
        include_raw: Put the raw ``flows``/``ues`` arrays (``[B, F, 18]``, ``[B, U, 7]``) into
            ``info`` every step.
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(
        self,
        scenario: ScenarioSpec | dict[str, Any] | None = None,
        num_envs: int = 1,
        reward: RewardSpec | dict[str, Any] | None = None,
        action_mode: str = "cwnd",
        max_change: float = 2.0,
        params: FastSimParams | None = None,
        parallel: bool | None = None,
        include_raw: bool = False,
    ) -> None:
        spec = ScenarioSpec.from_config(scenario or ScenarioSpec())
        flow = agent_flow(spec)
        check_env_args(action_mode, max_change)
        check_type("num_envs", num_envs, "int")
        check_range("num_envs", num_envs, 1, MAX_NUM_ENVS)
        check_type("parallel", parallel, "bool | None")
        check_type("include_raw", include_raw, "bool")
        if params is not None and not isinstance(params, FastSimParams):
            raise SpecError(f"params={params!r} is a {type(params).__name__}: give FastSimParams")
        self.spec_scenario = spec
        self.reward_spec = RewardSpec.from_config(reward)
        self.params = params if params is not None else FastSimParams.from_spec(spec)
        self.num_envs = int(num_envs)
        self.action_mode = action_mode
        self.max_change = float(max_change)
        self.include_raw = include_raw
        self.flow = flow
        self.flow_ue = np.array([f.ue for f in spec.flows])
        self.single_observation_space = observation_space()
        self.single_action_space = action_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.cells = FastCellBatch(self.params, self.num_envs, parallel=parallel)
        # Action, kernel step, observation and reward terms in one compiled call, with the
        # arithmetic of LteCellEnv (envs.fastsim.single); the rate agents' state is its ``rate``.
        self._stepper = EnvStepper(
            self.cells,
            action_mode=action_mode,
            max_change=self.max_change,
            flow=self.flow,
            flow_ue=self.flow_ue,
            reward=self.reward_spec,
            flow_group=fairness_groups([f.cca for f in spec.flows], flow),
        )
        self._rngs: list[np.random.Generator] = [np_random()[0] for _ in range(self.num_envs)]
        self.rng_runs = np.zeros(self.num_envs, dtype=np.int64)
        self._autoreset = np.zeros(self.num_envs, dtype=np.bool_)
        self._started = False

    # -- Gymnasium API ---------------------------------------------------------------------------
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every cell; cell ``i`` gets ``seed + i`` (or ``seed[i]``), as ``LteCellEnv``."""
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, (int, np.integer)):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed has {len(seeds)} values: expected {self.num_envs}")
        self._reset_cells(np.ones(self.num_envs, dtype=np.bool_), seeds)
        self._autoreset[:] = False
        self._started = True
        return self._observe(), self._info(None)

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Apply relative actions ``[B, 1]`` in [-1, 1] for one step (next-step autoreset)."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        a = np.clip(np.asarray(actions, dtype=np.float64).reshape(self.num_envs), -1.0, 1.0)
        if not np.all(np.isfinite(a)):
            raise ValueError("actions are not finite: allowed [-1, 1]")
        resetting = self._autoreset.copy()
        if resetting.any():
            self._reset_cells(resetting, [None] * self.num_envs)
        # Cells being reset this step stay at t = 0 (their action is ignored, as Gymnasium's
        # next-step autoreset does); the others advance.
        st = self._stepper
        st.a[:] = a
        np.logical_not(resetting, out=st.advance)
        st.step()
        terms = self._terms()
        reward = np.where(resetting, 0.0, terms["reward"])
        terminated = self.cells.done & ~resetting
        truncated = np.zeros(self.num_envs, dtype=np.bool_)
        self._autoreset = terminated.copy()
        info = self._info(terms)
        return st.obs.copy(), reward, terminated, truncated, info

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the cells live in this process's memory."""

    # -- helpers -----------------------------------------------------------------------------
    def _reset_cells(self, mask: np.ndarray, seeds: list[int | None]) -> None:
        """Reset the masked cells; each draws its ``RngRun`` from its own generator."""
        for i in np.flatnonzero(mask):
            if seeds[i] is not None:
                self._rngs[i] = np_random(int(seeds[i]))[0]  # type: ignore[arg-type]
            self.rng_runs[i] = draw_rng_run(self._rngs[i])
        self._stepper.rate[mask] = 0.0
        self.cells.reset(self.rng_runs, mask)

    def _observe(self) -> np.ndarray:
        """The cells' observations now, without stepping (after a reset)."""
        st = self._stepper
        st.advance[:] = False
        st.step()
        return st.obs.copy()

    def _terms(self) -> dict[str, np.ndarray]:
        return {k: self._stepper.terms[:, i].copy() for i, k in enumerate(REWARD_TERMS)}

    def _info(self, terms: dict[str, np.ndarray] | None) -> dict[str, Any]:
        info: dict[str, Any] = {
            "t": self.cells.t_ms / 1000.0,
            "rng_run": self.rng_runs.copy(),
            "capacity_mbps": self.cells.ues[:, self.flow_ue[self.flow], UE["capacity_mbps"]].copy(),
        }
        if terms is not None:
            info.update(terms)
        if self.include_raw:
            info["flows"] = self.cells.flows.copy()
            info["ues"] = self.cells.ues.copy()
        return info


try:  # Stable-Baselines3 is a dependency, but keep the Gymnasium env importable without it.
    from stable_baselines3.common.vec_env import VecEnv as _Sb3VecEnv
except ImportError:  # pragma: no cover
    _Sb3VecEnv = object  # type: ignore[assignment,misc]


class FastSb3VecEnv(_Sb3VecEnv):  # type: ignore[misc,valid-type]
    """Stable-Baselines3 ``VecEnv`` over a ``FastVecEnv`` (same-step autoreset).

    A finished cell is reset within the step that ends it; its last observation is in
    ``infos[i]["terminal_observation"]`` (SB3's convention).

    Args:
        venv: The Gymnasium vector env to adapt.
    """

    def __init__(self, venv: FastVecEnv) -> None:
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        """Reset every cell (with the seeds given to ``seed()``, if any)."""
        seeds = list(self._seeds) if any(s is not None for s in self._seeds) else None
        obs, _ = self.venv.reset(seed=seeds)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions for ``step_wait``."""
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Advance every cell; reset the finished ones at once."""
        assert self._actions is not None, "call step_async() first"
        obs, reward, terminated, truncated, info = self.venv.step(self._actions)
        done = terminated | truncated
        scalar_keys = [k for k in ("t", "utilization", "delay_ms", "delay_penalty", "jain")
                       if k in info]  # fmt: skip
        infos: list[dict[str, Any]] = [
            {k: float(info[k][i]) for k in scalar_keys} for i in range(self.num_envs)
        ]
        if done.any():
            for i in np.flatnonzero(done):
                infos[i]["terminal_observation"] = obs[i].copy()
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            self.venv._reset_cells(done, [None] * self.num_envs)
            self.venv._autoreset[:] = False
            obs = self.venv._observe()
        return obs, reward.astype(np.float32), done, infos

    def close(self) -> None:
        """Close the wrapped env."""
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The attribute of the (shared) vector env, once per selected cell."""
        return [getattr(self.venv, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set an attribute of the shared vector env."""
        setattr(self.venv, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call a method of the shared vector env once per selected cell."""
        method = getattr(self.venv, method_name)
        return [method(*method_args, **method_kwargs) for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """Cells are not Gymnasium envs: never wrapped."""
        return [False for _ in self._get_indices(indices)]

    def _get_indices(self, indices: Any) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)


def make_fast_vec_env(
    scenario: ScenarioSpec | dict[str, Any] | None,
    num_envs: int,
    seed: int | None = None,
    sb3: bool = False,
    **kwargs: Any,
) -> FastVecEnv | FastSb3VecEnv:
    """Build ``num_envs`` fast cells of ``scenario`` as one vector env.

    Args:
        scenario: The cell (one ``agent`` flow).
        num_envs: Number of cells.
        seed: Seeds cell ``i`` with ``seed + i`` at the first reset (``None``: random; else
            >= 0).
        sb3: Return the Stable-Baselines3 adapter instead of the Gymnasium ``VectorEnv``.
        **kwargs: Passed to ``FastVecEnv`` (``reward``, ``action_mode``, ``max_change``,
            ``params``, ``parallel``, ``include_raw``).
    """
    check_type("seed", seed, "int | None")
    if seed is not None:
        check_range("seed", seed, 0, 2**63 - 1 - MAX_NUM_ENVS)
    venv = FastVecEnv(scenario, num_envs=num_envs, **kwargs)
    if not sb3:
        if seed is not None:
            venv._rngs = [np_random(seed + i)[0] for i in range(num_envs)]
        return venv
    adapter = FastSb3VecEnv(venv)
    if seed is not None:
        adapter.seed(seed)
    return adapter
