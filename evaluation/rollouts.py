"""Rollouts: run one controller on one scenario and seed, recording every step.

A controller takes the scenario's ``agent`` flow:

- a native sender (an ns-3 TCP by name, ``cubic``, ``newreno``, ..., or ``xrc``) replaces the
  flow's congestion control and runs inside the simulator (``run_native``);
- a policy (a baseline from ``baselines``, a trained checkpoint, anything with SB3's ``predict``)
  drives the flow through ``LteCellEnv``, exactly as in training (``run_policy``). Learned
  policies and the XRC policy go through this same loop.

``run_controller`` runs one controller by name (the registry ``cellgym.controllers`` says which
kind it is).
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from cellgym import controllers
from cellgym.metrics import EpisodeRecords
from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec
from cellgym.seeding import rng_run_for_seed
from cellgym.vocab import AGENT_CCA, NATIVE_CCAS, SpecError

#: ``predict(obs, state, episode_start, deterministic) -> (action, state)``, as in SB3.
Predictor = Any


def with_native_agent(spec: ScenarioSpec, cca: str) -> ScenarioSpec:
    """A copy of ``spec`` whose ``agent`` flows run the native sender ``cca`` instead."""
    if cca not in NATIVE_CCAS:
        raise SpecError(f"controller {cca!r} is not native: choose one of {NATIVE_CCAS}")
    flows = [
        dataclasses.replace(f, cca=cca) if f.cca == AGENT_CCA else dataclasses.replace(f)
        for f in spec.flows
    ]
    return dataclasses.replace(spec, flows=flows)


def run_native(
    spec: ScenarioSpec,
    cca: str,
    seed: int,
    backend: str = "ns3",
    timeout_s: float = 60.0,
    on_step: Callable[[float], None] | None = None,
    fast_params: Mapping[str, Any] | None = None,
) -> EpisodeRecords:
    """Run ``spec`` with its agent flow(s) under the native sender ``cca``; return the records.

    ``fast_params`` overrides ``FastSimParams`` fields on the fast backend (``envs.fast_params``).
    """
    from envs.session import open_session

    native = with_native_agent(spec, cca) if spec.agent_flows else spec
    rec = EpisodeRecords(spec=native, controller=cca, seed=seed)
    session = open_session(
        native,
        rng_run_for_seed(seed),
        backend=backend,
        timeout_s=timeout_s,
        fast_params=fast_params,
    )
    try:
        raw = session.start()
        rec.append(raw.t, raw.flows, raw.ues)
        empty = np.zeros((0, 2))
        while not raw.done:
            raw = session.step(empty)
            rec.append(raw.t, raw.flows, raw.ues)
            if on_step is not None:
                on_step(raw.t)
    finally:
        session.close()
    return rec


def run_policy(
    spec: ScenarioSpec,
    policy: Predictor,
    seed: int,
    label: str,
    reward: RewardSpec | None = None,
    backend: str = "ns3",
    env_kwargs: dict[str, Any] | None = None,
    deterministic: bool = True,
    on_step: Callable[[float], None] | None = None,
) -> EpisodeRecords:
    """Drive the scenario's agent flow with ``policy`` through ``LteCellEnv``; return records.

    With several agent flows, ``policy`` drives each of them (parameter sharing) through
    ``MultiFlowCellEnv`` (``run_policy_multi``).
    """
    if len(spec.agent_flows) > 1:
        return run_policy_multi(
            spec, policy, seed, label, reward, backend, env_kwargs, deterministic, on_step
        )
    from envs.lte_cell import LteCellEnv

    env = LteCellEnv(scenario=spec, reward=reward, backend=backend, **(env_kwargs or {}))
    rec = EpisodeRecords(spec=spec, controller=label, seed=seed)
    try:
        for step in policy_steps(env, policy, seed, deterministic):
            info = step.info
            if step.action is None:  # the reset
                rec.append(info["t"], info["flows"], info["ues"])
                continue
            rec.append(info["t"], info["flows"], info["ues"], step.reward)
            if on_step is not None:
                on_step(info["t"])
    finally:
        env.close()
    return rec


class PolicyStep(NamedTuple):
    """One transition of ``policy_steps``: after ``reset``, ``action`` and ``reward`` are None."""

    action: Any
    obs: Any
    reward: float | None
    terminated: bool
    truncated: bool
    info: dict[str, Any]


def policy_steps(
    env: Any, policy: Predictor, seed: int, deterministic: bool = True
) -> Iterator[PolicyStep]:
    """Reset the single-agent ``env`` with ``seed`` and drive it with ``policy`` to its end.

    The one loop that evaluation (``run_policy``) and the offline dataset
    (``evaluation.benchmark.recorder``) share: a stateful policy is reset after the
    environment, the recurrent state and ``episode_start`` are carried as SB3 expects.
    The caller owns ``env`` (and closes it).
    """
    obs, info = env.reset(seed=seed)
    yield PolicyStep(None, obs, None, False, False, info)
    if hasattr(policy, "reset"):
        policy.reset()
    state, start, done = None, np.array([True]), False
    while not done:
        action, state = policy.predict(
            obs, state=state, episode_start=start, deterministic=deterministic
        )
        start = np.array([False])
        obs, r, terminated, truncated, info = env.step(action)
        yield PolicyStep(action, obs, r, terminated, truncated, info)
        done = terminated or truncated


class AgentsStep(NamedTuple):
    """One step of ``agents_steps``, as ``MultiFlowCellEnv`` returns it (per-agent dicts).

    After ``reset``, ``actions`` is None and the other dicts are empty.
    """

    actions: dict[str, Any] | None
    obs: dict[str, Any]
    rewards: dict[str, float]
    terminations: dict[str, bool]
    truncations: dict[str, bool]
    infos: dict[str, Any]


def agents_steps(
    env: Any, policy: Predictor, seed: int, deterministic: bool = True
) -> Iterator[AgentsStep]:
    """Reset the parallel multi-agent ``env`` with ``seed``; drive every agent with ``policy``.

    Each agent gets its own copy of a stateful baseline (``reset``), and its own recurrent
    state and episode start with a trained model (parameter sharing). The one loop of
    ``run_policy_multi`` and the offline dataset's recorder; the caller owns ``env``.
    """
    stateful = hasattr(policy, "reset")
    policies = {a: copy.deepcopy(policy) if stateful else policy for a in env.possible_agents}
    obs, _ = env.reset(seed=seed)
    yield AgentsStep(None, obs, {}, {}, {}, {})
    for p in policies.values() if stateful else ():
        p.reset()
    states: dict[str, Any] = dict.fromkeys(env.possible_agents)
    started: set[str] = set()
    while env.agents:
        actions = {}
        for agent in env.agents:
            start = np.array([agent not in started])
            started.add(agent)
            actions[agent], states[agent] = policies[agent].predict(
                obs[agent],
                state=states[agent],
                episode_start=start,
                deterministic=deterministic,
            )
        obs, rewards, terms, truncs, infos = env.step(actions)
        yield AgentsStep(actions, obs, rewards, terms, truncs, infos)


def run_policy_multi(
    spec: ScenarioSpec,
    policy: Predictor,
    seed: int,
    label: str,
    reward: RewardSpec | None = None,
    backend: str = "ns3",
    env_kwargs: dict[str, Any] | None = None,
    deterministic: bool = True,
    on_step: Callable[[float], None] | None = None,
) -> EpisodeRecords:
    """Drive every agent flow of ``spec`` with ``policy`` through ``MultiFlowCellEnv``.

    Each agent gets its own copy of a stateful baseline (``reset``), and its own recurrent
    state and episode start with a trained model; the records hold every step of the cell, with
    the mean of the acting agents' rewards as the step's reward.
    """
    from envs.multi_flow import MultiFlowCellEnv

    env = MultiFlowCellEnv(scenario=spec, reward=reward, backend=backend, **(env_kwargs or {}))
    rec = EpisodeRecords(spec=spec, controller=label, seed=seed)
    pending: list[Any] = []
    env.on_raw = pending.append

    def flush(r: float | None = None) -> None:
        for i, raw in enumerate(pending):
            last = i == len(pending) - 1
            if r is None or not last:
                rec.append(raw.t, raw.flows.copy(), raw.ues.copy())
            else:
                rec.append(raw.t, raw.flows.copy(), raw.ues.copy(), r)
            if on_step is not None and rec.times[-1] > 0:
                on_step(raw.t)
        pending.clear()

    try:
        for step in agents_steps(env, policy, seed, deterministic):
            acted = [step.rewards[a] for a in step.actions or ()]
            flush(float(np.mean(acted)) if acted else None)
    finally:
        env.close()
    return rec


def make_baseline(
    name: str, spec: ScenarioSpec, reward: RewardSpec, max_change: float, action_mode: str = "cwnd"
) -> Any:
    """The registry's policy ``name`` set up for ``spec``'s step and ``reward``'s delay budget."""
    from baselines import make_policy

    return make_policy(
        name,
        max_change=max_change,
        step_ms=spec.step_ms,
        budget_ms=reward.delay_budget_ms,
        action_mode=action_mode,
    )


