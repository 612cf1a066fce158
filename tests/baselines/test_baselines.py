import math

import numpy as np
import pytest

from baselines import is_native, make_policy
from cellgym.vocab import SpecError
from envs.lte_cell import OBS, OBS_FIELDS


def _obs(rate, rtt_min, cwnd):
    o = np.zeros(len(OBS_FIELDS), dtype=np.float32)
    o[OBS["fair_rate_mbps"]] = rate
    o[OBS["rtt_min_ms"]] = rtt_min
    o[OBS["cwnd_bytes"]] = cwnd
    return o


def test_explicit_rate_policy_by_hand():
    p = make_policy("explicit_rate", max_change=2.0)
    # 20 Mbit/s x 40 ms = 100,000 B; cwnd 50,000 B -> x2 -> action log2(2) = 1.
    a, _ = p.predict(_obs(20, 40, 50_000))
    assert a.shape == (1,) and a[0] == pytest.approx(1.0)
    # cwnd 141,421 B -> ratio 1/sqrt(2) -> action -0.5.
    a, _ = p.predict(_obs(20, 40, 100_000 * math.sqrt(2)))
    assert a[0] == pytest.approx(-0.5, abs=1e-5)
    # Far above target: clipped at -1. No feedback yet: grow.
    assert p.predict(_obs(20, 40, 1e7))[0][0] == -1.0
    assert p.predict(_obs(0, 0, 14480))[0][0] == 1.0


def test_batch_predict_matches_single():
    p = make_policy("explicit_rate")
    batch = np.stack([_obs(20, 40, 50_000), _obs(10, 40, 50_000)])
    a, state = p.predict(batch, episode_start=np.array([True, True]))
    assert a.shape == (2, 1) and state is None
    assert a[1, 0] == pytest.approx(0.0)


def test_registry():
    assert is_native("cubic") and not is_native("explicit_rate")
    with pytest.raises(SpecError, match="choose one of"):
        make_policy("nope")


def test_policies_are_the_registry_policies():
    from baselines import POLICIES
    from cellgym import controllers

    assert POLICIES == {
        c.name: c.entry_point for c in controllers.CONTROLLERS.values() if c.kind == "policy"
    }
    for name in POLICIES:
        # SB3's predict: one action in [-1, 1] for one observation, the state passed through.
        action, state = make_policy(name).predict(_xrc_obs(), "s", np.array([True]), True)
        assert action.shape == (1,) and action.dtype == np.float32, name
        assert np.all(np.abs(action) <= 1.0) and state == "s", name
    for name in controllers.names():
        assert is_native(name) == (controllers.CONTROLLERS[name].kind == "native")
    assert not is_native("a trained checkpoint")


def _xrc_obs(rate=20.0, hol=0.0, rtt_min=40.0, rtt_mean=40.0, cwnd=50_000.0, losses=0):
    o = _obs(rate, rtt_min, cwnd)
    o[OBS["hol_delay_ms"]] = hol
    o[OBS["rtt_mean_ms"]] = rtt_mean
    o[OBS["rtt_last_ms"]] = rtt_mean
    o[OBS["loss_events"]] = losses
    return o


def test_xrc_policy_rules_by_hand():
    p = make_policy("xrc_policy", max_change=2.0, step_ms=20.0, budget_ms=10.0)
    # twnd = 20 Mbit/s x 40 ms = 100,000 B. Below twnd, low delay: close half the gap per step
    # (a step is 0.5 RTT, ramp 2 RTTs -> 1/4 of the gap): 50,000 + 12,500.
    assert p.target_cwnd(_xrc_obs(cwnd=50_000)) == pytest.approx(62_500)
    assert p.mode == "ramp"
    # At twnd, low delay: one segment per RTT -> half a segment per 20 ms step.
    assert p.target_cwnd(_xrc_obs(cwnd=100_000)) == pytest.approx(100_000 + 1448 * 0.5)
    assert p.mode == "probe"
    # HoL above the budget (cellular bottleneck): reset to twnd.
    assert p.target_cwnd(_xrc_obs(cwnd=150_000, hol=15, rtt_mean=55)) == pytest.approx(100_000)
    assert p.mode == "reset"
    # Internet bottleneck: HoL within budget, e2e queueing 30 ms > HoL + budget: standard TCP.
    # rtt_mean 70 ms -> a step is 20/70 RTT.
    assert p.target_cwnd(_xrc_obs(cwnd=80_000, hol=2, rtt_mean=70)) == pytest.approx(
        80_000 + 1448 * 20 / 70
    )
    assert p.mode == "internet"


def test_xrc_policy_slow_starts_on_its_acks_before_the_first_feedback():
    """The paper keeps TCP's slow start: before an explicit rate, the window grows by the bytes
    acknowledged (one doubling per RTT), not by a factor per step (which overshot a 1.2 Mbit/s
    trace cell to 160 segments before the first feedback, and an RTO followed on ns-3)."""
    p = make_policy("xrc_policy", max_change=2.0, step_ms=20.0, budget_ms=10.0)
    idle = _obs(rate=0.0, rtt_min=0.0, cwnd=14_480)
    assert p.target_cwnd(idle) == pytest.approx(14_480)  # no ACK in the step: no growth
    assert p.mode == "start"
    acking = _obs(rate=0.0, rtt_min=45.0, cwnd=14_480)
    acking[OBS["delivery_rate_mbps"]] = 2.896  # 7,240 B (5 segments) acknowledged in 20 ms
    assert p.target_cwnd(acking) == pytest.approx(14_480 + 7_240)
    assert p.mode == "start"


def test_xrc_policy_enters_unfairness_mode_after_n_rtts():
    p = make_policy("xrc_policy", max_change=2.0, step_ms=20.0, budget_ms=10.0)
    high = _xrc_obs(cwnd=100_000, hol=40, rtt_mean=80)  # at twnd, delay above budget
    modes = []
    for _ in range(25):
        p.target_cwnd(high)
        modes.append(p.mode)
    # N = 10 RTTs of 40 ms = 400 ms = 20 steps of 20 ms at twnd with high delay.
    assert modes[:19] == ["reset"] * 19
    assert modes[19:] == ["unfair"] * 6
    assert p.target_cwnd(high) > 100_000 + 10 * 1448 * 20 / 80
    # A loss ends it.
    p.target_cwnd(_xrc_obs(cwnd=100_000, hol=40, rtt_mean=80, losses=1))
    assert p.mode == "reset"


def test_xrc_policy_unfairness_mode_needs_a_cellular_bottleneck():
    # End-to-end delay over the budget with the RLC head within it (many UEs taking turns): the
    # window is reset to twnd and the unfairness count never starts (the paper's mode is for a
    # competitor at a wireless bottleneck, HoL > budget).
    p = make_policy("xrc_policy", max_change=2.0, step_ms=20.0, budget_ms=10.0)
    turns = _xrc_obs(cwnd=100_000, hol=6, rtt_mean=54)  # e2e 14 ms, e2e - HoL 8 ms <= budget
    modes = set()
    for _ in range(100):  # 2 s, 50 RTTs
        assert p.target_cwnd(turns) == pytest.approx(100_000)
        modes.add(p.mode)
    assert modes == {"reset"}
    # In the unfairness mode, a head back within the budget ends it.
    high = _xrc_obs(cwnd=100_000, hol=40, rtt_mean=80)
    for _ in range(20):
        p.target_cwnd(high)
    assert p.mode == "unfair"
    p.target_cwnd(turns)
    assert p.mode == "reset"
    p.target_cwnd(high)
    assert p.mode == "reset"  # the count starts again
