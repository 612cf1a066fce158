"""The calibration's judgement: run metrics, targets, per-seed verdicts, noise floor, table.

Per run the metrics, per scenario the targets on the seed means, the per-seed verdict against
ns-3's own seed-to-seed noise, and the table (``calibration.md``, ``.csv``, ``.json``).

Targets (fast against ns-3; ``within``: ``|fast - ns3| <= max(rel * |ns3|, abs)``):

| target | tolerance | rows |
|---|---|---|
| utilization | 5 % relative | all |
| Jain index | 0.03 absolute | all |
| HoL delay p50, p95 | 20 % or 3 ms, whichever is larger | all |
| mean reward per step (default reward) | 3 % relative | a policy drives a flow |
| HoL budget compliance (HoL samples within the budget) | 0.05 absolute | all |
| each flow's throughput | 10 % or 1 Mbit/s, whichever is larger | all |

The reward of native rows is reported (the reward of flow 0, computed from the records with the
environment's function), not judged.

A scenario is **met** when (1) the means over seeds meet every target of the row and (2) at least
8 of 9 seeds (the same share of another number) have a pair of runs (same seed, ns-3 and fast)
that meets them all. Beside the verdict each row states ns-3's own seed-to-seed spread on the
same seeds: the share of ordered pairs of ns-3 runs with different seeds (i, j), i != j, that
meet the same targets with run i in the place of the fast run (the noise floor). A row whose
fast pass rate is not below that floor but under 8 of 9 is **missed at the noise floor**: the
backends differ no more than two ns-3 seeds do, which the row says, but it does not count as
met. The two backends share the run's draws (``cellgym.draws``: random moves, flow start
offsets, workload arrivals), not the simulators' own streams (TCP, MAC, fading), so a same-seed
pair differs only where the two models differ; two ns-3 seeds differ in the draws as well, so
the noise floor is looser than the same-seed comparison.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cellgym.metrics import EpisodeRecords, compute_metrics, delay_samples, percentile
from cellgym.provenance import markdown_line
from cellgym.reward import RewardSpec, reward_terms
from cellgym.vocab import BACKENDS

#: Steps ending before this time are left out (attach, flow start offsets).
WARMUP_S = 1.0
#: The reward whose mean per step and HoL budget are compared (the environment's default).
REWARD = RewardSpec()
#: Seeds within target that pass a row on their own: 8 of 9.
SEED_PASS_SHARE = 8 / 9


@dataclasses.dataclass(frozen=True)
class Target:
    """One compared metric: its key in ``run_metrics``, label, tolerances and rows it judges.

    ``scope``: ``all`` rows, ``agent`` rows (a policy drives a flow) or ``multi``-flow rows.
    """

    key: str
    label: str
    rel: float
    abs_: float
    scope: str = "all"


TARGETS: tuple[Target, ...] = (
    Target("utilization", "utilization", 0.05, 0.0),
    Target("jain", "Jain", 0.0, 0.03),
    Target("hol_p50_ms", "HoL p50", 0.20, 3.0),
    Target("hol_p95_ms", "HoL p95", 0.20, 3.0),
    Target("mean_reward", "reward", 0.03, 0.0, "agent"),
    Target("hol_compliance", "HoL budget", 0.0, 0.05),
    Target("throughput_mbps", "flow Mbit/s", 0.10, 1.0),
)
TARGET = {t.key: t for t in TARGETS}
#: Reported beside the targets, never judged (queueing delay: same tolerance as HoL for the mark).
REPORTED: tuple[Target, ...] = (
    Target("qdelay_p50_ms", "qdelay p50", 0.20, 3.0, "none"),
    Target("qdelay_p95_ms", "qdelay p95", 0.20, 3.0, "none"),
)


def applicable(agent: bool, n_flows: int) -> tuple[Target, ...]:
    """The targets that judge a row with (``agent``) or without a driven flow, of ``n_flows``."""
    scopes = {"all"} | ({"agent"} if agent else set()) | ({"multi"} if n_flows > 1 else set())
    return tuple(t for t in TARGETS if t.scope in scopes)


def within(fast: float, ns3: float, rel: float, abs_: float = 0.0) -> bool:
    """True when ``|fast - ns3| <= max(rel * |ns3|, abs_)``."""
    return bool(abs(fast - ns3) <= max(rel * abs(ns3), abs_))


def target_met(t: Target, fast: dict[str, Any], ref: dict[str, Any]) -> bool:
    """``t`` holds between two runs' (or two means') metrics (every flow for throughputs)."""
    a, b = fast[t.key], ref[t.key]
    if isinstance(b, (list, tuple)):
        pairs = zip(a, b, strict=True) if len(a) == len(b) else None
        return pairs is not None and all(within(x, y, t.rel, t.abs_) for x, y in pairs)
    return within(a, b, t.rel, t.abs_)


def missed(fast: dict[str, Any], ref: dict[str, Any], targets: Sequence[Target]) -> list[str]:
    """The labels of ``targets`` that ``fast`` misses against ``ref``."""
    return [t.label for t in targets if not target_met(t, fast, ref)]


def seed_within(
    fast: dict[str, Any], ns3: dict[str, Any], targets: Sequence[Target] = TARGETS[:4]
) -> bool:
    """One seed's runs on both backends meet ``targets`` (default: the four of every row)."""
    return not missed(fast, ns3, targets)


