r"""CellGym Bench's command: list tasks, score controllers, write or publish the leaderboard.

    .venv/bin/python -m evaluation.benchmark tasks --suite v1
    .venv/bin/python -m evaluation.benchmark score --suite v1 --backend fast --jobs 2 \
        --controllers xrc,xrc_policy,cubic,my_pkg.my_module:MyPolicy
    .venv/bin/python -m evaluation.benchmark score --suite v1 --backend ns3 --jobs 2 \
        --controllers runs/main/ppo/<run>,ns3::TcpBbr
    .venv/bin/python -m evaluation.benchmark leaderboard --suite v1 --backend ns3 \
        --out docs/benchmark/ns3
    .venv/bin/python -m evaluation.benchmark publish --suite v1 --backend ns3 --jobs 2 \
        --controllers runs/main/ppo/<run> --out docs/benchmark/ns3
    .venv/bin/python -m evaluation.benchmark dataset --suite v1 --split train --backend fast \
        --jobs 2 [--controllers xrc_policy,explicit_rate] [--out DIR] [--id cellgym/NAME-v0]

``score`` runs every controller (and the suite's references: the zero point of the
normalisation) on every task and seed of the split that the cache lacks, ``--jobs`` at a time,
with a progress bar, then prints each controller's normalised score (IQM, mean and optimality gap
with 95 % stratified bootstrap intervals) and its mean per task. ``leaderboard`` writes the files
of ``evaluation.benchmark.leaderboard`` from the cache alone (every cached controller of the
suite, split and backend at today's code, or those of ``--controllers``). ``publish`` is both, for
the published leaderboard (``evaluation.benchmark.publish``): it scores every registry controller
of the backend and ``--controllers``, then writes the leaderboard of those, whose provenance
records the arguments that remake it. ``dataset`` records the policies' trajectories on the train
split into a Minari dataset (``evaluation.benchmark.dataset``; by default every registry policy,
into Minari's local store). Exit status: 0; 1 when a run failed (listed; the rest is scored or
written); 2 for an invalid argument, before any simulation.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from cellgym.vocab import BACKENDS, SpecError, check_choice
from evaluation.benchmark import aggregate
from evaluation.benchmark.cache import DEFAULT_CACHE, RunCache
from evaluation.benchmark.entrants import resolve_entrants
from evaluation.benchmark.suite import SPLITS, Suite, load_suite

log = logging.getLogger("benchmark")
PROG = "python -m evaluation.benchmark"


def _controllers_option(p: argparse.ArgumentParser, what: str) -> None:
    """``--controllers``: comma-separated, repeatable."""
    p.add_argument("--controllers", action="append", help=f"comma-separated {what} (repeatable)")


def _controllers(values: Sequence[str] | None) -> list[str]:
    return [c.strip() for v in values or () for c in v.split(",") if c.strip()]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0] if __doc__ else "")
    sub = ap.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--suite", default="v1", help="suite name in configs/benchmark/ or a path")
        p.add_argument("--split", default="test", choices=SPLITS, help="test: the official score")

    t = sub.add_parser("tasks", help="list the suite's tasks, seeds and windows")
    common(t)
    for name, helptext in (
        ("score", "run what the cache lacks and print the scores"),
        ("leaderboard", "write the leaderboard from the cache"),
    ):
        p = sub.add_parser(name, help=helptext)
        common(p)
        p.add_argument("--backend", default="ns3", choices=BACKENDS)
        _controllers_option(
            p, "registry names, ns3::TypeIds, checkpoints, module:Class, file.py:Class, optimum"
        )
        p.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the run cache folder")
        p.add_argument("--reps", type=int, default=aggregate.REPS, help="bootstrap resamples")
        if name == "score":
            p.add_argument("--jobs", type=int, default=1, help="simulations at a time")
            p.add_argument("--no-progress", action="store_true", help="no progress bar")
        else:
            p.add_argument("--out", type=Path, required=True, help="the leaderboard's folder")
    p = sub.add_parser(
        "publish", help="score every registry controller of the backend, write the leaderboard"
    )
    common(p)
    p.add_argument("--backend", default="ns3", choices=BACKENDS)
    _controllers_option(
        p,
        "controllers beyond the registry's: checkpoints (left out when absent), module:Class, "
        "file.py:Class",
    )
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="the run cache folder")
    p.add_argument("--reps", type=int, default=aggregate.REPS, help="bootstrap resamples")
    p.add_argument("--jobs", type=int, default=1, help="simulations at a time")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--out", type=Path, required=True, help="the leaderboard's folder")
    d = sub.add_parser("dataset", help="record the policies' trajectories as a Minari dataset")
    d.add_argument("--suite", default="v1", help="suite name in configs/benchmark/ or a path")
    d.add_argument("--split", default="train", choices=SPLITS, help="train only (the rule)")
    d.add_argument("--backend", default="fast", choices=BACKENDS)
    _controllers_option(
        d,
        "policies: registry names, checkpoints, module:Class, file.py:Class (default: every "
        "registry policy of the backend)",
    )
    d.add_argument(
        "--out",
        type=Path,
        default=None,
        help="the Minari datasets folder (default: $MINARI_DATASETS_PATH, else ~/.minari/datasets)",
    )
    d.add_argument(
        "--id", default=None, help="the dataset id (default cellgym/<suite>-<split>-<backend>-v0)"
    )
    d.add_argument("--jobs", type=int, default=1, help="simulations at a time")
    d.add_argument("--force", action="store_true", help="replace an existing dataset of that id")
    d.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ap


def tasks_table(suite: Suite, split: str) -> str:
    """The split's tasks: group, cell, channel, duration, window, terms, seeds."""
    from tabulate import tabulate

    rows = []
    for t in suite.tasks_of(split):
        window = "" if t.window_s is None else f"{t.window_s[0]:g}-{t.window_s[1]:g} s of {t.trace}"
        rows.append([t.name, t.group, t.cell, t.channel, f"{t.scenario.sim_time_s:g}", window,
                     ", ".join(t.terms)])  # fmt: skip
    head = (
        f"suite {suite.name} (version {suite.version}{', frozen' if suite.frozen else ''}), "
        f"{split} split: {len(rows)} tasks x seeds {list(suite.seeds[split])} = "
        f"{len(rows) * len(suite.seeds[split])} runs per controller and backend\n"
    )
    return head + tabulate(
        rows, ["task", "group", "cell", "channel", "sim s", "trace window", "score terms"]
    )


