import numpy as np
import pytest

from cellgym.fields import FLOW, FLOW_FIELDS, UE, UE_FIELDS
from cellgym.metrics import (
    EpisodeRecords,
    aggregate,
    budget_compliance,
    completed_fct_s,
    compute_metrics,
    delay_samples,
    group_means,
    jain_of_floats,
    mean_ci,
    percentile,
    percentiles,
    rate_mbps,
    step_delay_samples,
    step_frame,
)
from cellgym.reward import RewardSpec, jain_index, queueing_delay_ms, reward_terms
from cellgym.scenario import FlowSpec, ScenarioSpec
from cellgym.vocab import SpecError


def _flows(n):
    f = np.zeros((n, len(FLOW_FIELDS)))
    f[:, FLOW["fct_s"]] = -1  # not finished (docs/scenario-contract.md)
    return f


def _ues(n):
    return np.zeros((n, len(UE_FIELDS)))


def test_jain_index_known_values():
    assert jain_index(np.array([5.0, 5.0])) == pytest.approx(1.0)
    assert jain_index(np.array([1.0, 0.0])) == pytest.approx(0.5)
    # (1+2+3)^2 / (3 * (1+4+9)) = 36/42
    assert jain_index(np.array([1.0, 2.0, 3.0])) == pytest.approx(36 / 42)
    assert jain_index(np.array([])) == 1.0


def test_queueing_delay_is_max_of_hol_and_rtt_excess():
    row = _flows(1)[0]
    row[FLOW["rtt_samples"]] = 3
    row[FLOW["rtt_min_ms"]] = 38
    row[FLOW["rtt_mean_ms"]] = 50
    assert queueing_delay_ms(row, hol_ms=5) == 12
    assert queueing_delay_ms(row, hol_ms=30) == 30
    row[FLOW["rtt_samples"]] = 0
    assert queueing_delay_ms(row, hol_ms=4) == 4


def test_reward_terms_by_hand():
    # Two flows on UE 0; 20 ms step; UE capacity 40 Mbit/s.
    flows, ues = _flows(2), _ues(1)
    flows[:, FLOW["active"]] = 1
    flows[0, FLOW["rx_bytes"]] = 50_000  # 20 Mbit/s over 20 ms
    flows[1, FLOW["rx_bytes"]] = 25_000  # 10 Mbit/s
    ues[0, UE["capacity_mbps"]] = 40
    ues[0, UE["hol_ms"]] = 25  # 15 ms over a 10 ms budget -> penalty 1.5
    spec = RewardSpec(w_utilization=1, w_delay=0.5, w_fairness=0.2, delay_budget_ms=10)
    t = reward_terms(flows, ues, np.array([0, 0]), 1, 0.02, spec)
    assert t["utilization"] == pytest.approx(30 / 40)
    assert t["delay_penalty"] == pytest.approx(1.5)
    jain = (3.0**2) / (2 * (4 + 1))  # rates 2:1
    assert t["jain"] == pytest.approx(jain)
    assert t["reward"] == pytest.approx(0.75 - 0.75 + 0.2 * jain)


def test_reward_spec_rejects_bad_values():
    with pytest.raises(ValueError, match="reward.delay_budget_ms"):
        RewardSpec(delay_budget_ms=0)
    with pytest.raises(ValueError, match="reward.w_delay"):
        RewardSpec(w_delay=-1)


def test_percentiles_empty_and_known():
    assert percentiles(np.array([])) == {"p50": None, "p90": None, "p99": None}
    p = percentiles(np.arange(101, dtype=float))
    assert p["p50"] == 50 and p["p90"] == 90 and p["p99"] == 99


def _synthetic_episode():
    """Two flows on one UE, 2 s at 20 ms: flow 0 gets 3x flow 1's rate; capacity 20 Mbit/s."""
    spec = ScenarioSpec(sim_time_s=2, flows=[FlowSpec(cca="cubic"), FlowSpec(cca="agent")])
    rec = EpisodeRecords(spec=spec, controller="test", seed=1)
    rec.append(0.0, _flows(2), _ues(1))
    for k in range(1, 101):
        f, u = _flows(2), _ues(1)
        f[:, FLOW["active"]] = 1
        f[0, FLOW["rx_bytes"]] = 30_000  # 12 Mbit/s
        f[1, FLOW["rx_bytes"]] = 10_000  # 4 Mbit/s
        f[:, FLOW["rtt_samples"]] = 2
        f[:, FLOW["rtt_min_ms"]] = 40
        f[:, FLOW["rtt_mean_ms"]] = 40 + (k % 10)  # queueing 0..9 ms
        f[1, FLOW["loss_events"]] = 1 if k == 50 else 0
        u[0, UE["capacity_mbps"]] = 20
        u[0, UE["hol_ms"]] = 5 if k <= 80 else 30  # 80% of samples within 10 ms
        rec.append(k * 0.02, f, u)
    return rec


