"""Several learned flows in one cell: a PettingZoo ``ParallelEnv`` over either backend.

Each flow with ``cca="agent"`` in the scenario is one agent (``flow_<i>``, ``i`` its index in
``scenario.flows``), with the single-flow environment's observation, action and reward
(``envs.contract``, ``cellgym.reward``): the same cell, sessions and records as ``LteCellEnv``, so
a policy trained in one plugs into the other.

>>> from envs.multi_flow import MultiFlowCellEnv
>>> env = MultiFlowCellEnv(
...     {"num_ues": 2, "sim_time_s": 0.1, "flows": [{"ue": 0, "cca": "agent"},
...      {"ue": 1, "cca": "agent"}]}, backend="fast")
>>> obs, infos = env.reset(seed=1)
>>> sorted(obs), env.observation_space("flow_0").shape, env.action_space("flow_1").shape
(['flow_0', 'flow_1'], (11,), (1,))
>>> env.close()
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv

from cellgym.fields import FLOW, FLOW_FIELDS, UE_FIELDS
from cellgym.reward import RewardSpec, fairness_groups, reward_terms
from cellgym.scenario import ScenarioSpec
from cellgym.seeding import draw_rng_run
from cellgym.vocab import SpecError, check_range, check_type
from envs.contract import (
    action_space,
    check_env_args,
    flow_command,
    flow_observation,
    observation_space,
)
from envs.session import RawStep, Session, check_backend_supports, open_session

__all__ = ["MultiFlowCellEnv", "parallel_env"]


def parallel_env(**kwargs: Any) -> MultiFlowCellEnv:
    """PettingZoo's conventional constructor: ``MultiFlowCellEnv(**kwargs)``."""
    return MultiFlowCellEnv(**kwargs)


