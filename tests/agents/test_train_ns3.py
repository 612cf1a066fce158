"""Training and evaluation on the ns-3 backend (SubprocVecEnv over ns-3 processes)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from tests.agents.test_train_determinism import BRIEF
from workflows.train import train

pytestmark = pytest.mark.ns3
CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def _compose(overrides):
    with initialize_config_dir(config_dir=os.fspath(CONFIGS), version_base="1.3"):
        return compose("train", overrides=overrides)


def test_ppo_trains_on_ns3_processes_and_is_evaluated_beside_xrc(tmp_path):
    cfg = _compose([f"run_dir={tmp_path}", "backend=ns3", "backend.n_envs=2", *BRIEF[1:]])
    out = train(cfg)
    assert int((tmp_path / "seed.txt").read_text()) == out["seed"]
    assert (tmp_path / "model.zip").is_file() and (tmp_path / "vecnormalize.pkl").is_file()
    assert any((tmp_path / "checkpoints").glob("ppo_vecnormalize_*_steps.pkl"))
    results = pd.read_parquet(tmp_path / "evaluation" / "results.parquet")
    assert results[["controller", "seed", "steps", "backend"]].values.tolist() == [
        ["ppo", 7, 50, "ns3"],
        ["xrc_policy", 7, 50, "ns3"],
    ]
    assert results["mean_reward"].notna().all()
    history = (tmp_path / "eval_history.csv").read_text().splitlines()
    assert history[0].startswith("timesteps,controller,")
    assert {line.split(",")[1] for line in history[1:]} == {"ppo", "xrc_policy"}
    table = (tmp_path / "evaluation" / "comparison.txt").read_text()
    assert "ppo" in table and "xrc_policy" in table


def test_fast_training_is_evaluated_against_xrc_and_cubic_on_ns3(tmp_path):
    """The README's main command in miniature: a fast mixture to train (both uplink models),
    ns-3 to evaluate on held-out seeds and scenarios, beside XRC (native and policy), CUBIC and
    BBR, with per-scenario intervals and the rliable aggregates."""
    cfg = _compose(
        [
            f"run_dir={tmp_path}",
            "experiment=default",
            "mixture.scenarios=[{scenario:fluctuating,n_envs:2,overrides:{sim_time_s:1.0}},"
            "{scenario:vs_cubic,n_envs:2,overrides:{sim_time_s:1.0}}]",
            "total_timesteps=2048",
            "agent.net_arch=[8]",
            "agent.kwargs.n_steps=64",
            "agent.kwargs.batch_size=128",
            "eval.freq=1024",
            "eval.seeds=[7]",
            "eval_seeds=[9]",
            "eval_scenarios=[{scenario:vs_cubic,overrides:{sim_time_s:1.0}},"
            "{scenario:three_ues,overrides:{sim_time_s:1.0}}]",
            "progress_bar=false",
        ]
    )
    out = train(cfg)
    assert list(out["means"]) == ["ppo", "xrc", "xrc_policy", "cubic", "bbr"]
    ev = tmp_path / "evaluation"
    results = pd.read_parquet(ev / "results.parquet")
    assert results[["controller", "scenario", "steps", "backend", "status"]].values.tolist() == [
        [c, s, 50, "ns3", "ok"]
        for c in ("ppo", "xrc", "xrc_policy", "cubic", "bbr")
        for s in ("vs_cubic", "three_ues")
    ]
    # Native senders run in ns-3; their reward is scored from the same records.
    assert results["mean_reward"].notna().all()
    flows = pd.read_parquet(ev / "flows.parquet")
    native = flows[(flows["controller"] == "bbr") & (flows["scenario"] == "vs_cubic")]
    assert sorted(native["cca"]) == ["bbr", "cubic"]
    assert (ev / "report.md").is_file() and list(ev.glob("*.png"))
    table = (ev / "comparison.txt").read_text()
    assert "three_ues" in table and "P(improvement over xrc_policy)" in table
