"""Property-based fuzzing of ``LteCellEnv`` on the real ns-3 backend (marker ``ns3``).

A few examples only: each accepted scenario (``sim_time_s`` cut to at most 0.5 s) runs a real
episode reset and a few steps within a per-example timeout; a rejected one raises a ``SpecError``
naming the field. Strategies: ``tests/cellgym/test_fuzz_specs.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings

from cellgym.vocab import EXPLICIT_CCAS, FAST_ONLY_CCAS
from envs.lte_cell import LteCellEnv
from tests.cellgym.test_fuzz_specs import _scenario, field_names, outcome, rewards, scenarios
from tests.envs.test_fuzz_envs import kwargs_of

pytestmark = [pytest.mark.ns3, pytest.mark.timeout(300)]

#: Longest wait for one simulator message in an example (the per-example timeout).
STEP_TIMEOUT_S = 20.0


def short(scenario: Any) -> Any:
    """The scenario with ``sim_time_s`` at most 0.5 s where it is a valid number."""
    if isinstance(scenario, dict):
        t = scenario.get("sim_time_s", 10.0)
        if isinstance(t, int | float) and not isinstance(t, bool) and 0.001 <= t <= 1e6:
            return {**scenario, "sim_time_s": min(t, 0.5)}
    return scenario


@settings(
    max_examples=15,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    scenario=_scenario(True, True) | _scenario(True, True) | scenarios(agent=True),
    reward=rewards(),
    kwargs=kwargs_of(lte=True),
)
@example(
    scenario={"sim_time_s": 0.5, "num_ues": 256, "flows": [{"cca": "agent", "ue": 255}]},
    reward=None,
    kwargs={},
)
@example(scenario={"flows": [{"cca": "agent", "start_s": math.inf}]}, reward=None, kwargs={})
def test_lte_cell_env_ns3(scenario: Any, reward: Any, kwargs: dict[str, Any]) -> None:
    scenario = short(scenario)
    kwargs = {**kwargs, "timeout_s": STEP_TIMEOUT_S} if "timeout_s" in kwargs else kwargs
    names = field_names(scenario, "scenario") + field_names(reward, "reward") + list(kwargs)
    env = outcome(lambda: LteCellEnv(scenario, reward, backend="ns3", **kwargs), names)
    if env is None:
        return
    try:
        flows = env.spec_scenario.flows
        assert not any(f.cca in FAST_ONLY_CCAS for f in flows)
        # XCP and RCP share no bottleneck (one router kind per scenario).
        assert len({f.cca for f in flows if f.cca in EXPLICIT_CCAS}) <= 1
        obs, _ = env.reset(seed=0)
        for _ in range(3):
            obs, r, terminated, _, _ = env.step(np.zeros(1, dtype=np.float32))
            assert np.all(np.isfinite(obs)) and math.isfinite(r)
            if terminated:
                break
    finally:
        env.close()
