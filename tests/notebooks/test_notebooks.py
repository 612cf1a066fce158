"""The analysis notebooks: outputs stripped in git, and executed headless on a tiny real run.

The fixture trains PPO for a few hundred steps on the fast backend (W&B offline, periodic
evaluation beside XRC), then evaluates it with ``evaluate.py`` beside XRC and CUBIC on two seeds;
the notebooks run on those directories through ``nbclient`` (the same kernel nbmake would use),
and the test checks that they drew their figures and found the W&B run.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from evaluation import runs

# The fixtures train and evaluate (numba compiles the fast cell on a cold cache): more time than
# the default 600 s per test, which counts fixture set-up.
pytestmark = pytest.mark.timeout(1200)

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"


def _committed_notebooks() -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "notebooks/*.ipynb"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        out = []
    return [ROOT / p for p in out] or sorted(NOTEBOOKS.glob("*.ipynb"))


def test_notebooks_are_committed_without_outputs():
    paths = _committed_notebooks()
    names = {p.name for p in paths}
    assert {"training_curves.ipynb", "controller_comparison.ipynb"} <= names
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            assert cell.outputs == [], f"{path.name} cell {i} has outputs: strip them"
            assert cell.execution_count is None, f"{path.name} cell {i} has an execution count"
        # A parameter cell (papermill/nbmake convention) says where the input comes from.
        tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
        assert len(tagged) == 1, path.name


def _run(cmd: list[str], env: dict[str, str], timeout: float) -> None:
    proc = subprocess.run(
        cmd, cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    """A real training run: fast backend, 384 steps, evaluations at 128/256/384, W&B offline."""
    run_dir = tmp_path_factory.mktemp("nb") / "run"
    _run(
        [
            sys.executable,
            "train.py",
            "backend=fast",
            "backend.n_envs=2",
            "total_timesteps=384",
            "agent.kwargs.n_steps=64",
            "agent.kwargs.batch_size=64",
            "eval.freq=128",
            "eval.seeds=[101]",
            "eval.baselines=[xrc_policy]",
            "eval_backend=fast",
            "eval_seeds=[101]",
            "eval_baselines=[xrc_policy]",
            "checkpoint_freq=0",
            "progress_bar=false",
            "logger=wandb",
            "seed=5",
            f"hydra.run.dir={run_dir}",
        ],
        {"WANDB_MODE": "offline", "WANDB_SILENT": "true", "PYTHONHASHSEED": "0"},
        timeout=420,
    )
    return run_dir


@pytest.fixture(scope="module")
def tiny_eval(tiny_run) -> Path:
    """``evaluate.py`` on the fast backend: the tiny policy, XRC and CUBIC, two seeds of 2 s."""
    eval_dir = tiny_run.parent / "eval"
    _run(
        [
            sys.executable,
            "evaluate.py",
            "backend=fast",
            f"controllers=[xrc_policy,cubic,ppo:{tiny_run}]",
            "scenario=single_flow",
            "seeds=[1,2]",
            "sim_time_s=2",
            "jobs=1",
            f"hydra.run.dir={eval_dir}",
        ],
        {"PYTHONHASHSEED": "0"},
        timeout=420,
    )
    return eval_dir


def _execute(name: str, monkeypatch, **env: str) -> list[dict]:
    """Run a notebook headless (cwd notebooks/); return its outputs; fail on any error cell."""
    from nbclient import NotebookClient

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    client.execute()  # raises CellExecutionError, with the cell and traceback, on a failure
    return [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]


def _images(outputs: list[dict]) -> list[bytes]:
    return [
        base64.b64decode(o["data"]["image/png"])
        for o in outputs
        if "image/png" in o.get("data", {})
    ]


def _text(outputs: list[dict]) -> str:
    parts = []
    for o in outputs:
        if o.get("output_type") == "stream":
            parts.append(o["text"])
        parts.append(o.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def test_tiny_run_has_what_the_notebooks_read(tiny_run, tiny_eval):
    assert runs.find_run_dirs(tiny_run) == [tiny_run]
    history = runs.load_eval_history(tiny_run)
    assert sorted(history["timesteps"].unique()) == [128, 256, 384]
    assert set(history["controller"]) == {"ppo", "xrc_policy"}
    assert not runs.load_progress(tiny_run).empty
    wb = runs.load_wandb_offline(tiny_run)
    assert wb is not None and wb["project"] == "cellgym"
    assert wb["config"]["seed"] == 5
    assert "final/ppo/reward_mean" in wb["summary"]
    assert "eval/ppo/reward_mean" in wb["history"]
    results = runs.load_results(tiny_eval)
    assert set(results["controller"]) == {"xrc_policy", "cubic", "ppo"}
    assert sorted(results["seed"].unique()) == [1, 2]
    assert not runs.load_timeseries(tiny_eval).empty
    # A run's own final evaluation reads into the same tidy shape.
    own = runs.load_results(tiny_run / "evaluation")
    assert set(own["controller"]) == {"ppo", "xrc_policy"}
    assert own["reward_mean"].notna().all()
    assert runs.final_rewards(tiny_run).index.tolist()[0] == "ppo"


def test_training_curves_notebook(tiny_run, monkeypatch):
    outputs = _execute("training_curves.ipynb", monkeypatch, CELLGYM_RUN_DIR=str(tiny_run))
    # Periodic evaluation vs XRC, training scalars, the W&B history.
    assert len(_images(outputs)) >= 3
    text = _text(outputs)
    wb = runs.load_wandb_offline(tiny_run)
    assert f"W&B run {wb['id']}" in text
    assert "ppo/single_flow/seed5" in text


def test_controller_comparison_notebook(tiny_eval, monkeypatch):
    outputs = _execute("controller_comparison.ipynb", monkeypatch, CELLGYM_EVAL_DIR=str(tiny_eval))
    # Throughput-delay scatter, two delay CDFs, the time series.
    assert len(_images(outputs)) >= 4
    text = _text(outputs)
    for controller in ("xrc_policy", "cubic", "ppo"):
        assert controller in text
    assert "±" in text  # the mean ± CI table


def test_controller_comparison_notebook_on_a_run_directory(tiny_run, monkeypatch):
    # A training run's own final evaluation (its evaluation/ folder) is a valid input too.
    outputs = _execute("controller_comparison.ipynb", monkeypatch, CELLGYM_EVAL_DIR=str(tiny_run))
    assert len(_images(outputs)) >= 2
    assert str(tiny_run / "evaluation") in _text(outputs)
