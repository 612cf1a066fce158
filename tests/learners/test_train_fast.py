"""``train.py agent=fast_ppo``: ``learners.ppo`` as a training algorithm (``learners.run.train``).

A tiny run makes an SB3 run's directory (logs, W&B offline, periodic evaluation, checkpoints,
``model.zip`` + ``vecnormalize.pkl``) that ``evaluate.py`` loads and scores as it scores the run's
own final evaluation (``slow``: two processes' start-up); the same seed trains the same
parameters; what the learner cannot honour is refused in one line before anything is built.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from cellgym.vocab import SpecError
from configs.schema import compose_train
from workflows.train import check_overrides, train

ROOT = Path(__file__).resolve().parents[2]

# 4 cells, 1 s episodes (50 steps), rollouts of 4 x 16 steps, a tiny network: seconds.
SMALL = [
    "agent=fast_ppo",
    "backend=fast",
    "backend.n_envs=4",
    "scenario.sim_time_s=1",
    "agent.net_arch=[8]",
    "agent.kwargs.n_steps=16",
    "agent.kwargs.batch_size=32",
    "agent.kwargs.n_epochs=2",
    "eval.seeds=[7]",
    "eval_backend=fast",
    "eval_seeds=[7]",
    "eval_baselines=[xrc_policy]",
    "progress_bar=false",
]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _model_data(path: Path) -> dict:
    with zipfile.ZipFile(path) as z:
        return json.loads(z.read("data"))


def _policy_params(path: Path) -> dict[str, torch.Tensor]:
    with zipfile.ZipFile(path) as z, z.open("policy.pth") as f:
        return torch.load(f, weights_only=True)


def test_a_fast_ppo_run_directory_is_an_sb3_run_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", os.fspath(tmp_path / "wandb_dir"))
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    run_dir = tmp_path / "run"
    cfg = compose_train(
        [
            f"run_dir={run_dir}",
            *SMALL,
            "logger=wandb",
            "features=derived",
            "seed=3",
            "total_timesteps=1500",
            "eval.freq=640",
            "checkpoint_freq=600",
        ]
    )
    out = train(cfg)

    # The files of an SB3 run, the models as SB3 PPO exports.
    for name in ("model.zip", "vecnormalize.pkl", "best_model.zip", "best_vecnormalize.pkl"):
        assert (run_dir / name).is_file(), name
    assert (run_dir / "policy.pt").is_file()
    assert out["timesteps"] == 1536  # whole rollouts of 64 steps
    assert _model_data(run_dir / "model.zip")["num_timesteps"] == 1536
    ckpts = sorted(p.name for p in (run_dir / "checkpoints").glob("fast_ppo_*_steps.zip"))
    # checkpoint_freq=600 rounded up to whole rollouts (640), and one at the end.
    assert ckpts == ["fast_ppo_1280_steps.zip", "fast_ppo_1536_steps.zip", "fast_ppo_640_steps.zip"]
    assert (run_dir / "checkpoints" / "fast_ppo_vecnormalize_640_steps.pkl").is_file()
    assert (run_dir / "checkpoints" / "fast_ppo_640_steps.pt").is_file()

    # One progress row per update under SB3's names, and the periodic evaluations beside XRC.
    progress = _rows(run_dir / "progress.csv")
    steps = [int(float(r["time/total_timesteps"])) for r in progress]
    assert steps == sorted(steps) and steps[-1] == 1536
    assert sum(1 for r in progress if r.get("train/value_loss")) == 1536 // 64
    assert any(r.get("rollout/ep_rew_mean") for r in progress)
    history = _rows(run_dir / "eval_history.csv")
    assert sorted({int(r["timesteps"]) for r in history}) == [640, 1280, 1536]
    assert {r["controller"] for r in history} == {"fast_ppo", "xrc_policy"}
    assert any(r.get("eval/fast_ppo/reward_mean") for r in progress)
    runs = list((run_dir / "wandb").glob("offline-run-*"))
    assert len(runs) == 1
    blob = next(runs[0].glob("run-*.wandb")).read_bytes()
    for key in (b"train/value_loss", b"eval/fast_ppo/reward_mean", b"final/fast_ppo"):
        assert key in blob, key

    # The final evaluation loaded model.zip by its path, as evaluate.py loads a run's
    # (resolve_controller: the run's saved config says FastPPO, loaded as SB3's PPO).
    results = pd.read_parquet(run_dir / "evaluation" / "results.parquet")
    assert results[["controller", "seed", "status"]].values.tolist() == [
        ["fast_ppo", 7, "ok"],
        ["xrc_policy", 7, "ok"],
    ]

    # The export acts as the learner's own policy file.
    from evaluation.resolve import load_checkpoint_policy, resolve_controller
    from learners.policy import PPOPolicy

    spec = resolve_controller(str(run_dir))
    assert (spec.label, spec.algo, spec.features) == ("fast_ppo", "FastPPO", "derived")
    exported = load_checkpoint_policy(spec, deterministic=True)
    own = PPOPolicy.load(run_dir / "policy.pt")
    obs = np.random.default_rng(0).uniform(0, 2, size=(64, 11)).astype(np.float32)
    np.testing.assert_allclose(
        exported.predict(obs)[0], own.predict(obs, deterministic=True)[0], atol=1e-6
    )


@pytest.mark.slow  # two processes' start-up: a minute on the shared 2-core machine
def test_evaluate_py_scores_a_fast_ppo_run_directory_as_train_py_did(tmp_path):
    run_dir = tmp_path / "run"
    out = train(compose_train([f"run_dir={run_dir}", *SMALL, "seed=4", "total_timesteps=640"]))
    proc = subprocess.run(
        [
            sys.executable,
            "evaluate.py",
            f"controllers=[{run_dir}]",
            "scenario=single_flow",
            "sim_time_s=1",
            "seeds=[7]",
            "backend=fast",
            "jobs=1",
            f"out_dir={tmp_path / 'eval'}",
            f"hydra.run.dir={tmp_path / 'hydra'}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    scored = pd.read_csv(tmp_path / "eval" / "results.csv")
    assert scored[["controller", "status"]].values.tolist() == [["fast_ppo", "ok"]]
    assert scored["mean_reward"].iloc[0] == pytest.approx(
        out["means"]["fast_ppo"]["reward_mean"], rel=1e-9
    )


def test_the_same_seed_exports_the_same_parameters(tmp_path):
    def run(name: str, seed: int) -> dict[str, torch.Tensor]:
        run_dir = tmp_path / name
        cfg = compose_train(
            [
                f"run_dir={run_dir}",
                *SMALL,
                f"seed={seed}",
                "total_timesteps=640",
                "eval.freq=0",
                "checkpoint_freq=0",
                "eval_baselines=[]",
            ]
        )
        train(cfg)
        assert not (run_dir / "checkpoints").exists()
        return _policy_params(run_dir / "model.zip")

    first, again, other = run("a", 5), run("b", 5), run("c", 6)
    assert first.keys() == again.keys()
    for key in first:
        assert torch.equal(first[key], again[key]), key
    assert any(not torch.equal(first[k], other[k]) for k in first)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (
            ["agent=fast_ppo", "backend=ns3"],
            "backend.name='ns3' is not allowed with agent.algo=FastPPO: choose backend=fast",
        ),
        (
            ["agent=fast_ppo", "scenario=multi_agent2"],
            "scenario='multi_agent2' has 2 agent flows: agent.algo=FastPPO trains exactly one",
        ),
        (
            ["agent=fast_ppo", "agent.policy=MlpLstmPolicy"],
            "agent.policy='MlpLstmPolicy' is not allowed with agent.algo=FastPPO: choose MlpPolicy",
        ),
        (
            ["agent=recurrent_ppo", "agent.algo=FastPPO"],
            "agent.policy='MlpLstmPolicy' is not allowed with agent.algo=FastPPO",
        ),
        (
            ["agent=fast_ppo", "+agent.kwargs.clip_range_vf=0.2"],
            "agent.kwargs.clip_range_vf is not an argument of FastPPO: did you mean clip_range? "
            "allowed batch_size, cells_scale,",
        ),
        (
            ["agent=sac", "agent.algo=FastPPO"],
            "agent.kwargs.buffer_size is not an argument of FastPPO",
        ),
        (
            ["agent=fast_ppo", "+agent.policy_kwargs.activation_fn=relu"],
            "agent.policy_kwargs.activation_fn is not an argument of FastPPO: "
            "allowed log_std_init, ortho_init",
        ),
        (
            ["agent=fast_ppo", "agent.kwargs.learning_rate=lin_0.001"],
            "agent.kwargs.learning_rate='lin_0.001' is not allowed with agent.algo=FastPPO",
        ),
        (
            ["agent=fast_ppo", "agent.kwargs.cells_scale=0"],
            "agent.kwargs.cells_scale=0 is out of range: allowed [1, inf)",
        ),
        (
            ["agent=fast_ppo", "agent.kwargs.nsteps=8"],
            "agent.kwargs.nsteps is not an argument of FastPPO: did you mean n_steps?",
        ),
    ],
)
def test_what_the_learner_cannot_honour_is_refused_naming_the_field(args, expected):
    overrides = [a for a in args if not a.startswith("backend=")]
    backend = [a for a in args if a.startswith("backend=")] or ["backend=fast"]
    with pytest.raises(SpecError) as err:
        check_overrides([*backend, *overrides])
    message = str(err.value)
    assert expected in message
    assert "\n" not in message


def _main(monkeypatch, capsys, *args: str) -> tuple[int, list[str]]:
    """``python train.py <args>`` in this process: its exit status and stderr lines."""
    from workflows.train import main

    monkeypatch.setattr(sys, "argv", ["train.py", *args])
    with pytest.raises(SystemExit) as exit_:
        main()
    return int(exit_.value.code), capsys.readouterr().err.strip().splitlines()


def test_train_py_refuses_the_ns3_backend_and_resume_in_one_line(tmp_path, monkeypatch, capsys):
    code, lines = _main(monkeypatch, capsys, "agent=fast_ppo", "backend=ns3")
    assert code == 2
    assert lines == [
        "train.py: invalid config: backend.name='ns3' is not allowed with agent.algo=FastPPO: "
        "choose backend=fast (it steps the fast simulator's cells as arrays)"
    ]

    from omegaconf import OmegaConf

    run_dir = tmp_path / "run"
    (run_dir / ".hydra").mkdir(parents=True)
    OmegaConf.save(
        compose_train([f"run_dir={run_dir}", *SMALL]), run_dir / ".hydra" / "config.yaml"
    )
    code, lines = _main(monkeypatch, capsys, f"resume={run_dir}")
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith("train.py: invalid config: ")
    assert f"resume={run_dir} is not allowed with agent.algo=FastPPO" in lines[0]
    assert not (run_dir / "seed.txt").exists()  # refused before anything was made
