"""The Gymnasium environment on the real ns-3 backend."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import gymnasium as gym
import numpy as np
import pytest

import envs  # noqa: F401  (registers CellGym/*)
from baselines import make_policy
from cellgym.reward import RewardSpec
from envs.lte_cell import OBS

pytestmark = pytest.mark.ns3

SHORT = {"name": "short", "sim_time_s": 1.0, "flows": [{"cca": "agent"}]}


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_spaces_are_known_before_any_simulator_starts():
    env = gym.make("CellGym/LteVsCubic-v0")
    assert env.observation_space.shape == (11,)
    assert env.action_space.shape == (1,)
    assert env.unwrapped._session is None
    env.close()


def test_gymnasium_check_env():
    from gymnasium.utils.env_checker import check_env

    env = gym.make("CellGym/LteSingleFlow-v0", scenario=SHORT).unwrapped
    check_env(env, skip_render_check=True)
    env.close()


def test_sb3_check_env():
    from stable_baselines3.common.env_checker import check_env

    env = gym.make("CellGym/LteSingleFlow-v0", scenario=SHORT).unwrapped
    check_env(env, warn=True)
    env.close()


def _rollout(seed: int, steps: int, scenario=None):
    env = gym.make("CellGym/LteVsCubic-v0", scenario=scenario)
    obs, info = env.reset(seed=seed)
    out = [obs]
    rewards = []
    for k in range(steps):
        obs, r, term, trunc, info = env.step(np.array([np.sin(k / 7.0)], dtype=np.float32))
        out.append(obs)
        rewards.append(r)
        if term or trunc:
            break
    env.close()
    return np.array(out), np.array(rewards), info


def test_same_seed_same_trajectory():
    scenario = {"name": "det", "sim_time_s": 2.0, "flows": [{"cca": "cubic"}, {"cca": "agent"}]}
    a_obs, a_r, _ = _rollout(5, 60, scenario)
    b_obs, b_r, _ = _rollout(5, 60, scenario)
    np.testing.assert_array_equal(a_obs, b_obs)
    np.testing.assert_array_equal(a_r, b_r)
    # Its first 20 steps already differ (from the 8th on the fast backend), and a differing prefix
    # is a differing trajectory: ns-3 runs a third as long.
    c_obs, _, _ = _rollout(6, 20, scenario)
    assert not np.array_equal(a_obs[: len(c_obs)], c_obs), (
        "another seed should give another replication"
    )


def test_reward_terms_in_info_and_feedback_arrives():
    scenario = {"name": "r", "sim_time_s": 2.0, "flows": [{"cca": "agent"}]}
    obs, rewards, info = _rollout(1, 100, scenario)
    for key in ("utilization", "delay_ms", "delay_penalty", "jain", "reward"):
        assert key in info
    assert info["reward"] == pytest.approx(rewards[-1])
    # The reward is its terms' weighted sum (cellgym.reward, the default weights and budget).
    spec = RewardSpec()
    over = max(0.0, info["delay_ms"] - spec.delay_budget_ms) / spec.delay_budget_ms
    assert info["delay_penalty"] == pytest.approx(min(spec.max_delay_penalty, over))
    assert 0.0 <= info["utilization"] <= 1.0 and 0.0 < info["jain"] <= 1.0
    want = (
        spec.w_utilization * info["utilization"]
        - spec.w_delay * info["delay_penalty"]
        + spec.w_fairness * info["jain"]
    )
    assert rewards[-1] == pytest.approx(want, rel=1e-6)
    assert obs[-1][OBS["fair_rate_mbps"]] > 1.0, "the explicit rate should reach the sender"
    assert obs[-1][OBS["rtt_min_ms"]] > 30.0


def test_thousand_step_episode_driven_from_python():
    env = gym.make(
        "CellGym/LteSingleFlow-v0",
        scenario={"name": "long", "sim_time_s": 20.0, "flows": [{"cca": "agent"}]},
    )
    policy = make_policy("explicit_rate")
    obs, _ = env.reset(seed=3)
    steps, done, utils = 0, False, []
    while not done:
        action, _ = policy.predict(obs)
        obs, r, term, trunc, info = env.step(action)
        utils.append(info["utilization"])
        steps += 1
        done = term or trunc
    env.close()
    assert steps == 1000
    assert info["t"] == pytest.approx(20.0)
    assert np.mean(utils[250:]) > 0.8, "following the explicit rate should use most of the cell"


def test_a_command_that_opens_the_window_is_sent_into_within_the_step():
    # The env's model: the agent sets the window each step and the sender uses it at once (the
    # twin's sender sends into it in the same TTI). ns-3's TcpSocketBase sends only on an ACK, a
    # write or a timer, so a raised window used to wait for the next ACK: with a window of a few
    # segments the ACKs come back in one bunch per RTT (~45 ms, after an idle uplink), and about
    # half the steps ended with the raised window unused (delay_aimd's throughput halved).
    seg = 1448.0
    env = gym.make(
        "CellGym/LteSingleFlow-v0",
        scenario={"name": "ramp", "sim_time_s": 1.5, "flows": [{"cca": "agent"}]},
    )
    obs, _ = env.reset(seed=1)
    target, unused, counted, done = 4 * seg, 0, 0, False
    while not done:
        cwnd = float(obs[OBS["cwnd_bytes"]])
        acked_before = obs[OBS["rtt_min_ms"]] > 0
        target += seg  # additive increase: one segment a step, below the cell's BDP throughout
        a = np.clip(np.log2(target / cwnd), -1.0, 1.0) if cwnd > 0 else 1.0
        obs, _, term, trunc, _ = env.step(np.array([a], dtype=np.float32))
        done = term or trunc
        if acked_before:
            counted += 1
            unused += obs[OBS["cwnd_bytes"]] - obs[OBS["bytes_in_flight"]] > seg
    env.close()
    assert counted > 50
    assert unused <= 0.02 * counted, f"{unused} of {counted} steps ended with the window unused"


def test_close_ends_the_simulator():
    env = gym.make("CellGym/LteSingleFlow-v0", scenario=SHORT)
    env.reset(seed=1)
    pid = env.unwrapped._session.pid
    assert _pid_alive(pid)
    env.close()
    assert not _pid_alive(pid)


def test_a_trace_environment_dropped_without_close_leaves_no_capacity_or_draws_folder():
    import gc
    from pathlib import Path

    trace = {**SHORT, "sim_time_s": 0.2, "channel": {"source": "synthetic", "generator": "steps"}}
    env = gym.make("CellGym/LteSingleFlow-v0", scenario=trace)
    env.reset(seed=1)
    session = env.unwrapped._session
    capacity, draws = Path(session._capacity.folder), Path(session._draws.folder)
    pid = session.pid
    assert (capacity / "capacity.txt").is_file() and (draws / "draws.txt").is_file()
    assert _pid_alive(pid)
    del env, session
    gc.collect()
    assert not capacity.exists() and not draws.exists() and not _pid_alive(pid)


def test_killing_the_python_parent_leaves_no_ns3_process(tmp_path):
    code = textwrap.dedent(
        """
        import sys, time, gymnasium as gym, envs
        env = gym.make("CellGym/LteSingleFlow-v0",
                       scenario={"name": "k", "sim_time_s": 100.0, "flows": [{"cca": "agent"}]})
        env.reset(seed=1)
        print(env.unwrapped._session.pid, flush=True)
        time.sleep(60)
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, cwd=os.getcwd()
    )
    try:
        pid = int(parent.stdout.readline())
        assert _pid_alive(pid)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 5
        while _pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _pid_alive(pid), "the ns-3 process outlived its Python parent"
    finally:
        parent.kill()
        parent.wait()


