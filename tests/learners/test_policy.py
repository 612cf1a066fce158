"""``learners.policy.PPOPolicy``: SB3's ``predict`` on raw observations, its file, the SB3 export.

The export is checked the way ``evaluate.py`` loads a run: ``resolve_checkpoint`` on a run
directory (``model.zip``, ``vecnormalize.pkl``, ``.hydra/config.yaml``) and
``load_checkpoint_policy``, whose actions must equal the learner's policy's.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.fastsim.vector_env import make_fast_vec_env
from evaluation.resolve import load_checkpoint_policy, resolve_checkpoint
from learners.cells import FastCells
from learners.policy import PPOPolicy
from learners.ppo import PPO, PPOConfig

SPEC = {"flows": [{"cca": "agent"}], "sim_time_s": 1.0}


@pytest.fixture(scope="module")
def trained() -> PPOPolicy:
    cells = FastCells([(SPEC, {}, 8)], features="derived", seed=0)
    config = PPOConfig(n_steps=16, batch_size=64, n_epochs=2, net_arch=(16, 16), seed=0)
    agent = PPO(cells, config, features="derived").learn(2 * 16 * 8)
    return PPOPolicy.from_learner(agent)


@pytest.fixture(scope="module")
def raw_obs() -> np.ndarray:
    """Raw observations (11 values) of 6 cells, 20 steps into an episode."""
    env = make_fast_vec_env(SPEC, num_envs=6, seed=3)
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        obs, *_ = env.step(rng.uniform(-1, 1, (6, 1)))
    assert obs.shape == (6, 11)
    return obs


def test_predict_has_sb3_shapes_and_bounds(trained, raw_obs):
    actions, state = trained.predict(raw_obs, deterministic=True)
    assert actions.shape == (6, 1) and actions.dtype == np.float32 and state is None
    single, _ = trained.predict(raw_obs[0], deterministic=True)
    assert single.shape == (1,)
    np.testing.assert_allclose(single, actions[0], rtol=1e-6, atol=1e-7)
    noisy, _ = trained.predict(raw_obs, deterministic=False)
    assert not np.array_equal(noisy, actions) and np.all(np.abs(noisy) <= 1.0)


def test_save_and_load_give_the_same_actions(trained, raw_obs, tmp_path):
    trained.save(tmp_path / "policy.pt")
    loaded = PPOPolicy.load(tmp_path / "policy.pt")
    assert loaded.features == "derived" and loaded.config == trained.config
    np.testing.assert_array_equal(
        loaded.predict(raw_obs, deterministic=True)[0],
        trained.predict(raw_obs, deterministic=True)[0],
    )


def test_the_sb3_export_is_evaluated_like_an_sb3_run(trained, raw_obs, tmp_path):
    trained.export_sb3(tmp_path / "model.zip", tmp_path / "vecnormalize.pkl")
    (tmp_path / ".hydra").mkdir()
    (tmp_path / ".hydra" / "config.yaml").write_text(
        "agent: {name: ppo, algo: PPO}\nfeatures: derived\nnorm_obs: true\n"
    )
    spec = resolve_checkpoint(tmp_path)
    assert (spec.algo, spec.features) == ("PPO", "derived") and spec.vecnormalize is not None
    policy = load_checkpoint_policy(spec, deterministic=True)
    np.testing.assert_allclose(
        policy.predict(raw_obs)[0], trained.predict(raw_obs, deterministic=True)[0], atol=1e-6
    )
