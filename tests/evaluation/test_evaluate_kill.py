"""No process of ``evaluate.py`` outlives it: SIGTERM and SIGKILL with a worker pool (jobs=2).

What ``timeout``, Slurm's ``scancel`` and container stops send. Before the fix the fork server,
the resource tracker and both workers (4 processes) ran on after either signal, reparented to
init, each worker finishing its simulation.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

psutil = pytest.importorskip("psutil")

REPO = Path(__file__).resolve().parents[2]


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


def _busy_workers(root: psutil.Process) -> bool:
    """Whether the pool's two workers run (children of the fork server) and compute."""
    for child in root.children():
        if "forkserver" in " ".join(child.cmdline()):
            workers = child.children()
            return len(workers) >= 2 and all(w.cpu_times().user > 0.5 for w in workers)
    return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_killing_evaluate_py_leaves_no_process_behind(tmp_path, sig, request):
    cmd = [
        sys.executable,
        str(REPO / "evaluate.py"),
        "controllers=[xrc_policy,explicit_rate]",  # baselines: both run in the workers
        "scenarios=[vs_cubic]",
        "backend=fast",
        "jobs=2",
        "sim_time_s=3000",  # minutes per run: the workers are busy when the signal comes
        f"out_dir={tmp_path / 'eval'}",
        f"hydra.run.dir={tmp_path / 'hydra'}",
    ]
    # The run's own TMPDIR: multiprocessing's pymp-* folder goes here, and with it the fork
    # server's socket, whose path must fit AF_UNIX's 108 bytes (pytest-xdist's tmp_path is
    # longer): a short folder under the system's temporary directory, removed after.
    tmp = Path(tempfile.mkdtemp(prefix="cgk-"))
    request.addfinalizer(lambda: shutil.rmtree(tmp, ignore_errors=True))
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    root = psutil.Process(proc.pid)
    seen: set[tuple[int, float]] = set()
    try:
        deadline = time.monotonic() + 240  # a cold numba cache compiles for minutes
        while not _busy_workers(root):
            assert proc.poll() is None, proc.stderr.read().decode()[-3000:]
            assert time.monotonic() < deadline, "the pool's workers never started"
            seen |= _tree(root)
            time.sleep(0.1)
        seen |= _tree(root)
        assert len(seen) >= 4  # fork server, resource tracker, two workers
        os.kill(proc.pid, sig)
        rc = proc.wait(timeout=30)
        assert rc in (-sig, 128 + sig), proc.stderr.read().decode()[-3000:]
        deadline = time.monotonic() + 10
        while _alive(seen) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(seen), f"outlived evaluate.py ({sig.name}): {_alive(seen)}"
        # Nor does its temporary folder (a SIGKILLed caller cannot remove it: its workers do).
        left = sorted(p.name for p in tmp.glob("pymp-*"))
        assert not left, f"left in TMPDIR after {sig.name}: {left}"
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
