"""One finished run -> the rows of the tidy tables (results, flows, time series).

The columns are fixed here (``RESULT_COLUMNS``, ``FLOW_COLUMNS``, ``TIMESERIES_COLUMNS``); every
number in them comes from ``cellgym.metrics`` (percentiles, delay samples, utilization, Jain,
throughput, FCT) and, for native controllers, from ``cellgym.reward`` computed post hoc on their
records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from cellgym.metrics import (
    EpisodeRecords,
    completed_fct_s,
    compute_metrics,
    delay_samples,
    percentile,
    rate_mbps,
    step_frame,
)
from cellgym.reward import RewardSpec, fairness_groups, reward_terms
from cellgym.scenario import ScenarioSpec
from evaluation.resolve import ControllerSpec

#: Columns of the results table, in order (one row per controller, scenario and seed).
RESULT_COLUMNS: tuple[str, ...] = (
    "controller",
    "kind",
    "scenario",
    "seed",
    "backend",
    "fast_params",
    "status",
    "error",
    "wall_s",
    "duration_s",
    "steps",
    "utilization",
    "throughput_mbps",
    "cell_throughput_mbps",
    "jain_fairness",
    "hol_delay_ms_p50",
    "hol_delay_ms_p90",
    "hol_delay_ms_p95",
    "hol_delay_ms_p99",
    "queueing_delay_ms_p50",
    "queueing_delay_ms_p90",
    "queueing_delay_ms_p95",
    "queueing_delay_ms_p99",
    "hol_budget_compliance",
    "delay_budget_ms",
    "short_flows",
    "short_flows_done",
    "fct_s_p50",
    "fct_s_p95",
    "losses",
    "mean_reward",
)

#: Columns of the per-flow table (one row per flow of each run).
FLOW_COLUMNS: tuple[str, ...] = (
    "controller",
    "scenario",
    "seed",
    "flow",
    "cca",
    "agent",
    "ue",
    "traffic",
    "throughput_mbps",
    "rx_bytes",
    "rtt_ms_p50",
    "rtt_ms_p90",
    "rtt_ms_p99",
    "queueing_delay_ms_p50",
    "queueing_delay_ms_p90",
    "queueing_delay_ms_p99",
    "losses",
    "loss_events",
    "retx_segments",
    "fct_s",
)

#: Columns of the per-step time series (one row per step and flow of each run).
TIMESERIES_COLUMNS: tuple[str, ...] = (
    "controller",
    "scenario",
    "seed",
    "t",
    "flow",
    "cca",
    "agent",
    "ue",
    "active",
    "throughput_mbps",
    "cwnd_bytes",
    "pacing_rate_mbps",
    "rtt_ms",
    "queueing_delay_ms",
    "hol_ms",
    "capacity_mbps",
    "reward",
)

#: Delay percentiles of the results table.
RESULT_PERCENTILES: tuple[int, ...] = (50, 90, 95, 99)


@dataclass(frozen=True)
class EvalJob:
    """One simulation: a controller on a scenario with a seed (picklable; runs in any process).

    Attributes:
        controller: What drives the scenario's agent flow.
        scenario: The cell.
        seed: The run's seed.
        reward: Reward weights and budget (also for the native controllers' post-hoc reward).
        backend: Simulator backend.
        timeout_s: Longest wait for one simulator step.
        max_change: The environment's largest per-step change factor (policies only).
        action_mode: ``cwnd`` or ``rate`` (policies only).
        deterministic: Trained policies act with their mean action.
        from_s: Measure only steps ending after this time.
        fast_params: ``FastSimParams`` field overrides of the fast backend (``envs.fast_params``;
            empty: the calibrated model).
    """

    controller: ControllerSpec
    scenario: ScenarioSpec
    seed: int
    reward: RewardSpec
    backend: str = "ns3"
    timeout_s: float = 60.0
    max_change: float = 2.0
    action_mode: str = "cwnd"
    deterministic: bool = True
    from_s: float = 0.0
    fast_params: Mapping[str, Any] = field(default_factory=dict, hash=False)


def fast_params_label(fast_params: Mapping[str, Any] | None) -> str:
    """The results table's ``fast_params`` cell: ``key=value`` pairs sorted by key, ``;``-joined.

    Empty for the calibrated model (no override) and for every ns-3 run.
    """
    return ";".join(f"{k}={v}" for k, v in sorted((fast_params or {}).items()))


def _none_to_nan(x: Any) -> float:
    return float("nan") if x is None else float(x)


def posthoc_rewards(rec: EpisodeRecords, flow: int, reward: RewardSpec) -> None:
    """Fill a native run's rewards with the environment's reward of ``flow`` (same function)."""
    flow_ue = np.array([f.ue for f in rec.spec.flows])
    groups = fairness_groups([f.cca for f in rec.spec.flows], flow)
    step_s = rec.spec.step_ms / 1000.0
    for i in range(1, len(rec.times)):
        terms = reward_terms(rec.flows[i], rec.ues[i], flow_ue, flow, step_s, reward, groups)
        rec.rewards[i] = terms["reward"]


def records_to_rows(
    rec: EpisodeRecords,
    job: EvalJob,
    wall_s: float = float("nan"),
) -> tuple[dict[str, Any], list[dict[str, Any]], pd.DataFrame]:
    """The results row, the per-flow rows and the time series of one finished run.

    ``throughput_mbps`` is the mean over the agent flows (those the controller drives) of each
    flow's bytes received over its active time; ``cell_throughput_mbps`` all flows' bytes over the
    measured time. Delay percentiles follow ``cellgym.metrics.delay_samples`` (HoL of UEs with an
    active flow, queueing delay of active flows with RTT samples), with p95 added. FCT percentiles
    are over the ``short`` flows that completed (NaN without any). ``mean_reward`` is the
    environment's reward of the (first) agent flow per step; native controllers get it computed
    from their records with the same function (``cellgym.reward.reward_terms``).
    """
    spec = job.scenario
    agent_flows = spec.agent_flows
    if agent_flows and not np.isfinite(np.array(rec.rewards[1:], dtype=float)).any():
        posthoc_rewards(rec, agent_flows[0], job.reward)
    m = compute_metrics(rec, delay_budget_ms=job.reward.delay_budget_ms, from_s=job.from_s)
    ts = step_frame(rec, agent_flows)
    hol, qd = delay_samples(rec, job.from_s)
    key = {"controller": job.controller.label, "scenario": spec.name, "seed": int(job.seed)}
    flow_rows = []
    for f in m["flows"]:
        row = {**key, "flow": f["flow"], "cca": f["cca"], "agent": f["flow"] in agent_flows}
        row.update({"ue": f["ue"], "traffic": f["traffic"]})
        row.update({"throughput_mbps": f["throughput_mbps"], "rx_bytes": f["rx_bytes"]})
        for q in ("p50", "p90", "p99"):
            row[f"rtt_ms_{q}"] = _none_to_nan(f["rtt_ms"][q])
        for q in ("p50", "p90", "p99"):
            row[f"queueing_delay_ms_{q}"] = _none_to_nan(f["queueing_delay_ms"][q])
        row.update({k: f[k] for k in ("losses", "loss_events", "retx_segments")})
        row["fct_s"] = _none_to_nan(f["fct_s"])
        flow_rows.append(row)
    short = [f for f in m["flows"] if f["traffic"] == "short"]
    fcts = completed_fct_s(short)
    agent_tput = [m["flows"][i]["throughput_mbps"] for i in agent_flows]
    measured_s = max(m["duration_s"] - job.from_s, 1e-9)
    row = {
        **key,
        "kind": job.controller.kind,
        "backend": job.backend,
        "fast_params": fast_params_label(job.fast_params),
        "status": "ok",
        "error": "",
        "wall_s": float(wall_s),
        "duration_s": m["duration_s"],
        "steps": m["steps"],
        "utilization": _none_to_nan(m["utilization"]),
        "throughput_mbps": float(np.mean(agent_tput)) if agent_tput else float("nan"),
        "cell_throughput_mbps": float(
            rate_mbps(sum(f["rx_bytes"] for f in m["flows"]), measured_s)
        ),
        "jain_fairness": m["jain_fairness"],
        "hol_budget_compliance": _none_to_nan(m["hol_budget_compliance"]),
        "delay_budget_ms": m["delay_budget_ms"],
        "short_flows": len(short),
        "short_flows_done": int(fcts.size),
        "fct_s_p50": percentile(fcts, 50),
        "fct_s_p95": percentile(fcts, 95),
        "losses": int(sum(f["losses"] for f in m["flows"])),
        "mean_reward": _none_to_nan(m["mean_reward"]),
    }
    for q in RESULT_PERCENTILES:
        row[f"hol_delay_ms_p{q}"] = percentile(hol, q)
        row[f"queueing_delay_ms_p{q}"] = percentile(qd, q)
    ts.insert(0, "seed", int(job.seed))
    ts.insert(0, "scenario", spec.name)
    ts.insert(0, "controller", job.controller.label)
    return {c: row.get(c) for c in RESULT_COLUMNS}, flow_rows, ts


def failed_row(job: EvalJob, error: BaseException | str, wall_s: float = float("nan")) -> dict:
    """The results row of a job that did not finish: ``status == "failed"``, NaN metrics."""
    row: dict[str, Any] = {c: float("nan") for c in RESULT_COLUMNS}
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    row.update(
        {
            "controller": job.controller.label,
            "kind": job.controller.kind,
            "scenario": job.scenario.name,
            "seed": int(job.seed),
            "backend": job.backend,
            "fast_params": fast_params_label(job.fast_params),
            "status": "failed",
            "error": text,
            "wall_s": float(wall_s),
            "steps": 0,
            "short_flows": 0,
            "short_flows_done": 0,
            "losses": 0,
        }
    )
    return row
