"""Calibrate the fast backend against ns-3: the same scenarios on both, compared metric by metric.

    .venv/bin/python -m evaluation.experiments.calibrate [--quick] [--seeds N] [--jobs J]
        [--out DIR]

Each scenario (``SCENARIOS``: ``configs/scenario/calibration/<name>.yaml``) runs on the ns-3
backend and on the fast backend with the same seeds: natively (ns-3's TCPs, XRC's sender), or, in
the rows of ``calibration_drivers.DRIVERS``, with an agent flow driven per step through
``LteCellEnv`` (the XRC policy, fixed seeded action sequences in window and pacing mode). From the
step records (``cellgym.metrics``) the suite takes, per run, the utilization, the Jain index, each
flow's throughput, the p50/p95 of the RLC head-of-line delay and of the queueing delay (RTT minus
minimum RTT), the environment's reward per step and the HoL budget compliance, and judges the
fast model against ns-3 (``calibration_report``: targets on the means over seeds, then seed by
seed: at least 8 of 9 seeds within target, or a per-seed pass rate not below ns-3's own
seed-to-seed pass rate). The command writes ``calibration.md``, ``calibration.csv``
and ``calibration.json`` (every run's metrics) under ``--out`` (default ``docs/calibration``).
``--quick`` runs every scenario for 8 s with one seed, as a smoke test.

ns-3 runs dominate the wall time (the full table takes minutes, the fast side seconds), so the
records of each ns-3 run are cached on disk (``--ns3-cache DIR``, default
``runs/calibration-cache/``; ``--no-ns3-cache`` turns it off). A cache entry is keyed by the
scenario's ns-3 arguments, the seed, and the SHA-256 of the ``cellgym-lte`` program
(``ns3_cache_key``; for a driven row also the driver and a digest of its Python side,
``DRIVER_SOURCES``): rebuilding the scenario program, or changing any scenario field, misses the
cache, while changes to the fast model reuse the stored ns-3 runs, so re-evaluating the fast model
against the whole table takes seconds. That cache is one machine's; on any machine, a table made
again in the folder of a committed one takes over the committed ns-3 runs of every row whose
ns-3 behaviour probe has not moved (``calibration_takeover``; ``--no-take-over`` runs them all).

``calibration.json`` carries the run's provenance (``cellgym.provenance``: commit, the SHA-256 of
every file in ``INPUTS`` and one digest over them and the arguments), ``calibration.md`` a line
of it; ``tests/evaluation/test_provenance.py`` names the inputs changed since the committed table.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cellgym.metrics import EpisodeRecords
from cellgym.paths import REPO_ROOT, ns3_program
from cellgym.provenance import input_files, record
from cellgym.scenario import ScenarioSpec, load_scenario
from cellgym.vocab import BACKENDS, SpecError, check_choice, check_range
from envs.fast_params import parse_fast_params
from evaluation.experiments import inputs
from evaluation.experiments.calibration_drivers import DRIVERS, Driver, drive
from evaluation.experiments.calibration_report import (
    TARGETS,
    WARMUP_S,
    compare,
    markdown,
    run_metrics,
    seed_within,
    within,
    write,
)
from evaluation.experiments.calibration_takeover import scenario_digest, take_over
from evaluation.workers import map_jobs

__all__ = [
    "NR_SCENARIOS",
    "SCENARIOS",
    "TARGETS",
    "WARMUP_S",
    "compare",
    "main",
    "markdown",
    "run_fast",
    "run_metrics",
    "run_ns3",
    "seed_within",
    "within",
    "write",
]

log = logging.getLogger(__name__)


#: The calibration scenarios (``configs/scenario/calibration/<name>.yaml``), in table order.
SCENARIOS: tuple[str, ...] = (
    "static_cubic",
    "fluctuating_cubic",
    "fluctuating_newreno",
    "fluctuating_bbr",
    "fluctuating_xrc",
    "share2_cubic",
    "share4_mixed",
    "four_ues",
    "video_vs_bulk",
    "xrc_vs_cubic",
    "two_xrc",
    "cubic_25rbs",
    "cubic_buffer64",
    "cubic_rtt80",
    "short_flows",
    "xrc_policy",
    "xrc_policy_fluctuating",
    "xrc_policy_vs_cubic",
    "xrc_policy_three_ues",
    "xrc_policy_steps",
    "xrc_policy_att_lte_driving",
    "xrc_policy_irish5g_static",
    "agent_walk_cwnd",
    "agent_steps_rate",
    "wired_bottleneck_cubic",
    "wired_bottleneck_xrc",
    "wired_bottleneck_xcp",
    "cell_rcp2",
    "dumbbell_xcp4",
    "chain_xcpr_ack_loss",
    "cell_pbecc2",
)
#: The NR cell's rows (5G-LENA on ns-3), a table of their own (``--scenarios nr``, written to
#: ``docs/calibration/nr/`` with fewer seeds and shorter runs: an NR cell simulates at about a
#: third of the LTE cell's speed).
NR_SCENARIOS: tuple[str, ...] = (
    "nr_umi_los_xrc",
    "nr_umi_nlos_xrc",
    "nr_uma_nlos_xrc",
    "nr_rma_nlos_xrc",
    "nr_umi_los_cubic",
    "nr_cubic_100mhz",
    "nr_fr2_blockage_xrc",
    "nr_four_ues",
    "nr_xrc_vs_cubic",
    "nr_agent_walk_cwnd",
    "nr_xrc_policy_irish5g_static",
)
#: Rows that replay a trace from the shared traces folder (``cellgym.traces.traces_dir``):
#: ``--scenarios traces``, not part of ``all`` (which runs without the folder).
TRACE_SCENARIOS: tuple[str, ...] = ("wired_bottleneck_trace",)
#: Their folder under ``configs/scenario/``.
SCENARIO_FOLDER = "calibration"
SIM_TIME_RANGE_S: tuple[float, float] = (2.0, 3600.0)
COMMAND = "python -m evaluation.experiments.calibrate"
#: The files the table depends on (``evaluation.experiments.inputs``, their one home).
INPUTS: tuple[str, ...] = inputs.CALIBRATION


def scenario(name: str, sim_time_s: float) -> ScenarioSpec:
    """The calibration scenario ``name`` lasting ``sim_time_s`` seconds.

    Raises:
        SpecError: An unknown ``name`` or ``sim_time_s`` outside [2, 3600], naming the argument.
    """
    check_choice("scenario", name, SCENARIOS + NR_SCENARIOS + TRACE_SCENARIOS)
    check_range("sim_time_s", sim_time_s, *SIM_TIME_RANGE_S)
    return load_scenario(f"{SCENARIO_FOLDER}/{name}", sim_time_s=float(sim_time_s))


#: Default directory of the ns-3 run cache (``runs/`` is ignored by git).
NS3_CACHE_DIR = REPO_ROOT / "runs" / "calibration-cache"
#: Bump when the cache's file layout or the meaning of its key changes.
_CACHE_VERSION = 1


@dataclasses.dataclass
class Job:
    """One scenario and seed, run on both backends.

    ``ns3_cache`` is the directory of the ns-3 run cache, or ``None`` to always run ns-3.
    """

    scenario: str
    seed: int
    spec: ScenarioSpec
    ns3_cache: Path | None = None
    fast_knobs: dict[str, Any] = dataclasses.field(default_factory=dict)
    ns3_given: dict[str, Any] | None = None  # the committed table's run (calibration_takeover)


@functools.cache
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    """SHA-256 of a file's content (memoized per path, size and modification time)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def program_digest(program: Path | None = None) -> str:
    """SHA-256 of the ns-3 scenario program (default: the build's ``cellgym-lte``)."""
    path = Path(program) if program is not None else ns3_program()
    st = path.stat()
    return _file_sha256(str(path.resolve()), st.st_size, st.st_mtime_ns)


