"""Regenerating the reports (``experiments.reports``): a stopped one leaves nothing behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from cellgym.paths import REPO_ROOT

#: An "experiment" with a pool worker of its own: it writes the worker's pid, then waits.
EXPERIMENT = textwrap.dedent(
    """
    import subprocess, sys, time
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    open(sys.argv[1], "w").write(str(worker.pid))
    time.sleep(120)
    """
)
#: The regeneration: runs the experiment through ``run_command``.
DRIVER = textwrap.dedent(
    """
    import sys
    from evaluation.experiments.reports import run_command
    sys.exit(run_command([sys.executable, "-c", sys.argv[1], sys.argv[2]]))
    """
)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) counts as gone.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(")")[-1].split()[0] != "Z"


def _wait_for(path: Path, timeout_s: float = 30.0) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} was never written")


def _gone(pid: int, timeout_s: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_sigterm_to_the_regeneration_ends_the_experiment_and_its_workers(tmp_path: Path) -> None:
    pidfile = tmp_path / "worker.pid"
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, EXPERIMENT, str(pidfile)], cwd=REPO_ROOT
    )
    try:
        worker = _wait_for(pidfile)
        assert _alive(worker)
        driver.send_signal(signal.SIGTERM)
        assert driver.wait(30) == 128 + signal.SIGTERM
        assert _gone(worker), "the experiment's worker outlived the regeneration"
    finally:
        driver.kill()
        driver.wait()


def test_sigkill_to_the_regeneration_ends_the_experiment(tmp_path: Path) -> None:
    # The kernel ends the experiment (PR_SET_PDEATHSIG); its worker then sees a dead parent only
    # when it exits, so the check is on the experiment process itself.
    pidfile = tmp_path / "worker.pid"
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, EXPERIMENT, str(pidfile)], cwd=REPO_ROOT
    )
    try:
        _wait_for(pidfile)
        children = Path(f"/proc/{driver.pid}/task/{driver.pid}/children").read_text().split()
        assert len(children) == 1
        experiment = int(children[0])
        driver.kill()
        driver.wait()
        assert _gone(experiment), "the experiment outlived a killed regeneration"
    finally:
        driver.kill()
        driver.wait()


def test_provenance_is_read_from_the_top_level_first(tmp_path: Path) -> None:
    """A report whose JSON has ``meta`` and ``rows`` beside its own ``provenance`` (the transfer
    report) is read from the top level; a calibration table keeps it under ``meta``."""
    import json

    from evaluation.experiments.reports import provenance_of

    both = tmp_path / "transfer.json"
    numbers = {"rows": [], "meta": {"wall_s": 1.0}, "provenance": {"commit": "a"}}
    both.write_text(json.dumps(numbers))
    table = tmp_path / "calibration.json"
    table.write_text(json.dumps({"rows": [], "meta": {"provenance": {"commit": "b"}}}))
    assert provenance_of(both) == {"commit": "a"}
    assert provenance_of(table) == {"commit": "b"}
