"""XRC's key properties on the real simulator (native sender, per-ACK)."""

from __future__ import annotations

import pytest

from cellgym.metrics import compute_metrics
from cellgym.scenario import FlowSpec, ScenarioSpec
from evaluation.rollouts import run_native

pytestmark = pytest.mark.ns3

ALONE = ScenarioSpec(name="alone", sim_time_s=8.0, flows=[FlowSpec(cca="agent")])


@pytest.fixture(scope="module")
def alone():
    return {
        cca: compute_metrics(run_native(ALONE, cca, seed=1), from_s=2.0) for cca in ("xrc", "cubic")
    }


def test_xrc_alone_keeps_hol_within_budget_and_fills_the_cell(alone):
    m = alone["xrc"]
    assert m["hol_budget_compliance"] > 0.8
    assert m["utilization"] > 0.85


def test_xrc_has_lower_median_hol_than_cubic(alone):
    assert alone["xrc"]["hol_delay_ms"]["p50"] < alone["cubic"]["hol_delay_ms"]["p50"]


def test_two_xrc_flows_share_fairly():
    spec = ScenarioSpec(
        name="two_xrc", sim_time_s=8.0, flows=[FlowSpec(cca="xrc"), FlowSpec(cca="xrc")]
    )
    m = compute_metrics(run_native(spec, "xrc", seed=1), from_s=2.0)
    assert m["jain_fairness"] > 0.95


def test_internet_bottleneck_mode_is_newreno():
    """Below the cell's rate, a wired bottleneck holds the queue: the base station's HoL stays near
    zero while the RTT grows past the budget, and XRC's sender behaves as NewReno (docs/xrc.md)."""
    from cellgym.scenario import load_scenario

    spec = load_scenario("xrc_internet_bottleneck", sim_time_s=6.0)
    out = {
        cca: compute_metrics(run_native(spec, cca, seed=1), from_s=2.0)
        for cca in ("xrc", "newreno")
    }
    xrc, reno = out["xrc"], out["newreno"]
    assert xrc["hol_delay_ms"]["p90"] <= 1.0
    assert xrc["queueing_delay_ms"]["p50"] > 20.0  # the queue is in the Internet
    assert 9.0 < xrc["flows"][0]["throughput_mbps"] < 10.0
    assert xrc["flows"][0]["throughput_mbps"] == pytest.approx(
        reno["flows"][0]["throughput_mbps"], rel=0.02
    )