def ns3_cache_key(spec: ScenarioSpec, seed: int, cca: str, program_sha256: str) -> str:
    """Cache key of one ns-3 run.

    A hash of the scenario's ns-3 arguments (every scenario field, and the seed), the run's
    draws (its ``--draws`` file, ``cellgym.draws``), the controller and the scenario program's
    content digest (``program_digest``).
    """
    from cellgym.draws import draw, render_draws
    from cellgym.seeding import rng_run_for_seed

    draws = render_draws(draw(spec, rng_run_for_seed(seed)))
    blob = json.dumps(
        {
            "version": _CACHE_VERSION,
            "args": spec.to_ns3_args(seed),
            "draws": hashlib.sha256(draws.encode()).hexdigest(),
            "cca": cca,
            "program": program_sha256,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def save_records(rec: EpisodeRecords, path: Path) -> None:
    """Store ``rec``'s step arrays as ``.npz`` (atomically: a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        np.savez_compressed(
            fh,
            times=np.asarray(rec.times, dtype=np.float64),
            flows=np.stack(rec.flows),
            ues=np.stack(rec.ues),
            rewards=np.asarray(rec.rewards, dtype=np.float64),
            controller=np.asarray(rec.controller),
            seed=np.asarray(rec.seed),
        )
    os.replace(tmp, path)


def load_records(path: Path, spec: ScenarioSpec) -> EpisodeRecords:
    """The records stored by ``save_records`` at ``path``, for the scenario ``spec``."""
    with np.load(path) as z:
        rec = EpisodeRecords(spec=spec, controller=str(z["controller"]), seed=int(z["seed"]))
        for t, flows, ues, r in zip(z["times"], z["flows"], z["ues"], z["rewards"], strict=True):
            rec.append(float(t), flows, ues, float(r))
    return rec


#: The Python side of a driven (policy) row's ns-3 run: a change here misses its cached runs.
DRIVER_SOURCES: tuple[str, ...] = (
    "baselines/*.py",
    "cellgym/reward.py",
    "envs/contract.py",
    "envs/lte_cell.py",
    "evaluation/experiments/calibration_drivers.py",
)


@functools.cache
def driver_digest() -> str:
    """SHA-256 over ``DRIVER_SOURCES``' contents (paths and bytes), once per process."""
    h = hashlib.sha256()
    for rel in input_files(DRIVER_SOURCES, REPO_ROOT):
        h.update(rel.encode() + b"\0" + (REPO_ROOT / rel).read_bytes() + b"\0")
    return h.hexdigest()


def controller_key(spec: ScenarioSpec, driver: Driver | None) -> str:
    """What runs the row in the cache key: flow 0's sender, or the driver and its code's digest."""
    if driver is None:
        return spec.flows[0].cca
    return f"driver:{driver.name}:{driver.action_mode}:{driver_digest()[:16]}"


def run_ns3(
    spec: ScenarioSpec, seed: int, cache: Path | None = None, driver: Driver | None = None
) -> tuple[EpisodeRecords, bool]:
    """Run ``spec`` on ns-3 (natively, or its agent flow by ``driver``), or load it from ``cache``.

    Returns the records and whether they came from the cache.
    """
    from evaluation.rollouts import run_native

    cca = spec.flows[0].cca
    path = None
    if cache is not None:
        key = ns3_cache_key(spec, seed, controller_key(spec, driver), program_digest())
        path = Path(cache) / f"{spec.name}-s{seed}-{key}.npz"
        if path.is_file():
            try:
                return load_records(path, spec), True
            except (OSError, ValueError, KeyError) as exc:  # a damaged entry: run again
                log.warning("ns-3 cache entry %s unreadable (%s): running ns-3", path, exc)
    if driver is None:
        rec = run_native(spec, cca, seed, backend="ns3", timeout_s=300)
    else:
        rec = drive(spec, driver, seed, "ns3", timeout_s=300)
    if path is not None:
        save_records(rec, path)
    return rec, False


def run_fast(
    spec: ScenarioSpec,
    seed: int,
    knobs: Mapping[str, Any] | None = None,
) -> EpisodeRecords:
    """Run ``spec`` natively on the fast backend with ``seed``.

    ``knobs`` override ``FastSimParams`` fields (e.g. ``{"recovery": "classic"}``; none: the
    model's defaults). The run takes the seed's draws (``cellgym.draws``: flow start offsets,
    random moves, workload arrivals), the same that ns-3's run of the seed reads.
    """
    from cellgym.seeding import rng_run_for_seed
    from envs.fastsim.params import FastSimParams
    from envs.fastsim.session import FastSession

    rec = EpisodeRecords(spec=spec, controller=spec.flows[0].cca, seed=seed)
    params = FastSimParams.from_spec(spec, **dict(knobs or {}))
    session = FastSession(spec, rng_run_for_seed(seed), params)
    raw = session.start()
    rec.append(raw.t, raw.flows, raw.ues)
    while not raw.done:
        raw = session.step(np.zeros((0, 2)))
        rec.append(raw.t, raw.flows, raw.ues)
    session.close()
    return rec


def _run(job: Job) -> tuple[Job, dict[str, dict[str, Any]], dict[str, float]]:
    t0 = time.perf_counter()
    driver = DRIVERS.get(job.scenario)
    taken = job.ns3_given is not None
    if job.ns3_given is not None:
        ns3_row, cached = job.ns3_given, False
    else:
        ns3_row, cached = _ns3_metrics(job, driver)
    t1 = time.perf_counter()
    if driver is None:
        fast = run_fast(job.spec, job.seed, job.fast_knobs)
    else:
        fast = drive(job.spec, driver, job.seed, "fast", job.fast_knobs)
    t2 = time.perf_counter()
    return (
        job,
        {"ns3": ns3_row, "fast": run_metrics(fast)},
        {"ns3": t1 - t0, "fast": t2 - t1, "ns3_cached": float(cached), "ns3_taken": float(taken)},
    )


def _ns3_metrics(job: Job, driver: Driver | None) -> tuple[dict[str, Any], bool]:
    """The job's ns-3 run (from the cache, or run, with one retry): its metrics, and cached."""
    try:
        ns3, cached = run_ns3(job.spec, job.seed, job.ns3_cache, driver)
    except Exception as exc:  # noqa: BLE001 - one retry for a simulator that died or hung
        log.warning("%s seed %d: ns-3 run failed (%s); retrying once", job.scenario, job.seed, exc)
        ns3, cached = run_ns3(job.spec, job.seed, job.ns3_cache, driver)
    return run_metrics(ns3), cached


Result = tuple[Job, dict[str, dict[str, Any]], dict[str, float]]


def run_jobs(jobs: Sequence[Job], n_jobs: int = 1) -> list[Result]:
    """Run ``jobs`` (each on both backends) on ``n_jobs`` worker processes."""
    if n_jobs < 1:
        raise SpecError(f"jobs={n_jobs!r}: allowed [1, inf)")
    out: list[Result] = []

    def done(res: Result) -> None:
        out.append(res)
        log.info(
            "%s seed %d: ns3 %.0f s%s, fast %.2f s",
            res[0].scenario, res[0].seed, res[2]["ns3"],
            " (cached)" if res[2].get("ns3_cached") else "", res[2]["fast"],
        )  # fmt: skip

    map_jobs(
        _run, jobs, n_jobs, name=lambda j: f"{j.scenario} seed {j.seed}",
        on_result=lambda _j, res: done(res),
    )  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Command line entry point; returns the table's rows."""
    from envs.fastsim.params import RECOVERY_MODELS, FastSimParams

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="8 s per run, one seed")
    ap.add_argument("--seeds", type=int, default=9, help="seeds per scenario and backend")
    ap.add_argument("--sim-time-s", type=float, default=20.0, help="simulated seconds per run")
    ap.add_argument("--jobs", type=int, default=1, help="parallel ns-3 runs")
    ap.add_argument(
        "--scenarios", default="all",
        help="comma list of scenario names, or all (the LTE table), nr (the NR rows) or traces "
        "(rows replaying a shared trace)",
    )  # fmt: skip
    ap.add_argument("--out", type=Path, default=REPO_ROOT / "docs" / "calibration")
    ap.add_argument(
        "--ns3-cache", type=Path, default=NS3_CACHE_DIR,
        help="directory of cached ns-3 runs (keyed by scenario, seed and program digest)",
    )  # fmt: skip
    ap.add_argument("--no-ns3-cache", action="store_true", help="always run ns-3, store nothing")
    ap.add_argument(
        "--no-take-over", action="store_true",
        help="run every ns-3 run, none taken over from the table already in --out "
        "(calibration_takeover)",
    )  # fmt: skip
    ap.add_argument(
        "--fast-recovery", choices=RECOVERY_MODELS, default=FastSimParams.recovery,
        help="FastSimParams.recovery of the fast runs (see docs/calibration/README.md)",
    )  # fmt: skip
    ap.add_argument(
        "--fast-param", action="append", default=[], metavar="KNOB=VALUE",
        help="override a FastSimParams knob of the fast runs (repeatable), e.g. ul_period_ms=1",
    )  # fmt: skip
    argv = list(argv if argv is not None else [])
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    prov = record(COMMAND, argv, INPUTS, REPO_ROOT)
    if args.seeds < 1:
        ap.error(f"--seeds={args.seeds}: allowed [1, inf)")
    if args.jobs < 1:
        ap.error(f"--jobs={args.jobs}: allowed [1, inf)")
    seeds = [1] if args.quick else list(range(1, args.seeds + 1))
    sim_time_s = 8.0 if args.quick else args.sim_time_s
    groups = {"all": SCENARIOS, "nr": NR_SCENARIOS, "traces": TRACE_SCENARIOS}
    names = list(groups.get(args.scenarios, args.scenarios.split(",")))
    try:
        specs = {n: scenario(n, sim_time_s) for n in names}
    except ValueError as exc:
        ap.error(str(exc))
    cache = None if args.no_ns3_cache else args.ns3_cache
    try:
        knobs = {"recovery": args.fast_recovery, **parse_fast_params(args.fast_param)}
        FastSimParams.from_spec(specs[names[0]], **knobs)  # fails now, naming the knob
    except (ValueError, TypeError) as exc:
        ap.error(str(exc))
    digests = {n: scenario_digest(specs[n]) for n in names}
    given, account = {}, {"taken_over": 0, "why_none": "--no-take-over"}
    if not args.no_take_over:
        given, account = take_over(
            args.out, COMMAND, argv, digests, sim_time_s, WARMUP_S, seeds, args.jobs
        )
    jobs = [
        Job(n, s, specs[n], ns3_cache=cache, fast_knobs=knobs, ns3_given=given.get((n, s)))
        for n in names
        for s in seeds
    ]
    t0 = time.perf_counter()
    results = run_jobs(jobs, args.jobs)
    results.sort(key=lambda r: (names.index(r[0].scenario), r[0].seed))
    rows = compare(results)
    for row in rows:
        row["scenario_digest"] = digests[row["scenario"]]
    meta = {
        "args": " ".join(argv) or "(defaults)",
        "sim_time_s": sim_time_s,
        "seeds": seeds,
        "warmup_s": WARMUP_S,
        "fast_recovery": args.fast_recovery,
        "fast_knobs": knobs,
        "ns3_wall_s": sum(w["ns3"] for _, _, w in results),
        "ns3_cached_runs": int(sum(w.get("ns3_cached", 0.0) for _, _, w in results)),
        "ns3_taken_over": {**account, "taken_over": int(sum(w["ns3_taken"] for *_, w in results))},
        "runs": len(results),
        "fast_wall_s": sum(w["fast"] for _, _, w in results),
        "total_wall_s": time.perf_counter() - t0,
        "provenance": prov,
    }
    runs = [
        {"scenario": j.scenario, "backend": b, "seed": j.seed, "wall_s": w[b], **m[b]}
        for j, m, w in results
        for b in BACKENDS
    ]
    write(rows, runs, meta, args.out)
    if meta["ns3_taken_over"]["taken_over"]:
        _say_taken_over(args.out / "calibration.md", meta["ns3_taken_over"], len(results))
    print(markdown(rows, meta))
    return rows


def _say_taken_over(md: Path, account: Mapping[str, Any], runs: int) -> None:
    """Add to the table's page how many ns-3 runs came from the table it replaced."""
    text = md.read_text().rstrip("\n")
    md.write_text(
        f"{text}\n\nns-3 runs taken over from the table of commit "
        f"`{str(account.get('from_commit'))[:12]}`: {account['taken_over']} of {runs} (the rows "
        "whose ns-3 probe records what it recorded then; "
        "`evaluation.experiments.calibration_takeover`).\n"
    )


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
