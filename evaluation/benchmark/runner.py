"""Run what the cache lacks, in parallel, and assemble the runs of a suite into one table.

``plan`` turns (suite, split, backend, entrants) into one ``BenchJob`` per controller, task and
seed with its cache key (``evaluation.benchmark.cache``); ``preflight`` checks, before any run,
that the backend runs each task a job lacks (its trace files read); ``run_missing`` runs the
jobs without a cached record, ``jobs`` at a time in ``evaluation.pool``'s worker processes
(forkserver, tied to the caller's life), with a tqdm progress bar, writing each record as it
finishes; ``runs_frame`` reads every job's record back into the table that
``evaluation.benchmark.scores`` scores. Each run goes through ``evaluate.py``'s loop
(``evaluation.pool.run_job``: ``run_native`` for a native sender, ``run_policy`` for a policy, a
user's class built by ``evaluation.user_policies``).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from cellgym.scenario import ScenarioSpec
from cellgym.vocab import SpecError
from evaluation.benchmark.cache import RunCache, code_digest, run_key
from evaluation.benchmark.entrants import Entrant
from evaluation.benchmark.metrics import RUN_COLUMNS, reward_spec, run_row
from evaluation.benchmark.scores import optimum_row
from evaluation.benchmark.suite import Suite
from evaluation.records import EvalJob

log = logging.getLogger(__name__)

#: Columns of the runs table, before the metrics.
KEY_COLUMNS: tuple[str, ...] = (
    "controller",
    "kind",
    "task",
    "group",
    "cell",
    "channel",
    "seed",
    "backend",
    "status",
    "error",
    "wall_s",
)
#: Longest wait for one simulator step, in seconds.
STEP_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class BenchJob:
    """One run of a score (picklable: it travels to a worker process).

    Attributes:
        entrant: The controller.
        suite: The suite's name (for the record).
        split: ``test`` or ``train``.
        task: The task's name.
        seed: The seed.
        scenario: The task's scenario for this seed (its trace window applied).
        backend: ``ns3`` or ``fast``.
        from_s: Measure only steps ending after this time.
        delay_budget_ms: The budget of ``hol_budget_compliance``.
        competitor: The task's competitor flow.
        code: The code digest of the backend (``evaluation.benchmark.cache.code_digest``).
        key: The cache key.
    """

    entrant: Entrant
    suite: str
    split: str
    task: str
    seed: int
    scenario: ScenarioSpec
    backend: str
    from_s: float
    delay_budget_ms: float
    competitor: int | None
    code: str
    key: str

    @property
    def cost(self) -> float:
        """A rough relative cost, to start the longest runs first (NR cells cost more)."""
        return self.scenario.sim_time_s * (2.5 if self.scenario.cell.type == "nr" else 1.0)


def plan(suite: Suite, split: str, backend: str, entrants: Sequence[Entrant]) -> list[BenchJob]:
    """Every run of ``split`` on ``backend`` for each entrant that runs (not the optimum)."""
    code = code_digest(backend)
    measure = {"from_s": suite.from_s, "delay_budget_ms": suite.delay_budget_ms}
    return [
        BenchJob(
            e,
            suite.name,
            split,
            task.name,
            seed,
            spec,
            backend,
            suite.from_s,
            suite.delay_budget_ms,
            task.competitor,
            code,
            run_key(e.identity, spec, seed, backend, code, measure),
        )
        for e in entrants
        if not e.computed
        for task, seed, spec in suite.runs(split)
    ]


def eval_job(job: Any, from_s: float = 0.0) -> EvalJob:
    """The evaluation job of a benchmark run (a ``BenchJob`` or the dataset's ``DatasetJob``)."""
    assert job.entrant.spec is not None
    return EvalJob(
        job.entrant.spec,
        job.scenario,
        job.seed,
        reward_spec(job.delay_budget_ms),
        job.backend,
        STEP_TIMEOUT_S,
        from_s=from_s,
    )


def execute(job: BenchJob) -> dict[str, Any]:
    """Run one job in this process; its record (``status`` ``failed`` with the error, no raise)."""
    from evaluation.pool import run_job
    from evaluation.user_policies import make_user_policy

    t0 = time.monotonic()
    ejob = eval_job(job, from_s=job.from_s)
    try:
        user = ejob.controller.kind == "policy"
        policy = make_user_policy(ejob.controller, ejob) if user else None
        rec = run_job(ejob, policy)
        wall = time.monotonic() - t0
        metrics, status, error = run_row(rec, ejob, job.competitor, wall), "ok", ""
    except Exception as exc:  # isolate the failure to this run
        log.debug("run failed", exc_info=True)
        wall = time.monotonic() - t0
        metrics, status, error = {}, "failed", f"{type(exc).__name__}: {exc}"
    return {
        "meta": {
            "suite": job.suite,
            "split": job.split,
            "task": job.task,
            "seed": job.seed,
            "backend": job.backend,
            "controller": job.entrant.label,
            "text": job.entrant.text,
            "kind": job.entrant.kind,
            "identity": job.entrant.identity,
            "code": job.code,
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        },
        "status": status,
        "error": error,
        "wall_s": wall,
        "metrics": metrics,
    }


def missing(jobs: Sequence[BenchJob], cache: RunCache) -> list[BenchJob]:
    """The jobs without a cached record, the longest first."""
    todo = [j for j in jobs if cache.get(j.backend, j.key) is None]
    return sorted(todo, key=lambda j: -j.cost)


def preflight(
    suite: Suite, split: str, backend: str, jobs: Sequence[Any], cache: RunCache | None
) -> None:
    """Check that ``backend`` runs each task with a missing run (trace files read), or raise.

    Without a ``cache``, every job's task is checked (``jobs``: ``BenchJob``s or the dataset's).

    Raises:
        SpecError: Naming the task and why the backend cannot run it.
    """
    from envs.session import check_backend_supports

    seen = set()
    for job in jobs if cache is None else missing(jobs, cache):
        if job.task in seen:
            continue
        seen.add(job.task)
        try:
            check_backend_supports(job.scenario, backend)
        except SpecError as exc:
            raise SpecError(f"task {job.task} does not run on backend={backend!r}: {exc}") from None


def run_missing(
    jobs: Sequence[BenchJob],
    cache: RunCache,
    workers: int = 1,
    progress: bool = True,
) -> dict[str, dict[str, Any]]:
    """Run the jobs the cache lacks; each finished ok run is written there at once.

    Returns:
        The records of the runs made now, by key (failed ones included, not cached).
    """
    from tqdm import tqdm

    todo = missing(jobs, cache)
    done: dict[str, dict[str, Any]] = {}
    if not todo:
        return done
    bar = tqdm(total=len(todo), unit="run", desc=f"{todo[0].backend}", disable=not progress or None)

    def finish(job: BenchJob, record: dict[str, Any]) -> None:
        done[job.key] = record
        where = f"{job.entrant.label} / {job.task} / seed {job.seed}"
        if record["status"] == "ok":
            cache.put(job.backend, job.key, record)
        else:
            log.warning("%s failed: %s", where, record["error"])
        bar.set_postfix_str(where, refresh=False)
        bar.update()

    try:
        if workers <= 1:
            for job in todo:
                finish(job, execute(job))
        else:
            from evaluation.pool import _warm_up

            if todo[0].backend == "fast":
                _warm_up("fast", todo[0].scenario)
            lost = _pool(todo, min(workers, len(todo)), finish)
            for job in lost:  # a worker died: each of its jobs again, alone
                _pool([job], 1, finish, last_try=True)
    finally:
        bar.close()
    return done


def _pool(
    jobs: Sequence[BenchJob],
    workers: int,
    finish: Callable[[BenchJob, dict[str, Any]], None],
    last_try: bool = False,
) -> list[BenchJob]:
    """``evaluation.pool``'s worker processes over ``jobs``; the jobs lost to a dead worker.

    Ctrl-C or SIGTERM terminates the workers (and their simulators) before it propagates; the
    records already written stay, so the next call resumes.
    """
    from evaluation.pool import pool_map

    return pool_map(
        list(jobs), lambda ex, job: ex.submit(execute, job), finish, _failed, workers, last_try
    )


def _failed(job: BenchJob, error: str) -> dict[str, Any]:
    return {"meta": {}, "status": "failed", "error": error, "wall_s": math.nan, "metrics": {}}


def runs_frame(
    suite: Suite,
    split: str,
    backend: str,
    entrants: Sequence[Entrant],
    cache: RunCache,
    fresh: dict[str, dict[str, Any]] | None = None,
) -> pd.DataFrame:
    """One row per entrant, task and seed of ``split``: the cached (or ``fresh``) records.

    A run with neither is ``status == "missing"``; the optimum's rows are computed
    (``optimum_row``), with NaN for the metrics it does not define.
    """
    fresh = fresh or {}
    jobs = {(j.entrant.label, j.task, j.seed): j for j in plan(suite, split, backend, entrants)}
    tasks = {t.name: t for t in suite.tasks}
    rows = []
    for e in entrants:
        for task, seed, _ in suite.runs(split):
            t = tasks[task.name]
            row: dict[str, Any] = {
                "controller": e.label,
                "kind": e.kind,
                "task": t.name,
                "group": t.group,
                "cell": t.cell,
                "channel": t.channel,
                "seed": int(seed),
                "backend": backend,
            }
            metrics: dict[str, Any] = {}
            if e.computed:
                row.update(status="ok", error="", wall_s=0.0)
                metrics = optimum_row()
            else:
                job = jobs[(e.label, t.name, seed)]
                rec = fresh.get(job.key) or cache.get(backend, job.key)
                if rec is None:
                    row.update(status="missing", error="not run", wall_s=math.nan)
                else:
                    row.update(status=rec["status"], error=rec["error"], wall_s=rec["wall_s"])
                    metrics = rec.get("metrics") or {}
            row.update({c: _float(metrics.get(c)) for c in RUN_COLUMNS})
            rows.append(row)
    frame = pd.DataFrame(rows, columns=[*KEY_COLUMNS, *RUN_COLUMNS])
    frame["seed"] = frame["seed"].astype("int64")
    return frame


def _float(x: Any) -> float:
    return math.nan if x is None else float(x)
