"""Many controllers x scenarios x seeds, several simulations at a time, into tidy tables.

``evaluate_many`` checks every argument before any simulation (controllers through the registry
``cellgym.controllers`` and ``evaluation.resolve``, scenarios through ``cellgym.scenario``), runs
each job as its own simulation (``evaluation.rollouts``), and returns the tables of
``evaluation.records`` for ``evaluation.report``::

    from evaluation import evaluate_many, write_report

    results, flows, ts = evaluate_many(
        ["xrc_policy", "cubic", "ppo:runs/<dir>"], ["vs_cubic"], [1, 2, 3], backend="fast", jobs=2
    )
    write_report(results, "out/", flows=flows, timeseries=ts)
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from cellgym.metrics import EpisodeRecords
from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec, load_scenario
from cellgym.vocab import BACKENDS, SpecError, check_choice
from envs.fast_params import check_fast_params, fast_sim_params
from evaluation.records import (
    FLOW_COLUMNS,
    RESULT_COLUMNS,
    TIMESERIES_COLUMNS,
    EvalJob,
    failed_row,
    records_to_rows,
)
from evaluation.resolve import (
    ControllerSpec,
    Predictor,
    load_checkpoint_policy,
    resolve_controller,
    unique_labels,
)
from evaluation.rollouts import make_baseline, run_native, run_policy
from evaluation.workers import worker_pool

log = logging.getLogger(__name__)

_POLICY_CACHE: dict[tuple[ControllerSpec, bool], Predictor] = {}

#: Builds the policy of a ``policy``-kind job where it runs: ``make_policy(spec, job)``.
PolicyMaker = Callable[[ControllerSpec, EvalJob], Predictor]


def job_action_settings(job: EvalJob) -> tuple[str, float]:
    """``(action_mode, max_change)`` of a policy job: the controller's own, else the job's."""
    c = job.controller
    mode = c.action_mode if c.action_mode is not None else job.action_mode
    change = c.max_change if c.max_change is not None else job.max_change
    return mode, float(change)


def job_policy(
    job: EvalJob, policy: Predictor | None = None, make_policy: PolicyMaker | None = None
) -> Predictor:
    """The policy of a ``baseline``, ``trained`` or ``policy``-kind job (see ``run_job``)."""
    c = job.controller
    if c.kind == "baseline":
        action_mode, max_change = job_action_settings(job)
        return make_baseline(c.name, job.scenario, job.reward, max_change, action_mode)
    if c.kind == "trained":
        cache_key = (c, job.deterministic)
        if cache_key not in _POLICY_CACHE:
            _POLICY_CACHE[cache_key] = load_checkpoint_policy(c)
        return _POLICY_CACHE[cache_key]
    if policy is None and make_policy is not None:
        return make_policy(c, job)
    if policy is None:
        raise SpecError(f"controller {c.label!r}: a policy object is needed to run it")
    return policy


def run_job(
    job: EvalJob, policy: Predictor | None = None, make_policy: PolicyMaker | None = None
) -> EpisodeRecords:
    """Run one job and return its records (``run_native`` or ``run_policy``, as in training).

    Args:
        job: The job.
        policy: The policy of a ``policy``-kind controller (in-process only).
        make_policy: Builds the policy of a ``policy``-kind controller when ``policy`` is not
            given (e.g. ``evaluation.user_policies.make_user_policy``, a user's class).
    """
    c = job.controller
    spec = job.scenario
    if c.kind == "native":
        return run_native(
            spec, c.name, job.seed, job.backend, job.timeout_s, fast_params=job.fast_params
        )
    action_mode, max_change = job_action_settings(job)
    policy = job_policy(job, policy, make_policy)
    env_kwargs = {
        "timeout_s": job.timeout_s,
        "max_change": max_change,
        "action_mode": action_mode,
        "fast_params": job.fast_params,
    }
    return run_policy(
        spec,
        policy,
        job.seed,
        c.label,
        job.reward,
        job.backend,
        env_kwargs,
        deterministic=job.deterministic,
    )


@dataclass
class JobOutcome:
    """What a job sends back: its rows, or its error."""

    job: EvalJob
    row: dict[str, Any]
    flows: list[dict[str, Any]] = field(default_factory=list)
    timeseries: pd.DataFrame | None = None


def execute_job(
    job: EvalJob, policy: Predictor | None = None, make_policy: PolicyMaker | None = None
) -> JobOutcome:
    """Run a job and summarise it; an exception becomes a ``failed`` row (never raised)."""
    t0 = time.monotonic()
    try:
        rec = run_job(job, policy, make_policy)
        row, flows, ts = records_to_rows(rec, job, time.monotonic() - t0)
        return JobOutcome(job, row, flows, ts)
    except Exception as exc:  # isolate the failure to this job
        log.debug("job failed", exc_info=True)
        return JobOutcome(job, failed_row(job, exc, time.monotonic() - t0))


def _single_threaded() -> None:
    """The evaluation workers' own setup: one thread each (the jobs are the parallelism)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    logging.basicConfig(level=logging.WARNING)


class Evaluation(NamedTuple):
    """The tidy outputs of ``evaluate_many`` (unpacks as ``results, flows, timeseries``).

    Attributes:
        results: One row per (controller, scenario, seed); ``RESULT_COLUMNS``. Failed jobs have
            ``status == "failed"``, their ``error``, and NaN metrics.
        flows: One row per flow of each successful run; ``FLOW_COLUMNS``.
        timeseries: One row per step and flow of each successful run; ``TIMESERIES_COLUMNS``
            (empty when ``keep_timeseries=False``).
    """

    results: pd.DataFrame
    flows: pd.DataFrame
    timeseries: pd.DataFrame


def evaluate_many(
    controllers: Sequence[str | ControllerSpec],
    scenarios: Sequence[str | ScenarioSpec | Mapping[str, Any]],
    seeds: Sequence[int],
    reward: RewardSpec | Mapping[str, Any] | None = None,
    backend: str = "ns3",
    jobs: int = 1,
    policies: Mapping[str, Predictor | str | Path] | None = None,
    timeout_s: float = 60.0,
    max_change: float = 2.0,
    action_mode: str = "cwnd",
    deterministic: bool = True,
    from_s: float = 0.0,
    sim_time_s: float | None = None,
    keep_timeseries: bool = True,
    on_done: Callable[[JobOutcome, int, int], None] | None = None,
    make_policy: PolicyMaker | None = None,
    fast_params: Mapping[str, Any] | None = None,
) -> Evaluation:
    """Run every controller x scenario x seed, ``jobs`` simulations at a time; tidy tables back.

    Every job is its own simulation. Policies (baselines and trained checkpoints alike) run through
    ``run_policy``, the environment loop of training; native controllers through ``run_native``.
    Trained checkpoints travel to the workers as paths and are loaded there (once per worker);
    policy objects in ``policies`` run in this process; other ``policy``-kind controllers (a
    user's class, ``evaluation.user_policies``) are built by ``make_policy`` in the workers. A
    job that raises is recorded as a ``failed`` row with its error; the others complete. A job
    whose worker process dies is run again in a process of its own, and recorded as failed if
    that dies too.

    With ``jobs > 1`` the workers are started with ``forkserver`` (``spawn`` where missing), so a
    script calling this needs the usual ``if __name__ == "__main__":`` guard.

    Args:
        controllers: Names (``resolve_controller``: registry names, run directories, model paths,
            ``<algo>:<path>``, keys of ``policies``) or specs.
        scenarios: Scenario config names (``cellgym.scenario.load_scenario``), mappings or specs.
        seeds: Seeds; the same for every controller and scenario.
        reward: Reward weights and budget (default ``RewardSpec()``); the budget also sets
            ``hol_budget_compliance``.
        backend: ``ns3`` or ``fast``.
        jobs: Simulations at a time (worker processes when > 1).
        policies: Extra controllers by label: a policy object (SB3 ``predict``), run in this
            process, or a checkpoint path, loaded in the workers. Labels also go in
            ``controllers``; those missing there are appended.
        timeout_s: Longest wait for one simulator step.
        max_change: The environment's largest per-step change factor (baselines; checkpoints
            use the value they were trained with when their config says it).
        action_mode: ``cwnd`` or ``rate`` (as ``max_change``).
        deterministic: Trained policies act with their mean action.
        from_s: Measure only steps ending after this time (a warm-up).
        sim_time_s: When set, overrides every scenario's ``sim_time_s``.
        keep_timeseries: Return the per-step table (needed for CDF and time-series plots).
        on_done: Called as ``on_done(outcome, k, n)`` after each job (progress).
        make_policy: Builds a ``policy``-kind controller's policy where its job runs, as
            ``make_policy(spec, job)``; picklable (a module-level function). With
            ``evaluation.user_policies``, a user's class runs in the pool like a baseline::

                from evaluation.user_policies import make_user_policy, resolve_user_policy

                evaluate_many([resolve_user_policy("my_policies.py:Hold"), "cubic"], ...,
                              jobs=2, make_policy=make_user_policy)

        fast_params: ``FastSimParams`` fields to override in every fast-backend job, e.g.
            ``{"uplink": "bsr"}`` (``envs.fast_params``); the ns-3 backend refuses it.

    Raises:
        SpecError: Before any simulation, for an unknown controller, scenario or backend, a
            controller the backend cannot run, an empty list or ``jobs < 1``, a ``fast_params``
            field that is unknown, out of range or given with the ns-3 backend, naming the
            argument and the allowed values.
    """
    check_choice("backend", backend, BACKENDS)
    overrides = check_fast_params(fast_params, backend)
    if jobs < 1:
        raise SpecError(f"jobs={jobs!r} is out of range: allowed [1, inf)")
    for name, seq in (("controllers", controllers), ("scenarios", scenarios), ("seeds", seeds)):
        if not list(seq):
            raise SpecError(f"{name} is empty: give at least one")
    policies = dict(policies or {})
    given = {c.label if isinstance(c, ControllerSpec) else str(c).strip() for c in controllers}
    names = list(controllers) + [p for p in policies if p not in given]
    specs = [
        resolve_controller(c, f"controllers[{i}]", policies, backend) for i, c in enumerate(names)
    ]
    specs = unique_labels(specs)
    cells = [load_scenario(s) for s in scenarios]
    if sim_time_s is not None:
        cells = [s.replace(sim_time_s=float(sim_time_s)) for s in cells]
    for s in cells:
        if not s.agent_flows:
            raise SpecError(f"scenario {s.name!r} has no agent flow for the controllers to drive")
        if overrides:  # the model's own cross-field checks, per scenario, before any run
            fast_sim_params(s, overrides)
    rew = RewardSpec.from_config(reward)
    all_jobs = [
        EvalJob(
            c,
            s,
            int(seed),
            rew,
            backend,
            timeout_s,
            max_change,
            action_mode,
            deterministic,
            from_s,
            overrides,
        )
        for c in specs
        for s in cells
        for seed in seeds
    ]
    objects = {label for label, p in policies.items() if not isinstance(p, str | Path)}

    def in_process(job: EvalJob) -> bool:  # a policy object, or nothing that could build one
        c = job.controller
        return c.kind == "policy" and (c.label in objects or make_policy is None)

    local = [i for i, j in enumerate(all_jobs) if jobs == 1 or in_process(j)]
    remote = [i for i in range(len(all_jobs)) if i not in set(local)]
    outcomes: dict[int, JobOutcome] = {}
    n = len(all_jobs)

    def finish(i: int, outcome: JobOutcome) -> None:
        outcomes[i] = outcome
        r = outcome.row
        where = f"[{len(outcomes)}/{n}] {r['controller']} / {r['scenario']} / seed {r['seed']}"
        if r["status"] == "ok":
            log.info("%s: ok in %.1f s", where, r["wall_s"])
        else:
            log.warning("%s failed: %s", where, r["error"])
        if on_done is not None:
            on_done(outcome, len(outcomes), n)

    def run_local() -> None:
        for i in local:
            job = all_jobs[i]
            finish(i, execute_job(job, policies.get(job.controller.label), make_policy))

    if remote:
        workers = max(1, min(jobs - (1 if local else 0), len(remote)))
        _warm_up(backend, cells[0])
        broken = _run_pool(all_jobs, remote, workers, finish, run_local, make_policy=make_policy)
        # A worker that died (segfault, out of memory) breaks the whole pool: run each job it took
        # down again in a pool of its own, so only a job that kills its process fails.
        for i in broken:
            _run_pool(all_jobs, [i], 1, finish, None, last_try=True, make_policy=make_policy)
    else:
        run_local()

    ordered = [outcomes[i] for i in range(n)]
    results = pd.DataFrame([o.row for o in ordered], columns=list(RESULT_COLUMNS))
    results["seed"] = results["seed"].astype("int64")
    flows = pd.DataFrame([r for o in ordered for r in o.flows], columns=list(FLOW_COLUMNS))
    frames = [o.timeseries for o in ordered if o.timeseries is not None and keep_timeseries]
    ts = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=list(TIMESERIES_COLUMNS))
    )
    return Evaluation(results, flows, ts)


