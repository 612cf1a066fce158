"""The leaderboard: every cached controller of a suite, split and backend, as files with provenance.

``write_leaderboard`` writes into one folder (``docs/benchmark/<backend>/`` for the published
one):

- ``leaderboard.md``: the ranking by the interquartile mean of the default variant's normalised
  score with its interval, the mean and the optimality gap, every variant's IQM, the mean
  normalised score per group and per task, the probability of improvement between every pair,
  the raw metrics, each controller's run time, and the provenance line;
- ``aggregates.csv`` (every variant), ``improvement.csv``, ``profiles.csv``, ``tasks.csv`` (the
  mean raw metrics and scores per controller and task), ``runs.csv`` (every run), and
  ``numbers.json`` (all of it, the reference points, the setup, the controllers left out with
  the reason, and the provenance: ``cellgym.provenance.record`` over the run inputs, the
  benchmark's modules and the suite);
- ``profiles.png`` (performance profiles), ``intervals.png`` (IQM, mean and optimality gap with
  their intervals), ``improvement.png`` (the probability-of-improvement matrix).

Nothing runs here: the runs come from the cache (``python -m evaluation.benchmark score`` or
``publish`` makes them); controllers with runs missing or failed are listed and left out of the
aggregates.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cellgym.paths import REPO_ROOT
from cellgym.provenance import markdown_line, record
from evaluation.benchmark import aggregate
from evaluation.benchmark.cache import RunCache, code_digest, run_inputs
from evaluation.benchmark.entrants import Entrant, entrant_hash, resolve_entrants
from evaluation.benchmark.render import RAW_HEADERS
from evaluation.benchmark.runner import runs_frame
from evaluation.benchmark.scores import score_frame
from evaluation.benchmark.suite import OPTIMUM, Suite
from evaluation.resolve import ControllerSpec

COMMAND = "python -m evaluation.benchmark leaderboard"


def inputs_of(suite: Suite, backend: str) -> tuple[str, ...]:
    """The leaderboard's provenance inputs: the runs', the benchmark's modules, the suite."""
    rel = suite.path.resolve()
    extra = (rel.relative_to(REPO_ROOT).as_posix(),) if rel.is_relative_to(REPO_ROOT) else ()
    return (*run_inputs(backend), "evaluation/benchmark/*.py", *extra)


def cached_entrants(suite: Suite, split: str, backend: str, cache: RunCache) -> list[Entrant]:
    """The controllers with a run of ``suite``/``split`` on ``backend`` at today's code."""
    code = code_digest(backend)
    found: dict[str, Entrant] = {}
    for rec in cache.scan(backend):
        m = rec.get("meta") or {}
        if (m.get("suite"), m.get("split"), m.get("code")) != (suite.name, split, code):
            continue
        key = json.dumps(m["identity"], sort_keys=True)
        spec = ControllerSpec(label=m["controller"], kind=m["kind"], name=m["text"])
        found.setdefault(key, Entrant(m["text"], spec, m["identity"]))
    labels = [e.label for e in found.values()]
    out = []
    for e in found.values():  # two versions of one policy file: told apart by their identity
        if labels.count(e.label) > 1 and e.spec is not None:
            label = f"{e.label}@{entrant_hash(e.identity)[:8]}"
            e = Entrant(e.text, dataclasses.replace(e.spec, label=label), e.identity)
        out.append(e)
    return sorted(out, key=lambda e: e.label)


def collect(
    suite: Suite,
    split: str,
    backend: str,
    cache: RunCache,
    controllers: Sequence[str] | None = None,
) -> tuple[list[Entrant], pd.DataFrame]:
    """The entrants (given, else every cached one; the references and the optimum added)."""
    if controllers:
        entrants = resolve_entrants(controllers, suite, backend)
    else:
        refs = resolve_entrants(list(suite.references), suite, backend, with_references=False)
        known = {json.dumps(e.identity, sort_keys=True) for e in refs}
        entrants = refs + [
            e
            for e in cached_entrants(suite, split, backend, cache)
            if json.dumps(e.identity, sort_keys=True) not in known
        ]
    if not any(e.computed for e in entrants):
        entrants += resolve_entrants([OPTIMUM], suite, backend, with_references=False)
    return entrants, runs_frame(suite, split, backend, entrants, cache)


def _num(x: Any) -> Any:
    if isinstance(x, float | np.floating):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: _num(v) for k, v in r.items()} for r in df.to_dict("records")]


