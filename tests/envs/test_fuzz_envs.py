"""Property-based fuzzing of the environments on the fast backend.

Any scenario, reward and environment argument is either rejected with a ``SpecError`` naming the
field, or accepted, and then the environment resets and runs a few steps with finite
observations and rewards: ``LteCellEnv(..., backend="fast")`` and ``make_fast_vec_env`` with 2
cells. Strategies: ``tests/cellgym/test_fuzz_specs.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from envs.fastsim.vector_env import make_fast_vec_env
from envs.lte_cell import LteCellEnv
from tests.cellgym.test_fuzz_specs import (
    GARBAGE,
    choice,
    field_names,
    number,
    outcome,
    rewards,
    scenarios,
)


def env_args(ok: bool, lte: bool) -> dict[str, Any]:
    """Environment arguments and each one's strategy (``ok``: valid values only)."""
    args = {"action_mode": choice(("cwnd", "rate"), ok), "max_change": number(1.0, 100.0, ok=ok)}
    if lte:
        args["timeout_s"] = number(1e-3, 86_400.0, ok=ok)
    else:
        args["parallel"] = st.none() | st.booleans() if ok else st.none() | GARBAGE
        args["include_raw"] = st.booleans() if ok else GARBAGE
    return args


def kwargs_of(lte: bool) -> Any:
    good = st.fixed_dictionaries({}, optional=env_args(True, lte))
    bad = st.fixed_dictionaries({}, optional=env_args(False, lte))
    return st.one_of(good, good, bad)


STEPS = 3

SETTINGS = settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def names(scenario: Any, reward: Any, kwargs: dict[str, Any]) -> list[str]:
    out = field_names(scenario, "scenario") + field_names(reward, "reward")
    return out + list(kwargs)


def check_run(obs: np.ndarray, rewards_: list[Any]) -> None:
    assert np.all(np.isfinite(obs)), obs
    assert all(np.all(np.isfinite(r)) for r in rewards_), rewards_


@SETTINGS
@given(
    scenario=scenarios(agent=True),
    reward=rewards(),
    kwargs=kwargs_of(lte=True),
    action=st.floats(-1, 1),
)
@example(scenario={"flows": [{"cca": "agent", "start_s": math.inf}]}, reward=None, kwargs={},
         action=0.0)  # fmt: skip
@example(scenario=None, reward={"w_delay": math.inf}, kwargs={}, action=1.0)
@example(scenario=None, reward=None, kwargs={"timeout_s": math.inf}, action=0.0)
@example(scenario={"bottleneck_mbps": 1.0}, reward=None, kwargs={}, action=0.0)
@example(
    scenario={"flows": [{"cca": "agent"}, {"cca": "illinois"}]}, reward=None, kwargs={}, action=0.0
)
def test_lte_cell_env_fast(scenario: Any, reward: Any, kwargs: dict[str, Any], action: float):
    env = outcome(
        lambda: LteCellEnv(scenario, reward, backend="fast", **kwargs),
        names(scenario, reward, kwargs),
    )
    if env is None:
        return
    fields = names(scenario, reward, kwargs)
    try:
        # The fast model's own limits (its congestion controls, trace channels) are checked
        # when the episode's model is built: also a SpecError naming the field.
        if outcome(lambda: env.reset(seed=0), fields) is None:
            return
        rewards_ = []
        for _ in range(STEPS):
            obs, r, terminated, truncated, _ = env.step(np.array([action], dtype=np.float32))
            rewards_.append(r)
            check_run(obs, rewards_)
            if terminated:
                obs, _ = env.reset()
    finally:
        env.close()


@SETTINGS
@given(
    scenario=scenarios(agent=True),
    reward=rewards(),
    kwargs=kwargs_of(lte=False),
    num_envs=st.just(2) | number(1, 4, "int"),
    seed=st.none() | number(0, 2**31, "int"),
)
@example(scenario=None, reward=None, kwargs={}, num_envs=0, seed=None)
@example(scenario=None, reward=None, kwargs={}, num_envs=-1, seed=None)
@example(scenario=None, reward=None, kwargs={}, num_envs="2", seed=None)
@example(scenario=None, reward=None, kwargs={}, num_envs=2, seed="1")
@example(scenario=None, reward=None, kwargs={}, num_envs=2, seed=-1)
@example(scenario=None, reward=None, kwargs={"include_raw": "yes"}, num_envs=2, seed=0)
@example(scenario={"num_ues": 256, "rlc_buffer_pkts": 3906}, reward=None, kwargs={}, num_envs=2,
         seed=0)  # fmt: skip
def test_fast_vec_env(scenario: Any, reward: Any, kwargs: dict[str, Any], num_envs: Any, seed: Any):
    fields = names(scenario, reward, kwargs) + ["num_envs", "seed"]
    env = outcome(
        lambda: make_fast_vec_env(scenario, num_envs, seed=seed, reward=reward, **kwargs), fields
    )
    if env is None:
        return
    try:
        obs, _ = env.reset()
        rewards_ = []
        for _ in range(STEPS):
            obs, r, _, _, info = env.step(np.zeros((num_envs, 1)))
            rewards_.append(r)
            check_run(obs, rewards_)
            if kwargs.get("include_raw"):
                assert info["flows"].shape[0] == num_envs
    finally:
        env.close()
