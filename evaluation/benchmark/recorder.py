"""Record one run of the offline dataset: a policy on a task and seed, every step kept.

``record_run`` runs a ``DatasetJob`` as ``evaluation.rollouts.run_policy`` (one agent flow,
``LteCellEnv``) or ``run_policy_multi`` (several, ``MultiFlowCellEnv``) run it: the same policy
object (``evaluation.pool.run_job``'s construction), the same reset seed and
``deterministic=True``. It keeps what the rollouts drop: each agent's observations, its actions
(clipped to the action space as the environment clips them), rewards, ends, and per observation
the cell's records and the reward terms (``evaluation.benchmark.dataset`` documents the fields).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from cellgym.fields import FLOW_FIELDS, UE, UE_FIELDS
from cellgym.reward import TERMS, RewardSpec
from cellgym.scenario import ScenarioSpec
from evaluation.benchmark.cache import scenario_dict
from evaluation.benchmark.entrants import Entrant
from evaluation.benchmark.runner import STEP_TIMEOUT_S, eval_job
from evaluation.benchmark.suite import Suite
from evaluation.rollouts import agents_steps, policy_steps


@dataclass(frozen=True)
class DatasetJob:
    """One run to record (picklable: it travels to a worker process).

    Attributes:
        index: Its place in the plan (episodes are written in this order).
        entrant: The controller.
        task: The task's name.
        group: The task's group.
        seed: The run's seed (the environment's ``reset`` seed).
        scenario: The task's scenario for this seed (its trace window applied).
        backend: ``ns3`` or ``fast``.
        delay_budget_ms: The suite's delay budget (the reward's).
        max_flows: The padding of ``infos["flows"]``: the split's largest number of flows.
        max_ues: The padding of ``infos["ues"]``.
    """

    index: int
    entrant: Entrant
    task: str
    group: str
    seed: int
    scenario: ScenarioSpec
    backend: str
    delay_budget_ms: float
    max_flows: int
    max_ues: int


def plan(suite: Suite, split: str, backend: str, entrants: list[Entrant]) -> list[DatasetJob]:
    """Every (controller, task, seed) of ``split``, controller by controller."""
    runs = suite.runs(split)
    max_flows = max(len(spec.flows) for _, _, spec in runs)
    max_ues = max(spec.num_ues for _, _, spec in runs)
    jobs = []
    for e in entrants:
        for task, seed, spec in runs:
            jobs.append(
                DatasetJob(
                    len(jobs),
                    e,
                    task.name,
                    task.group,
                    int(seed),
                    spec,
                    backend,
                    suite.delay_budget_ms,
                    max_flows,
                    max_ues,
                )
            )
    return jobs


class _Episode:
    """One agent's episode as it is recorded."""

    def __init__(self, obs: np.ndarray, row: dict[str, Any]) -> None:
        self.obs = [np.asarray(obs, dtype=np.float32)]
        self.actions: list[np.ndarray] = []
        self.rewards: list[float] = []
        self.terms: list[bool] = []
        self.truncs: list[bool] = []
        self.rows = [row]

    def step(
        self, action: Any, obs: np.ndarray, r: float, term: bool, trunc: bool, row: dict[str, Any]
    ) -> None:
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(-1)[:1], -1.0, 1.0)
        self.actions.append(a.astype(np.float32))
        self.obs.append(np.asarray(obs, dtype=np.float32))
        self.rewards.append(float(r))
        self.terms.append(bool(term))
        self.truncs.append(bool(trunc))
        self.rows.append(row)

    def arrays(self) -> dict[str, Any]:
        # Scalars as lists: Minari's arrow storage decodes a 1-D array's empty shape wrongly.
        infos = {
            k: np.stack([r[k] for r in self.rows])
            if isinstance(self.rows[0][k], np.ndarray)
            else [r[k] for r in self.rows]
            for k in self.rows[0]
        }
        return {
            "observations": np.stack(self.obs),
            "actions": np.stack(self.actions).reshape(-1, 1),
            "rewards": np.asarray(self.rewards, dtype=np.float64),
            "terminations": np.asarray(self.terms, dtype=bool),
            "truncations": np.asarray(self.truncs, dtype=bool),
            "infos": infos,
        }


