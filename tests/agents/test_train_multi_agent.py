"""Several learned flows: parameter-shared training through SuperSuit, evaluation per flow."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hydra import compose, initialize_config_dir

from agents.factory import make_vec_env
from cellgym.reward import RewardSpec
from cellgym.scenario import load_scenario
from configs.schema import validate_train
from evaluation.rollouts import make_baseline, run_policy
from workflows.train import train

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
SMALL = [
    "scenario=multi_agent2",
    "backend=fast",
    "backend.n_envs=2",
    "scenario.sim_time_s=1",
    "agent.net_arch=[8]",
    "eval.seeds=[7]",
    "eval_backend=fast",
    "eval_seeds=[7]",
    "eval_baselines=[xrc_policy]",
    "agent.kwargs.n_steps=64",
    "agent.kwargs.batch_size=64",
]


def _compose(overrides: list[str]):
    with initialize_config_dir(config_dir=os.fspath(CONFIGS), version_base="1.3"):
        return compose("train", overrides=overrides)


def test_the_vector_holds_one_entry_per_flow_and_cell_and_is_seeded(tmp_path):
    typed = validate_train(_compose([f"run_dir={tmp_path}", *SMALL, "scenario=multi_agent4"]))
    venvs = [make_vec_env(typed, seed=3) for _ in range(2)]
    try:
        assert venvs[0].num_envs == 2 * 4  # n_envs cells x 4 agent flows
        obs = [v.reset() for v in venvs]
        actions = np.linspace(-1, 1, 8, dtype=np.float32).reshape(8, 1)
        for _ in range(30):
            steps = [v.step(actions) for v in venvs]
        np.testing.assert_array_equal(steps[0][1], steps[1][1])  # same seed, same rewards
        assert obs[0].shape == (8, 11) and np.any(steps[0][1] != 0)
    finally:
        for v in venvs:
            v.close()


def test_parameter_shared_ppo_trains_and_is_evaluated_on_every_flow(tmp_path):
    run_dir = tmp_path / "run"
    out = train(_compose([f"run_dir={run_dir}", *SMALL, "total_timesteps=512", "eval.freq=256"]))
    assert out["timesteps"] >= 512 and (run_dir / "model.zip").is_file()
    results = pd.read_parquet(run_dir / "evaluation" / "results.parquet")
    assert sorted(results["controller"]) == ["ppo", "xrc_policy"]
    assert (results["status"] == "ok").all() and (results["steps"] == 50).all()
    flows = pd.read_parquet(run_dir / "evaluation" / "flows.parquet")
    ppo = flows[flows["controller"] == "ppo"]
    # Both flows are the policy's (agent flows) and both carried traffic.
    assert ppo["agent"].all() and len(ppo) == 2
    assert (ppo["throughput_mbps"] > 0).all()


@pytest.mark.parametrize("backend", ["fast", pytest.param("ns3", marks=pytest.mark.ns3)])
def test_a_baseline_drives_every_agent_flow(backend):
    spec = dataclasses.replace(load_scenario("multi_agent2"), sim_time_s=1.0)
    reward = RewardSpec()
    policy = make_baseline("xrc_policy", spec, reward, max_change=2.0)
    rec = run_policy(spec, policy, seed=5, label="xrc_policy", reward=reward, backend=backend)
    again = run_policy(spec, policy, seed=5, label="xrc_policy", reward=reward, backend=backend)
    assert len(rec.times) == 51 and rec.times == again.times
    np.testing.assert_array_equal(np.array(rec.rewards[1:]), np.array(again.rewards[1:]))
    tput = rec.flows_frame().groupby("flow")["acked_bytes"].sum()
    assert len(tput) == 2 and (tput > 0).all()


@pytest.mark.ns3
def test_the_ns3_vector_steps_every_flow_and_is_seeded(tmp_path):
    over = [f"run_dir={tmp_path}", *SMALL, "backend=ns3", "backend.n_envs=1"]
    typed = validate_train(_compose(over))
    rewards = []
    for _ in range(2):
        venv = make_vec_env(typed, seed=4)
        try:
            assert venv.num_envs == 2
            venv.reset()
            actions = np.array([[0.5], [-0.5]], dtype=np.float32)
            rewards.append([venv.step(actions)[1] for _ in range(20)])
        finally:
            venv.close()
    np.testing.assert_array_equal(rewards[0], rewards[1])
    assert np.any(np.asarray(rewards[0]) != 0)
