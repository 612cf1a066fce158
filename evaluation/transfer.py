r"""Does a fast-twin result transfer to ns-3? Any controller on both backends, seed by seed.

    .venv/bin/python -m evaluation.transfer --controllers xrc,xrc_policy,my.module:MyPolicy \
        --scenarios fluctuating,vs_cubic --seeds 201-205 --jobs 2
    .venv/bin/python -m evaluation.transfer --out docs/transfer --jobs 2     # the transfer report
    .venv/bin/python -m evaluation.transfer --out docs/transfer --render    # its text only

Each controller (a registry name such as ``xrc`` or ``xrc_policy``, a trained checkpoint: a
``train.py`` run directory, a ``model.zip`` or ``<algo>:<path>``, or a user's policy class:
``module:Class`` or ``path/to/file.py:Class``, see ``evaluation.user_policies``) runs on every
scenario and seed on both backends, through the loop of ``evaluate.py`` (``evaluation.pool``'s
``execute_job``: ``run_native`` or ``run_policy``, then ``evaluation.records``), ``--jobs`` runs
at a time in ``evaluation.pool``'s worker processes; a run already made by the same code is taken
from the benchmark's run cache (``--cache``, ``--no-cache``; ``job_key``), so that after a change
to one backend only that backend's runs are made again. The table printed has, per scenario and
controller: the mean reward per step on each backend with its 95 % t interval over seeds, the gap
ns-3 minus fast with a paired 95 % t interval (the same seed on both backends), the bound of issue
25 (``|gap| <= max(0.05, 5 % of |ns-3 value|)``) and a verdict (``within``: the gap and its
interval inside the bound; ``within?``: the gap inside, its interval reaching past; ``OUTSIDE?``:
the gap outside, its interval reaching inside; ``OUTSIDE``: both outside), then utilization, HoL
delay p95 and Jain's index on each backend. Without ``--scenarios``, the rows are the main job's
(``configs/experiment/default.yaml``): its training mixture's scenarios with their overrides, then
its evaluation scenarios not already among them. Without ``--controllers``: XRC's native sender and
policy, CUBIC, BBR and the two example user policies of ``evaluation.example_policies`` (rate and
window mode). With ``--out``: ``numbers.json`` (setup, per-run values, the rows and the provenance,
``cellgym.provenance`` over ``inputs.TRANSFER``), ``rows.csv``, ``runs.csv`` and ``report.md``
(``evaluation.transfer_report``; ``--render`` rewrites it from ``numbers.json``). Exit status: 0, 1
when a run failed (listed; the rest is reported), 2 for an invalid argument (before any
simulation), 3 with ``--fail-on-gap`` when a row's mean gap is outside the bound.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from cellgym.metrics import CONFIDENCE, aggregate, mean_ci
from cellgym.paths import CONFIGS, REPO_ROOT
from cellgym.provenance import record
from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec, load_scenario
from cellgym.seeding import check_seed
from cellgym.vocab import BACKENDS, SpecError, check_above, check_range
from evaluation.experiments import inputs
from evaluation.records import EvalJob, failed_row
from evaluation.resolve import ControllerSpec, resolve_controller, unique_labels
from evaluation.user_policies import execute_user_job, is_class_ref, resolve_user_policy

log = logging.getLogger("transfer")

COMMAND = "python -m evaluation.transfer"
#: The main job, whose scenarios are the default rows.
MAIN_JOB = CONFIGS / "experiment" / "default.yaml"
_EXAMPLES = "evaluation.example_policies"
#: The default controllers: XRC native and policy, two TCPs, two user policies (rate, window).
DEFAULT_CONTROLLERS: tuple[str, ...] = (
    "xrc",
    "xrc_policy",
    "cubic",
    "bbr",
    f"{_EXAMPLES}:PaceAtExplicitRate",
    f"{_EXAMPLES}:DelayAimd",
)
DEFAULT_SEEDS = "201-205"
#: Metrics per backend; the first is the one whose gap is judged.
METRICS: tuple[str, ...] = ("mean_reward", "utilization", "hol_delay_ms_p95", "jain_fairness")
#: Issue 25's bound on the reward gap: at most ``GAP_ABS`` or ``GAP_REL`` of the ns-3 value.
GAP_ABS = 0.05
GAP_REL = 0.05
#: Verdicts of a row, by where the mean gap and its interval lie against the bound: both inside;
#: the mean inside, the interval reaching past; the mean outside, the interval reaching inside;
#: both outside. Issue 25's rule judges the mean: the last two are outside the bound.
WITHIN, WITHIN_UNSURE, OUTSIDE_UNSURE, OUTSIDE = "within", "within?", "OUTSIDE?", "OUTSIDE"


def parse_seeds(text: str) -> list[int]:
    """``"201-205"``, ``"1,3,7"`` or ``"1-3,9"`` -> the seeds, in order, each once.

    Raises:
        SpecError: A malformed item, a range that runs backwards, a repeated or invalid seed.
    """
    seeds: list[int] = []
    for item in str(text).split(","):
        lo, sep, hi = item.strip().partition("-")
        try:
            first, last = int(lo), int(hi if sep else lo)
        except ValueError:
            raise SpecError(f"--seeds={text!r}: {item!r} is not a seed or a range a-b") from None
        if last < first:
            raise SpecError(f"--seeds={text!r}: the range {item!r} runs backwards")
        seeds.extend(range(first, last + 1))
    for s in seeds:
        check_seed("--seeds", s)
    if len(set(seeds)) != len(seeds):
        raise SpecError(f"--seeds={text!r} holds a seed twice")
    return seeds


def main_job_scenarios(path: Path = MAIN_JOB) -> list[ScenarioSpec]:
    """The main job's training mixture, then its evaluation scenarios not among them (by name)."""
    from omegaconf import OmegaConf

    cfg = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    assert isinstance(cfg, dict)
    entries = list((cfg.get("mixture") or {}).get("scenarios") or [])
    entries += list(cfg.get("eval_scenarios") or [])
    out: dict[str, ScenarioSpec] = {}
    for e in entries:
        if e["scenario"] not in out:
            out[e["scenario"]] = load_scenario(e["scenario"], **dict(e.get("overrides") or {}))
    return list(out.values())