def noise_floor(ns3_runs: Sequence[dict[str, Any]], targets: Sequence[Target]) -> tuple[int, int]:
    """``(passing, pairs)`` over ordered pairs (i, j), i != j, of ns-3 runs: run i against run j."""
    pairs = list(itertools.permutations(range(len(ns3_runs)), 2))
    passing = sum(seed_within(ns3_runs[i], ns3_runs[j], targets) for i, j in pairs)
    return passing, len(pairs)


def run_metrics(rec: EpisodeRecords, from_s: float = WARMUP_S) -> dict[str, Any]:
    """The compared metrics of one run (``compute_metrics``, delay p95s, reward terms).

    The reward terms are the environment's (``reward_terms``, default ``REWARD``) of the first
    agent flow, or of flow 0 in a native row, computed from the records; the HoL budget
    compliance is over every UE with an active flow, as ``compute_metrics`` counts it.
    """
    m = compute_metrics(rec, delay_budget_ms=REWARD.delay_budget_ms, from_s=from_s)
    hol, qdelay = delay_samples(rec, from_s)
    flow = rec.spec.agent_flows[0] if rec.spec.agent_flows else 0
    flow_ue = np.array([f.ue for f in rec.spec.flows])
    step_s = rec.spec.step_ms / 1000.0
    terms = [
        reward_terms(rec.flows[i], rec.ues[i], flow_ue, flow, step_s, REWARD)
        for i, t in enumerate(rec.times)
        if t > max(0.0, from_s)
    ]
    comp = m["hol_budget_compliance"]
    return {
        "utilization": m["utilization"] if m["utilization"] is not None else float("nan"),
        "jain": m["jain_fairness"],
        "hol_p50_ms": percentile(hol, 50),
        "hol_p95_ms": percentile(hol, 95),
        "qdelay_p50_ms": percentile(qdelay, 50),
        "qdelay_p95_ms": percentile(qdelay, 95),
        "throughput_mbps": [f["throughput_mbps"] for f in m["flows"]],
        "mean_reward": float(np.mean([x["reward"] for x in terms])),
        "reward_utilization": float(np.mean([x["utilization"] for x in terms])),
        "reward_delay_penalty": float(np.mean([x["delay_penalty"] for x in terms])),
        "reward_jain": float(np.mean([x["jain"] for x in terms])),
        "hol_compliance": comp if comp is not None else float("nan"),
    }


#: Means over seeds per backend: plain means, NaN-aware for the queueing delay.
_MEANS = ("utilization", "jain", "hol_p50_ms", "hol_p95_ms", "mean_reward", "hol_compliance")
_TERMS = ("reward_utilization", "reward_delay_penalty", "reward_jain")


def _pct(n: int, d: int) -> str:
    return f"{100.0 * n / d:.0f} %" if d else "n/a"


