"""A published leaderboard's runs taken over where their behaviour has not changed.

A fresh machine has an empty run cache, and the code digest in every cache key changes with any
byte of the run inputs, so re-publishing after a change that moves a few tasks (an ns-3 fix of one
cell type, say) would rerun every run: 840 ns-3 runs, about an hour on two cores. But the
published leaderboard keeps every run's metrics (``numbers.json``'s ``runs``) and the behaviour
fingerprint it was made with (``evaluation.experiments.behaviour``: the plan of runs, the
benchmark's modules, one short probe per controller and per task). ``take_over`` (which
``python -m evaluation.experiments.reports --regenerate`` calls before it re-publishes a
leaderboard) compares that fingerprint with today's and writes the published runs into the run
cache, under today's keys, for every run whose controller and task have no probe that moved; the
publish command then runs only the rest:

- nothing is taken over when the plan (any run's scenario, controller identity, seed, the suite,
  the arguments) or the modules that turn a simulation into a run's metrics (``RUN_RECIPE``)
  changed, or when the probes chosen differ;
- a probe that moved marks both its controller and its task: every run of either reruns;
- only runs that finished (``status == "ok"``) are taken over, each with the metrics and run
  time it was published with, and its record names the commit it comes from (``reused_from``);
- a trained checkpoint's runs are never taken over: it enters the plan by its argument only (its
  files are machine-local, and the published leaderboard does not record their digest), so
  another checkpoint at the same path would look the same. So a checkpoint added to (or taken
  from) ``--controllers`` reruns only its own runs: the others are taken over as above, judged by
  the fingerprint of the command as it was published.

    python -m evaluation.benchmark.reuse docs/benchmark/ns3 -- publish --suite v1 --backend ns3 \
        --jobs 2 --controllers docs/main-job/policy --out docs/benchmark/ns3 --no-progress

takes the published runs over for that command (into the run cache), which then runs only the
checkpoint's.

What this shares with the fingerprint's own blind spot: a change that shows only in a combination
of controller and task that no probe runs is not seen (``behaviour``'s module docstring). The
taken-over runs are the published ones bit for bit, so a leaderboard re-published with nothing
changed is the same leaderboard.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluation.benchmark.cache import RunCache
from evaluation.benchmark.metrics import RUN_COLUMNS
from evaluation.benchmark.runner import BenchJob

#: The benchmark modules that decide a run's metrics (the fingerprint's recipe, by module name):
#: a change in any of them reruns everything.
RUN_RECIPE: tuple[str, ...] = ("cache", "entrants", "metrics", "runner", "suite")


def moved(recorded: Mapping[str, Any], now: Mapping[str, Any]) -> tuple[set[str], set[str]] | None:
    """The controllers and the tasks with a probe that moved between two fingerprints.

    Returns:
        ``(controllers, tasks)``, or ``None`` when no run can be taken over (another format or
        probe length, another plan, a changed run module, other probes chosen).
    """
    if any(recorded.get(k) != now.get(k) for k in ("format", "probe_s", "plan")):
        return None
    old_r, new_r = recorded.get("recipe", {}), now.get("recipe", {})
    if any(m not in old_r or old_r[m] != new_r.get(m) for m in RUN_RECIPE):
        return None
    old_p, new_p = recorded.get("probes", {}), now.get("probes", {})
    if old_p.keys() != new_p.keys():
        return None
    controllers, tasks = set(), set()
    for label, value in old_p.items():
        if new_p[label] != value:
            # Probe labels are "<backend> <task> <controller>" (behaviour_studies._benchmark).
            _, task, controller = label.split(" ", 2)
            controllers.add(controller)
            tasks.add(task)
    return controllers, tasks


def published(folder: Path) -> dict[str, Any] | None:
    """The leaderboard published in ``folder`` (its ``numbers.json``), or ``None``."""
    try:
        data = json.loads((Path(folder) / "numbers.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and "runs" in data and "provenance" in data else None


def seed_cache(
    numbers: Mapping[str, Any],
    now: Mapping[str, Any],
    jobs: Sequence[BenchJob],
    cache: RunCache,
) -> dict[str, Any]:
    """Write into ``cache`` the runs of ``jobs`` that the published ``numbers`` hold unchanged.

    Args:
        numbers: A published leaderboard (``published``) of the same backend and arguments.
        now: Today's behaviour fingerprint of the same command.
        jobs: Today's runs (``runner.plan``).
        cache: The run cache; runs it already holds are left alone.

    Returns:
        What happened: ``reused`` (runs written), ``moved_controllers`` and ``moved_tasks``
        (sorted lists), ``from_commit``, and ``why_none`` when nothing could be taken over.
    """
    prov = numbers.get("provenance", {})
    recorded = prov.get("behaviour")
    out: dict[str, Any] = {"reused": 0, "from_commit": prov.get("commit")}
    if recorded is None:
        return {**out, "why_none": "the published leaderboard records no behaviour fingerprint"}
    diff = moved(recorded, now)
    if diff is None:
        return {**out, "why_none": "its plan, probes or run modules changed"}
    controllers, tasks = diff
    out.update(moved_controllers=sorted(controllers), moved_tasks=sorted(tasks))
    backend = jobs[0].backend if jobs else None
    rows = {
        (r["controller"], r["task"], int(r["seed"])): r
        for r in numbers["runs"]
        if r.get("status") == "ok" and r.get("backend") == backend
    }
    for j in jobs:
        row = rows.get((j.entrant.label, j.task, int(j.seed)))
        moved_run = j.entrant.label in controllers or j.task in tasks
        if row is None or moved_run or j.entrant.kind == "trained" or cache.get(j.backend, j.key):
            continue
        cache.put(
            j.backend,
            j.key,
            {
                "meta": {
                    "suite": j.suite,
                    "split": j.split,
                    "task": j.task,
                    "seed": j.seed,
                    "backend": j.backend,
                    "controller": j.entrant.label,
                    "text": j.entrant.text,
                    "kind": j.entrant.kind,
                    "identity": j.entrant.identity,
                    "code": j.code,
                    "reused_from": prov.get("commit"),
                },
                "status": "ok",
                "error": "",
                "wall_s": row.get("wall_s"),
                "metrics": {c: row.get(c) for c in RUN_COLUMNS},
            },
        )
        out["reused"] += 1
    return out


def take_over(args: Sequence[str], folder: Path, cache: RunCache, jobs: int = 1) -> dict[str, Any]:
    """Seed ``cache`` with the published runs that ``publish args`` would make, if unchanged.

    The leaderboard published in ``folder`` gives them, where ``seed_cache`` finds their
    behaviour unchanged.

    Args:
        args: The publish command's arguments (``publish`` first), as its provenance records them.
        folder: The published leaderboard's folder.
        cache: The run cache the command will read.
        jobs: Probe runs at a time.

    Returns:
        ``seed_cache``'s account, or ``{"reused": 0, "why_none": ...}``.
    """
    from evaluation.benchmark import cli, publish
    from evaluation.benchmark.entrants import resolve_entrants
    from evaluation.benchmark.runner import plan
    from evaluation.benchmark.suite import OPTIMUM, load_suite
    from evaluation.experiments import behaviour

    numbers = published(folder)
    if numbers is None:
        return {"reused": 0, "why_none": f"no leaderboard published in {folder}"}
    recorded_args = list(numbers["provenance"].get("args", []))
    if _without_checkpoints(recorded_args) != _without_checkpoints(args):
        return {"reused": 0, "why_none": "the published leaderboard was made with other arguments"}
    a = cli._parser().parse_args(list(args))
    suite = load_suite(a.suite)
    names, _ = publish.registry_controllers(suite, a.backend)
    texts = [
        *names,
        *(t for t in cli._controllers(a.controllers) if not publish.absent_checkpoint(t)),
    ]
    entrants = resolve_entrants(texts, suite, a.backend)
    entrants += resolve_entrants([OPTIMUM], suite, a.backend, with_references=False)
    todo = plan(suite, a.split, a.backend, entrants)
    if all(cache.get(j.backend, j.key) is not None for j in todo):
        return {"reused": 0, "why_none": "every run is cached"}
    # Today's fingerprint of the command as published: a checkpoint added or taken away changes
    # only its own runs, which are never taken over, and the others' cache keys do not name it.
    now = behaviour.fingerprint("evaluation.benchmark", recorded_args, jobs)
    return seed_cache(numbers, now, todo, cache)


def _without_checkpoints(args: Sequence[str]) -> dict[str, Any]:
    """The publish command ``args`` as the benchmark's parser reads it, its checkpoints left out.

    Two commands that differ only in the trained checkpoints of ``--controllers`` plan the same
    runs for every other controller.
    """
    from evaluation.benchmark import cli, publish

    parsed = vars(cli._parser().parse_args(list(args)))
    kept = [c for c in cli._controllers(parsed["controllers"]) if not publish.is_checkpoint(c)]
    return {**parsed, "controllers": kept}


def describe(account: Mapping[str, Any]) -> str:
    """``take_over``'s account in one line."""
    if account.get("why_none"):
        return f"nothing taken over: {account['why_none']}"
    return (
        f"{account['reused']} runs taken over from commit {str(account.get('from_commit'))[:12]}; "
        f"probes moved for controllers {account.get('moved_controllers', [])} and tasks "
        f"{account.get('moved_tasks', [])}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evaluation.benchmark.reuse FOLDER -- publish ...``: take the runs over."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(
        prog="python -m evaluation.benchmark.reuse",
        description="Write a published leaderboard's unchanged runs into the run cache for a "
        "publish command (its arguments after --).",
    )
    ap.add_argument("folder", type=Path, help="the published leaderboard (its numbers.json)")
    ap.add_argument("--jobs", type=int, default=2, help="probe runs at a time")
    items = list(sys.argv[1:] if argv is None else argv)
    cut = items.index("--") if "--" in items else len(items)
    a = ap.parse_args(items[:cut])
    args = items[cut + 1 :]
    if args[:1] != ["publish"]:
        ap.error("give the publish command's arguments after --, starting with publish")
    print(describe(take_over(args, a.folder, RunCache(), a.jobs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