def resolve_controllers(texts: Sequence[str]) -> list[ControllerSpec]:
    """Each controller, checked to run on every backend (a user's class is imported here).

    Raises:
        SpecError: Naming ``--controllers[i]`` and the allowed values.
    """
    specs = []
    for i, text in enumerate(texts):
        where = f"--controllers[{i}]"
        if is_class_ref(text):
            specs.append(resolve_user_policy(text, where))
            continue
        try:
            for backend in BACKENDS:
                spec = resolve_controller(text, where, backend=backend)
        except FileNotFoundError as exc:
            raise SpecError(str(exc)) from None
        specs.append(spec)
    return unique_labels(specs)


def resolve_scenarios(
    names: Sequence[str] | None, sim_time_s: float | None, from_s: float
) -> list[ScenarioSpec]:
    """The scenarios by name (default: the main job's), with ``sim_time_s`` when given."""
    cells = [load_scenario(n) for n in names] if names else main_job_scenarios()
    if sim_time_s is not None:
        cells = [c.replace(sim_time_s=float(sim_time_s)) for c in cells]
    seen = set()
    for c in cells:
        if not c.agent_flows:
            raise SpecError(f"--scenarios: {c.name!r} has no agent flow for a controller to drive")
        if c.name in seen:
            raise SpecError(f"--scenarios: {c.name!r} is given twice")
        seen.add(c.name)
        if not from_s < c.sim_time_s:
            raise SpecError(
                f"--from-s={from_s:g} is out of range for {c.name!r}: [0, {c.sim_time_s:g})"
            )
    return cells


