"""No process of ``evaluate.py`` outlives it: SIGTERM and SIGKILL with a worker pool (jobs=2).

What ``timeout``, Slurm's ``scancel`` and container stops send. Before the fix the fork server,
the resource tracker and both workers (4 processes) ran on after either signal, reparented to
init, each worker finishing its simulation.
"""

from __future__ import annotations

import signal
import sys

import pytest

psutil = pytest.importorskip("psutil")

from tests.evaluation.orphans import REPO, kill_and_check  # noqa: E402


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
    seen = kill_and_check(cmd, sig, _busy_workers, request)
    assert len(seen) >= 4  # fork server, resource tracker, two workers