def test_metrics_of_a_synthetic_episode():
    m = compute_metrics(_synthetic_episode(), delay_budget_ms=10)
    assert m["steps"] == 100
    assert m["utilization"] == pytest.approx(16 / 20)
    assert m["jain_fairness"] == pytest.approx(16**2 / (2 * (144 + 16)))
    assert m["hol_budget_compliance"] == pytest.approx(0.8)
    assert m["hol_delay_ms"]["p50"] == 5
    assert m["queueing_delay_ms"]["p50"] == pytest.approx(4.5)
    f0, f1 = m["flows"]
    assert f0["cca"] == "cubic" and f1["cca"] == "agent"
    assert f0["throughput_mbps"] == pytest.approx(12)
    assert f1["throughput_mbps"] == pytest.approx(4)
    assert f1["loss_events"] == 1 and f0["loss_events"] == 0
    assert f0["losses"] == 0
    assert f0["fct_s"] is None


def test_record_frames_are_tidy():
    rec = _synthetic_episode()
    fl, ue = rec.flows_frame(), rec.ues_frame()
    assert len(fl) == 2 * 101 and len(ue) == 101
    assert list(fl.columns[:4]) == ["t", "flow", "cca", "ue"]
    assert set(fl[fl.flow == 1].cca) == {"agent"}
    assert fl.rx_bytes.sum() == 100 * 40_000


def test_reward_takes_jain_from_the_metrics_module():
    import cellgym.metrics
    import cellgym.reward

    assert cellgym.reward.jain_index is cellgym.metrics.jain_index
    for x in ([3.0, 1.0], [0.0, 0.0], [2.0], [1.0, 2.0, 3.0]):
        assert jain_of_floats(x) == pytest.approx(jain_index(np.array(x)), abs=1e-15)


def test_percentile_and_delay_samples_by_hand():
    assert percentile(np.array([]), 50) != percentile(np.array([]), 50)  # NaN
    assert percentile(np.array([1.0, np.nan, 3.0, np.inf]), 50) == 2.0
    rec = _synthetic_episode()
    hol, qd = delay_samples(rec, from_s=0.0)
    assert hol.size == 100 and qd.size == 200  # one UE, two flows, 100 steps
    assert budget_compliance(hol, 10.0) == pytest.approx(0.8)
    assert budget_compliance(np.array([]), 10.0) is None
    # From 1 s on: steps 51..100 (HoL 5 ms up to step 80, 30 ms after).
    hol, qd = delay_samples(rec, from_s=1.0)
    assert hol.size == 50 and (hol == 30).sum() == 20
    # The step frame gives the same samples.
    frame = step_frame(rec, [1])
    assert len(step_delay_samples(frame, "hol_ms")) == 100
    assert len(step_delay_samples(frame, "queueing_delay_ms")) == 200
    with pytest.raises(SpecError, match="delay='rtt'"):
        step_delay_samples(frame, "rtt")


def test_fct_and_rates():
    rows = [{"fct_s": 1.5}, {"fct_s": None}, {"fct_s": 0.5}]
    assert completed_fct_s(rows).tolist() == [1.5, 0.5]
    assert rate_mbps(25_000, 0.02) == pytest.approx(10.0)


def _seed_rows():
    import pandas as pd

    # Controller a: reward 1, 2, 3 (mean 2, sd 1, 95 % half-width t_{0.975,2} / sqrt(3) = 2.484138);
    # controller b: 4 and a failed seed (mean 4 of one value, no interval).
    return pd.DataFrame(
        {
            "controller": ["a", "a", "a", "b", "b"],
            "scenario": ["s"] * 5,
            "seed": [1, 2, 3, 1, 2],
            "status": ["ok", "ok", "ok", "ok", "failed"],
            "mean_reward": [1.0, 2.0, 3.0, 4.0, np.nan],
            "utilization": [0.5, np.nan, 0.7, 0.9, np.nan],
        }
    )


def test_aggregate_means_and_intervals_over_seeds():
    table = aggregate(_seed_rows(), ["mean_reward", "utilization"], by=["controller"])
    a, b = table.iloc[0], table.iloc[1]
    assert list(table["controller"]) == ["a", "b"]
    assert (a["n"], a["failed"], b["n"], b["failed"]) == (3, 0, 1, 1)
    assert a["mean_reward_mean"] == 2.0
    assert a["mean_reward_ci"] == pytest.approx(2.484138, abs=1e-6)
    assert a["mean_reward_low"] == pytest.approx(2.0 - 2.484138, abs=1e-6)
    assert a["utilization_mean"] == pytest.approx(0.6) and a["utilization_n"] == 2
    assert b["mean_reward_mean"] == 4.0 and np.isnan(b["mean_reward_ci"])
    assert mean_ci([2.0, 4.0], confidence=0.9)[1] == pytest.approx(6.313752, abs=1e-6)
    with pytest.raises(SpecError, match="not_there"):
        aggregate(_seed_rows(), ["not_there"])
    with pytest.raises(SpecError, match="confidence=1"):
        aggregate(_seed_rows(), ["mean_reward"], confidence=1.0)


def test_group_means_is_the_aggregators_mean():
    means = group_means(_seed_rows(), ["mean_reward", "utilization"])
    assert means == {
        "a": {"mean_reward": 2.0, "utilization": pytest.approx(0.6)},
        "b": {"mean_reward": 4.0, "utilization": 0.9},
    }
