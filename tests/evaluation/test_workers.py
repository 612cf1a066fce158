"""The one process pool (``evaluation.workers``): its guarantees, each with a test.

Order of results, a failing job named in the caller, ``jobs=1`` in the calling process, the
study's own initializer, one start method; and no process left behind when the caller (a script
of ``map_jobs``, or a study's entry point) is killed by SIGTERM or SIGKILL.
"""

from __future__ import annotations

import os
import signal
import sys

import pytest

from evaluation import workers
from evaluation.workers import JobFailed, map_jobs
from tests.evaluation import pool_jobs
from tests.evaluation.orphans import kill_and_check

psutil = pytest.importorskip("psutil")


def test_results_come_in_submission_order_from_workers_with_their_initializer():
    # The first items finish last: the results still come in the items' order.
    seen = []
    out = map_jobs(pool_jobs.late_first, range(4), 2, on_result=lambda item, res: seen.append(item))
    assert [item for item, _ in out] == [0, 1, 2, 3]
    assert sorted(seen) == [0, 1, 2, 3]
    pids = {pid for _, pid in out}
    assert os.getpid() not in pids and len(pids) <= 2
    flags = map_jobs(pool_jobs.read_flag, range(2), 2, initializer=pool_jobs.set_flag,
                     initargs=("set",))  # fmt: skip
    assert flags == ["set", "set"]
    assert pool_jobs.FLAG not in os.environ  # the initializer ran in the workers only


def test_one_job_at_a_time_runs_here_unless_the_study_wants_a_worker():
    assert map_jobs(pool_jobs.late_first, [3], 1) == [(3, os.getpid())]
    ((_, pid),) = map_jobs(pool_jobs.late_first, [3], 1, in_process=False)
    assert pid != os.getpid()


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_job_raises_in_the_caller_naming_the_job(jobs):
    with pytest.raises(JobFailed, match="job two failed: ValueError: two is refused") as info:
        map_jobs(
            pool_jobs.fail_on_two, range(4), jobs, name=["zero", "one", "two", "three"].__getitem__
        )
    assert info.value.job == "two"
    assert isinstance(info.value.__cause__, ValueError)


def test_a_dead_worker_raises_in_the_caller():
    with pytest.raises(JobFailed, match="worker process died"):
        map_jobs(pool_jobs.die_on_one, range(3), 2)


def test_jobs_below_one_are_refused():
    from cellgym.vocab import SpecError

    with pytest.raises(SpecError, match="jobs=0"):
        map_jobs(pool_jobs.fail_on_two, [1], 0)


def test_the_start_method_is_chosen_in_one_place():
    import multiprocessing as mp

    want = "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"
    assert workers.pool_context().get_start_method() == want


def _workers(root: psutil.Process) -> list[psutil.Process]:
    """The pool's workers: the fork server's children (``spawn``: the caller's, but the tracker)."""
    for child in root.children():
        if "forkserver" in " ".join(child.cmdline()):
            return child.children()
    return [c for c in root.children() if "resource_tracker" not in " ".join(c.cmdline())]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_killing_a_caller_of_map_jobs_leaves_no_process_behind(tmp_path, sig, request):
    # Each of the two workers leaves a file in ``ready`` once its job runs.
    ready = tmp_path / "ready"
    ready.mkdir()
    cmd = [sys.executable, "-m", "tests.evaluation.pool_jobs"]
    env = {"CELLGYM_TEST_READY": str(ready)}
    kill_and_check(cmd, sig, lambda root: len(list(ready.iterdir())) >= 2, request, env, False)


def _two_simulating_workers(root: psutil.Process) -> bool:
    """Both workers run their ns-3 simulator."""
    try:
        return sum(1 for w in _workers(root) if w.children()) >= 2
    except psutil.NoSuchProcess:
        return False


@pytest.mark.ns3
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_killing_a_study_leaves_no_process_behind(tmp_path, sig, request):
    # The calibration's entry point, two uncached ns-3 runs at a time: its workers, their ns-3
    # simulators, the fork server and the resource tracker all end with it.
    cmd = [
        sys.executable, "-m", "evaluation.experiments.calibrate",
        "--scenarios", "static_cubic", "--seeds", "2", "--sim-time-s", "300",
        "--jobs", "2", "--no-ns3-cache", "--out", str(tmp_path / "calibration"),
    ]  # fmt: skip
    kill_and_check(cmd, sig, _two_simulating_workers, request)


@pytest.mark.parametrize("method", ["forkserver", "spawn", "fork"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_pool_made_elsewhere_leaves_no_process_behind(tmp_path, method, sig, request):
    # A study's own pool (tests/test_architecture.py's STUDY_POOLS): cellgym.processes makes its
    # workers die with their parent and end when the caller does (the fork server, whose workers
    # they are, can outlive a killed caller). Before, all three start methods left both workers.
    ready = tmp_path / "ready"
    ready.mkdir()
    cmd = [sys.executable, "-m", "tests.evaluation.own_pool", method]
    env = {"CELLGYM_TEST_READY": str(ready)}
    kill_and_check(cmd, sig, lambda root: len(list(ready.iterdir())) >= 2, request, env, False)
