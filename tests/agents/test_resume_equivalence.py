"""A run stopped at a checkpoint and resumed equals the unbroken run (``resume=``, round three).

Checkpoints are taken between updates (``agents.callbacks.ResumableCheckpointCallback``), carry
the random generators, the ``VecNormalize`` returns and SB3's iteration count, and resuming
restores them. The environments here restart identically whatever their seed and each
checkpoint falls on an episode boundary, so the resumed run must make the same updates and end
with bit-identical parameters.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch

from configs.schema import compose_train

EPISODE = 25  # steps per episode of the toy cell


class _ToyCell(gym.Env):
    """A deterministic stand-in with the fast cell's spaces: the state follows the action."""

    def __init__(self, observation_space: gym.Space, action_space: gym.Space) -> None:
        self.observation_space = observation_space
        self.action_space = action_space
        self.t = 0
        self.x = np.zeros(observation_space.shape, dtype=np.float32)

    def _obs(self) -> np.ndarray:
        return np.clip(self.x, self.observation_space.low, self.observation_space.high).astype(
            np.float32
        )

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.t = 0
        self.x = np.linspace(0.1, 1.0, self.observation_space.shape[0], dtype=np.float32)
        return self._obs(), {}

    def step(self, action: np.ndarray):
        a = float(np.asarray(action).ravel()[0])
        self.t += 1
        self.x = 0.9 * self.x + a
        reward = -abs(a - 0.3) - 0.01 * float(np.abs(self.x).mean())
        return self._obs(), reward, False, self.t >= EPISODE, {}


def _toy_base_vec_env(cfg, seed):
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    from agents.features import FeatureVecEnv
    from envs.contract import action_space, observation_space

    obs_space, act_space = observation_space(), action_space()
    venv = DummyVecEnv([lambda: _ToyCell(obs_space, act_space)] * cfg.backend.n_envs)
    venv.seed(seed)
    return FeatureVecEnv(VecMonitor(venv), cfg.features)


SMALL = [
    "backend=fast",
    "backend.n_envs=2",
    "scenario.sim_time_s=1",
    "agent.net_arch=[8]",
    "eval.freq=0",
    "eval_backend=fast",
    "eval_seeds=[7]",
    "eval_baselines=[xrc_policy]",
    "progress_bar=false",
    "seed=5",
]

AGENTS = {
    # rollout = 50 steps x 2 envs = 100 steps = 2 episodes of each env
    "ppo": ["agent=ppo", "agent.kwargs.n_steps=50", "agent.kwargs.batch_size=50"],
    "sac": [
        "agent=sac",
        "agent.kwargs.learning_starts=60",
        "agent.kwargs.batch_size=16",
        "agent.kwargs.buffer_size=2000",
    ],
}


def _params(run_dir: Path, algo: str):
    from agents.factory import algo_class

    model = algo_class(algo).load(run_dir / "model.zip", device="cpu")
    return model, model.policy.state_dict()


def _train(run_dir: Path, overrides: list[str]):
    from workflows.train import train

    return train(compose_train([f"run_dir={run_dir}", *SMALL, *overrides]))


@pytest.mark.parametrize(("agent", "algo"), [("ppo", "PPO"), ("sac", "SAC")])
def test_a_resumed_run_equals_the_unbroken_run(tmp_path, monkeypatch, agent, algo):
    from workflows.train import resume_config, train

    monkeypatch.setattr("agents.factory.make_base_vec_env", _toy_base_vec_env)
    total, stop = 600, 300  # stop: a checkpoint on an episode and update boundary
    whole = tmp_path / "whole"
    _train(whole, [*AGENTS[agent], f"total_timesteps={total}", "checkpoint_freq=100"])

    broken = tmp_path / "broken"
    _train(broken, [*AGENTS[agent], f"total_timesteps={stop}", "checkpoint_freq=100"])
    latest = json.loads((broken / "checkpoints" / "latest.json").read_text())
    assert latest["timesteps"] == stop
    out = train(resume_config(broken, [f"total_timesteps={total}"]))
    assert out["timesteps"] == total

    a, pa = _params(whole, algo)
    b, pb = _params(broken, algo)
    assert a.num_timesteps == b.num_timesteps == total
    assert a._n_updates == b._n_updates > 0
    assert pa.keys() == pb.keys()
    for key in pa:
        assert torch.equal(pa[key], pb[key]), key
    if agent == "ppo":
        # SB3's iteration counter goes on from the checkpoint's, not from 1 again.
        with (broken / "progress.csv").open(newline="") as f:
            its = [int(float(r["time/iterations"])) for r in csv.DictReader(f)]
        assert its == list(range(1, total // 100 + 1))


def test_on_policy_checkpoints_fall_between_updates(tmp_path, monkeypatch):
    """``checkpoint_freq`` not a multiple of the rollout: rounded up to whole rollouts."""
    monkeypatch.setattr("agents.factory.make_base_vec_env", _toy_base_vec_env)
    # rollout 100 steps; 250 -> every 300 steps, and at the end (500)
    _train(tmp_path, [*AGENTS["ppo"], "total_timesteps=500", "checkpoint_freq=250"])
    steps = sorted(
        int(p.stem.split("_")[-2]) for p in (tmp_path / "checkpoints").glob("ppo_*_steps.zip")
    )
    assert steps == [300, 500]
    latest = json.loads((tmp_path / "checkpoints" / "latest.json").read_text())
    assert latest["iterations"] == 5 and latest["timesteps"] == 500


@pytest.mark.parametrize("keep", [False, True])
def test_only_the_latest_replay_buffer_is_kept_unless_asked(tmp_path, monkeypatch, keep):
    monkeypatch.setattr("agents.factory.make_base_vec_env", _toy_base_vec_env)
    _train(
        tmp_path,
        [
            *AGENTS["sac"],
            "total_timesteps=300",
            "checkpoint_freq=100",
            f"keep_replay_buffers={str(keep).lower()}",
        ],
    )
    buffers = sorted((tmp_path / "checkpoints").glob("sac_replay_buffer_*_steps.pkl"))
    latest = json.loads((tmp_path / "checkpoints" / "latest.json").read_text())
    if keep:
        assert [p.name for p in buffers] == [
            f"sac_replay_buffer_{n}_steps.pkl" for n in (100, 200, 300)
        ]
    else:
        assert [p.name for p in buffers] == [latest["replay_buffer"]]
