"""Several learned flows in B fast cells, as one Stable-Baselines3 vector (parameter sharing).

``FastMultiAgentVecEnv`` steps B cells of a scenario with A agent flows in one batched kernel
call per step and presents the ``B x A`` agents as the entries of an SB3 ``VecEnv`` (entry
``b * A + k`` is agent flow ``k`` of cell ``b``), so one policy learns from every flow of every
cell. Entry by entry it is ``MultiFlowCellEnv(scenario, backend="fast", keep_agents=True)``
reset with seed ``seed + b``: the same observations, rewards and episode ends
(``tests/envs/test_multi_flow.py`` checks it step by step). A finished cell resets within the
step that ends it (SB3's convention, ``terminal_observation`` in each of its entries' infos).

>>> from envs.fastsim.multi_vector_env import FastMultiAgentVecEnv
>>> venv = FastMultiAgentVecEnv("multi_agent2", num_envs=3)
>>> venv.seed(0)
[0, 1, 2]
>>> venv.reset().shape
(6, 11)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.utils.seeding import np_random
from stable_baselines3.common.vec_env import VecEnv

from cellgym.fields import FLOW
from cellgym.reward import RewardSpec, fairness_groups, reward_terms_batch
from cellgym.scenario import ScenarioSpec
from cellgym.seeding import draw_rng_run
from cellgym.vocab import SpecError, check_range, check_type
from envs.contract import (
    action_space,
    check_env_args,
    flow_commands,
    flow_observations,
    observation_space,
)
from envs.fastsim.params import FastSimParams
from envs.fastsim.sim import FastCellBatch

__all__ = ["FastMultiAgentVecEnv"]

#: Most cells in one vector.
MAX_NUM_ENVS = 65_536


class FastMultiAgentVecEnv(VecEnv):
    """B fast cells x A agent flows as ``B * A`` entries of an SB3 ``VecEnv``.

    Args:
        scenario: The cell (``ScenarioSpec``, a mapping or a config name), one or more
            ``agent`` flows.
        num_envs: Number of cells ``B`` (1 to ``MAX_NUM_ENVS``); the vector has ``B * A``
            entries.
        reward: Reward weights and budget.
        action_mode: ``cwnd`` or ``rate``.
        max_change: Largest factor by which one step changes a window or rate.
        shared_fairness: Weight of the shared fairness term (``MultiFlowCellEnv``).
        params: Fast-simulator model knobs (built from ``scenario`` when ``None``; users'
            overrides: ``envs.fast_params.fast_sim_params(scenario, {"uplink": "bsr"})``).
        parallel: Spread cells over threads; ``None`` decides by ``num_envs``.
    """

    def __init__(
        self,
        scenario: ScenarioSpec | dict[str, Any] | str | None = None,
        num_envs: int = 1,
        reward: RewardSpec | dict[str, Any] | None = None,
        action_mode: str = "cwnd",
        max_change: float = 2.0,
        shared_fairness: float = 0.0,
        params: FastSimParams | None = None,
        parallel: bool | None = None,
    ) -> None:
        spec = ScenarioSpec.from_config(scenario or ScenarioSpec())
        check_env_args(action_mode, max_change)
        check_type("num_envs", num_envs, "int")
        check_range("num_envs", num_envs, 1, MAX_NUM_ENVS)
        check_type("shared_fairness", shared_fairness, "float")
        check_range("shared_fairness", shared_fairness, 0.0, 100.0)
        self.agent_flows = np.array(spec.agent_flows, dtype=np.int64)
        if self.agent_flows.size == 0:
            raise SpecError(
                "scenario.flows has no flow with cca='agent': a multi-agent vector needs one"
            )
        self.spec_scenario = spec
        self.reward_spec = RewardSpec.from_config(reward)
        if params is not None and not isinstance(params, FastSimParams):
            raise SpecError(f"params={params!r} is a {type(params).__name__}: give FastSimParams")
        self.params = params if params is not None else FastSimParams.from_spec(spec)
        self.action_mode = action_mode
        self.max_change = float(max_change)
        self.shared_fairness = float(shared_fairness)
        self.cells_n = int(num_envs)
        self.n_agents = int(self.agent_flows.size)
        self.step_s = spec.step_ms / 1000.0
        ccas = [f.cca for f in spec.flows]
        self._groups = [fairness_groups(ccas, int(i)) for i in self.agent_flows]
        self._flow_ue = np.array([f.ue for f in spec.flows])
        flows = [spec.flows[int(i)] for i in self.agent_flows]
        self._start = np.array([f.start_s for f in flows])
        self._stop = np.array([np.inf if f.stop_s is None else f.stop_s for f in flows])
        self._short = np.array([f.traffic == "short" for f in flows])
        self.render_mode = None
        super().__init__(self.cells_n * self.n_agents, observation_space(), action_space())
        self.cells = FastCellBatch(self.params, self.cells_n, parallel=parallel)
        self._rngs = [np_random()[0] for _ in range(self.cells_n)]
        self.rng_runs = np.zeros(self.cells_n, dtype=np.int64)
        self._rate = np.zeros((self.cells_n, self.n_agents))
        self._ended = np.zeros((self.cells_n, self.n_agents), dtype=np.bool_)
        self._running = np.zeros((self.cells_n, self.n_agents), dtype=np.bool_)
        self._actions: np.ndarray | None = None

    # -- SB3 VecEnv API ------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        """Reset every cell (cell ``b`` with seed ``s + b`` after ``seed(s)``)."""
        seeds = self._seeds
        for b in range(self.cells_n):
            s = seeds[b * self.n_agents] if seeds else None
            if s is not None:
                self._rngs[b] = np_random(int(s))[0]
        self._reset_seeds()
        self._reset_options()
        self._reset_cells(np.ones(self.cells_n, dtype=np.bool_))
        return self._observe()

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed the next reset: cell ``b`` gets ``seed + b`` (as ``MultiFlowCellEnv``)."""
        if seed is None:
            self._seeds = []
            return [None] * self.cells_n
        self._seeds = [seed + b for b in range(self.cells_n) for _ in range(self.n_agents)]
        return [seed + b for b in range(self.cells_n)]

    def step_async(self, actions: np.ndarray) -> None:
        """Store the actions (``[B * A]`` or ``[B * A, 1]`` relative changes)."""
        self._actions = np.asarray(actions, dtype=np.float64)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Advance every cell one step; reset the cells that end at once."""
        assert self._actions is not None, "call step_async() first"
        a = self._actions.reshape(self.cells_n, self.n_agents)
        if not np.all(np.isfinite(a)):
            raise ValueError("actions are not finite: allowed [-1, 1]")
        a = np.clip(a, -1.0, 1.0)
        before = self._running.copy()
        a = np.where(before, a, 0.0)
        self.cells.step(self._commands(a, before))
        flows, ues = self.cells.flows, self.cells.ues
        t = self.cells.t_ms / 1000.0
        rewards = np.zeros((self.cells_n, self.n_agents))
        intra = np.zeros((self.cells_n, self.n_agents))
        for k, flow in enumerate(self.agent_flows):
            terms = reward_terms_batch(
                flows,
                ues,
                self._flow_ue,
                int(flow),
                self.step_s,
                self.reward_spec,
                self._groups[k],
            )
            rewards[:, k] = terms["reward"] + self.shared_fairness * terms["intra_jain"]
            intra[:, k] = terms["intra_jain"]
        rewards = np.where(before, rewards, 0.0)
        self._update_running(t)
        # An agent whose flow ended in this step still sees the step's outcome.
        obs = self._observe(self._running | before)
        done = self.cells.done.copy()
        infos: list[dict[str, Any]] = [
            {"t": float(t[b]), "intra_jain": float(intra[b, k])}
            for b in range(self.cells_n)
            for k in range(self.n_agents)
        ]
        if done.any():
            for b in np.flatnonzero(done):
                for k in range(self.n_agents):
                    i = b * self.n_agents + k
                    infos[i]["terminal_observation"] = obs[i].copy()
                    infos[i]["TimeLimit.truncated"] = False
            self._reset_cells(done)
            obs = self._observe()
        dones = np.repeat(done, self.n_agents)
        return obs, rewards.reshape(-1).astype(np.float32), dones, infos

    def close(self) -> None:
        """Nothing to release: the cells live in this process's memory."""

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The attribute of the shared vector, once per selected entry."""
        return [getattr(self, attr_name) for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set an attribute of the shared vector."""
        setattr(self, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call a method of the shared vector once per selected entry."""
        method = getattr(self, method_name)
        return [method(*method_args, **method_kwargs) for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """Entries are not Gymnasium envs: never wrapped."""
        return [False for _ in self._indices(indices)]

    # -- helpers -------------------------------------------------------------------------------
    def _indices(self, indices: Any) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def _reset_cells(self, mask: np.ndarray) -> None:
        for b in np.flatnonzero(mask):
            self.rng_runs[b] = draw_rng_run(self._rngs[b])
        self._rate[mask] = 0.0
        self._ended[mask] = False
        self.cells.reset(self.rng_runs, mask)
        self._update_running(self.cells.t_ms / 1000.0, mask)

    def _update_running(self, t: np.ndarray, mask: np.ndarray | None = None) -> None:
        """Which agent flows run now (``MultiFlowCellEnv._live``, for every cell)."""
        flows = self.cells.flows[:, self.agent_flows]
        tt = t[:, None] + 1e-9
        started = tt >= self._start[None, :]
        self._ended |= started & (tt >= self._stop[None, :])
        self._ended |= started & self._short[None, :] & (flows[:, :, FLOW["fct_s"]] >= 0)
        running = started & ~self._ended & ~self.cells.done[:, None]
        if mask is None:
            self._running = running
        else:
            self._running[mask] = running[mask]

    def _commands(self, a: np.ndarray, acting: np.ndarray) -> np.ndarray:
        """``[B, A, 2]`` absolute commands: ``envs.contract.flow_commands``, for every entry."""
        rows = self.cells.flows[:, self.agent_flows]
        out = np.zeros((self.cells_n, self.n_agents, 2))
        cwnd, rate = flow_commands(rows, a, self.action_mode, self.max_change, self._rate)
        out[:, :, 0] = cwnd
        if self.action_mode == "rate":
            self._rate = np.where(acting, rate, self._rate)
            out[:, :, 1] = rate
        return out

    def _observe(self, shown: np.ndarray | None = None) -> np.ndarray:
        """``[B * A, 11]`` observations (``envs.contract.flow_observations``).

        Entries outside ``shown`` (default: the running flows) are zeros.
        """
        obs = flow_observations(self.cells.flows[:, self.agent_flows], self.step_s)
        obs[~(self._running if shown is None else shown)] = 0.0
        return obs.reshape(self.num_envs, -1)