def make_jobs(
    controllers: Sequence[ControllerSpec],
    scenarios: Sequence[ScenarioSpec],
    seeds: Sequence[int],
    reward: RewardSpec,
    timeout_s: float = 60.0,
    from_s: float = 0.0,
) -> list[EvalJob]:
    """Every backend x scenario x controller x seed, longest simulations first (ns-3 first)."""
    jobs = [
        EvalJob(c, s, int(seed), reward, backend, timeout_s, from_s=from_s)
        for backend in BACKENDS
        for s in scenarios
        for c in controllers
        for seed in seeds
    ]
    order = {b: i for i, b in enumerate(BACKENDS)}
    return sorted(jobs, key=lambda j: (order[j.backend], -j.scenario.sim_time_s))


def job_key(job: EvalJob) -> str:
    """The run cache's key of ``job``: the benchmark's (``evaluation.benchmark.cache.run_key``).

    The controller's identity (a policy's or checkpoint's file digest), the whole scenario, the
    seed, the backend and the digest of the code that decides a run on that backend (the fast
    model is not an input of an ns-3 run, nor the ns-3 program of a fast one), with what the row
    measures (reward, ``from_s``, the environment's settings, the fast model's overrides).
    """
    from evaluation.benchmark.cache import code_digest, run_key
    from evaluation.benchmark.entrants import identity_of

    measure = {
        "row": "transfer-1",
        "reward": dataclasses.asdict(job.reward),
        "from_s": job.from_s,
        "max_change": job.max_change,
        "action_mode": job.action_mode,
        "deterministic": job.deterministic,
        "fast_params": {k: job.fast_params[k] for k in sorted(job.fast_params)},
    }
    return run_key(
        identity_of(job.controller), job.scenario, job.seed, job.backend,
        code_digest(job.backend), json.loads(json.dumps(measure, default=str)),
    )  # fmt: skip


def _plain_row(row: dict[str, Any]) -> dict[str, Any]:
    """A results row with numpy scalars as Python numbers (JSON)."""
    return {k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()}


def run_jobs(
    jobs: Sequence[EvalJob], workers: int = 1, progress: bool = True, cache: Any = None
) -> pd.DataFrame:
    """Run the jobs (``workers`` at a time in ``evaluation.pool``'s processes): the results table.

    A job whose worker dies is run again alone, and recorded as failed if that dies too. With a
    ``cache`` (``evaluation.benchmark.cache.RunCache``) a job whose row is kept under its key
    (``job_key``) is not run, and each row that finishes ok is kept: after a change to one
    backend's code only that backend's runs are made again.
    """
    from tqdm import tqdm

    from evaluation.pool import _warm_up
    from evaluation.records import RESULT_COLUMNS

    rows: dict[int, dict[str, Any]] = {}
    keys = [job_key(j) for j in jobs] if cache is not None else []
    for i, key in enumerate(keys):
        kept = cache.get(jobs[i].backend, key)
        if kept is not None and isinstance(kept.get("row"), dict):
            rows[i] = kept["row"]
    todo = [i for i in range(len(jobs)) if i not in rows]
    if rows:
        log.info("%d of %d runs from the cache %s", len(rows), len(jobs), cache.root)
    bar = tqdm(total=len(todo), unit="run", desc="transfer", disable=not progress or None)

    def finish(i: int, outcome: Any) -> None:
        rows[i] = _plain_row(outcome.row)
        r = rows[i]
        if cache is not None and r["status"] == "ok":
            cache.put(jobs[i].backend, keys[i], {"row": r})
        where = f"{r['backend']} / {r['scenario']} / {r['controller']} / seed {r['seed']}"
        if r["status"] != "ok":
            log.warning("%s failed: %s", where, r["error"])
        bar.set_postfix_str(where, refresh=False)
        bar.update()

    try:
        if workers <= 1:
            for i in todo:
                finish(i, execute_user_job(jobs[i]))
        elif todo:
            fast = [jobs[i] for i in todo if jobs[i].backend == "fast"]
            if fast:
                _warm_up("fast", fast[0].scenario)
            lost = _run_pool(jobs, todo, workers, finish)
            for i in lost:
                _run_pool(jobs, [i], 1, finish, last_try=True)
    finally:
        bar.close()
    frame = pd.DataFrame([rows[i] for i in range(len(jobs))], columns=list(RESULT_COLUMNS))
    frame["seed"] = frame["seed"].astype("int64")
    frame.attrs["cached_runs"] = len(jobs) - len(todo)
    return frame