def summary(scored, suite: Suite, reps: int) -> str:  # noqa: ANN001 (a DataFrame)
    """The printed table: per controller, the default variant's aggregates and run counts."""
    from tabulate import tabulate

    from evaluation.benchmark.render import fmt, ranking, with_ci

    metric = f"norm_{suite.default_variant}"
    complete = scored.groupby("controller")["status"].apply(lambda s: bool(s.eq("ok").all()))
    ok = scored[scored["controller"].isin(complete.index[complete])]
    numbers = {
        "aggregates": aggregate.aggregate_table(ok, metric, reps).assign(
            variant=suite.default_variant
        ).to_dict("records"),
        "setup": {"default_variant": suite.default_variant},
    }  # fmt: skip
    rows = []
    for r in ranking(numbers).to_dict("records"):
        c = r["controller"]
        mine = scored[scored["controller"].eq(c)]
        rows.append([c, with_ci(r, "iqm"), with_ci(r, "mean"), with_ci(r, "optimality_gap"),
                     f"{int(mine['status'].eq('ok').sum())}/{len(mine)}",
                     fmt(mine["wall_s"].sum(min_count=1), 1)])  # fmt: skip
    for c in complete.index[~complete]:
        mine = scored[scored["controller"].eq(c)]
        rows.append([c, "-", "-", "-", f"{int(mine['status'].eq('ok').sum())}/{len(mine)}", "-"])
    text = tabulate(rows, ["controller", "IQM", "mean", "optimality gap", "ok runs", "run s"])
    per_task = scored.pivot_table(index="task", columns="controller", values=metric, sort=False)
    return (
        f"normalised score ({suite.default_variant}; 0 = {suite.zero}, 1 = {suite.one}), 95 % "
        f"stratified bootstrap intervals:\n{text}\n\nmean per task:\n"
        + tabulate(per_task.reset_index(), headers="keys", showindex=False, floatfmt=".3f")
    )


def score(args: argparse.Namespace) -> int:
    """The ``score`` subcommand."""
    from evaluation.benchmark.runner import plan, preflight, run_missing, runs_frame
    from evaluation.benchmark.scores import score_frame

    suite = load_suite(args.suite)
    check_choice("--backend", args.backend, suite.backends)
    if args.jobs < 1:
        raise SpecError(f"--jobs={args.jobs} is out of range: allowed [1, inf)")
    entrants = resolve_entrants(_controllers(args.controllers), suite, args.backend)
    cache = RunCache(args.cache)
    jobs = plan(suite, args.split, args.backend, entrants)
    preflight(suite, args.split, args.backend, jobs, cache)
    t0 = time.monotonic()
    fresh = run_missing(jobs, cache, args.jobs, progress=not args.no_progress)
    wall = time.monotonic() - t0
    frame = runs_frame(suite, args.split, args.backend, entrants, cache, fresh)
    scored, _ = score_frame(frame, suite)
    failed = scored[scored["status"].ne("ok")]
    print(
        f"{suite.name} {args.split} on {args.backend}: {len(jobs)} runs, {len(fresh)} run now "
        f"in {wall:.1f} s ({len(jobs) - len(fresh)} from the cache {args.cache})"
    )
    print(summary(scored, suite, args.reps))
    for r in failed.to_dict("records"):
        print(f"FAILED {r['controller']} / {r['task']} / seed {r['seed']}: {r['error']}")
    return 1 if len(failed) else 0


