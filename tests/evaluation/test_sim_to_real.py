"""The sim-to-real measurement's fast side: batched cells per uplink model, as single runs."""

from __future__ import annotations

import numpy as np

from cellgym.reward import RewardSpec
from cellgym.scenario import load_scenario
from evaluation.experiments.sim_to_real import fast_rewards
from evaluation.rollouts import make_baseline, run_policy


def test_fast_rewards_are_the_single_runs_of_each_seed_and_the_uplink_moves_them():
    spec = load_scenario("fluctuating", sim_time_s=2.0)
    reward = RewardSpec()
    seeds = [201, 202]
    kwargs = {"max_change": 2.0, "action_mode": "cwnd"}

    def policies():
        return [make_baseline("xrc_policy", spec, reward, 2.0) for _ in seeds]

    periodic = fast_rewards(spec, policies(), seeds, reward, {"uplink": "periodic"}, kwargs)
    bsr = fast_rewards(spec, policies(), seeds, reward, {"uplink": "bsr"}, kwargs)
    assert np.isfinite(periodic).all() and np.isfinite(bsr).all()
    assert not np.allclose(periodic, bsr)
    for seed, value in zip(seeds, bsr, strict=True):  # LTE's default uplink
        rec = run_policy(spec, policies()[0], seed, "xrc_policy", reward, backend="fast")
        assert abs(np.nanmean(rec.rewards) - value) < 1e-9