def _make_env():

    return gym.make(
        "CellGym/LteSingleFlow-v0",
        scenario={"name": "vec", "sim_time_s": 0.5, "flows": [{"cca": "agent"}]},
    )


def test_subproc_vec_env_runs_several_simulators():
    from stable_baselines3.common.vec_env import SubprocVecEnv

    vec = SubprocVecEnv([_make_env, _make_env], start_method="forkserver")
    try:
        vec.seed(11)
        obs = vec.reset()
        assert obs.shape == (2, 11)
        dones_seen = np.zeros(2, dtype=bool)
        for _ in range(40):
            obs, rewards, dones, infos = vec.step(np.zeros((2, 1), dtype=np.float32))
            dones_seen |= dones
        assert dones_seen.all(), "both 25-step episodes should have ended and auto-reset"
        assert np.isfinite(rewards).all()
    finally:
        vec.close()


def test_a_stranger_on_the_port_does_not_take_the_simulators_place(monkeypatch):
    """A local process connects to the episode's port before the simulator; reset still works.

    Before the fix the first connection was taken as the simulator (reset timed out) and the
    port stayed open for the whole episode; now the stranger is refused and the listener is
    closed once the simulator is connected.
    """
    import socket

    import envs.ns3_session
    from envs.bridge import Ns3Bridge

    made: list[tuple[Ns3Bridge, socket.socket]] = []

    class StrangerFirst(Ns3Bridge):
        def start(self):
            made.append((self, socket.create_connection(("127.0.0.1", self.port), timeout=2)))
            return super().start()

    monkeypatch.setattr(envs.ns3_session, "Ns3Bridge", StrangerFirst)
    env = gym.make("CellGym/LteSingleFlow-v0", scenario=SHORT, timeout_s=10.0)
    try:
        obs, info = env.reset(seed=1)
        ((bridge, stranger),) = made
        stranger.settimeout(2)
        assert stranger.recv(64) == b""  # refused: closed without a greeting
        stranger.close()
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", bridge.port), timeout=2)
        for _ in range(3):
            obs, _, term, _, info = env.step(np.array([0.0], dtype=np.float32))
        assert not term and info["t"] == pytest.approx(3 * 0.02)
        assert obs.shape == (11,)
    finally:
        env.close()