def _run_pool(
    jobs: Sequence[EvalJob],
    indices: list[int],
    workers: int,
    finish: Callable[[int, Any], None],
    last_try: bool = False,
) -> list[int]:
    """``evaluation.pool``'s worker processes over ``jobs[indices]``; the jobs of a dead worker."""
    from evaluation.pool import JobOutcome, pool_map

    return sorted(
        pool_map(
            indices,
            lambda ex, i: ex.submit(execute_user_job, jobs[i]),
            finish,
            lambda i, error: JobOutcome(jobs[i], failed_row(jobs[i], error)),
            workers,
            last_try=last_try,
        )
    )


def gap_bound(ns3_value: float) -> float:
    """Issue 25's bound on ``|ns-3 - fast|``: ``max(GAP_ABS, GAP_REL * |ns-3 value|)``."""
    return max(GAP_ABS, GAP_REL * abs(ns3_value)) if math.isfinite(ns3_value) else GAP_ABS


def verdict(gap: float, half: float, bound: float) -> str | None:
    """Where the mean gap and its interval lie against ``bound`` (``WITHIN``, ...); None: no pair.

    Without an interval (one pair) the mean alone decides, as unsure (``within?``/``OUTSIDE?``).
    """
    if not math.isfinite(gap):
        return None
    known = math.isfinite(half)
    if abs(gap) > bound:
        return OUTSIDE if known and abs(gap) - half > bound else OUTSIDE_UNSURE
    return WITHIN if known and abs(gap) + half <= bound else WITHIN_UNSURE


def outside(row: dict[str, Any]) -> bool:
    """Whether a row's mean gap is outside the bound (issue 25's rule)."""
    return row["verdict"] in (OUTSIDE, OUTSIDE_UNSURE)


def paired_differences(runs: pd.DataFrame, metric: str = METRICS[0]) -> np.ndarray:
    """``ns-3 - fast`` of ``metric`` for each seed that has a run on both backends."""
    ns3, fast = (
        runs[runs["backend"].eq(b)].set_index("seed")[metric].astype(float) for b in BACKENDS
    )
    common = ns3.index.intersection(fast.index)
    return (ns3[common] - fast[common]).to_numpy(dtype=float)


def _num(x: Any) -> float | None:
    """A JSON number: ``None`` for NaN or infinity."""
    x = float(x)
    return x if math.isfinite(x) else None


