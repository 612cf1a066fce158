"""A user's own policy in ``evaluate.py`` and ``evaluate_many``; the messages when runs fail.

The classes below are what a user writes: ``evaluate.py`` takes them as ``path/to/file.py:Class``
(this file) or ``module:Class`` (a module in the working directory) and runs them in its worker
pool, like the registry's baselines.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cellgym.vocab import SpecError
from evaluation.pool import evaluate_many
from evaluation.report import rliable_section
from evaluation.resolve import ControllerSpec

REPO = Path(__file__).resolve().parents[2]
PIDS = "CELLGYM_TEST_POLICY_PIDS"


class Hold:
    """Keeps the window; notes where it acts (``$CELLGYM_TEST_POLICY_PIDS``: pid, parent pid)."""

    name = "hold"

    def __init__(self, max_change: float = 2.0) -> None:
        self.max_change = max_change

    def predict(self, observation, state=None, episode_start=None, deterministic=True):
        if os.environ.get(PIDS):
            note = f"{type(self).__name__} {os.getppid()}"
            (Path(os.environ[PIDS]) / str(os.getpid())).write_text(note)
        return np.array([0.0], dtype=np.float32), state


class Boom(Hold):
    """Fails at its first step."""

    name = "boom"

    def predict(self, observation, state=None, episode_start=None, deterministic=True):
        raise RuntimeError("boom at the first step")


def _evaluate_py(cwd: Path, *overrides: str, env: dict | None = None):
    return subprocess.run(
        [sys.executable, str(REPO / "evaluate.py"), *overrides, f"hydra.run.dir={cwd / 'hydra'}"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def test_evaluate_py_runs_users_classes_in_its_worker_pool(tmp_path):
    (tmp_path / "my_policies.py").write_text(
        f"import sys\nsys.path.insert(0, {str(REPO)!r})\n"
        "from tests.evaluation.test_evaluate_policies import Hold\n\n"
        "class Mine(Hold):\n    name = 'mine'\n"
    )
    pids = tmp_path / "pids"
    pids.mkdir()
    out = tmp_path / "eval"
    proc = _evaluate_py(
        tmp_path,  # the working directory: my_policies is importable from there
        f"controllers=[{__file__}:Hold,my_policies:Mine,cubic]",
        "scenarios=[vs_cubic]",
        "backend=fast",
        "jobs=2",
        "sim_time_s=0.4",
        f"out_dir={out}",
        env={PIDS: str(pids)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = pd.read_parquet(out / "results.parquet")
    assert list(results["controller"]) == ["hold", "mine", "cubic"]
    assert list(results["kind"]) == ["policy", "policy", "native"]
    assert (results["status"] == "ok").all() and results["mean_reward"].notna().all()
    # Built in the worker processes, not in evaluate.py itself (whose parent is this process).
    notes = [p.read_text().split() for p in pids.iterdir()]
    assert {name for name, _ in notes} == {"Hold", "Mine"}
    assert str(os.getpid()) not in {parent for _, parent in notes}


def test_evaluate_py_when_every_run_fails_says_so_and_exits_1(tmp_path):
    out = tmp_path / "eval"
    proc = _evaluate_py(
        tmp_path,
        f"controllers=[{__file__}:Boom]",
        "scenarios=[vs_cubic]",
        "seeds=[1,2]",
        "backend=fast",
        "jobs=1",
        "sim_time_s=0.2",
        f"out_dir={out}",
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "invalid config" not in proc.stderr
    assert (
        "every run failed (2 of 2); the first, boom / vs_cubic / seed 1: "
        "RuntimeError: boom at the first step" in proc.stderr
    )
    assert len(pd.read_parquet(out / "results.parquet")) == 2


def test_a_reference_whose_runs_all_failed_is_not_compared_with():
    nan = float("nan")
    rows = [
        {"controller": c, "scenario": "s", "seed": s, "status": st, "mean_reward": r}
        for c, st, r in (("xrc", "failed", nan), ("cubic", "ok", 1.0), ("hold", "ok", 2.0))
        for s in (1, 2)
    ]
    table, text = rliable_section(pd.DataFrame(rows))  # raised "reference='xrc' has no runs"
    assert set(table["controller"]) == {"cubic", "hold"}
    assert "P(improvement over" not in text and "hold" in text


def test_an_unknown_scenario_says_yaml_files_are_accepted(tmp_path):
    from workflows.evaluate import resolve_scenario

    with pytest.raises(SpecError, match=r"scenarios\[1\]='nope' is unknown: give a scenario YAML"):
        resolve_scenario("nope", "scenarios[1]")
    with pytest.raises(SpecError, match=r"scenarios\[0\]='gone.yaml': no scenario file at /"):
        resolve_scenario("gone.yaml", "scenarios[0]")
    vs_cubic = (REPO / "configs" / "scenario" / "vs_cubic.yaml").read_text()
    (tmp_path / "cell.yaml").write_text(vs_cubic)
    assert resolve_scenario(str(tmp_path / "cell.yaml"), "scenarios[0]").agent_flows


def test_a_policy_spec_given_with_its_object_runs_once():
    spec = ControllerSpec(label="hold", kind="policy", name="hold", action_mode="rate")
    results, _, _ = evaluate_many(
        [spec, "cubic"],
        ["vs_cubic"],
        [1],
        backend="fast",
        policies={"hold": Hold()},
        sim_time_s=0.2,
    )
    # Before: a failing "hold#2" run was added (the spec was compared with the policy's name).
    assert list(results["controller"]) == ["hold", "cubic"]
    assert (results["status"] == "ok").all(), results["error"].tolist()


def test_evaluate_py_help_lists_controllers_scenarios_and_options():
    proc = subprocess.run(
        [sys.executable, str(REPO / "evaluate.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    head = proc.stdout.split("== Config groups")[0]  # before Hydra's own listing
    for line in (
        "Usage: python evaluate.py [key=value ...]",
        "  jobs=2                      simulations at a time (worker processes)",
        "  baseline policies   xrc_policy, explicit_rate, pbecc_policy, oracle",
        "  your own class      module:Class, path/to/file.py:Class",
        "  or a file           path/to/scenario.yaml",
    ):
        assert line in head
    assert "illinois" in head and "vs_cubic" in head and "traces/<name>" in head
