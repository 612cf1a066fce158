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
    """XRC alone holds the head of the RLC queue within its 10 ms budget, up to one TTI.

    The HoL delay is the head's exact age (not the RLC's whole-millisecond report); XRC probes
    until the delay passes the budget, so the peaks of its sawtooth lie a fraction of a TTI above
    it (measured, seed 1 from 2 s: p90 10.07 ms, p99 11.06 ms). The budget is judged at the
    resolution the sender acts on: one LTE TTI.
    """
    m = alone["xrc"]
    tti_ms = 1.0
    assert m["hol_delay_ms"]["p90"] <= 10.0 + tti_ms
    assert m["hol_delay_ms"]["p99"] <= 10.0 + 2 * tti_ms
    assert m["utilization"] > 0.85


def test_xrc_alone_resets_below_the_budget(alone):
    """A reset to twnd = R_exp x RTT_min drains the queue: the HoL saws between the budget and a
    few ms, it does not stand at the budget.

    RTT_min is the smallest RTT sample (docs/xrc.md). ns-3's own ``m_minRtt`` is the minimum of
    the smoothed RTT (45 ms here against a base RTT of 39 ms): with it, twnd overshot the cell's
    delivery by about 7.5 ms of data and the HoL stood at the budget (seed 1: p50 10.06 ms, 0.48 of
    samples within 10 ms). With the samples: p50 7.07 ms, within budget 0.87.
    """
    m = alone["xrc"]
    assert m["hol_delay_ms"]["p50"] < 8.5
    assert m["hol_budget_compliance"] > 0.8


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
