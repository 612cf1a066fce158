"""Sweeps: `python train.py --multirun` through joblib, Optuna and a single-node Slurm cluster.

The Slurm test starts the cluster with ``scripts/slurm-cluster.sh`` (installing ``slurm-wlm`` and
``munge`` with apt-get when missing), submits a two-job sweep through submitit and checks both
jobs' run directories. It needs root; it is skipped elsewhere, except in CI (``CI`` set), where it
always runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluation.runs import final_rewards, find_run_dirs, load_config, load_overrides, load_seed

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "slurm-cluster.sh"

# The cheapest training the config allows: fast backend, two environments, one PPO update of 128
# steps each, no periodic evaluation, a final evaluation on one seed against XRC only.
TINY = [
    "backend=fast",
    "backend.n_envs=2",
    "total_timesteps=256",
    "agent.kwargs.n_steps=128",
    "agent.kwargs.batch_size=64",
    "eval.freq=0",
    "eval_backend=fast",
    "eval_seeds=[101]",
    "eval_baselines=[xrc_policy]",
    "checkpoint_freq=0",
    "progress_bar=false",
    "logger=none",
]


def _train(args: list[str], env: dict[str, str] | None = None, timeout: float = 420):
    cmd = [sys.executable, "train.py", "--multirun", *args]
    full_env = {**os.environ, "PYTHONHASHSEED": "0", **(env or {})}
    t0 = time.monotonic()
    proc = subprocess.run(
        cmd, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=timeout
    )
    return proc, time.monotonic() - t0


def _jobs_by_seed(sweep_dir: Path) -> dict[int, Path]:
    return {load_seed(d): d for d in find_run_dirs(sweep_dir)}


def _check_finished(run_dir: Path, seed: int) -> None:
    """A job that ran to the end: its own seed, config, model and final evaluation."""
    assert load_seed(run_dir) == seed
    assert f"seed={seed}" in load_overrides(run_dir)
    assert load_config(run_dir)["seed"] == seed
    assert (run_dir / "model.zip").is_file()
    rewards = final_rewards(run_dir)
    assert set(rewards.index) == {"ppo", "xrc_policy"}
    assert rewards.notna().all()


def test_local_sweep_isolates_a_failing_job(tmp_path):
    sweep = tmp_path / "sweep"
    # seed=4294967296 is out of range: that job fails when train() validates its config.
    proc, wall = _train(
        ["hydra/launcher=local", f"hydra.sweep.dir={sweep}", *TINY, "seed=1,2,4294967296"]
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "seed=4294967296 is out of range" in out, out[-3000:]
    jobs = _jobs_by_seed(sweep)
    for seed in (1, 2):
        assert seed in jobs, (sorted(jobs), out[-3000:])
        _check_finished(jobs[seed], seed)
    # Every job has its own directory; the failed one holds no model.
    assert len({p.resolve() for p in jobs.values()}) == len(jobs)
    failed = [d for d in sweep.iterdir() if d.is_dir() and "seed=4294967296" in load_overrides(d)]
    assert len(failed) == 1 and not (failed[0] / "model.zip").exists()
    print(f"local sweep (3 jobs, 2 workers): {wall:.1f} s")


def test_optuna_sweep_returns_the_objective(tmp_path):
    sweep = tmp_path / "optuna"
    proc, wall = _train(
        [
            "hydra/sweeper=ppo_optuna",
            "hydra/launcher=local",
            "hydra.sweeper.n_trials=2",
            "hydra.sweeper.n_jobs=2",
            "hydra.sweeper.sampler.n_startup_trials=2",
            f"hydra.sweep.dir={sweep}",
            # A fixed value of a searched key takes it out of the search: leave n_steps to
            # Optuna, with a command-line range that replaces the config's (tiny rollouts).
            *[a for a in TINY if not a.startswith("agent.kwargs.n_steps=")],
            "agent.kwargs.n_steps=choice(64,128)",
            "seed=7",
        ]
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    from omegaconf import OmegaConf

    result = OmegaConf.load(sweep / "optimization_results.yaml")
    assert result.name == "optuna"
    assert set(result.best_params) == {
        "agent.kwargs.learning_rate",
        "agent.kwargs.n_steps",
        "agent.kwargs.ent_coef",
    }
    assert 1e-5 <= result.best_params["agent.kwargs.learning_rate"] <= 3e-3
    # The objective is the trained policy's mean reward in the final evaluation of the best trial.
    best = [
        d
        for d in find_run_dirs(sweep)
        if final_rewards(d)["ppo"] == pytest.approx(float(result.best_value))
    ]
    assert best, (result, out[-2000:])
    assert len(find_run_dirs(sweep)) == 2
    print(f"optuna sweep (2 trials): {wall:.1f} s")


# --- Slurm ------------------------------------------------------------------------------------


def _slurm_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "not root: the single-node Slurm cluster runs its daemons as root"
    if shutil.which("slurmctld") is None and shutil.which("apt-get") is None:
        return "slurm-wlm is not installed and there is no apt-get to install it"
    return None


def _cluster(cmd: str, state_dir: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), cmd],
        cwd=ROOT,
        env={**os.environ, "CELLGYM_SLURM_DIR": state_dir},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="session")
def slurm_cluster():
    """A running single-node cluster; yields the environment that points clients at it."""
    reason = _slurm_unavailable()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"Slurm must run in CI: {reason}")
        pytest.skip(reason)
    # The script's own default directory, so that a cluster already started by hand is reused
    # (and left running) rather than doubled on the same ports.
    state_dir = os.environ.get("CELLGYM_SLURM_DIR", "/tmp/cellgym-slurm")
    install = _cluster("install", state_dir)
    assert install.returncode == 0, install.stdout + install.stderr
    was_running = _cluster("status", state_dir).returncode == 0
    start = _cluster("start", state_dir, timeout=120)
    assert start.returncode == 0, start.stdout + start.stderr
    try:
        yield {
            "SLURM_CONF": str(Path(state_dir) / "slurm.conf"),
            "CELLGYM_SLURM_DIR": state_dir,
            # The cluster's sacct (job states from scontrol): there is no accounting database.
            "PATH": f"{state_dir}/bin{os.pathsep}{os.environ.get('PATH', '')}",
        }
    finally:
        if not was_running:
            stop = _cluster("stop", state_dir, timeout=60)
            assert stop.returncode == 0, stop.stdout + stop.stderr


@pytest.mark.slurm
@pytest.mark.timeout(900)
def test_slurm_sweep_runs_on_a_real_cluster(tmp_path, slurm_cluster):
    sweep = tmp_path / "sweep"
    # Two real jobs and one that fails in train() (seed out of range): one array of three tasks.
    proc, wall = _train(
        [
            "hydra/launcher=slurm",
            "hydra.launcher.cpus_per_task=1",
            "hydra.launcher.mem_gb=2",
            "hydra.launcher.timeout_min=10",
            f"hydra.sweep.dir={sweep}",
            *TINY,
            "seed=1,2,4294967296",
        ],
        env=slurm_cluster,
    )
    out = proc.stdout + proc.stderr
    # Hydra collects every job's result, then reports the failed one: non-zero exit status.
    assert proc.returncode != 0, out[-3000:]
    assert "seed=4294967296 is out of range" in out, out[-3000:]
    jobs = _jobs_by_seed(sweep)
    assert sorted(jobs) == [1, 2], out[-3000:]
    for seed, run_dir in jobs.items():
        _check_finished(run_dir, seed)
    # Every job went through Slurm: one array, a log and a result per task in .submitit/.
    results = sorted((sweep / ".submitit").glob("*_*/*_result.pkl"))
    assert len(results) == 3, sorted(p.name for p in (sweep / ".submitit").rglob("*"))
    array_ids = {p.parent.name.split("_")[0] for p in results}
    assert len(array_ids) == 1
    logs = sorted((sweep / ".submitit").glob("*_*/*_log.out"))
    assert sum("run directory" in p.read_text() for p in logs) == 2
    # The array leaves the queue once its tasks' processes have exited.
    job_id = array_ids.pop()
    env = {**os.environ, **slurm_cluster}
    deadline = time.monotonic() + 60
    while True:
        queue = subprocess.run(
            ["squeue", "-h", "-j", job_id], env=env, capture_output=True, text=True
        )
        if queue.stdout.strip() == "" or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert queue.stdout.strip() == "", queue.stdout
    states = subprocess.run(
        ["sacct", "-o", "JobID,State,NodeList", "--parsable2", "-j", job_id],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert states.count("|COMPLETED|") == 3, states
    print(f"slurm sweep (3 jobs, one failing): {wall:.1f} s")


def test_optuna_keeps_a_study_in_sqlite(tmp_path):
    # docs/sweeps.md's hydra.sweeper.storage=sqlite:///...: optuna 2.10 (pinned by the sweeper)
    # failed on SQLAlchemy 2 with "assert version is not None".
    import optuna

    storage = f"sqlite:///{tmp_path / 'study.db'}"
    study = optuna.create_study(storage=storage, study_name="s")
    study.optimize(lambda t: t.suggest_float("x", 0.0, 1.0), n_trials=2)
    again = optuna.load_study(study_name="s", storage=storage)
    assert len(again.trials) == 2
