"""An NR cell end to end on the fast backend: environments, senders, XRC, rates, determinism."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import envs  # noqa: F401  (registers CellGym/*)
from cellgym.fields import FLOW, UE
from cellgym.metrics import compute_metrics
from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec
from envs.fastsim import FastCellBatch, FastSimParams
from envs.fastsim.vector_env import make_fast_vec_env
from evaluation.rollouts import run_controller, run_native
from tests.fastsim.test_fastsim import run_cell

NR = {"type": "nr"}


def nr_spec(cell=None, **fields) -> ScenarioSpec:
    data = {"sim_time_s": 2.0, "cell": {**NR, **(cell or {})}, "flows": [{"cca": "agent"}]}
    data.update(fields)
    return ScenarioSpec.from_config(data)


def test_gym_make_and_vector_env_on_an_nr_cell():
    env = gym.make("CellGym/LteSingleFlow-v0", scenario={"cell": NR}, backend="fast")
    obs, _ = env.reset(seed=3)
    total = 0.0
    for _ in range(60):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        total += reward
        assert env.observation_space.contains(obs)
    assert np.isfinite(total) and info["utilization"] >= 0
    env.close()
    spec = {"sim_time_s": 1.0, "cell": NR, "flows": [{"cca": "agent"}]}
    venv = make_fast_vec_env(spec, num_envs=3, seed=5)
    obs, _ = venv.reset(seed=5)
    for _ in range(10):
        obs, reward, *_ = venv.step(np.zeros((3, 1)))
    assert obs.shape[0] == 3 and np.all(np.isfinite(reward))
    venv.close()


def test_same_seed_same_trajectory_and_batch_equals_single():
    spec = nr_spec(
        {"los": "probabilistic", "propagation": "uma"},
        channel={"mobility": "random", "mobility_period_s": 0.3},
        flows=[{"cca": "cubic"}, {"cca": "xrc"}],
        num_ues=2,
    )
    f1, u1 = run_cell(spec, 11)
    f2, u2 = run_cell(spec, 11)
    assert np.array_equal(f1, f2) and np.array_equal(u1, u2)
    f3, _ = run_cell(spec, 12)
    assert not np.array_equal(f1, f3)
    batch = FastCellBatch(FastSimParams.from_spec(spec), 2)
    batch.reset(np.array([12, 11]))
    for i in range(1, len(f1)):
        batch.step()
        assert np.array_equal(batch.flows[1], f1[i]) and np.array_equal(batch.flows[0], f3[i])


@pytest.mark.parametrize("cca", ["cubic", "newreno", "bbr", "xrc"])
def test_every_fast_sender_runs_on_nr(cca):
    rec = run_native(nr_spec(sim_time_s=3.0), cca, 2, backend="fast")
    m = compute_metrics(rec, from_s=1.0)
    assert m["flows"][0]["throughput_mbps"] > 20.0  # of about 62 Mbit/s of TBs at 100 m


def test_xrc_keeps_hol_low_on_nr():
    # Line of sight with its shadowing as the UE jumps within 100-500 m (NLOS with shadowing can
    # put a UE out of coverage, where no sender keeps the HoL low).
    spec = nr_spec(
        {"los": "los"},
        sim_time_s=10.0,
        channel={"mobility": "random", "max_distance_m": 500.0},
    )
    xrc = compute_metrics(run_native(spec, "xrc", 2, backend="fast"), from_s=1.0)
    cubic = compute_metrics(run_native(spec, "cubic", 2, backend="fast"), from_s=1.0)
    assert xrc["utilization"] > 0.8
    assert xrc["hol_delay_ms"]["p90"] < 10.0
    assert xrc["hol_delay_ms"]["p90"] < 0.6 * cubic["hol_delay_ms"]["p90"]


@pytest.mark.parametrize("controller", ["xrc_policy", "explicit_rate"])
def test_xrc_policy_and_explicit_rate_drive_an_nr_flow(controller):
    spec = nr_spec({"los": "los"}, sim_time_s=4.0)
    rec = run_controller(spec, controller, 3, RewardSpec(), backend="fast")
    m = compute_metrics(rec, from_s=1.0)
    assert m["utilization"] > 0.8
    assert m["hol_delay_ms"]["p90"] < 20.0


def top_rate_mbps(cell: dict) -> float:
    """Capacity (Mbit/s) of a lone backlogged UE at 30 m in LOS without shadowing or HARQ."""
    spec = nr_spec(cell, sim_time_s=0.2, channel={"distances_m": [30.0]})
    # The flow starts at 100 ms without the run's drawn offset (up to 99 ms, which could leave
    # the 0.2 s run without a backlogged last step).
    params = FastSimParams.from_spec(
        spec, nr_shadowing=False, nr_bler_target=0, start_offsets=False
    )
    batch = FastCellBatch(params, 1)
    batch.reset(np.array([1]))
    for _ in range(10):
        batch.step(np.array([[1e6, 0.0]]))
    return float(batch.ues[0, 0, UE["capacity_mbps"]])


def test_rate_scales_with_bandwidth_and_numerology():
    base = top_rate_mbps({"numerology": 1, "bandwidth_mhz": 20.0})  # 51 PRBs, 0.5 ms slots
    wide = top_rate_mbps({"numerology": 1, "bandwidth_mhz": 40.0})  # 106 PRBs
    mu0 = top_rate_mbps({"numerology": 0, "bandwidth_mhz": 20.0})  # 106 PRBs, 1 ms slots
    mu2 = top_rate_mbps({"numerology": 2, "bandwidth_mhz": 40.0})  # 51 PRBs, 0.25 ms slots
    assert wide / base == pytest.approx(106 / 51, rel=0.02)
    assert mu0 / base == pytest.approx(106 / (51 * 2), rel=0.02)
    assert mu2 / base == pytest.approx(2.0, rel=0.02)
    assert top_rate_mbps({"numerology": 1, "bandwidth_mhz": 20.0, "mcs_table": "256qam"}) > (
        1.25 * base
    )


def test_nr_delays_and_feedback():
    flows, ues = run_cell(nr_spec(flows=[{"cca": "xrc"}]), 1)
    assert 30 <= flows[-1, 0, FLOW["rtt_min_ms"]] <= 38  # 2 x 15 ms core + NR air delays
    assert flows[-1, 0, FLOW["fb_rate_mbps"]] == pytest.approx(
        ues[-1, 0, UE["capacity_mbps"]], rel=0.1
    )
