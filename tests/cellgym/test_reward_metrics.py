import numpy as np
import pytest

from cellgym.fields import FLOW, FLOW_FIELDS, UE, UE_FIELDS
from cellgym.metrics import EpisodeRecords, compute_metrics, percentiles
from cellgym.reward import RewardSpec, jain_index, queueing_delay_ms, reward_terms
from cellgym.scenario import FlowSpec, ScenarioSpec


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