def _row(raw: Any, ue: int, job: DatasetJob, terms: dict[str, Any] | None) -> dict[str, Any]:
    """One ``infos`` row: the cell's records at ``raw`` (padded) and the step's reward terms."""
    flows = np.full((job.max_flows, len(FLOW_FIELDS)), np.nan)
    flows[: raw.flows.shape[0]] = raw.flows
    ues = np.full((job.max_ues, len(UE_FIELDS)), np.nan)
    ues[: raw.ues.shape[0]] = raw.ues
    out: dict[str, Any] = {
        "t": float(raw.t),
        "capacity_mbps": float(raw.ues[ue, UE["capacity_mbps"]]),
        "flows": flows,
        "ues": ues,
    }
    for k in TERMS:
        out[k] = math.nan if terms is None else float(terms[k])
    return out


def record_run(job: DatasetJob) -> list[dict[str, Any]]:
    """Run one job in this process; its episodes, one per agent flow (in flow order)."""
    from evaluation.pool import job_action_settings, job_policy
    from evaluation.user_policies import make_user_policy

    ejob = eval_job(job)
    policy = job_policy(ejob, make_policy=make_user_policy)
    mode, change = job_action_settings(ejob)
    env_kwargs = {"timeout_s": STEP_TIMEOUT_S, "max_change": change, "action_mode": mode}
    if len(job.scenario.agent_flows) > 1:
        episodes = _record_multi(job, ejob.reward, policy, env_kwargs)
    else:
        episodes = {
            job.scenario.agent_flows[0]: _record_single(job, ejob.reward, policy, env_kwargs)
        }
    meta = {
        "task": job.task,
        "group": job.group,
        "controller": job.entrant.label,
        "controller_text": job.entrant.text,
        "controller_kind": job.entrant.kind,
        "action_mode": mode,
        "max_change": change,
        "backend": job.backend,
        "num_flows": len(job.scenario.flows),
        "num_ues": job.scenario.num_ues,
        "num_agents": len(job.scenario.agent_flows),
        "scenario": scenario_dict(job.scenario),
        "delay_budget_ms": job.delay_budget_ms,
    }
    out = []
    for flow, (ep, rng_run) in sorted(episodes.items()):
        data = ep.arrays()
        data["seed"] = job.seed
        data["metadata"] = {**meta, "agent_flow": int(flow), "rng_run": int(rng_run)}
        out.append(data)
    return out


def _record_single(
    job: DatasetJob, reward: RewardSpec, policy: Any, env_kwargs: dict[str, Any]
) -> tuple[_Episode, int]:
    """``evaluation.rollouts.policy_steps``'s run, keeping observations, actions and infos."""
    from envs.lte_cell import LteCellEnv

    env = LteCellEnv(scenario=job.scenario, reward=reward, backend=job.backend, **env_kwargs)
    ue = job.scenario.flows[env.flow].ue
    try:
        steps = policy_steps(env, policy, job.seed, deterministic=True)
        first = next(steps)
        ep = _Episode(first.obs, _row(_Raw(first.info), ue, job, None))
        for s in steps:
            row = _row(_Raw(s.info), ue, job, s.info)
            ep.step(s.action, s.obs, s.reward, s.terminated, s.truncated, row)
        return ep, env.rng_run
    finally:
        env.close()


@dataclass
class _Raw:
    """A step's ``t``, ``flows`` and ``ues`` from ``LteCellEnv``'s ``info``."""

    info: dict[str, Any]

    def __getattr__(self, name: str) -> Any:
        return self.info[name]


def _record_multi(
    job: DatasetJob, reward: RewardSpec, policy: Any, env_kwargs: dict[str, Any]
) -> dict[int, tuple[_Episode, int]]:
    """``evaluation.rollouts.agents_steps``'s run: one episode per agent flow.

    An agent's episode starts with the observation at which its flow joins and ends with the
    step after which it leaves.
    """
    from envs.multi_flow import MultiFlowCellEnv

    env = MultiFlowCellEnv(scenario=job.scenario, reward=reward, backend=job.backend, **env_kwargs)
    pending: list[Any] = []
    env.on_raw = pending.append
    ue = {a: job.scenario.flows[f].ue for a, f in env.agent_flow.items()}
    episodes: dict[str, _Episode] = {}
    try:
        for step in agents_steps(env, policy, job.seed, deterministic=True):
            stepped, last = pending[0], pending[-1]
            pending.clear()
            for a in step.obs:
                if step.actions is not None and a in step.actions:
                    row = _row(stepped, ue[a], job, step.infos[a])
                    episodes[a].step(
                        step.actions[a],
                        step.obs[a],
                        step.rewards[a],
                        step.terminations[a],
                        step.truncations[a],
                        row,
                    )
                else:  # the reset, or its flow joins now
                    episodes[a] = _Episode(step.obs[a], _row(last, ue[a], job, None))
        return {env.agent_flow[a]: (ep, env.rng_run) for a, ep in episodes.items()}
    finally:
        env.close()