def run_controller(
    spec: ScenarioSpec,
    controller: str,
    seed: int,
    reward: RewardSpec,
    backend: str = "ns3",
    timeout_s: float = 60.0,
    max_change: float = 2.0,
    action_mode: str = "cwnd",
    policy: Predictor | None = None,
    fast_params: Mapping[str, Any] | None = None,
) -> EpisodeRecords:
    """Run one controller by name: native in the simulator, or a policy through the env.

    Args:
        spec: The scenario; the controller takes its ``agent`` flow.
        controller: A name of the registry ``cellgym.controllers`` (a native sender or a
            policy), or the label of ``policy``.
        seed: The run's seed.
        reward: Reward weights and budget (policies only; also the XRC policy's budget).
        backend: Simulator backend.
        timeout_s: Longest wait for one simulator step.
        max_change: The environment's largest per-step change factor (policies only).
        action_mode: ``cwnd`` or ``rate`` (policies only).
        policy: A trained policy to run under the label ``controller``.
        fast_params: ``FastSimParams`` field overrides of the fast backend
            (``envs.fast_params``); the ns-3 backend refuses them.

    Raises:
        SpecError: ``controller`` is not in the registry (and no ``policy`` is given), or does
            not run on ``backend``.
    """
    if policy is None:
        entry = controllers.get(controller, backend, field_name="controller")
        if entry.kind == "native":
            return run_native(spec, controller, seed, backend, timeout_s, fast_params=fast_params)
        policy = make_baseline(controller, spec, reward, max_change, action_mode)
    env_kwargs = {
        "timeout_s": timeout_s,
        "max_change": max_change,
        "action_mode": action_mode,
        "fast_params": fast_params,
    }
    return run_policy(spec, policy, seed, controller, reward, backend, env_kwargs)
