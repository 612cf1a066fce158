"""PBE-CC's per-step policy (``baselines/pbe_cc.py``) against hand-worked observation sequences."""

from __future__ import annotations

import math

import numpy as np
import pytest

from baselines.pbe_cc import PbeCcPolicy
from cellgym import controllers
from cellgym.vocab import SpecError
from envs.contract import OBS, OBS_FIELDS


def _obs(**values: float) -> np.ndarray:
    o = np.zeros(len(OBS_FIELDS))
    for k, v in values.items():
        o[OBS[k]] = v
    return o


def _step(rate=30.0, rtt_mean=45.0, inflight=150_000.0, delivered=10.0, pacing=30.0):
    return _obs(
        fair_rate_mbps=rate, rtt_min_ms=40.0, rtt_mean_ms=rtt_mean, bytes_in_flight=inflight,
        delivery_rate_mbps=delivered, pacing_rate_mbps=pacing, cwnd_bytes=100_000.0,
    )  # fmt: skip


def test_paces_at_the_rate_falls_back_when_the_delay_is_unexplained_and_returns():
    pol = PbeCcPolicy(max_change=2.0, step_ms=20.0, pacing_gain=1.0, margin_ms=10.0, hold_rtts=2.0)
    # No rate yet: hold the environment's initial pacing rate.
    assert pol.act(_step(rate=0.0, pacing=5.0)) == 0.0 and pol.mode == "start"
    # 30 Mbit/s = 3750 B/ms; 150,000 B in flight explain max(40, 150,000 / 3750) = 40 ms; the
    # mean RTT 45 is 5 ms above: explained. Pace at 30: from 15 that is log2(30 / 15) = 1.
    assert pol.act(_step(pacing=15.0)) == pytest.approx(1.0) and pol.mode == "pbe"
    assert pol.act(_step()) == pytest.approx(0.0)
    # RTT 70: 30 ms unexplained. After 20, 40, 60 ms it is still under 2 x 40 ms.
    for _ in range(3):
        assert pol.act(_step(rtt_mean=70.0)) == pytest.approx(0.0)
        assert pol.mode == "pbe"
    # At 80 ms: the fallback. The max delivery rate of the last 10 steps is 10; the first
    # phase's gain 1.25: 12.5 Mbit/s, log2(12.5 / 30) = -1.26, clipped to -1.
    assert pol.act(_step(rtt_mean=70.0)) == -1.0
    assert pol.mode == "fallback"
    # Next phase 0.75 x 10 = 7.5 from 12.5: log2(0.6) = -0.737.
    assert pol.act(_step(rtt_mean=70.0, pacing=12.5)) == pytest.approx(math.log2(0.6))
    # A delivery rate of 28 >= 0.9 x 30: back to the rate (30 from 7.5: +2, clipped to 1).
    assert pol.act(_step(rtt_mean=70.0, delivered=28.0, pacing=7.5)) == 1.0
    assert pol.mode == "pbe"


def test_fallback_filter_forgets_old_deliveries():
    pol = PbeCcPolicy(hold_rtts=0.5, filter_steps=2)  # 20 ms >= 0.5 x 40: at once
    pol.act(_step(delivered=30.0))
    pol.act(_step(rtt_mean=70.0, delivered=10.0))
    assert pol.mode == "fallback"
    # The filter holds the last 2 steps: max(10, 12) = 12 < 27 (the 30 has left it): stay, with
    # phase 1 (0.75); then max(12, 8) = 12, phase 2's gain 1: 12 Mbit/s.
    pol.act(_step(rtt_mean=70.0, delivered=12.0))
    assert pol.target(_step(rtt_mean=70.0, delivered=8.0)) == pytest.approx(1.0 * 12.0)
    assert pol.mode == "fallback"


def test_window_mode_and_predict():
    pol = PbeCcPolicy(max_change=2.0, action_mode="cwnd", pacing_gain=1.0, cwnd_gain=1.25)
    # 1.25 x 3750 B/ms x 40 ms = 187,500 B; from 100,000: log2(1.875) = 0.907.
    assert pol.target(_step()) == pytest.approx(187_500.0)
    pol.reset()
    assert pol.act(_step()) == pytest.approx(math.log2(1.875))
    actions, state = PbeCcPolicy().predict(np.stack([_step(), _step(pacing=60.0)]))
    assert actions.shape == (2, 1) and state is None
    assert actions[1, 0] == pytest.approx(-1.0)


def test_bad_arguments_and_registry():
    with pytest.raises(SpecError, match="action_mode='x'"):
        PbeCcPolicy(action_mode="x")
    with pytest.raises(SpecError, match=r"cwnd_gain=0\.5 is out of range"):
        PbeCcPolicy(cwnd_gain=0.5)
    entry = controllers.CONTROLLERS["pbecc_policy"]
    assert entry.entry_point == "baselines.pbe_cc:PbeCcPolicy"
    assert entry.backends == ("ns3", "fast")
