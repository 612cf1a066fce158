"""Kill a command that runs a worker pool, and find what it left running (the kill tests).

``kill_and_check`` starts a command in its own session and short ``TMPDIR``, sends it a signal
once it is ready, and fails if any process it started (its pool's workers, the fork server, the
resource tracker, their simulators) is still alive 10 s later.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

REPO = Path(__file__).resolve().parents[2]


def tree(root: psutil.Process) -> set[tuple[int, float]]:
    """(pid, start time) of every descendant of ``root`` (the start time guards against reuse)."""
    out = set()
    for p in root.children(recursive=True):
        try:
            out.add((p.pid, p.create_time()))
        except psutil.NoSuchProcess:
            pass
    return out


def alive(procs: set[tuple[int, float]]) -> list[str]:
    alive = []
    for pid, started in procs:
        try:
            p = psutil.Process(pid)
            if p.create_time() == started and p.status() != psutil.STATUS_ZOMBIE:
                alive.append(f"{pid}: {' '.join(p.cmdline())[:120]}")
        except psutil.NoSuchProcess:
            pass
    return alive


def kill_and_check(
    cmd: list[str],
    sig: int,
    ready: Callable[[psutil.Process], bool],
    request: pytest.FixtureRequest,
    env: dict[str, str] | None = None,
    temp_dir_gone: bool = True,
) -> set[tuple[int, float]]:
    """Start ``cmd``, send ``sig`` once ``ready(root)``; no process it started may be left.

    With ``temp_dir_gone``, nor may its ``multiprocessing`` folder: the workers remove it when
    the caller was killed, unless their parent-death signal comes first (the fork server ends as
    soon as the caller has, and a light one ends quickly: a race the test of ``map_jobs`` with
    an idle fork server loses).
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
            seen |= tree(root)
            time.sleep(0.1)
        seen |= tree(root)
        os.kill(proc.pid, sig)
        rc = proc.wait(timeout=30)
        assert rc in (-sig, 128 + sig), proc.stderr.read().decode()[-3000:]
        deadline = time.monotonic() + 10
        while alive(seen) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(seen), f"outlived the caller ({signal.Signals(sig).name}): {alive(seen)}"
        left = sorted(p.name for p in tmp.glob("pymp-*")) if temp_dir_gone else []
        assert not left, f"left in TMPDIR after {signal.Signals(sig).name}: {left}"
        return seen
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
