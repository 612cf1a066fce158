"""``LteCellEnv`` on the fast backend: the one-call compiled step equals the Python path."""

from __future__ import annotations

import numpy as np
import pytest

from envs.lte_cell import LteCellEnv

SCENARIOS = {
    "single": {"sim_time_s": 4.0},
    "shared": {
        "sim_time_s": 3.0,
        "num_ues": 2,
        "mobility": "random",
        "mobility_period_s": 0.5,
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