class MultiFlowCellEnv(ParallelEnv):
    """Congestion control of every ``cca="agent"`` flow of a cell, one agent per flow.

    ## Agents
    ``possible_agents``: ``flow_<i>`` for each agent flow ``i`` of ``scenario.flows``, in order.
    An agent joins ``agents`` when its flow starts (``start_s``; at ``reset`` for flows starting
    at 0) and leaves after the step in which its flow ends (``stop_s`` reached, a ``short`` flow
    completed) with ``terminations[agent] = True``; every agent terminates when simulated time
    reaches ``scenario.sim_time_s``. Nothing is truncated. While no agent flow runs but one will
    start later, ``reset`` and ``step`` advance the cell until it starts, so ``agents`` is empty
    only at the end of the episode.

    ## Observation, action, reward
    Per agent, exactly as ``LteCellEnv``'s (``envs.lte_cell``): the flow's 11 observation
    values; a relative change in [-1, 1] of its window (``action_mode="cwnd"``) or pacing rate
    (``"rate"``); the reward spec's terms for that flow, its fairness groups relative to that
    flow (``intra_jain`` is over the agent flows, ``inter_jain`` over the flow and the CUBIC
    flows). ``shared_fairness`` adds ``shared_fairness * intra_jain`` to every agent's reward: a
    common term that rewards the agents for sharing fairly. A step's ``infos[agent]`` holds each
    term, ``t`` and ``rng_run``.

    ## State
    ``state()``: the cell's view for centralised critics, every flow's and UE's raw values of
    the last step (``cellgym.fields``: ``FLOW_FIELDS`` per flow, then ``UE_FIELDS`` per UE),
    flattened into one float32 vector (``state_space``).

    ## Seeding
    ``reset(seed=...)`` seeds the environment's generator and draws the episode's ns-3
    ``RngRun`` from it, as ``LteCellEnv`` does: same seed, same trajectory, on both backends.

    Args:
        scenario: The cell (``ScenarioSpec`` or a mapping); at least one flow with
            ``cca="agent"``.
        reward: Reward weights and delay budget (``RewardSpec`` or a mapping).
        backend: ``ns3`` or ``fast``.
        action_mode: ``cwnd`` or ``rate``.
        max_change: Largest factor by which one step changes a window or rate.
        timeout_s: Longest wait for one ns-3 step before ``SimulatorTimeout``.
        shared_fairness: Weight of the shared fairness term, in [0, 100].
        keep_agents: Keep every possible agent in ``agents`` until the episode ends: before its
            flow starts and after it ends an agent observes zeros, its actions are ignored and
            its reward is 0 (the fixed agent set that vectorised training, e.g. SuperSuit's
            ``pettingzoo_env_to_vec_env_v1``, needs).
        fast_params: Fast backend only: ``FastSimParams`` fields to override, e.g.
            ``{"uplink": "bsr"}`` (``envs.fast_params``); the ns-3 backend refuses it.
    """

    metadata = {"name": "cellgym_multi_flow_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(
        self,
        scenario: ScenarioSpec | dict[str, Any] | None = None,
        reward: RewardSpec | dict[str, Any] | None = None,
        backend: str = "ns3",
        action_mode: str = "cwnd",
        max_change: float = 2.0,
        timeout_s: float = 60.0,
        shared_fairness: float = 0.0,
        keep_agents: bool = False,
        fast_params: Mapping[str, Any] | None = None,
    ) -> None:
        self.spec_scenario = ScenarioSpec.from_config(scenario or ScenarioSpec())
        self.reward_spec = RewardSpec.from_config(reward)
        check_env_args(action_mode, max_change)
        #: The fast model's field overrides (checked; empty: the calibrated defaults).
        self.fast_params = check_backend_supports(self.spec_scenario, backend, fast_params)
        check_type("timeout_s", timeout_s, "float")
        check_range("timeout_s", timeout_s, 1e-3, 86_400.0)
        check_type("shared_fairness", shared_fairness, "float")
        check_range("shared_fairness", shared_fairness, 0.0, 100.0)
        check_type("keep_agents", keep_agents, "bool")
        flows = self.spec_scenario.flows
        self._flows: list[int] = list(self.spec_scenario.agent_flows)
        if not self._flows:
            raise SpecError(
                "scenario.flows has no flow with cca='agent': a multi-flow environment needs "
                "at least one"
            )
        self.backend = backend
        self.action_mode = action_mode
        self.max_change = float(max_change)
        self.timeout_s = float(timeout_s)
        self.shared_fairness = float(shared_fairness)
        self.keep_agents = bool(keep_agents)
        self._running: list[str] = []
        self.render_mode = None
        self.possible_agents: list[str] = [f"flow_{i}" for i in self._flows]
        self.agents: list[str] = []
        self.agent_flow: dict[str, int] = dict(zip(self.possible_agents, self._flows, strict=True))
        self._slot = {name: k for k, name in enumerate(self.possible_agents)}
        ccas = [f.cca for f in flows]
        self._groups = {i: fairness_groups(ccas, i) for i in self._flows}
        self._flow_ue = np.array([f.ue for f in flows])
        self._start_s = {i: flows[i].start_s for i in self._flows}
        self._stop_s = {i: flows[i].stop_s for i in self._flows}
        self._short = {i: flows[i].traffic == "short" for i in self._flows}
        self.step_s = self.spec_scenario.step_ms / 1000.0
        n_state = len(flows) * len(FLOW_FIELDS) + self.spec_scenario.num_ues * len(UE_FIELDS)
        self.state_space = spaces.Box(-np.inf, np.inf, shape=(n_state,), dtype=np.float32)
        self._obs_space = observation_space()
        self._act_space = action_space()
        self._np_random: np.random.Generator | None = None
        self._session: Session | None = None
        self._last: RawStep | None = None
        self._rates = np.zeros(len(self._flows))
        self._ended: set[str] = set()
        self.rng_run = 0
        #: Called with every ``RawStep`` of the cell, those stepped while no agent runs included
        #: (``evaluation.rollouts`` records episodes through it).
        self.on_raw: Callable[[RawStep], None] | None = None

    # -- spaces --------------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Box:
        """The single-flow observation space; the same object for every agent and call."""
        self._check_agent(agent)
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Box:
        """The single-flow action space: ``Box(-1, 1, (1,), float32)``."""
        self._check_agent(agent)
        return self._act_space

    # -- PettingZoo API ------------------------------------------------------------------------
    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        """Start a new simulation; ``seed`` fixes its ns-3 ``RngRun``."""
        if seed is not None or self._np_random is None:
            self._np_random, _ = seeding.np_random(seed)
        self._close_session()
        self.rng_run = draw_rng_run(self._np_random)
        self._session = open_session(
            self.spec_scenario,
            self.rng_run,
            backend=self.backend,
            timeout_s=self.timeout_s,
            fast_params=self.fast_params,
        )
        self._last = self._session.start()
        self._emit(self._last)
        self._rates[:] = 0.0
        self._ended = set()
        self._running = self._live(self._last)
        if not self._running and not self.keep_agents:
            self._advance_idle()
        self._set_agents()
        raw = self._last
        obs = {a: self._observe(raw, a) for a in self.agents}
        infos = {a: {"t": raw.t, "rng_run": self.rng_run} for a in self.agents}
        return obs, infos

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[
        dict[str, np.ndarray],
        dict[str, float],
        dict[str, bool],
        dict[str, bool],
        dict[str, dict[str, Any]],
    ]:
        """Apply each live agent's relative action for one step (missing agents hold still)."""
        if self._session is None or self._last is None:
            raise RuntimeError("call reset() before step()")
        if self._last.done or not self.agents:
            raise RuntimeError("the episode has ended: call reset()")
        for name in actions:
            if name not in self.agents:
                raise ValueError(
                    f"actions has agent {name!r}, which is not live: allowed {self.agents}"
                )
        acting = list(self.agents)
        before = set(self._running)
        raw = self._session.step(self._commands({a: actions[a] for a in actions if a in before}))
        self._last = raw
        self._emit(raw)
        self._running = self._live(raw)
        ending = [a for a in before if a not in self._running]
        self._ended.update(ending)
        if not self._running and not raw.done and not self.keep_agents:
            self._advance_idle()
        out = self._last
        obs: dict[str, np.ndarray] = {}
        rewards: dict[str, float] = {}
        infos: dict[str, dict[str, Any]] = {}
        for name in acting:
            if name not in before:
                continue
            flow = self.agent_flow[name]
            terms = reward_terms(
                raw.flows,
                raw.ues,
                self._flow_ue,
                flow,
                self.step_s,
                self.reward_spec,
                self._groups[flow],
            )
            if self.shared_fairness:
                terms["reward"] += self.shared_fairness * terms["intra_jain"]
            obs[name] = flow_observation(raw.flows, flow, self.step_s)
            rewards[name] = terms["reward"]
            infos[name] = {"t": raw.t, "rng_run": self.rng_run, **terms}
        # Agents that did not run this step: those joining now, and (keep_agents) those waiting
        # for their flow or done with it.
        waiting = [a for a in self.possible_agents if a not in obs]
        for name in waiting:
            if name in self._running or (self.keep_agents and name in acting):
                obs[name] = self._observe(out, name)
                rewards[name] = 0.0
                infos[name] = {"t": out.t, "rng_run": self.rng_run}
        if self.keep_agents:
            terminations = dict.fromkeys(obs, out.done)
        else:
            terminations = {a: a in ending or out.done for a in obs}
        truncations = dict.fromkeys(obs, False)
        self._set_agents()
        if out.done:
            self._close_session()
        return obs, rewards, terminations, truncations, infos

    def state(self) -> np.ndarray:
        """Every flow's and UE's raw values of the last step, flattened (``state_space``)."""
        if self._last is None:
            raise RuntimeError("call reset() before state()")
        return np.concatenate([self._last.flows.ravel(), self._last.ues.ravel()]).astype(np.float32)

    def close(self) -> None:
        """Stop the simulator, if one runs."""
        self._close_session()

    # -- helpers -------------------------------------------------------------------------------
    def _check_agent(self, agent: str) -> None:
        if agent not in self._slot:
            raise ValueError(f"agent={agent!r} is not one of {self.possible_agents}")

    def _live(self, raw: RawStep) -> list[str]:
        """The agents whose flows run at ``raw.t`` (started, not ended, episode not over)."""
        if raw.done:
            return []
        live = []
        for name in self.possible_agents:
            flow = self.agent_flow[name]
            if name in self._ended or raw.t + 1e-9 < self._start_s[flow]:
                continue
            stop = self._stop_s[flow]
            if stop is not None and raw.t + 1e-9 >= stop:
                self._ended.add(name)
                continue
            if self._short[flow] and raw.flows[flow, FLOW["fct_s"]] >= 0:
                self._ended.add(name)
                continue
            live.append(name)
        return live

    def _set_agents(self) -> None:
        assert self._last is not None
        if self._last.done:
            self.agents = []
        elif self.keep_agents:
            self.agents = list(self.possible_agents)
        else:
            self.agents = list(self._running)

    def _observe(self, raw: RawStep, name: str) -> np.ndarray:
        """The agent's observation; zeros while its flow does not run (``keep_agents``)."""
        if name not in self._running:
            return np.zeros_like(self._obs_space.low)
        return flow_observation(raw.flows, self.agent_flow[name], self.step_s)

    def _commands(self, actions: dict[str, Any]) -> np.ndarray:
        """The ``[A, 2]`` absolute commands; agents without an action (or not live) hold still."""
        assert self._last is not None
        out = np.zeros((len(self._flows), 2))
        for name, k in self._slot.items():
            a = 0.0
            if name in actions:
                a = float(np.asarray(actions[name], dtype=np.float64).reshape(-1)[0])
                if not math.isfinite(a):
                    raise ValueError(f"actions[{name!r}]={actions[name]!r} is not finite: [-1, 1]")
                a = min(1.0, max(-1.0, a))
            flow = self.agent_flow[name]
            cwnd, pacing, rate = flow_command(
                self._last.flows[flow], a, self.action_mode, self.max_change, self._rates[k]
            )
            if name in actions:
                self._rates[k] = rate
            out[k] = (cwnd, pacing)
        return out

    def _advance_idle(self) -> None:
        """Step the cell with no agent acting until an agent flow starts or the episode ends."""
        assert self._session is not None and self._last is not None
        while not self._last.done:
            self._last = self._session.step(self._commands({}))
            self._emit(self._last)
            self._running = self._live(self._last)
            if self._running:
                return
        self._close_session()

    def _emit(self, raw: RawStep) -> None:
        if self.on_raw is not None:
            self.on_raw(raw)

    def _close_session(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None