def build(
    suite: Suite,
    split: str,
    backend: str,
    frame: pd.DataFrame,
    args: Sequence[str] = (),
    reps: int = aggregate.REPS,
    *,
    command: str = COMMAND,
    generated_by: str | None = None,
    left_out: Sequence[Mapping[str, str]] = (),
) -> dict[str, Any]:
    """Everything the leaderboard shows, from the runs table (``runs_frame``).

    Args:
        suite: The suite.
        split: ``test`` or ``train``.
        backend: ``ns3`` or ``fast``.
        frame: The runs table of every entrant.
        args: The command's arguments, recorded in the provenance (they remake it).
        reps: Bootstrap resamples.
        command: The command before ``args`` (the provenance's command is both).
        generated_by: The command the markdown names (default ``command``).
        left_out: Controllers asked for but not run, each ``{"controller", "reason"}``
            (``evaluation.benchmark.publish``: a checkpoint whose files are absent).
    """
    scored, refs = score_frame(frame, suite)
    complete = scored.groupby("controller")["status"].apply(lambda s: bool(s.eq("ok").all()))
    incomplete = sorted(complete.index[~complete])
    ranked = scored[scored["controller"].isin(complete.index[complete])]
    agg = []
    for v in suite.variants:
        t = aggregate.aggregate_table(ranked, f"norm_{v}", reps)
        t.insert(1, "variant", v)
        agg.append(t)
    aggregates = pd.concat(agg, ignore_index=True)
    metric = f"norm_{suite.default_variant}"
    no_opt = ranked[ranked["kind"].ne("computed")]
    improvement = aggregate.improvement_matrix(no_opt, metric, reps)
    profiles = aggregate.performance_profiles(ranked, metric, reps=reps)
    cols = [*RAW_HEADERS, *(f"{k}_{v}" for k in ("score", "norm") for v in suite.variants)]
    tasks = scored.groupby(["controller", "task"], sort=False)[cols].mean().reset_index()
    runs = scored[scored["kind"].ne("computed")]
    wall = runs.groupby("controller", sort=False)["wall_s"].sum(min_count=1)
    failed = scored[scored["status"].eq("failed")]
    prov = record(command, list(args), inputs_of(suite, backend), REPO_ROOT)
    return {
        "setup": {
            "suite": suite.name,
            "version": suite.version,
            "suite_sha256": suite.digest(),
            "split": split,
            "backend": backend,
            "official": backend == suite.official_backend and split == "test",
            "seeds": list(suite.seeds[split]),
            "tasks": [
                {"name": t.name, "group": t.group, "cell": t.cell, "channel": t.channel,
                 "terms": list(t.terms), "sim_time_s": t.scenario.sim_time_s}
                for t in suite.tasks_of(split)
            ],  # fmt: skip
            "default_variant": suite.default_variant,
            "variants": list(suite.variants),
            "normalise": {"zero": suite.zero, "one": suite.one, "min_span": suite.min_span},
            "from_s": suite.from_s,
            "code_digest": code_digest(backend),
            "reps": reps,
            "generated_by": generated_by or command,
        },
        "incomplete": incomplete,
        "left_out": [dict(x) for x in left_out],
        "failed": _records(failed[["controller", "task", "seed", "error"]]),
        "wall_s": {k: _num(v) for k, v in wall.items()},
        "references": _records(refs),
        "aggregates": _records(aggregates),
        "improvement": _records(improvement),
        "profiles": _records(profiles),
        "tasks": _records(tasks),
        "runs": _records(scored),
        "provenance": prov,
    }  # fmt: skip


def write_leaderboard(numbers: dict[str, Any], out: Path) -> list[Path]:
    """Every file of the leaderboard into ``out`` (module docstring); their paths."""
    from evaluation.benchmark import render

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, key in (
        ("aggregates.csv", "aggregates"),
        ("improvement.csv", "improvement"),
        ("profiles.csv", "profiles"),
        ("tasks.csv", "tasks"),
        ("runs.csv", "runs"),
    ):
        pd.DataFrame(numbers[key]).to_csv(out / name, index=False)
        paths.append(out / name)
    (out / "numbers.json").write_text(json.dumps(numbers, indent=1) + "\n")
    paths.append(out / "numbers.json")
    paths += render.plots(numbers, out)
    (out / "leaderboard.md").write_text(render.markdown(numbers))
    paths.append(out / "leaderboard.md")
    return paths


def provenance_line(numbers: dict[str, Any]) -> str:
    """The provenance line of the markdown."""
    return markdown_line(numbers["provenance"])
