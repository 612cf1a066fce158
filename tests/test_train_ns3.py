"""Training end to end on the ns-3 backend: a tiny PPO run, saved and evaluated beside XRC."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from agents.train import train

pytestmark = pytest.mark.ns3
CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def test_ppo_trains_saves_and_is_evaluated_beside_xrc(tmp_path):
    with initialize_config_dir(config_dir=os.fspath(CONFIGS), version_base="1.3"):
        cfg = compose(
            "train",
            overrides=[
                f"run_dir={tmp_path}",
                "total_timesteps=256",
                "n_envs=2",
                "agent.kwargs.n_steps=64",
                "agent.kwargs.batch_size=32",
                "agent.net_arch=[8]",
                "scenario.sim_time_s=1",
                "eval_seeds=[7]",
                "eval_baselines=[xrc_policy]",
            ],
        )
    out = train(cfg)
    assert int((tmp_path / "seed.txt").read_text()) == out["seed"]
    assert (tmp_path / "model.zip").is_file() and (tmp_path / "vecnormalize.pkl").is_file()
    assert any((tmp_path / "checkpoints").glob("ppo_vecnormalize_*_steps.pkl"))
    summary = json.loads((tmp_path / "evaluation" / "summary.json").read_text())
    assert [m["controller"] for m in summary] == ["ppo", "xrc_policy"]
    assert all(m["seed"] == 7 and m["steps"] == 50 for m in summary)
    assert all(m["mean_reward"] is not None for m in summary)
    table = (tmp_path / "evaluation" / "comparison.txt").read_text()
    assert "ppo" in table and "xrc_policy" in table
