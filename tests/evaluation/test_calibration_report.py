"""The calibration's targets and per-seed judgement, on hand-worked inputs (no simulator)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cellgym.fields import UE
from envs.contract import OBS
from evaluation.experiments import calibration_drivers as drivers
from evaluation.experiments import calibration_report as cr
from evaluation.experiments.calibrate import Job, scenario


def _run(**kw: object) -> dict:
    base = {
        "utilization": 0.90, "jain": 1.0, "hol_p50_ms": 10.0, "hol_p95_ms": 40.0,
        "qdelay_p50_ms": 10.0, "qdelay_p95_ms": 40.0, "throughput_mbps": [30.0],
        "mean_reward": 1.0, "hol_compliance": 0.80, "reward_utilization": 0.9,
        "reward_delay_penalty": 0.05, "reward_jain": 1.0,
    }  # fmt: skip
    base.update(kw)
    return base


def test_targets_per_kind_of_row():
    """Every row is judged on the HoL budget and each flow's throughput; agent rows on reward."""
    every = ["utilization", "Jain", "HoL p50", "HoL p95", "HoL budget", "flow Mbit/s"]
    for n_flows in (1, 2):
        labels = [t.label for t in cr.applicable(agent=False, n_flows=n_flows)]
        assert labels == every
    labels = [t.label for t in cr.applicable(agent=True, n_flows=1)]
    assert labels == [*every[:4], "reward", *every[4:]]


def test_reward_budget_and_per_flow_tolerances():
    reward, budget, tput = (
        cr.TARGET["mean_reward"],
        cr.TARGET["hol_compliance"],
        cr.TARGET["throughput_mbps"],
    )
    # 3 % of 1.135 is 0.034: the XRC policy's 1.080 (-4.8 %) misses, 1.105 (-2.6 %) meets.
    assert not cr.target_met(reward, {"mean_reward": 1.080}, {"mean_reward": 1.135})
    assert cr.target_met(reward, {"mean_reward": 1.105}, {"mean_reward": 1.135})
    assert cr.target_met(budget, {"hol_compliance": 0.745}, {"hol_compliance": 0.79})
    assert not cr.target_met(budget, {"hol_compliance": 0.73}, {"hol_compliance": 0.79})
    # share2_cubic's means: 18.5/14.3 (ns-3) vs 16.5/16.1: 10 % of 18.5 is 1.85 < 2.0, a miss.
    assert not cr.target_met(tput, {"throughput_mbps": [16.5, 16.1]},
                             {"throughput_mbps": [18.5, 14.3]})  # fmt: skip
    # Below 10 Mbit/s the 1 Mbit/s floor decides: 2.9 vs 3.8 meets, 2.9 vs 7.0 does not.
    assert cr.target_met(tput, {"throughput_mbps": [30.0, 3.8]}, {"throughput_mbps": [31.0, 2.9]})
    assert not cr.target_met(tput, {"throughput_mbps": [30.0, 7.0]},
                             {"throughput_mbps": [31.0, 2.9]})  # fmt: skip


def test_noise_floor_counts_ordered_pairs_of_ns3_runs():
    targets = cr.applicable(agent=False, n_flows=1)
    runs = [_run(utilization=0.90), _run(utilization=0.92), _run(utilization=0.80)]
    # 0.90 vs 0.92 (both orders) within 5 %; 0.80 against either is not (0.80 vs 0.90: 11 %).
    assert cr.noise_floor(runs, targets) == (2, 6)
    assert cr.noise_floor(runs[:1], targets) == (0, 0)


def _row_with(fast_pass: int, ns3_utils: list[float]) -> dict:
    """Nine seeds: ``fast_pass`` fast runs equal to ns-3's, the rest 20 % low in utilization."""
    pairs = []
    for i, u in enumerate(ns3_utils):
        ns3 = _run(utilization=u)
        fast = _run(utilization=u if i < fast_pass else 0.8 * u)
        pairs.append({"ns3": ns3, "fast": fast})
    row = {"means_ok": True, "means_missed": []}
    cr.judge(row, pairs, cr.applicable(agent=False, n_flows=1))
    return row


def test_per_seed_verdict_eight_of_nine_or_the_noise_floor():
    same = [0.9] * 9
    row = _row_with(8, same)
    assert row["ok"] and row["seeds_within"] == 8 and row["reason"] == "8 of 9 seeds"
    # ns-3's own runs all agree (72 of 72): 7 of 9 is below that floor.
    row = _row_with(7, same)
    assert not row["ok"] and row["ns3_pairs"] == 72 and row["ns3_pairs_within"] == 72
    assert "7 of 9 seeds (78 %) < ns-3's 100 %" in row["reason"]
    assert row["seed_misses"]["utilization"] == 2
    # Seeds alternate 0.9 / 0.7: pairs of equal utilization agree, 4*3 + 5*4 = 32 of 72 (44 %).
    spread = [0.9 if i % 2 else 0.7 for i in range(9)]
    row = _row_with(4, spread)
    assert row["ns3_pairs_within"] == 32
    # At ns-3's own spread: stated in the row, but the strict rule does not count it as met.
    assert not row["ok"] and row["at_noise_floor"]
    assert "4 of 9 seeds (44 %), at ns-3's noise floor 44 % on the same seeds" in row["reason"]
    assert row["reason"].endswith("misses: utilization 5")
    row = _row_with(3, spread)
    assert not row["ok"] and not row["at_noise_floor"]
    assert not _row_with(8, spread)["at_noise_floor"] and _row_with(8, spread)["ok"]
    # One seed: no pairs of ns-3 runs, so only the seed itself counts.
    row = {"means_ok": True, "means_missed": []}
    cr.judge(row, [{"ns3": _run(), "fast": _run(utilization=0.5)}], cr.TARGETS[:4])
    assert not row["ok"] and not row["at_noise_floor"]
    assert row["reason"] == "0 of 1 seeds (one seed: no noise floor); misses: utilization 1"
    # Means that miss decide alone, whatever the seeds.
    pairs = [{"ns3": _run(), "fast": _run()} for _ in range(9)]
    row = {"means_ok": False, "means_missed": ["Jain"]}
    cr.judge(row, pairs, cr.TARGETS[:4])
    assert not row["ok"] and row["reason"] == "means miss Jain; 9 of 9 seeds"


