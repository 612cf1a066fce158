"""The delayed-feedback oracle: its rule by hand, and a short run on the fast backend."""

from __future__ import annotations

import math

import numpy as np
import pytest

from baselines import make_policy
from cellgym import controllers
from cellgym.metrics import compute_metrics
from cellgym.reward import RewardSpec
from cellgym.scenario import load_scenario
from envs.lte_cell import OBS, OBS_FIELDS


def _obs(rate, pacing=0.0, rtt_min=40.0, cwnd=50_000.0):
    o = np.zeros(len(OBS_FIELDS), dtype=np.float32)
    o[OBS["fair_rate_mbps"]] = rate
    o[OBS["pacing_rate_mbps"]] = pacing
    o[OBS["rtt_min_ms"]] = rtt_min
    o[OBS["cwnd_bytes"]] = cwnd
    return o


def test_oracle_paces_at_the_advertised_capacity():
    p = make_policy("oracle", max_change=2.0, action_mode="rate")
    # Capacity 20 Mbit/s, pacing 10 -> x2 -> log2(2) = 1; pacing 40 -> x0.5 -> -1.
    assert p.predict(_obs(20, pacing=10))[0][0] == pytest.approx(1.0)
    assert p.predict(_obs(20, pacing=40))[0][0] == pytest.approx(-1.0)
    # pacing 20 * sqrt(2) -> -0.5; before its first action the env starts at the capacity: 0.
    assert p.predict(_obs(20, pacing=20 * math.sqrt(2)))[0][0] == pytest.approx(-0.5, abs=1e-5)
    assert p.predict(_obs(20))[0][0] == pytest.approx(0.0)
    assert p.predict(_obs(0))[0][0] == 0.0  # no feedback yet: hold the initial rate
    # Window mode: 20 Mbit/s x 40 ms = 100,000 B against a 50,000 B window -> 1.
    w = make_policy("oracle", max_change=2.0, action_mode="cwnd")
    assert w.predict(_obs(20, cwnd=50_000))[0][0] == pytest.approx(1.0)
    assert controllers.get("oracle").entry_point == "baselines.oracle:DelayedOraclePolicy"


def test_oracle_fills_a_static_cell_on_the_fast_backend():
    from evaluation.rollouts import run_controller

    spec = load_scenario("single_flow", sim_time_s=2.0)
    rec = run_controller(
        spec, "oracle", 1, RewardSpec(), backend="fast", max_change=4.0, action_mode="rate"
    )
    m = compute_metrics(rec, from_s=0.5)
    assert m["utilization"] > 0.9
    # It paces at the advertised rate: a queue builds only slowly (tens of ms over 1.5 s).
    assert m["hol_delay_ms"]["p50"] < 40
