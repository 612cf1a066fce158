"""``learners.ppo`` against SB3's PPO: the same arithmetic, learning and determinism.

Arithmetic: the Gaussian log density, GAE (against ``RolloutBuffer``) and the reward scaling
(against ``VecNormalize``). Learning: on a toy task (points steered to targets on a line) and on
a fast cell, SB3's PPO and the learner, with the same hyperparameters and number of steps, both
beat a random policy by a comparable margin. Determinism: the same seed gives the same parameters
after several updates, a different seed other ones.
"""

from __future__ import annotations

import copy
from dataclasses import asdict
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces
from stable_baselines3 import PPO as Sb3PPO
from stable_baselines3.common.buffers import RolloutBuffer
from stable_baselines3.common.vec_env import VecEnv, VecNormalize

from agents.factory import NormalizedPolicy
from learners.cells import FastCells
from learners.policy import PPOPolicy
from learners.ppo import PPO, PPOConfig, gaussian_log_prob


class Reach:
    """``num_envs`` points on a line, each steered to its target: a ``learners.ppo.BatchEnv``.

    Observation ``(x, target)``; the action moves ``x`` by ``0.5 * a``; the reward is
    ``-|x - target|``; an episode lasts ``horizon`` steps from a uniform ``x`` and target in
    [-1, 1]. A uniformly random policy scores about -0.75 a step, steering straight to the
    target about -0.2.
    """

    def __init__(self, num_envs: int, seed: int, horizon: int = 16) -> None:
        self.num_envs = num_envs
        self.horizon = horizon
        self.observation_space = spaces.Box(-3.0, 3.0, (2,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
        self.rng = np.random.default_rng(seed)
        self.x = np.zeros(num_envs)
        self.target = np.zeros(num_envs)
        self.t = np.zeros(num_envs, dtype=np.int64)

    def _draw(self, mask: np.ndarray) -> None:
        n = int(mask.sum())
        self.x[mask] = self.rng.uniform(-1, 1, n)
        self.target[mask] = self.rng.uniform(-1, 1, n)
        self.t[mask] = 0

    def _obs(self) -> np.ndarray:
        return np.stack([self.x, self.target], axis=1).astype(np.float32)

    def reset(self) -> np.ndarray:
        self._draw(np.ones(self.num_envs, dtype=np.bool_))
        return self._obs()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a = np.clip(np.asarray(actions, dtype=np.float64).reshape(self.num_envs), -1, 1)
        self.x = np.clip(self.x + 0.5 * a, -3, 3)
        reward = -np.abs(self.x - self.target)
        self.t += 1
        done = self.t >= self.horizon
        self._draw(done)
        return self._obs(), reward.astype(np.float32), done


class ReachVecEnv(VecEnv):
    """``Reach`` as an SB3 ``VecEnv`` (episode ends are terminations, as for the learner)."""

    def __init__(self, reach: Reach) -> None:
        super().__init__(reach.num_envs, reach.observation_space, reach.action_space)
        self.reach = reach
        self._actions: Any = None

    def reset(self) -> np.ndarray:
        return self.reach.reset()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> Any:
        obs, reward, done = self.reach.step(self._actions)
        return obs, reward, done, [{} for _ in range(self.num_envs)]

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [None] * self.num_envs

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        pass

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kw: Any) -> list:
        return [None] * self.num_envs

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        return [False] * self.num_envs


def mean_reward(predict: Any, env: Any, steps: int) -> float:
    """Mean reward per step of ``predict`` (``obs -> actions``) over ``steps`` steps of ``env``."""
    obs = env.reset()
    total = 0.0
    for _ in range(steps):
        obs, reward, _ = env.step(predict(obs))
        total += float(np.mean(reward))
    return total / steps


def random_actions(seed: int) -> Any:
    rng = np.random.default_rng(seed)
    return lambda obs: rng.uniform(-1, 1, (len(obs), 1)).astype(np.float32)


# -- arithmetic ---------------------------------------------------------------------------------
def test_gaussian_log_prob_is_torch_normal_summed():
    g = torch.Generator().manual_seed(0)
    mean, actions = torch.randn(5, 3, generator=g), torch.randn(5, 3, generator=g)
    log_std = torch.tensor([-1.0, 0.0, 0.5])
    expected = torch.distributions.Normal(mean, log_std.exp()).log_prob(actions).sum(-1)
    torch.testing.assert_close(gaussian_log_prob(actions, mean, log_std), expected)


def test_gae_equals_sb3_rollout_buffer():
    n_steps, n = 9, 4
    rng = np.random.default_rng(1)
    rewards = rng.normal(size=(n_steps, n)).astype(np.float32)
    values = rng.normal(size=(n_steps, n)).astype(np.float32)
    dones = rng.random((n_steps, n)) < 0.2
    last_value = rng.normal(size=n).astype(np.float32)

    agent = PPO(Reach(n, 0), PPOConfig(n_steps=n_steps, gamma=0.9, gae_lambda=0.8))
    agent.buf.rewards[:] = torch.from_numpy(rewards)
    agent.buf.values[:] = torch.from_numpy(values)
    agent.buf.dones[:] = torch.from_numpy(dones.astype(np.float32))
    agent._gae(torch.from_numpy(last_value))

    space = spaces.Box(-1, 1, (1,), np.float32)
    sb3 = RolloutBuffer(n_steps, space, space, n_envs=n, gamma=0.9, gae_lambda=0.8)
    for t in range(n_steps):
        # SB3 stores episode starts: the previous step's dones.
        start = dones[t - 1] if t > 0 else np.zeros(n, dtype=bool)
        sb3.add(
            np.zeros((n, 1)), np.zeros((n, 1)), rewards[t], start, torch.from_numpy(values[t]),
            torch.zeros(n),
        )  # fmt: skip
    sb3.compute_returns_and_advantage(torch.from_numpy(last_value), dones[-1])
    np.testing.assert_allclose(agent.buf.advantages.numpy(), sb3.advantages, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(agent.buf.returns.numpy(), sb3.returns, rtol=1e-5, atol=1e-6)


def test_reward_scaling_and_observation_normalisation_are_vecnormalize():
    n = 6
    agent = PPO(Reach(n, 0), PPOConfig(gamma=0.95))
    vn = VecNormalize(ReachVecEnv(Reach(n, 0)), gamma=0.95)
    vn.returns = np.zeros(n)
    rng = np.random.default_rng(2)
    for _ in range(30):
        reward = rng.normal(size=n).astype(np.float32)
        done = rng.random(n) < 0.1
        obs = rng.normal(size=(n, 2)).astype(np.float32) * 5
        ours = agent._scale_reward(reward, done)
        vn._update_reward(reward)
        theirs = vn.normalize_reward(reward)
        vn.returns[done] = 0
        np.testing.assert_array_equal(ours, theirs)
        ours_obs = agent._normalize(obs).numpy()
        vn.obs_rms.update(obs)
        np.testing.assert_array_equal(ours_obs, vn.normalize_obs(obs))


# -- learning -----------------------------------------------------------------------------------
TOY = {"n_steps": 64, "batch_size": 256, "n_epochs": 4, "gamma": 0.9, "learning_rate": 1e-3}


def test_learns_the_toy_task_as_sb3_does():
    steps, seed = 16_384, 5
    agent = PPO(Reach(16, seed), PPOConfig(**TOY, seed=seed)).learn(steps)
    ours = PPOPolicy.from_learner(agent)

    venv = VecNormalize(ReachVecEnv(Reach(16, seed)), gamma=TOY["gamma"])
    model = Sb3PPO(
        "MlpPolicy",
        venv,
        seed=seed,
        device="cpu",
        policy_kwargs={"net_arch": [64, 64], "log_std_init": -1.0},
        **TOY,
    ).learn(steps)
    theirs = NormalizedPolicy(model, venv, "raw")

    def score(policy: Any) -> float:
        return mean_reward(lambda o: policy.predict(o, deterministic=True)[0], Reach(64, 99), 64)

    random = mean_reward(random_actions(0), Reach(64, 99), 64)
    gain_ours, gain_sb3 = score(ours) - random, score(theirs) - random
    assert gain_sb3 > 0.25, (random, gain_sb3)
    assert gain_ours > 0.25, (random, gain_ours)
    assert 0.7 < gain_ours / gain_sb3 < 1.4, (gain_ours, gain_sb3)


@pytest.mark.slow  # about 25-40 s on a busy 2-core machine: random -0.965; gains 0.931, 0.902
def test_overlapped_rollouts_learn_the_toy_task_as_synchronous_ones():
    """``overlap``: the next rollout acts with the policy before the update (one update of lag).

    The same steps and hyperparameters, three seeds each: the mean gain over a random policy
    within 0.8-1.25x of the synchronous learner's.
    """
    steps = 16_384
    random = mean_reward(random_actions(0), Reach(64, 99), 64)

    def gain(seed: int, overlap: bool) -> float:
        agent = PPO(Reach(16, seed), PPOConfig(**TOY, seed=seed, overlap=overlap)).learn(steps)
        assert agent.num_timesteps == steps and agent.iterations == steps // (16 * 64)
        policy = PPOPolicy.from_learner(agent)
        act = lambda o: policy.predict(o, deterministic=True)[0]  # noqa: E731
        return mean_reward(act, Reach(64, 99), 64) - random

    sync = np.mean([gain(seed, False) for seed in (5, 6, 7)])
    lagged = np.mean([gain(seed, True) for seed in (5, 6, 7)])
    print(f"random {random:.3f}; gain: synchronous {sync:.3f}, overlapped {lagged:.3f}")
    assert sync > 0.25 and lagged > 0.25, (random, sync, lagged)
    assert 0.8 < lagged / sync < 1.25, (sync, lagged)


# -- determinism --------------------------------------------------------------------------------
def _trained(env: Any, seed: int, **kw: Any) -> PPO:
    config = PPOConfig(n_steps=16, batch_size=64, n_epochs=2, seed=seed, **kw)
    return PPO(env, config).learn(3 * 16 * env.num_envs)


def _same(a: PPO, b: PPO) -> bool:
    pairs = zip(a.net.state_dict().values(), b.net.state_dict().values(), strict=True)
    return all(torch.equal(x, y) for x, y in pairs)


def test_same_seed_same_parameters_after_updates_on_the_toy_task():
    a, b = _trained(Reach(8, 1), seed=3), _trained(Reach(8, 1), seed=3)
    assert a.iterations == 3 and _same(a, b)
    np.testing.assert_array_equal(a.obs_rms.mean, b.obs_rms.mean)
    assert not _same(a, _trained(Reach(8, 1), seed=4))


def test_same_seed_same_parameters_after_updates_on_fast_cells():
    def cells() -> FastCells:
        spec = {"flows": [{"cca": "agent"}], "sim_time_s": 0.5}  # 25 steps: resets within
        return FastCells([(spec, {}, 4)], features="derived", seed=7)

    a, b = _trained(cells(), seed=3, net_arch=(8,)), _trained(cells(), seed=3, net_arch=(8,))
    assert a.num_timesteps == b.num_timesteps == 3 * 16 * 4
    assert _same(a, b) and a.episodes.returns == b.episodes.returns
    assert len(a.episodes.returns) >= 4


def test_overlapped_rollouts_are_reproducible_and_use_the_policy_before_the_update():
    a = _trained(Reach(8, 1), seed=3, overlap=True)
    b = _trained(Reach(8, 1), seed=3, overlap=True)
    assert a.iterations == 3 and a.num_timesteps == 3 * 16 * 8 and _same(a, b)
    np.testing.assert_array_equal(a.obs_rms.mean, b.obs_rms.mean)
    assert not _same(a, _trained(Reach(8, 1), seed=3))
    # The rollout used by update k was collected during update k - 1, by the policy before it.
    agent = PPO(Reach(8, 1), PPOConfig(n_steps=16, batch_size=64, n_epochs=2, seed=3, overlap=True))
    after: list[dict[str, torch.Tensor]] = []
    agent.learn(3 * 16 * 8, callback=lambda a: after.append(copy.deepcopy(a.net.state_dict())))
    assert len(after) == 3 and agent._behaviour is not None
    behaviour = agent._behaviour.state_dict()  # collected the third rollout, during update 2
    assert all(torch.equal(behaviour[k], after[0][k]) for k in behaviour)
    assert not all(torch.equal(behaviour[k], after[1][k]) for k in behaviour)


@pytest.mark.parametrize("bad", [{"n_steps": 0}, {"gamma": 1.5}, {"clip_range": 0.0}])
def test_config_rejects_out_of_range_values(bad):
    with pytest.raises(ValueError):
        PPOConfig(**bad)


@pytest.mark.slow  # about 35 s on a busy 2-core machine: random 0.220; gains 0.700 ours, 0.651 SB3
def test_learns_a_fast_cell_as_sb3_does():
    from agents.factory import make_model, make_vec_env
    from configs.schema import compose_train, validate_train
    from envs.fastsim.vector_env import make_fast_vec_env
    from learners.run import make_learner

    steps, seed = 32_768, 2
    cfg = validate_train(
        compose_train(
            [
                "run_dir=/tmp/x",
                "backend=fast",
                "backend.n_envs=16",
                "scenario.sim_time_s=2.0",
                "features=derived",
                "+agent.policy_kwargs.log_std_init=-1.0",
                "agent.kwargs.n_steps=64",
                "agent.kwargs.batch_size=256",
                "+agent.kwargs.n_epochs=4",
            ]
        )
    )
    _, agent = make_learner(cfg, seed)
    agent.learn(steps)
    ours = PPOPolicy.from_learner(agent)
    venv = make_vec_env(cfg, seed)
    model = make_model(cfg, venv, seed).learn(steps)
    theirs = NormalizedPolicy(model, venv, cfg.features)

    def score(predict: Any) -> float:  # one 2 s episode (100 steps) of 32 unseen cells
        env = make_fast_vec_env(cfg.scenario, 32, seed=1000, reward=asdict(cfg.reward))
        obs, _ = env.reset(seed=1000)
        total = 0.0
        for _ in range(100):
            obs, reward, *_ = env.step(predict(obs))
            total += float(np.mean(reward))
        return total / 100

    random = score(random_actions(0))
    gain_ours = score(lambda o: ours.predict(o, deterministic=True)[0]) - random
    gain_sb3 = score(lambda o: theirs.predict(o, deterministic=True)[0]) - random
    print(f"random {random:.3f}, gain: learner {gain_ours:.3f}, SB3 {gain_sb3:.3f}")
    assert gain_sb3 > 0.3 and gain_ours > 0.3, (random, gain_ours, gain_sb3)
    assert 0.6 < gain_ours / gain_sb3 < 1.6, (gain_ours, gain_sb3)