def judge(row: dict[str, Any], pairs: Sequence[dict[str, dict[str, Any]]],
          targets: Sequence[Target]) -> None:  # fmt: skip
    """Fill ``row``'s per-seed counts, noise floor, verdict and its reason."""
    n = len(pairs)
    row["seeds_within"] = sum(seed_within(p["fast"], p["ns3"], targets) for p in pairs)
    row["seed_misses"] = {
        t.label: sum(not target_met(t, p["fast"], p["ns3"]) for p in pairs) for t in targets
    }
    row["ns3_pairs_within"], row["ns3_pairs"] = noise_floor([p["ns3"] for p in pairs], targets)
    fast_rate = row["seeds_within"] / n if n else 0.0
    floor = row["ns3_pairs_within"] / row["ns3_pairs"] if row["ns3_pairs"] else math.inf
    enough = row["seeds_within"] >= math.ceil(SEED_PASS_SHARE * n - 1e-9)
    at_floor = fast_rate >= floor - 1e-12
    row["seeds_ok"] = bool(enough)
    row["at_noise_floor"] = bool(not enough and row["ns3_pairs"] and at_floor)
    row["ok"] = bool(row["means_ok"] and row["seeds_ok"])
    seeds = f"{row['seeds_within']} of {n} seeds"
    floor_txt = _pct(row["ns3_pairs_within"], row["ns3_pairs"])
    worst = sorted(row["seed_misses"].items(), key=lambda kv: -kv[1])
    top = ", ".join(f"{k} {v}" for k, v in worst if v)
    reasons = []
    if not row["means_ok"]:
        reasons.append("means miss " + ", ".join(row["means_missed"]))
    if enough:
        reasons.append(seeds)
    elif not row["ns3_pairs"]:
        reasons.append(f"{seeds} (one seed: no noise floor); misses: {top}")
    elif at_floor:
        reasons.append(f"{seeds} ({_pct(row['seeds_within'], n)}), at ns-3's noise floor "
                       f"{floor_txt} on the same seeds; misses: {top}")  # fmt: skip
    else:
        reasons.append(f"{seeds} ({_pct(row['seeds_within'], n)}) < ns-3's {floor_txt}; "
                       f"misses: {top}")  # fmt: skip
    row["reason"] = "; ".join(reasons)


def compare(results: Sequence[Any]) -> list[dict[str, Any]]:
    """One row per scenario: seed means per backend, targets on means, per-seed verdict.

    ``results``: ``(job, {"ns3": metrics, "fast": metrics}, walls)`` per scenario and seed
    (``calibrate.run_jobs``); a job has ``scenario`` and ``spec``.
    """
    rows = []
    names = list(dict.fromkeys(job.scenario for job, _, _ in results))
    for name in names:
        mine = [(job, m) for job, m, _ in results if job.scenario == name]
        spec = mine[0][0].spec
        agent = bool(spec.agent_flows)
        targets = applicable(agent, len(spec.flows))
        row: dict[str, Any] = {"scenario": name, "agent": agent, "flows": len(spec.flows)}
        row["targets"] = [t.label for t in targets]
        means: dict[str, dict[str, Any]] = {}
        for backend in BACKENDS:
            runs = [m[backend] for _, m in mine]
            row[f"{backend}_seeds"] = len(runs)
            means[backend] = {}
            for key in (*_MEANS, *_TERMS):
                means[backend][key] = float(np.mean([r[key] for r in runs]))
            for key in ("qdelay_p50_ms", "qdelay_p95_ms"):
                means[backend][key] = float(np.nanmean([r[key] for r in runs]))
            means[backend]["throughput_mbps"] = [
                float(x) for x in np.mean([r["throughput_mbps"] for r in runs], axis=0)
            ]
            for key, value in means[backend].items():
                row[f"{backend}_{key}" if key != "throughput_mbps" else f"{backend}_tput_mbps"] = (
                    value
                )
        for t in (*TARGETS, *REPORTED):
            row[f"ok_{t.key}"] = target_met(t, means["fast"], means["ns3"])
        row["means_missed"] = missed(means["fast"], means["ns3"], targets)
        row["means_ok"] = not row["means_missed"]
        judge(row, [m for _, m in mine], targets)
        rows.append(row)
    return rows


def _cell(row: dict[str, Any], t: Target, digits: int) -> str:
    """``ns3 / fast``; ✗ where a target of the row is missed; in parentheses when not judged."""
    key = "tput_mbps" if t.key == "throughput_mbps" else t.key
    a, b = row[f"ns3_{key}"], row[f"fast_{key}"]
    if isinstance(a, list):
        text = ", ".join(f"{x:.1f}/{y:.1f}" for x, y in zip(a, b, strict=True))
    else:
        text = f"{a:.{digits}f} / {b:.{digits}f}"
    if t.label not in row.get("targets", [t.label]):
        return f"({text})"
    return text + ("" if row[f"ok_{t.key}"] else " ✗")


