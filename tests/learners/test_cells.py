"""``learners.cells.FastCells``: the SB3 path's environment, cell for cell, without its Python."""

from __future__ import annotations

import numpy as np
import pytest

from agents.factory import make_base_vec_env
from cellgym.vocab import SpecError
from configs.schema import compose_train, validate_train
from learners.cells import FastCells, config_batches

# Two scenarios of 1 s (50 steps), two cells each, both uplink models: 8 cells, derived features.
SMALL_MIXTURE = [
    "run_dir=/tmp/x",
    "experiment=default",
    "mixture.scenarios=[{scenario:fluctuating,n_envs:2,overrides:{sim_time_s:1.0}},"
    "{scenario:vs_cubic,n_envs:2,overrides:{sim_time_s:1.0}}]",
]


def test_cells_see_the_observations_and_rewards_of_the_sb3_path():
    typed = validate_train(compose_train(SMALL_MIXTURE))
    assert typed.features == "derived"
    sb3 = make_base_vec_env(typed, seed=40)  # FeatureVecEnv > VecMonitor > ConcatVecEnv
    cells = FastCells.from_config(typed, seed=40)
    assert cells.num_envs == sb3.num_envs == 8
    assert cells.observation_space == sb3.observation_space
    np.testing.assert_array_equal(cells.reset(), sb3.reset())
    rng = np.random.default_rng(0)
    ends = 0
    for a in rng.uniform(-1, 1, size=(120, 8, 1)).astype(np.float32):  # two episode ends
        obs, reward, done = cells.step(a)
        obs_sb3, reward_sb3, done_sb3, _ = sb3.step(a)
        np.testing.assert_array_equal(obs, obs_sb3)
        np.testing.assert_array_equal(reward, reward_sb3)
        np.testing.assert_array_equal(done, done_sb3)
        ends += int(done.sum())
    assert ends == 2 * 8
    assert cells.timings["sim"] > 0
    sb3.close()
    cells.close()


def test_scaling_keeps_the_mixture_proportions():
    typed = validate_train(compose_train(SMALL_MIXTURE))
    base = config_batches(typed)
    scaled = config_batches(typed, cells_scale=3)
    assert [n for _, _, n in scaled] == [3 * n for _, _, n in base] == [6, 6, 6, 6]
    assert [(s.name, k) for s, k, _ in scaled] == [(s.name, k) for s, k, _ in base]


def test_a_single_scenario_is_one_batch_of_backend_n_envs():
    typed = validate_train(compose_train(["run_dir=/tmp/x", "backend=fast", "backend.n_envs=3"]))
    [(spec, knobs, n)] = config_batches(typed, cells_scale=2)
    assert (spec.name, knobs, n) == (typed.scenario.name, {}, 6)


@pytest.mark.parametrize(
    ("overrides", "scale", "match"),
    [
        (["backend=ns3"], 1, "fast backend only"),
        (["backend=fast", "scenario=multi_agent2"], 1, "one agent flow"),
        (["backend=fast"], 0, "cells_scale"),
    ],
)
def test_what_fast_cells_cannot_run_fails_naming_it(overrides, scale, match):
    typed = validate_train(compose_train(["run_dir=/tmp/x", *overrides]))
    with pytest.raises(SpecError, match=match):
        config_batches(typed, cells_scale=scale)


def test_make_learner_keeps_torch_threads_when_cells_step_on_threads():
    """Cells on threads start numba's OpenMP layer, which set torch's thread count to its own."""
    import torch

    from learners.run import make_learner

    typed = validate_train(compose_train(["run_dir=/tmp/x", "backend=fast", "backend.n_envs=2"]))
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        cells, agent = make_learner(typed, 0, parallel=True, n_steps=2, batch_size=4)
        assert torch.get_num_threads() == 1
        agent.learn(2 * cells.num_envs)
        assert torch.get_num_threads() == 1
        cells.close()
    finally:
        torch.set_num_threads(before)
