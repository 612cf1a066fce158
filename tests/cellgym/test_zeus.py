"""The Zeus metrics, scores and optimum on hand-worked inputs (values computed in the comments)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cellgym.fields import FLOW, FLOW_FIELDS, UE_FIELDS
from cellgym.metrics import EpisodeRecords, jain_index, zeus_summary
from cellgym.scenario import load_scenario
from cellgym.traces import CapacitySeries
from cellgym.zeus import (
    PAPER_TABLE3_REALTIME_WEIGHTS,
    ZEUS_WEIGHTS,
    delay_inflation,
    harm,
    jain_rows,
    normalized_metrics,
    offline_optimum,
    rolling_jain,
    self_harm_band,
    within_self_harm,
    zeus_fairness,
    zeus_score,
)

RX = np.array([[1.0, 1.0], [1.0, 3.0], [2.0, 2.0]])
ALL = np.ones_like(RX, dtype=bool)


def test_rolling_jain_over_windows_of_one_and_two_steps():
    # One step: [1,1] -> 1; [1,3] -> 16 / (2 * 10) = 0.8; [2,2] -> 1.
    assert rolling_jain(RX, ALL, 0.01, 0.01).tolist() == pytest.approx([1.0, 0.8, 1.0])
    # Two steps, rolled by one: [2,4] -> 36 / 40 = 0.9; [3,5] -> 64 / 68 = 0.941176.
    assert rolling_jain(RX, ALL, 0.01, 0.02).tolist() == pytest.approx([0.9, 64 / 68])
    assert rolling_jain(RX, ALL, 0.01, 0.05).size == 0  # longer than the run
    # Flow 1 idle in step 1: only the window of step 2 stays (one step) / none (two steps).
    act = ALL.copy()
    act[1, 1] = False
    assert rolling_jain(RX, act, 0.01, 0.01).tolist() == pytest.approx([1.0, 1.0])
    assert rolling_jain(RX, act, 0.01, 0.02).size == 0
    assert jain_rows(RX).tolist() == pytest.approx([jain_index(r) for r in RX])


def test_short_and_long_term_fairness_average_the_ks_that_have_windows():
    # RTT = one step: k=1 -> mean(1, 0.8, 1) = 0.93333; k=2 -> mean(0.9, 0.941176) = 0.920588;
    # k >= 5 has no window in 3 steps. Short term = (0.93333 + 0.920588) / 2 = 0.926961.
    f = zeus_fairness(RX, ALL, 0.01, 0.01)
    assert f["by_k"][1] == pytest.approx(2.8 / 3)
    assert f["by_k"][2] == pytest.approx((0.9 + 64 / 68) / 2)
    assert math.isnan(f["by_k"][5]) and math.isnan(f["long"])
    assert f["short"] == pytest.approx((2.8 / 3 + (0.9 + 64 / 68) / 2) / 2)


def test_delay_inflation_and_harm():
    # RTTs 40 ms (1 sample) and 60 ms (3 samples): mean (40 + 180) / 4 = 55 ms over 40 ms base.
    assert delay_inflation(np.array([40.0, 60.0]), 40.0, np.array([1, 3])) == 1.375
    assert harm(10.0, 5.0, more_is_better=True) == 50.0  # throughput halved
    assert harm(100.0, 160.0, more_is_better=False) == 60.0  # delay up 60 %
    assert harm(100.0, 80.0, more_is_better=False) == -20.0  # CUBIC's delay fell
    band = self_harm_band([48.0, 50.0, 53.0])
    assert band == (48.0, 53.0)
    assert within_self_harm(52.0, band) and not within_self_harm(60.0, band)


# The paper's Table 2 (utilization, delay inflation, intra, inter) and Table 3 (real-time, bulk,
# mixed scores) for its ten CCAs.
TABLE2 = {
    "Reno": (0.997, 15.6, 0.88, 0.81),
    "Cubic": (0.991, 12.2, 0.86, 0.86),
    "BBR": (0.959, 4.3, 0.87, 0.63),
    "Allegro": (0.876, 11.4, 0.84, 0.64),
    "Verus": (0.846, 67.0, 0.85, 0.64),
    "Proteus-P": (0.807, 57.4, 0.92, 0.55),
    "Vivace": (0.729, 3.4, 0.87, 0.66),
    "Copa": (0.635, 1.5, 0.98, 0.76),
    "Proteus-S": (0.542, 25.8, 0.91, 0.54),
    "Ledbat": (0.049, 1.7, 0.91, 0.58),
}
TABLE3 = {
    "Allegro": (0.510, 0.819, 0.637),
    "BBR": (0.594, 0.893, 0.688),
    "Copa": (0.707, 0.695, 0.782),
    "Cubic": (0.588, 0.919, 0.731),
    "Ledbat": (0.457, 0.232, 0.574),
    "Proteus-P": (0.451, 0.772, 0.606),
    "Proteus-S": (0.377, 0.572, 0.551),
    "Reno": (0.575, 0.923, 0.719),
    "Verus": (0.473, 0.795, 0.619),
    "Vivace": (0.555, 0.725, 0.664),
}


def test_scores_reproduce_the_papers_table_3_from_its_table_2():
    # Cubic, bulk, by hand: 0.75 * 0.991 + 0.05 / 12.2 + 0.15 * 0.86 + 0.05 * 0.86
    # = 0.74325 + 0.0040984 + 0.129 + 0.043 = 0.91935 (Table 3: 0.919).
    assert zeus_score("bulk", 0.991, 12.2, 0.86, 0.86) == pytest.approx(0.91935, abs=1e-5)
    for cca, (thpt, delay, intra, inter) in TABLE2.items():
        rt, bulk, mixed = TABLE3[cca]
        assert zeus_score("bulk", thpt, delay, intra, inter) == pytest.approx(bulk, abs=6e-4)
        assert zeus_score("mixed", thpt, delay, intra, inter) == pytest.approx(mixed, abs=6e-4)
        table3_rt = zeus_score("", thpt, delay, intra, inter, PAPER_TABLE3_REALTIME_WEIGHTS)
        assert table3_rt == pytest.approx(rt, abs=6e-4)
    # The text's real-time weights (0.3 InterFair, 0.2 Thpt) miss Table 3 (BBR: 0.561 vs 0.594).
    assert zeus_score("realtime", *TABLE2["BBR"]) == pytest.approx(0.5608, abs=1e-4)
    assert all(abs(sum(w.values()) - 1.0) < 1e-12 for w in ZEUS_WEIGHTS.values())


def test_normalisation_clips_utilization_and_inverts_inflation():
    m = normalized_metrics(thpt=1.2, delay_inflation=0.9, intra=0.7, inter=0.5)
    assert m == {"inverse_delay": 1.0, "inter_fairness": 0.5, "thpt": 1.0, "intra_fairness": 0.7}
    assert normalized_metrics(0.5, 4.0, 1.0, 1.0)["inverse_delay"] == 0.25


def test_offline_optimum_uses_the_whole_capacity_at_the_base_rtt():
    # 1500 bytes every ms = 12 Mbit/s; over 0.5 s from 0.25 s: 750,000 bytes.
    s = CapacitySeries(np.full(1000, 1500), 0.001)
    opt = offline_optimum(s, base_rtt_ms=38.0, duration_s=0.5, start_s=0.25)
    assert opt["throughput_mbps"] == pytest.approx(12.0)
    assert opt["delivered_bytes"] == pytest.approx(750_000)
    assert (opt["utilization"], opt["delay_inflation"], opt["rtt_ms"]) == (1.0, 1.0, 38.0)
    scores = [opt["score_realtime"], opt["score_bulk"], opt["score_mixed"]]
    assert scores == pytest.approx([1.0, 1.0, 1.0])  # each scenario's weights sum to 1


def test_zeus_summary_of_hand_made_records():
    # Two flows, 5 steps of 20 ms: flow 0 gets 1000 B, flow 1 3000 B per step; RTT 50 ms mean,
    # 40 ms min. The trace carries 200 B/ms = 4000 B per step: utilization 20000 / 20000 = 1.
    spec = load_scenario("vs_cubic")
    rec = EpisodeRecords(spec)
    ues = np.zeros((1, len(UE_FIELDS)))
    for i in range(6):
        flows = np.zeros((2, len(FLOW_FIELDS)))
        flows[:, FLOW["active"]] = 1
        flows[:, FLOW["rx_bytes"]] = [1000, 3000] if i else [0, 0]
        flows[:, FLOW["rtt_mean_ms"]] = 50.0
        flows[:, FLOW["rtt_min_ms"]] = 40.0
        flows[:, FLOW["rtt_samples"]] = 1
        rec.append(0.02 * i, flows, ues)
    series = CapacitySeries(np.full(100, 200), 0.001)
    z = zeus_summary(rec, flow=1, competitor=0, series=series)
    assert z["utilization"] == pytest.approx(1.0)
    assert z["base_rtt_ms"] == 40.0 and z["delay_inflation"] == 1.25
    # 5 x 3000 B over 0.1 s = 1.2 Mbit/s; mean RTT 50 ms (the inputs of harm).
    assert (z["throughput_mbps"], z["rtt_ms"]) == pytest.approx((1.2, 50.0))
    # RTT 40 ms = 2 steps: every window holds [1000, 3000] x n -> 16 / (2 * 10) = 0.8.
    assert z["fairness_by_k"][1] == pytest.approx(0.8) and z["fairness_short"] == pytest.approx(0.8)
    assert math.isnan(z["fairness_long"])