def markdown(rows: Sequence[dict[str, Any]], meta: dict[str, Any]) -> str:
    """The calibration table as markdown (ns-3 / fast, ✗ where a target is missed)."""
    lines = [
        "# Fast backend vs ns-3: calibration table",
        "",
        f"Generated by `python -m evaluation.experiments.calibrate {meta['args']}` "
        f"({meta['sim_time_s']:g} s per run, seeds {meta['seeds']}, steps after "
        f"{WARMUP_S:g} s). Each cell: ns-3 / fast, mean over seeds; ✗ = a target of the row "
        "missed on the means (utilization 5 % relative, Jain 0.03, HoL delays 20 % or 3 ms; "
        "HoL budget compliance 0.05, each flow's throughput 10 % or 1 Mbit/s; with an agent "
        "flow also reward per step 3 % relative); values in parentheses "
        "are reported, not judged. *Seeds within*: seeds whose own pair of runs meets every "
        "target of the row. *ns-3 vs ns-3*: the same for ordered pairs of ns-3 runs with "
        "different seeds (the noise floor). A row is met when its means meet the targets and "
        "at least 8 of 9 seeds do; a row below that but not below ns-3's own pass rate is "
        "missed at the noise floor (stated in the row, not counted as met). See "
        "README.md for the explanation of each miss.",
        "",
        "| scenario | utilization | Jain | HoL p50 ms | HoL p95 ms | reward/step | "
        "HoL within budget | flow Mbit/s (ns-3/fast) | qdelay p50 ms | qdelay p95 ms | "
        "seeds within | ns-3 vs ns-3 | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = [
            _cell(r, TARGET["utilization"], 3),
            _cell(r, TARGET["jain"], 3),
            _cell(r, TARGET["hol_p50_ms"], 1),
            _cell(r, TARGET["hol_p95_ms"], 1),
            _cell(r, TARGET["mean_reward"], 3),
            _cell(r, TARGET["hol_compliance"], 3),
            _cell(r, TARGET["throughput_mbps"], 1),
            _cell(r, REPORTED[0], 1),
            _cell(r, REPORTED[1], 1),
            f"{r['seeds_within']} of {r['ns3_seeds']}",
            f"{r['ns3_pairs_within']} of {r['ns3_pairs']} "
            f"({_pct(r['ns3_pairs_within'], r['ns3_pairs'])})",
            f"{'met' if r['ok'] else 'missed'}: {r['reason']}",
        ]
        lines.append(f"| {r['scenario']} | " + " | ".join(cells) + " |")
    met = sum(r["ok"] for r in rows)
    floor = sum(bool(r.get("at_noise_floor")) for r in rows)
    means_met = sum(r["means_ok"] for r in rows)
    seeds_ok = sum(r["seeds_within"] for r in rows)
    seeds_all = sum(r["ns3_seeds"] for r in rows)
    cached = meta.get("ns3_cached_runs", 0)
    from_cache = f" ({cached} of {meta['runs']} runs from the ns-3 cache)" if cached else ""
    lines += [
        "",
        f"Targets met in {met} of {len(rows)} scenarios under the strict rule (means: "
        f"{means_met} of {len(rows)}; {floor} more missed at ns-3's noise floor); "
        f"seed by seed, {seeds_ok} of {seeds_all} pairs of runs meet every target of their row. "
        f"Wall time: ns-3 {meta['ns3_wall_s']:.0f} s{from_cache}, fast "
        f"{meta['fast_wall_s']:.1f} s (including compilation).",
        "",
    ]
    if "provenance" in meta:
        lines += [markdown_line(meta["provenance"]), ""]
    return "\n".join(lines)


def write(rows: Sequence[dict[str, Any]], runs: list[dict[str, Any]], meta: dict[str, Any],
          out: Path) -> None:  # fmt: skip
    """Write ``calibration.md``, ``calibration.csv`` and ``calibration.json`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "calibration.md").write_text(markdown(rows, meta))
    skip = ("_tput_mbps", "seed_misses", "targets", "means_missed")
    keys = [k for k in rows[0] if not k.endswith(skip)]
    with open(out / "calibration.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([*keys, "targets", "means_missed", "ns3_tput_mbps", "fast_tput_mbps"])
        for r in rows:
            w.writerow(
                [*(r[k] for k in keys), ";".join(r["targets"]), ";".join(r["means_missed"])]
                + [" ".join(f"{x:.3f}" for x in r[f"{b}_tput_mbps"]) for b in BACKENDS]
            )
    (out / "calibration.json").write_text(
        json.dumps({"meta": meta, "rows": rows, "runs": runs}, indent=1, default=float)
    )
