"""The one process pool (``evaluation.workers``): its guarantees, each with a test.

Order of results, a failing job named in the caller, ``jobs=1`` in the calling process, the
study's own initializer, one start method; and no process left behind when the caller (a script
of ``map_jobs``, or a study's entry point) is killed by SIGTERM or SIGKILL.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from evaluation import workers
from evaluation.workers import JobFailed, map_jobs
from tests.evaluation import pool_jobs

psutil = pytest.importorskip("psutil")

REPO = Path(__file__).resolve().parents[2]


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


def _tree(root: psutil.Process) -> set[tuple[int, float]]:
    """(pid, start time) of every descendant of ``root`` (the start time guards against reuse)."""
    out = set()
    for p in root.children(recursive=True):
        try:
            out.add((p.pid, p.create_time()))
        except psutil.NoSuchProcess:
            pass
    return out


def _alive(procs: set[tuple[int, float]]) -> list[str]:
    alive = []
    for pid, started in procs:
        try:
            p = psutil.Process(pid)
            if p.create_time() == started and p.status() != psutil.STATUS_ZOMBIE:
                alive.append(f"{pid}: {' '.join(p.cmdline())[:120]}")
        except psutil.NoSuchProcess:
            pass
    return alive


def _workers(root: psutil.Process) -> list[psutil.Process]:
    """The pool's workers: the fork server's children (``spawn``: the caller's, but the tracker)."""
    for child in root.children():
        if "forkserver" in " ".join(child.cmdline()):
            return child.children()
    return [c for c in root.children() if "resource_tracker" not in " ".join(c.cmdline())]


def _kill_and_check(
    cmd: list[str],
    sig: int,
    ready: Callable[[psutil.Process], bool],
    request: pytest.FixtureRequest,
    env: dict[str, str] | None = None,
    temp_dir_gone: bool = True,
) -> None:
    """Start ``cmd``, send ``sig`` once ``ready(root)``; no process it started may be left.

    With ``temp_dir_gone``, nor may its ``multiprocessing`` folder: the workers remove it when
    the caller was killed, unless the fork server's exit (and with it their parent-death signal)
    comes first, which a fork server that imported little makes likely.
    """
    # The run's own short TMPDIR: multiprocessing's pymp-* folder (and the fork server's socket,
    # whose path must fit AF_UNIX's 108 bytes) goes there, and must be gone after.
    tmp = Path(tempfile.mkdtemp(prefix="cgw-"))
    request.addfinalizer(lambda: shutil.rmtree(tmp, ignore_errors=True))
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, **(env or {}), "TMPDIR": str(tmp), "PYTHONPATH": str(REPO)},
    )
    root = psutil.Process(proc.pid)
    seen: set[tuple[int, float]] = set()
    try:
        deadline = time.monotonic() + 300  # a loaded machine starts workers slowly
        while not ready(root):
            assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
            assert time.monotonic() < deadline, "the pool's workers never got busy"
            seen |= _tree(root)
            time.sleep(0.1)
        seen |= _tree(root)
        os.kill(proc.pid, sig)
        rc = proc.wait(timeout=30)
        assert rc in (-sig, 128 + sig), proc.stderr.read().decode()[-3000:]
        deadline = time.monotonic() + 10
        while _alive(seen) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(seen), f"outlived the caller ({signal.Signals(sig).name}): {_alive(seen)}"
        left = sorted(p.name for p in tmp.glob("pymp-*")) if temp_dir_gone else []
        assert not left, f"left in TMPDIR after {signal.Signals(sig).name}: {left}"
    finally:  # a failed test leaves nothing running either
        if proc.poll() is None:
            proc.kill()
        for pid, started in seen:
            try:
                p = psutil.Process(pid)
                if p.create_time() == started:
                    p.kill()
            except psutil.NoSuchProcess:
                pass
        proc.wait()
        proc.stderr.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_killing_a_caller_of_map_jobs_leaves_no_process_behind(tmp_path, sig, request):
    # Each of the two workers leaves a file in ``ready`` once its job runs.
    ready = tmp_path / "ready"
    ready.mkdir()
    cmd = [sys.executable, "-m", "tests.evaluation.pool_jobs"]
    env = {"CELLGYM_TEST_READY": str(ready)}
    _kill_and_check(cmd, sig, lambda root: len(list(ready.iterdir())) >= 2, request, env, False)


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
    _kill_and_check(cmd, sig, _two_simulating_workers, request)
