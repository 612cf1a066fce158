"""Golden trajectories: scenarios x controllers x seeds on both backends, recorded once.

``python -m tests.golden.record`` runs every case with the current code and writes
``tests/golden/data/<case>.npz``; ``tests/test_golden.py`` runs them again and requires
bit-identical arrays. They freeze behaviour across refactorings: a change that is meant to alter
a trajectory re-records them (and says so in its commit).

Each case is a scenario (a mapping, as a config would give it), a controller and a seed:

- ``policy:<name>``: a baseline policy drives the agent flow through ``LteCellEnv``;
- ``random:<mode>``: seeded uniform actions drive the agent flow in that action mode;
- ``native``: the scenario runs with no agent (its own congestion controls);
- ``vector:<n>``: the fast ``VectorEnv`` over ``n`` cells with seeded random actions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

SIM_S = 2.0  # short: the ns-3 cases run in the default test tier's ns3 marker

SINGLE = {"name": "g_single", "sim_time_s": SIM_S, "flows": [{"cca": "agent"}]}
VS_CUBIC = {
    "name": "g_vs_cubic",
    "sim_time_s": SIM_S,
    "flows": [{"cca": "cubic"}, {"cca": "agent", "start_s": 0.3}],
}
MULTI_UE = {
    "name": "g_multi_ue",
    "sim_time_s": SIM_S,
    "num_ues": 3,
    "channel": {
        "distances_m": [120.0, 250.0, 330.0],
        "mobility": "random",
        "mobility_period_s": 0.5,
    },
    "flows": [
        {"ue": 0, "cca": "agent"},
        {"ue": 1, "cca": "newreno"},
        {"ue": 2, "cca": "bbr", "delay_ms": 10.0},
        {
            "ue": 0,
            "cca": "cubic",
            "traffic": "video",
            "video_rate_mbps": 4.0,
            "video_on_s": 0.5,
            "video_period_s": 1.0,
        },
        {"ue": 1, "cca": "cubic", "traffic": "short", "size_bytes": 200_000, "start_s": 0.4},
    ],
}
NATIVE_MIX = {
    "name": "g_native_mix",
    "sim_time_s": SIM_S,
    "num_ues": 2,
    "flows": [
        {"ue": 0, "cca": "xrc"},
        {"ue": 0, "cca": "cubic"},
        {"ue": 1, "cca": "newreno", "ssthresh_segments": 40},
    ],
}
NATIVE_XRC_FLUCT = {
    "name": "g_xrc_fluct",
    "sim_time_s": SIM_S,
    "channel": {"mobility": "random", "mobility_period_s": 0.4},
    "rlc_buffer_pkts": 64,
    "flows": [{"cca": "xrc"}, {"cca": "xrc", "start_s": 0.5}],
}


@dataclass(frozen=True)
class Case:
    """One golden run."""

    scenario: dict[str, Any]
    controller: str
    seed: int
    backend: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        ctl = self.controller.replace(":", "-")
        extra = "".join(f"_{k}-{v}" for k, v in sorted(self.env_kwargs.items()))
        return f"{self.backend}_{self.scenario['name']}_{ctl}{extra}_s{self.seed}"


def _cases() -> list[Case]:
    out: list[Case] = []
    for backend in ("fast", "ns3"):
        for seed in (1, 2):
            out.append(Case(SINGLE, "policy:xrc_policy", seed, backend))
        out.append(Case(SINGLE, "policy:explicit_rate", 3, backend))
        out.append(Case(SINGLE, "random:rate", 4, backend, {"action_mode": "rate"}))
        out.append(Case(SINGLE, "random:cwnd", 5, backend, {"max_change": 1.5}))
        out.append(Case(VS_CUBIC, "policy:xrc_policy", 1, backend))
        out.append(Case(MULTI_UE, "random:cwnd", 2, backend))
        out.append(Case(MULTI_UE, "policy:xrc_policy", 3, backend, {"action_mode": "rate"}))
        out.append(Case(NATIVE_MIX, "native", 1, backend))
        out.append(Case(NATIVE_XRC_FLUCT, "native", 2, backend))
    out.append(Case(SINGLE, "vector:4", 7, "fast"))
    out.append(Case(MULTI_UE, "vector:3", 8, "fast", {"action_mode": "rate"}))
    return out


CASES: list[Case] = _cases()


def _random_actions(seed: int, n: int, width: int | None = None) -> np.ndarray:
    rng = np.random.default_rng(1000 + seed)
    shape = (n, 1) if width is None else (n, width, 1)
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def _stack(steps: list[dict[str, Any]]) -> dict[str, np.ndarray]:
    return {k: np.stack([np.asarray(s[k]) for s in steps]) for k in steps[0]}


def run_case(case: Case) -> dict[str, np.ndarray]:
    """Run one case with the current code; the arrays that must stay bit-identical."""
    kind, _, arg = case.controller.partition(":")
    if kind == "native":
        return _run_native(case)
    if kind == "vector":
        return _run_vector(case, int(arg))
    return _run_env(case, kind, arg)


def _run_env(case: Case, kind: str, arg: str) -> dict[str, np.ndarray]:
    from baselines import make_policy
    from envs.lte_cell import LteCellEnv

    env = LteCellEnv(scenario=case.scenario, backend=case.backend, **case.env_kwargs)
    spec = env.spec_scenario
    steps: list[dict[str, Any]] = []
    try:
        obs, info = env.reset(seed=case.seed)
        steps.append(
            {
                "t": info["t"],
                "obs": obs,
                "flows": info["flows"],
                "ues": info["ues"],
                "reward": 0.0,
                "action": np.zeros(1, np.float32),
                "terms": np.zeros(4),
            }
        )
        if kind == "policy":
            policy = make_policy(
                arg, max_change=env.max_change, step_ms=spec.step_ms, action_mode=env.action_mode
            )
            if hasattr(policy, "reset"):
                policy.reset()
        actions = _random_actions(case.seed, spec.num_steps)
        state, start, done, i = None, np.array([True]), False, 0
        while not done:
            if kind == "policy":
                action, state = policy.predict(
                    obs, state=state, episode_start=start, deterministic=True
                )
                start = np.array([False])
            else:
                action = actions[i]
            obs, reward, terminated, truncated, info = env.step(action)
            terms = np.array([info[k] for k in ("utilization", "delay_penalty", "jain", "reward")])
            steps.append(
                {
                    "t": info["t"],
                    "obs": obs,
                    "flows": info["flows"],
                    "ues": info["ues"],
                    "reward": reward,
                    "action": np.asarray(action, np.float32).reshape(1),
                    "terms": terms,
                }
            )
            done = terminated or truncated
            i += 1
    finally:
        env.close()
    return _stack(steps)


def _run_native(case: Case) -> dict[str, np.ndarray]:
    from cellgym.scenario import ScenarioSpec
    from cellgym.seeding import rng_run_for_seed
    from envs.session import open_session

    spec = ScenarioSpec.from_config(case.scenario)
    session = open_session(spec, rng_run_for_seed(case.seed), backend=case.backend)
    steps = []
    try:
        raw = session.start()
        steps.append({"t": raw.t, "flows": raw.flows.copy(), "ues": raw.ues.copy()})
        empty = np.zeros((0, 2))
        while not raw.done:
            raw = session.step(empty)
            steps.append({"t": raw.t, "flows": raw.flows.copy(), "ues": raw.ues.copy()})
    finally:
        session.close()
    return _stack(steps)


def _run_vector(case: Case, n: int) -> dict[str, np.ndarray]:
    from envs.fastsim.vector_env import make_fast_vec_env

    env = make_fast_vec_env(
        case.scenario, num_envs=n, seed=case.seed, include_raw=True, **case.env_kwargs
    )
    from cellgym.scenario import ScenarioSpec

    num_steps = ScenarioSpec.from_config(case.scenario).num_steps
    actions = _random_actions(case.seed, num_steps + 3, width=n)
    steps = []
    try:
        obs, info = env.reset(seed=case.seed)
        steps.append(
            {
                "obs": obs,
                "reward": np.zeros(n),
                "done": np.zeros(n, bool),
                "flows": info["flows"],
                "ues": info["ues"],
            }
        )
        for i in range(num_steps + 3):  # past the end: autoreset is part of the contract
            obs, reward, terminated, truncated, info = env.step(actions[i])
            steps.append(
                {
                    "obs": obs,
                    "reward": reward,
                    "done": terminated | truncated,
                    "flows": info["flows"],
                    "ues": info["ues"],
                }
            )
    finally:
        env.close()
    return _stack(steps)
