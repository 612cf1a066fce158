"""Boundary cases of the metrics and the reward, each worked out by hand.

Every check below is run twice: on the real ``cellgym.metrics`` / ``cellgym.reward``, where it
must pass, and on a copy of the module with one deliberate boundary bug, where it must fail
(``test_each_boundary_mutation_is_caught``). The copies are built in memory from the modules'
source; the modules themselves are never changed.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from collections.abc import Callable
from types import ModuleType

import numpy as np
import pytest

import cellgym.metrics
import cellgym.reward
from cellgym.fields import FLOW, FLOW_FIELDS, UE, UE_FIELDS
from cellgym.reward import RewardSpec


def _flows(n):
    f = np.zeros((n, len(FLOW_FIELDS)))
    f[:, FLOW["fct_s"]] = -1
    return f


def _ues(n):
    return np.zeros((n, len(UE_FIELDS)))


# --------------------------------------------------------------------------------------------
# The checks, each given the module under test
# --------------------------------------------------------------------------------------------


def check_sample_at_the_budget_complies(metrics: ModuleType) -> None:
    # Budget 10 ms. 10.0 is within ("at most the budget"); 10.000001 is not.
    assert metrics.budget_compliance(np.array([10.0]), 10.0) == 1.0
    # 9.0, 10.0 within; 10.000001, 30.0 not: 2 of 4.
    samples = np.array([9.0, 10.0, 10.000001, 30.0])
    assert metrics.budget_compliance(samples, 10.0) == 0.5


def check_percentile_ignores_nan_and_inf(metrics: ModuleType) -> None:
    # Finite values 1 and 3: the median is 2; the 90th percentile 1 + 0.9 * 2 = 2.8.
    values = np.array([1.0, np.nan, 3.0, np.inf, -np.inf])
    assert metrics.percentile(values, 50) == 2.0
    assert metrics.percentile(values, 90) == pytest.approx(2.8)
    # Only non-finite values: nothing to take a percentile of.
    assert np.isnan(metrics.percentile(np.array([np.nan, np.inf]), 50))


def check_percentiles_ignore_nan_and_inf(metrics: ModuleType) -> None:
    # Finite values 1 and 3 (linear interpolation): p50 = 2, p90 = 2.8, p99 = 1 + 0.99 * 2 = 2.98.
    values = np.array([1.0, np.nan, 3.0, np.inf, -np.inf])
    p = metrics.percentiles(values)
    assert p["p50"] == 2.0
    assert p["p90"] == pytest.approx(2.8)
    assert p["p99"] == pytest.approx(2.98)
    # Only non-finite values count as no values.
    assert metrics.percentiles(np.array([np.nan, np.inf, -np.inf])) == {
        "p50": None,
        "p90": None,
        "p99": None,
    }


def _two_windows(metrics: ModuleType):
    """Four 0.5 s steps (two 1 s windows) of two flows on one UE.

    Window 1 (steps 1, 2): both flows active, 3000 and 1000 bytes a step: sums 6000 and 2000,
    Jain = 8000^2 / (2 * (6000^2 + 2000^2)) = 64 / 80 = 0.8.
    Window 2 (steps 3, 4): flow 1 active in step 3 only, so only flow 0 is active throughout:
    one flow, a window that does not count.
    """
    flows = np.stack([_flows(2) for _ in range(4)])
    flows[:, 0, FLOW["active"]] = 1
    flows[:2, 1, FLOW["active"]] = 1
    flows[2, 1, FLOW["active"]] = 1
    flows[:, 0, FLOW["rx_bytes"]] = 3000
    flows[:3, 1, FLOW["rx_bytes"]] = 1000
    return metrics.Measured(
        times=np.array([0.5, 1.0, 1.5, 2.0]),
        flows=flows,
        ues=np.stack([_ues(1) for _ in range(4)]),
        rewards=np.full(4, np.nan),
        flow_ue=np.array([0, 0]),
        step_s=0.5,
    )


def check_one_flow_windows_do_not_count(metrics: ModuleType) -> None:
    m = _two_windows(metrics)
    # Only window 1 counts: 0.8 (counting window 2 as Jain 1.0 would give 0.9).
    assert metrics.windowed_jain(m, fairness_window_s=1.0) == pytest.approx(0.8)
    # Flow 0 alone throughout: no window counts, the index is 1.0 by definition.
    alone = _two_windows(metrics)
    alone.flows[:, 1, FLOW["active"]] = 0
    assert metrics.windowed_jain(alone, fairness_window_s=1.0) == 1.0
    # One window of 2 s (all four steps): flow 1 is not active throughout, it does not count.
    assert metrics.windowed_jain(m, fairness_window_s=2.0) == 1.0


def _one_flow_step(hol_ms: float):
    """One active flow on UE 0 delivering 25,000 bytes in a 20 ms step (10 Mbit/s of 20)."""
    flows, ues = _flows(1), _ues(1)
    flows[0, FLOW["active"]] = 1
    flows[0, FLOW["rx_bytes"]] = 25_000
    ues[0, UE["capacity_mbps"]] = 20
    ues[0, UE["hol_ms"]] = hol_ms
    return flows, ues


def check_delay_penalty_is_capped(reward: ModuleType) -> None:
    spec = RewardSpec(w_utilization=1, w_delay=0.5, w_fairness=0.2, delay_budget_ms=10)
    # max_delay_penalty defaults to 10 budgets over the budget.
    assert spec.max_delay_penalty == 10
    # HoL 1010 ms: (1010 - 10) / 10 = 100 budgets over, capped at 10.
    # reward = 1 * 0.5 - 0.5 * 10 + 0.2 * 1 (one flow) = -4.3.
    flows, ues = _one_flow_step(1010.0)
    t = reward.reward_terms(flows, ues, np.array([0]), 0, 0.02, spec)
    assert t["delay_ms"] == 1010.0
    assert t["delay_penalty"] == 10.0
    assert t["reward"] == pytest.approx(0.5 - 5.0 + 0.2)
    # Just under the cap: HoL 105 ms, (105 - 10) / 10 = 9.5, not clipped.
    flows, ues = _one_flow_step(105.0)
    assert reward.reward_terms(flows, ues, np.array([0]), 0, 0.02, spec)[
        "delay_penalty"
    ] == pytest.approx(9.5)
    # A delay exactly at the budget costs nothing.
    flows, ues = _one_flow_step(10.0)
    assert reward.reward_terms(flows, ues, np.array([0]), 0, 0.02, spec)["delay_penalty"] == 0.0


def check_batch_delay_penalty_is_capped(reward: ModuleType) -> None:
    spec = RewardSpec(delay_budget_ms=10, max_delay_penalty=3)
    # Three cells: HoL 10 ms (at the budget: 0), 35 ms (2.5), 1010 ms (100, capped at 3).
    cells = [_one_flow_step(h) for h in (10.0, 35.0, 1010.0)]
    flows = np.stack([f for f, _ in cells])
    ues = np.stack([u for _, u in cells])
    t = reward.reward_terms_batch(flows, ues, np.array([0]), 0, 0.02, spec)
    assert t["delay_penalty"].tolist() == pytest.approx([0.0, 2.5, 3.0])


# --------------------------------------------------------------------------------------------
# The checks pass on the real modules
# --------------------------------------------------------------------------------------------

METRICS_CHECKS = (
    check_sample_at_the_budget_complies,
    check_percentile_ignores_nan_and_inf,
    check_percentiles_ignore_nan_and_inf,
    check_one_flow_windows_do_not_count,
)
REWARD_CHECKS = (check_delay_penalty_is_capped, check_batch_delay_penalty_is_capped)


@pytest.mark.parametrize("check", METRICS_CHECKS, ids=lambda c: c.__name__)
def test_metrics_boundary(check: Callable[[ModuleType], None]) -> None:
    check(cellgym.metrics)


@pytest.mark.parametrize("check", REWARD_CHECKS, ids=lambda c: c.__name__)
def test_reward_boundary(check: Callable[[ModuleType], None]) -> None:
    check(cellgym.reward)


def test_compute_metrics_counts_a_hol_sample_at_the_budget_as_within() -> None:
    # The same rule end to end: HoL exactly 10 ms in every step, budget 10 ms -> compliance 1.0.
    from cellgym.scenario import FlowSpec, ScenarioSpec

    spec = ScenarioSpec(sim_time_s=1, flows=[FlowSpec(cca="agent")])
    rec = cellgym.metrics.EpisodeRecords(spec=spec)
    rec.append(0.0, _flows(1), _ues(1))
    for k in range(1, 6):
        f, u = _one_flow_step(10.0)
        rec.append(k * 0.02, f, u)
    m = cellgym.metrics.compute_metrics(rec, delay_budget_ms=10.0)
    assert m["hol_budget_compliance"] == 1.0
    assert m["hol_delay_ms"]["p99"] == 10.0


# --------------------------------------------------------------------------------------------
# Each deliberate boundary bug fails its check
# --------------------------------------------------------------------------------------------


def _function_source(module: ModuleType, name: str) -> str:
    return inspect.getsource(getattr(module, name))


#: (module, function, the text of the bug's line as it is, the same line with the bug, check).
MUTATIONS = (
    (
        cellgym.metrics,
        "budget_compliance",
        "samples <= budget_ms",
        "samples < budget_ms",
        check_sample_at_the_budget_complies,
    ),
    (
        cellgym.metrics,
        "windowed_jain",
        "always.sum() >= 2",
        "always.sum() >= 1",
        check_one_flow_windows_do_not_count,
    ),
    (
        cellgym.metrics,
        "percentile",
        "v = v[np.isfinite(v)]",
        "pass",
        check_percentile_ignores_nan_and_inf,
    ),
    (
        cellgym.metrics,
        "percentiles",
        "v = v[np.isfinite(v)]",
        "pass",
        check_percentiles_ignore_nan_and_inf,
    ),
    (
        cellgym.reward,
        "reward_terms",
        "penalty = min(\n        spec.max_delay_penalty, max(",
        "penalty = (\n        max(",
        check_delay_penalty_is_capped,
    ),
    (
        cellgym.reward,
        "reward_terms_batch",
        "penalty = np.minimum(\n        spec.max_delay_penalty, np.maximum(",
        "penalty = (\n        np.maximum(",
        check_batch_delay_penalty_is_capped,
    ),
)


def _mutant(module: ModuleType, function: str, old: str, new: str, monkeypatch) -> ModuleType:
    """A copy of ``module`` whose ``function`` has ``old`` replaced by ``new`` (exactly once)."""
    source = inspect.getsource(module)
    body = _function_source(module, function)
    assert source.count(body) == 1, f"{function}: not found once in {module.__name__}"
    assert body.count(old) == 1, f"{function}: {old!r} not found once (the code moved?)"
    mutated = source.replace(body, body.replace(old, new))
    name = f"{module.__name__}_mutant_{function}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    copy = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, copy)  # dataclasses look their module up
    exec(compile(mutated, f"<{name}>", "exec"), copy.__dict__)  # noqa: S102
    return copy


@pytest.mark.parametrize(
    ("module", "function", "old", "new", "check"),
    MUTATIONS,
    ids=[m[1] for m in MUTATIONS],
)
def test_each_boundary_mutation_is_caught(module, function, old, new, check, monkeypatch) -> None:
    copy = _mutant(module, function, old, new, monkeypatch)
    assert sys.modules[module.__name__] is module  # the real module is untouched
    # (numpy warns about the infinities the unfiltered percentiles interpolate between)
    with np.errstate(invalid="ignore"), pytest.raises(AssertionError):
        check(copy)