#: Modules the fork server imports once, so that each worker starts warm.
_PRELOAD: tuple[str, ...] = ("evaluation.pool", "envs.lte_cell", "envs.session", "baselines")


def _warm_up(backend: str, scenario: ScenarioSpec) -> None:
    """Compile (or load) the fast simulator's kernels once here, before the workers need them.

    Numba caches the compiled kernels on disk: without this, each worker would compile them at
    the same time on a cold cache (about a minute of CPU each).
    """
    if backend != "fast":
        return
    t0 = time.monotonic()
    tiny = scenario.replace(sim_time_s=scenario.step_ms / 1000.0)
    try:
        run_native(tiny, "cubic", 0, backend)
    except Exception:  # the jobs will report it
        log.debug("warm-up of the fast backend failed", exc_info=True)
    log.debug("fast backend warm-up: %.1f s", time.monotonic() - t0)


def pool_map(
    items: Sequence[Any],
    submit: Callable[[Any, Any], Any],
    finish: Callable[[Any, Any], None],
    failed: Callable[[Any, str], Any],
    workers: int,
    last_try: bool = False,
    meanwhile: Callable[[], None] | None = None,
) -> list[Any]:
    """Run ``items`` in the evaluation loop's worker processes; return those lost to a dead worker.

    ``submit(executor, item)`` submits an item's job (a picklable function and its arguments) and
    returns its future; ``finish(item, result)`` takes each result as it completes;
    ``failed(item, message)`` makes the result of a job that raised, or (``last_try``) whose
    worker died. ``meanwhile`` runs in this process once every item is submitted.

    The pool is ``evaluation.workers.worker_pool`` (its start method and its guarantee that no
    worker outlives the caller), with each worker single-threaded and the fork server preloading
    ``_PRELOAD``.
    """
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    lost: list[Any] = []
    with worker_pool(workers, _single_threaded, preload=_PRELOAD) as pool:
        futures = {}
        for k, item in enumerate(items):
            try:
                futures[submit(pool, item)] = item
            except BrokenProcessPool:  # a worker died before every job was submitted
                lost.extend(items[k:])
                break
        if meanwhile is not None:
            meanwhile()
        for fut in as_completed(futures):
            item = futures[fut]
            try:
                result = fut.result()
            except BrokenProcessPool as exc:
                if not last_try:
                    lost.append(item)
                    continue
                result = failed(item, f"worker process died while running this job ({exc})")
            except Exception as exc:  # e.g. a result that cannot be sent back
                result = failed(item, f"{type(exc).__name__}: {exc}")
            finish(item, result)
    return lost


def _run_pool(
    all_jobs: list[EvalJob],
    indices: list[int],
    workers: int,
    finish: Callable[[int, JobOutcome], None],
    meanwhile: Callable[[], None] | None,
    last_try: bool = False,
    make_policy: PolicyMaker | None = None,
) -> list[int]:
    """Run ``all_jobs[indices]`` in the worker pool (``pool_map``); the jobs of a dead worker."""
    lost = pool_map(
        indices,
        lambda ex, i: ex.submit(execute_job, all_jobs[i], None, make_policy),
        finish,
        lambda i, error: JobOutcome(all_jobs[i], failed_row(all_jobs[i], error)),
        workers,
        last_try=last_try,
        meanwhile=meanwhile,
    )
    if lost:
        log.warning("a worker process died: running its %d job(s) again one by one", len(lost))
    return sorted(lost)