def test_policy_rows_are_judged_on_reward_and_budget():
    spec = scenario("xrc_policy", 5.0)
    job = Job("xrc_policy", 1, spec)
    results = [(job, {"ns3": _run(mean_reward=1.135), "fast": _run(mean_reward=1.080)}, {})]
    (row,) = cr.compare(results)
    assert row["agent"] and "reward" in row["targets"]
    assert row["means_missed"] == ["reward"] and not row["ok"]


def test_fixed_action_sequences_are_seeded_and_stay_in_range():
    w = drivers.walk_cwnd_targets(3, 1000)
    assert np.array_equal(w, drivers.walk_cwnd_targets(3, 1000))
    assert not np.array_equal(w, drivers.walk_cwnd_targets(4, 1000))
    lo, hi = drivers.WALK_RANGE_SEGMENTS
    steps = np.diff(np.log(np.r_[10.0, w]))
    assert np.all(np.abs(steps) <= math.log(drivers.MAX_CHANGE) + 1e-12)
    assert w[5:].min() >= lo - 1e-6 and w.max() <= hi + 1e-6
    # The window policy moves the observed window to the target: 20 -> 40 segments is action 1.
    policy = drivers.WindowTargetPolicy(np.array([40.0, 10.0, 10.0]))
    obs = np.zeros(len(OBS))
    obs[OBS["cwnd_bytes"]] = 20 * 1448
    assert policy.act(obs) == pytest.approx(1.0)
    assert policy.act(obs) == pytest.approx(-1.0)  # 20 -> 10: a factor 1/2
    obs[OBS["cwnd_bytes"]] = 0.0  # not yet known: the initial window of 10 segments
    assert policy.act(obs) == pytest.approx(0.0)
    r = drivers.steps_rate_actions(3, 500, 0.02)
    rate = np.exp(np.cumsum(r) * math.log(2.0))  # from 1 Mbit/s
    # Each 2 s level (100 steps) is reached within a few steps and held.
    for start in range(0, 500, 100):
        held = rate[start + 10 : start + 100]
        assert np.allclose(held, held[0]) and 5.0 - 1e-9 <= held[0] <= 45.0 + 1e-9
    policy = drivers.SequencePolicy(np.array([0.5, -0.5]))
    assert [float(policy.predict(np.zeros(3))[0][0]) for _ in range(3)] == [0.5, -0.5, -0.5]
    policy.reset()
    assert float(policy.predict(np.zeros(3))[0][0]) == 0.5


def test_fast_policy_row_takes_the_seeds_moves_and_rewards_after_warmup():
    """A driven fast row moves its UE as the seed's draws say; its reward is the records' mean."""
    from cellgym.draws import draw
    from cellgym.seeding import rng_run_for_seed

    spec = scenario("xrc_policy_fluctuating", 4.0)
    rec = drivers.drive(spec, drivers.DRIVERS["xrc_policy_fluctuating"], 1, "fast")
    d = np.stack(rec.ues)[:, 0, UE["distance_m"]]
    moves = draw(spec, rng_run_for_seed(1)).moves_m[:, 0]
    assert np.isin(np.unique(d[d != d[0]]), moves).all() and np.isin(moves[:1], d).all()
    m = cr.run_metrics(rec)
    assert m["mean_reward"] == pytest.approx(np.nanmean(rec.rewards[51:]), rel=1e-9)


def test_fast_agent_flow_slow_starts_after_an_rto():
    """ns-3's agent ops run NewReno's slow start in CA_LOSS; the fast agent sender does too.

    An XRC policy whose start doubles the window every 20 ms step (the policy's start before it
    followed TCP's slow start) overshoots on the ``bsr`` uplink (seed 6) and waits for an RTO at
    about 1.3 s; the window then grows from 1 segment again (before the fix it stayed at one
    segment, one delayed ACK per 0.3 s, for three seconds).
    """
    from baselines.xrc import XrcPolicy
    from cellgym.fields import FLOW, SEGMENT_BYTES
    from cellgym.reward import RewardSpec
    from envs.contract import OBS
    from evaluation.rollouts import run_policy

    class DoublingStart(XrcPolicy):
        def target_cwnd(self, obs):
            if obs[OBS["fair_rate_mbps"]] <= 0 or obs[OBS["rtt_min_ms"]] <= 0:
                return 2.0 * max(float(obs[OBS["cwnd_bytes"]]), SEGMENT_BYTES)
            return super().target_cwnd(obs)

    spec = scenario("xrc_policy", 5.0)
    kwargs = {"max_change": 2.0, "fast_params": {"uplink": "bsr"}}
    rec = run_policy(spec, DoublingStart(), 6, "x", RewardSpec(), "fast", kwargs)
    cwnd = np.stack(rec.flows)[:, 0, FLOW["cwnd_bytes"]] / 1448
    t = np.array(rec.times)
    rto = np.nonzero((cwnd <= 1.0) & (t > 0.5))[0]
    assert rto.size, "the scenario no longer has its RTO: pick another seed"
    after = cwnd[rto[0] : rto[0] + 25]  # 0.5 s
    assert after.max() > 10, after