def transfer_rows(results: pd.DataFrame, confidence: float = CONFIDENCE) -> list[dict[str, Any]]:
    """One row per scenario and controller: each backend's means and intervals, the paired gap.

    The means and t intervals over seeds come from ``cellgym.metrics.aggregate``; the gap is the
    mean over the seeds that finished on both backends of ``ns-3 - fast`` (mean reward per step),
    with its t interval (``cellgym.metrics.mean_ci``).
    """
    by = ["scenario", "controller", "backend"]
    per = aggregate(results, list(METRICS), by, confidence).set_index(by)
    ok = results[results["status"].eq("ok")]
    rows = []
    for scenario in dict.fromkeys(results["scenario"]):
        for controller in dict.fromkeys(results["controller"]):
            if (scenario, controller, BACKENDS[0]) not in per.index:
                continue
            row: dict[str, Any] = {"scenario": scenario, "controller": controller}
            for b in BACKENDS:
                g = per.loc[(scenario, controller, b)]
                row[f"n_{b}"], row[f"failed_{b}"] = int(g["n"]), int(g["failed"])
                for m in METRICS:
                    row[f"{m}_{b}"] = _num(g[f"{m}_mean"])
                    row[f"{m}_{b}_ci"] = _num(g[f"{m}_ci"])
            mine = ok[ok["scenario"].eq(scenario) & ok["controller"].eq(controller)]
            gap, half, n = mean_ci(paired_differences(mine), confidence)
            ns3 = row[f"{METRICS[0]}_{BACKENDS[0]}"]
            bound = gap_bound(ns3 if ns3 is not None else math.nan)
            row.update(
                {
                    "n_pairs": n,
                    "gap": _num(gap),
                    "gap_ci": _num(half),
                    "bound": bound,
                    "verdict": verdict(gap, half, bound),
                }
            )
            rows.append(row)
    return rows


def _run_columns() -> list[str]:
    return ["scenario", "controller", "backend", "seed", "status", "error", "wall_s", *METRICS]


def make_numbers(
    results: pd.DataFrame,
    controllers: Sequence[ControllerSpec],
    scenarios: Sequence[ScenarioSpec],
    seeds: Sequence[int],
    meta: dict[str, Any],
    confidence: float = CONFIDENCE,
) -> dict[str, Any]:
    """Everything the report shows: the setup, the rows, every run's values, wall times."""
    runs = [
        {k: (_num(v) if isinstance(v, float) else v) for k, v in r.items()}
        for r in results[_run_columns()].to_dict("records")
    ]
    run_s = {b: float(results.loc[results["backend"].eq(b), "wall_s"].sum()) for b in BACKENDS}
    return {
        "setup": {
            "controllers": [
                {"label": c.label, "kind": c.kind, "name": _short(c), "action_mode": c.action_mode}
                for c in controllers
            ],
            "scenarios": [{"name": s.name, "sim_time_s": s.sim_time_s} for s in scenarios],
            "seeds": list(seeds),
            "backends": list(BACKENDS),
            "confidence": confidence,
            "bound": {"abs": GAP_ABS, "rel": GAP_REL, "metric": METRICS[0]},
        },
        "rows": transfer_rows(results, confidence),
        "runs": runs,
        "meta": {**meta, **{f"{b}_run_s": round(v, 1) for b, v in run_s.items()}},
    }


def _short(c: ControllerSpec) -> str:
    """The controller's source, relative to the repository where it lies inside."""
    path = Path(c.name.rpartition(":")[0] if c.kind == "policy" else c.name)
    if path.is_absolute() and path.is_relative_to(REPO_ROOT):
        rel = path.relative_to(REPO_ROOT).as_posix()
        return f"{rel}:{c.name.rpartition(':')[2]}" if c.kind == "policy" else rel
    return c.name


