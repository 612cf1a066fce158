"""``LteCellEnv`` on the fast backend: the one-call compiled step equals the Python path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from envs.lte_cell import LteCellEnv

SCENARIOS = {
    "single": {"sim_time_s": 4.0},
    "shared": {
        "sim_time_s": 3.0,
        "num_ues": 2,
        "channel": {"mobility": "random", "mobility_period_s": 0.5},
        "flows": [
            {"cca": "cubic", "ue": 0},
            {"cca": "agent", "ue": 0},
            {"cca": "newreno", "ue": 1},
        ],
    },
}


def trajectory(fused: bool, scenario: dict, action_mode: str) -> list[tuple]:
    env = LteCellEnv(
        scenario=scenario,
        backend="fast",
        action_mode=action_mode,
        max_change=3.0,
        reward={"w_fairness": 0.3, "delay_budget_ms": 7.0},
    )
    env.fused_step = fused
    rng = np.random.default_rng(4)
    out: list[tuple] = []
    for seed in (5, 6):  # two episodes: the rate agent's state restarts with each
        obs, info = env.reset(seed=seed)
        out.append((obs, info["flows"], info["ues"]))
        terminated = False
        while not terminated:
            # Beyond [-1, 1] too: the environment clips.
            action = rng.uniform(-1.3, 1.3, size=1).astype(np.float32)
            obs, reward, terminated, truncated, info = env.step(action)
            terms = [info[k] for k in ("utilization", "delay_ms", "delay_penalty", "jain")]
            out.append((obs, reward, terminated, info["t"], info["flows"], info["ues"], terms))
    env.close()
    return out


@pytest.mark.parametrize("action_mode", ["cwnd", "rate"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_fused_step_equals_python_path(scenario: str, action_mode: str):
    fused = trajectory(True, SCENARIOS[scenario], action_mode)
    python = trajectory(False, SCENARIOS[scenario], action_mode)
    assert len(fused) == len(python) > 100
    for k, (x, y) in enumerate(zip(fused, python, strict=True)):
        for u, v in zip(x, y, strict=True):
            # Bit for bit: same float64 operations in the same order.
            np.testing.assert_array_equal(np.asarray(u), np.asarray(v), err_msg=f"step {k}")
    obs = np.stack([x[0] for x in fused[1:]])
    assert obs.dtype == np.float32 and np.all(obs >= 0)
    assert np.ptp(obs[:, 5]) > 0  # the window moved: the actions reached the sender


def test_fused_step_is_the_fast_default_and_rejects_stepping_past_the_end():
    env = LteCellEnv(scenario={"sim_time_s": 0.1}, backend="fast")
    assert env.fused_step
    env.reset(seed=1)
    terminated = False
    while not terminated:
        _, _, terminated, _, _ = env.step(np.zeros(1, np.float32))
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(1, np.float32))


@pytest.mark.parametrize("action_mode", ["cwnd", "rate"])
def test_vector_env_cell_equals_single_env_across_autoreset(action_mode: str):
    from envs.fastsim.vector_env import make_fast_vec_env

    sc = {"flows": [{"cca": "cubic"}, {"cca": "agent"}], "sim_time_s": 0.5}
    actions = np.random.default_rng(1).uniform(-1, 1, (60, 3, 1)).astype(np.float32)
    venv = make_fast_vec_env(sc, num_envs=3, seed=20, action_mode=action_mode)
    obs, _ = venv.reset(seed=20)
    batch = [obs[1]]
    for k in range(60):
        obs, reward, terminated, _, _ = venv.step(actions[k])
        batch.append(np.append(obs[1], reward[1]))
    # Cell 1 is the single env seeded 21; the vector env resets it on the step after its end
    # (next-step autoreset: that step's action is ignored, reward 0).
    env = LteCellEnv(scenario=sc, backend="fast", action_mode=action_mode)
    single = [env.reset(seed=21)[0]]
    done = False
    for k in range(60):
        if done:
            obs, _ = env.reset()
            single.append(np.append(obs, 0.0))
            done = False
            continue
        obs, reward, done, _, _ = env.step(actions[k, 1])
        single.append(np.append(obs, reward))
    for k, (x, y) in enumerate(zip(batch, single, strict=True)):
        np.testing.assert_array_equal(x, y, err_msg=f"step {k}")


def test_numba_cache_directory_follows_every_kernel_source(tmp_path, monkeypatch):
    from numba.core import config

    from envs.fastsim import _numba_cache, core

    names = {p.name for p in _numba_cache.SOURCES}
    assert {"core.py", "single.py", "state.py", "params.py", "fields.py"} <= names
    # The package's kernels were decorated with the current digest's directory.
    assert _numba_cache.sources_digest()[:16] in core.step_batch._cache._cache_path
    old = tmp_path / (_numba_cache.PREFIX + "0123456789abcdef")
    old.mkdir()
    current = _numba_cache.cache_dir(tmp_path)
    assert current.name == _numba_cache.PREFIX + _numba_cache.sources_digest()[:16]
    assert not old.exists()  # another digest's machine code is gone
    saved = config.CACHE_DIR
    with _numba_cache.kernel_cache_dir(tmp_path) as path:
        assert config.CACHE_DIR == str(path) == str(current)
    assert config.CACHE_DIR == saved
    # An edited source gives another directory.
    monkeypatch.setattr(_numba_cache, "SOURCES", (*_numba_cache.SOURCES, Path(__file__)))
    assert _numba_cache.cache_dir(tmp_path) != current
