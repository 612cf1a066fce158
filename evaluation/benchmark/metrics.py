"""One benchmark run's records -> its row of raw metrics (what the cache keeps for each run).

The raw metrics are ``evaluate.py``'s (``evaluation.records.records_to_rows`` over
``cellgym.metrics``: utilization, throughput, HoL and queueing delay percentiles, budget
compliance, Jain, FCT), and the Zeus paper's terms of the controller's flows
(``cellgym.metrics.zeus_summary`` over ``cellgym.zeus``):

- ``thpt``: the bytes of every flow over the bytes the capacity could carry in the measured
  steps: the replayed trace's (a channel trace with one UE, or the wired bottleneck's trace),
  else the cell's recorded capacity (``cellgym.metrics.utilization``);
- ``delay_inflation``: the agent flows' mean RTT over the scenario's propagation RTT
  (``nominal_base_rtt_s``), averaged over the agent flows;
- ``intra_fairness``: with two or more agent flows, Zeus's fairness (the mean of the short- and
  long-term rolling Jain indices, ``zeus_fairness``) of the first agent flow against each other
  one, averaged;
- ``inter_fairness``: the same of the first agent flow against the task's ``competitor`` flow;
- ``competitor_tput_mbps``, ``competitor_rtt_ms``: that competitor's throughput and mean RTT (the
  inputs of the harm, ``evaluation.benchmark.scores``).

Scores and normalisation are computed from these rows when a table is made, never cached: a
change to the scoring leaves every cached run valid. A change here changes ``RUN_FORMAT`` or this
file's digest, part of every cache key (``evaluation.benchmark.cache``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cellgym.metrics import EpisodeRecords, zeus_summary
from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec
from cellgym.seeding import rng_run_for_seed
from cellgym.traces import bottleneck_series, channel_series, nominal_base_rtt_s
from cellgym.traces.series import CapacitySeries
from cellgym.vocab import TRACE_SOURCES
from evaluation.records import EvalJob, records_to_rows

#: Version of a run's row; bump it when a column's meaning changes (every cached run reruns).
RUN_FORMAT = 1
#: Columns of ``records_to_rows`` a run keeps.
RAW_COLUMNS: tuple[str, ...] = (
    "duration_s",
    "steps",
    "utilization",
    "throughput_mbps",
    "cell_throughput_mbps",
    "jain_fairness",
    "hol_delay_ms_p50",
    "hol_delay_ms_p95",
    "queueing_delay_ms_p50",
    "queueing_delay_ms_p95",
    "hol_budget_compliance",
    "short_flows",
    "short_flows_done",
    "fct_s_p50",
    "fct_s_p95",
    "losses",
    "mean_reward",
)
#: The Zeus terms and the competitor's values.
ZEUS_COLUMNS: tuple[str, ...] = (
    "thpt",
    "delay_inflation",
    "intra_fairness",
    "inter_fairness",
    "competitor_tput_mbps",
    "competitor_rtt_ms",
)
#: Every metric of a run's row.
RUN_COLUMNS: tuple[str, ...] = (*RAW_COLUMNS, *ZEUS_COLUMNS)


def capacity_series(spec: ScenarioSpec, seed: int) -> CapacitySeries | None:
    """The capacity ``thpt`` is measured against: the bottleneck's or one UE's trace, or None."""
    if spec.bottleneck_trace:
        return bottleneck_series(spec)
    if spec.channel.source in TRACE_SOURCES and spec.num_ues == 1:
        return channel_series(spec.channel, spec.cell.slot_s, rng_run_for_seed(seed))
    return None


def _fairness(summary: dict[str, Any]) -> float:
    vals = [summary.get("fairness_short"), summary.get("fairness_long")]
    vals = [float(v) for v in vals if v is not None and math.isfinite(v)]
    return float(np.mean(vals)) if vals else float("nan")


def _num(x: Any) -> float:
    return float("nan") if x is None else float(x)


def zeus_terms(
    rec: EpisodeRecords,
    agents: list[int],
    competitor: int | None,
    series: CapacitySeries | None,
    from_s: float,
) -> dict[str, float]:
    """The Zeus columns of one run (module docstring) for the controller's flows ``agents``."""
    spec = rec.spec
    base = [nominal_base_rtt_s(spec, f) * 1000.0 for f in range(len(spec.flows))]
    lead = agents[0]
    first = zeus_summary(rec, lead, competitor, series, base[lead], from_s)
    inflation = [_num(first["delay_inflation"])]
    intra = []
    for other in agents[1:]:
        s = zeus_summary(rec, other, lead, series, base[other], from_s)
        inflation.append(_num(s["delay_inflation"]))
        intra.append(_fairness(s))
    finite = [v for v in inflation if math.isfinite(v)]
    out = {
        "thpt": _num(first["utilization"]),
        "delay_inflation": float(np.mean(finite)) if finite else math.nan,
        "intra_fairness": float(np.mean(intra)) if intra else math.nan,
        "inter_fairness": _fairness(first) if competitor is not None else math.nan,
        "competitor_tput_mbps": math.nan,
        "competitor_rtt_ms": math.nan,
    }
    if competitor is not None:
        c = zeus_summary(rec, competitor, None, series, base[competitor], from_s)
        out["competitor_tput_mbps"] = _num(c["throughput_mbps"])
        out["competitor_rtt_ms"] = _num(c["rtt_ms"])
    return out


def run_row(
    rec: EpisodeRecords, job: EvalJob, competitor: int | None, wall_s: float = math.nan
) -> dict[str, float]:
    """The metrics row of one finished run (``RUN_COLUMNS``).

    Args:
        rec: The run's records.
        job: The job that ran (its scenario names the controller's flows ``agent``; a native
            run's records name the native sender instead).
        competitor: The task's competitor flow, or None.
        wall_s: The run's wall time.
    """
    row, _, _ = records_to_rows(rec, job, wall_s)
    out = {c: _num(row[c]) for c in RAW_COLUMNS}
    series = capacity_series(job.scenario, job.seed)
    out.update(zeus_terms(rec, job.scenario.agent_flows, competitor, series, job.from_s))
    return out


def reward_spec(delay_budget_ms: float) -> RewardSpec:
    """The reward of the suite's runs: the default weights with the suite's delay budget."""
    return RewardSpec(delay_budget_ms=float(delay_budget_ms))