def write_outputs(numbers: dict[str, Any], out: Path) -> None:
    """``numbers.json``, ``rows.csv``, ``runs.csv`` and ``report.md`` into ``out``."""
    from evaluation import transfer_report

    out.mkdir(parents=True, exist_ok=True)
    (out / "numbers.json").write_text(json.dumps(numbers, indent=1) + "\n")
    pd.DataFrame(numbers["rows"]).to_csv(out / "rows.csv", index=False)
    pd.DataFrame(numbers["runs"]).to_csv(out / "runs.csv", index=False)
    transfer_report.write(numbers, out)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog=COMMAND, description=__doc__.splitlines()[0] if __doc__ else None
    )
    ap.add_argument(
        "--controllers",
        default=",".join(DEFAULT_CONTROLLERS),
        help="comma-separated: registry names, checkpoints, module:Class or file.py:Class",
    )
    ap.add_argument("--scenarios", default="", help="comma-separated (default: the main job's)")
    ap.add_argument("--seeds", default=DEFAULT_SEEDS, help="e.g. 201-205 or 1,3,7")
    ap.add_argument("--jobs", type=int, default=2, help="simulations at a time")
    ap.add_argument("--sim-time-s", type=float, default=None, help="every scenario's duration")
    ap.add_argument("--from-s", type=float, default=0.0, help="measure only after this time")
    ap.add_argument("--timeout-s", type=float, default=60.0, help="longest wait for one step")
    ap.add_argument("--out", default=None, help="write the report and its numbers here")
    ap.add_argument("--render", action="store_true", help="rewrite report.md from numbers.json")
    ap.add_argument("--fail-on-gap", action="store_true", help="exit 3 when a row is OUTSIDE")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    ap.add_argument(
        "--cache",
        default=None,
        help="folder of kept runs, keyed by run and code (default: the benchmark's run cache)",
    )
    ap.add_argument("--no-cache", action="store_true", help="run everything, keep nothing")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Run the check (or ``--render``); print the table; return the exit status."""
    from evaluation import transfer_report

    argv = list(sys.argv[1:] if argv is None else argv)
    ap = _parser()
    args = ap.parse_args(argv)
    if args.render:
        if not args.out:
            ap.error("--render needs --out (the folder holding numbers.json)")
        path = Path(args.out) / "numbers.json"
        if not path.is_file():
            ap.error(f"--render: no {path} (run without --render first)")
        numbers = json.loads(path.read_text())
        transfer_report.write(numbers, Path(args.out))
        print(transfer_report.terminal_table(numbers))
        return 0
    try:
        check_range("--jobs", args.jobs, 1)
        check_range("--from-s", args.from_s, 0.0)
        check_above("--timeout-s", args.timeout_s, 0.0)
        if args.sim_time_s is not None:
            check_above("--sim-time-s", args.sim_time_s, args.from_s)
        seeds = parse_seeds(args.seeds)
        names = [s.strip() for s in args.scenarios.split(",") if s.strip()]
        scenarios = resolve_scenarios(names, args.sim_time_s, args.from_s)
        texts = [c.strip() for c in args.controllers.split(",") if c.strip()]
        if not texts:
            raise SpecError("--controllers is empty: give at least one controller")
        controllers = resolve_controllers(texts)
    except SpecError as exc:
        ap.error(str(exc))
    prov = record(COMMAND, argv, inputs.TRANSFER, REPO_ROOT) if args.out else None
    jobs = make_jobs(controllers, scenarios, seeds, RewardSpec(), args.timeout_s, args.from_s)
    log.info("%d runs on %s, %d at a time", len(jobs), " and ".join(BACKENDS), args.jobs)
    t0 = time.monotonic()
    cache = None
    if not args.no_cache:
        from evaluation.benchmark.cache import DEFAULT_CACHE, RunCache

        cache = RunCache(args.cache or DEFAULT_CACHE)
    results = run_jobs(jobs, args.jobs, progress=not args.quiet, cache=cache)
    meta = {
        "wall_s": round(time.monotonic() - t0, 1),
        "jobs": args.jobs,
        "cached_runs": results.attrs.get("cached_runs", 0),
    }
    numbers = make_numbers(results, controllers, scenarios, seeds, meta)
    if prov is not None:
        numbers["provenance"] = prov
        write_outputs(numbers, Path(args.out))
    print(transfer_report.terminal_table(numbers))
    if args.out:
        print(f"report: {(Path(args.out) / 'report.md').resolve()}")
    failed = results[results["status"] != "ok"]
    for _, r in failed.iterrows():
        print(f"FAILED {r['backend']} / {r['scenario']} / {r['controller']} / seed {r['seed']}: "
              f"{r['error']}")  # fmt: skip
    if len(failed):
        return 1
    if args.fail_on_gap and any(outside(r) for r in numbers["rows"]):
        return 3
    return 0


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    sys.exit(main())