def _recorded_args(argv: Sequence[str]) -> list[str]:
    """The arguments after the subcommand, without ``--cache`` (a machine's folder)."""
    out, skip = [], False
    for a in list(argv)[1:]:
        if skip:
            skip = False
        elif a == "--cache":
            skip = True
        elif not a.startswith("--cache="):
            out.append(a)
    return out


def leaderboard(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """The ``leaderboard`` subcommand."""
    from evaluation.benchmark.leaderboard import build, collect, write_leaderboard

    suite = load_suite(args.suite)
    check_choice("--backend", args.backend, suite.backends)
    cache = RunCache(args.cache)
    _, frame = collect(suite, args.split, args.backend, cache, _controllers(args.controllers))
    recorded = _recorded_args(argv)
    numbers = build(suite, args.split, args.backend, frame, recorded, args.reps)
    paths = write_leaderboard(numbers, args.out)
    print(f"wrote {len(paths)} files to {args.out}")
    if numbers["incomplete"]:
        print(f"left out (runs missing): {', '.join(numbers['incomplete'])}")
    return 1 if numbers["failed"] else 0


def publish(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """The ``publish`` subcommand."""
    from tabulate import tabulate

    from evaluation.benchmark import publish as pub
    from evaluation.benchmark.render import fmt, ranking, with_ci

    suite = load_suite(args.suite)
    check_choice("--backend", args.backend, suite.backends)
    if args.jobs < 1:
        raise SpecError(f"--jobs={args.jobs} is out of range: allowed [1, inf)")
    numbers = pub.publish(
        suite,
        args.split,
        args.backend,
        _controllers(args.controllers),
        RunCache(args.cache),
        args.out,
        [pub.SUBCOMMAND, *_recorded_args(argv)],
        args.jobs,
        args.reps,
        progress=not args.no_progress,
    )
    run = numbers["publish"]
    print(
        f"{suite.name} {args.split} on {args.backend}: {run['runs']} runs, {run['run_now']} run "
        f"now in {run['wall_s']:.1f} s ({run['from_cache']} from the cache {args.cache})"
    )
    rows = [[r["controller"], with_ci(r, "iqm"), with_ci(r, "mean"),
             fmt(numbers["wall_s"].get(r["controller"]), 1)]
            for r in ranking(numbers).to_dict("records")]  # fmt: skip
    print(tabulate(rows, ["controller", "IQM", "mean", "run s"]))
    print(f"wrote the leaderboard to {args.out}")
    for x in numbers["left_out"]:
        print(f"left out {x['controller']}: {x['reason']}")
    if numbers["incomplete"]:
        print(f"left out (runs missing or failed): {', '.join(numbers['incomplete'])}")
    for r in numbers["failed"]:
        print(f"FAILED {r['controller']} / {r['task']} / seed {r['seed']}: {r['error']}")
    return 1 if numbers["failed"] else 0


def dataset(args: argparse.Namespace, argv: Sequence[str]) -> int:
    """The ``dataset`` subcommand."""
    from evaluation.benchmark import dataset as ds
    from evaluation.benchmark.runner import preflight

    suite = load_suite(args.suite)
    check_choice("--backend", args.backend, suite.backends)
    if args.split != "train":
        raise SpecError(
            f"--split={args.split!r}: the offline dataset records the train split only, since "
            "nothing may be trained on the test split (docs/benchmark.md, 'The split')"
        )
    if args.jobs < 1:
        raise SpecError(f"--jobs={args.jobs} is out of range: allowed [1, inf)")
    texts = _controllers(args.controllers) or ds.default_controllers(args.backend)
    entrants = resolve_entrants(texts, suite, args.backend, with_references=False)
    ds.check_recordable(entrants)
    name = args.id or ds.dataset_id(suite.name, args.split, args.backend)
    ds.check_dataset_id(name)
    jobs = ds.plan(suite, args.split, args.backend, entrants)
    preflight(suite, args.split, args.backend, jobs, None)
    root = args.out if args.out is not None else ds.default_root()
    result = ds.generate(
        suite,
        args.split,
        args.backend,
        entrants,
        root,
        name,
        args.jobs,
        args.force,
        _recorded_args(argv),
        progress=not args.no_progress,
    )
    print(ds.describe(result))
    return 1 if result["failed"] else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.command == "tasks":
            print(tasks_table(load_suite(args.suite), args.split))
            return 0
        if args.command == "score":
            return score(args)
        if args.command == "dataset":
            return dataset(args, argv)
        if args.command == "publish":
            return publish(args, argv)
        return leaderboard(args, argv)
    except SpecError as exc:
        print(f"{PROG} {args.command}: error: {exc}", file=sys.stderr)
        return 2
