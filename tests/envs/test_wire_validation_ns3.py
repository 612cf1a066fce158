"""The scenario program validates what arrives over the wire: a clear error and exit 2 or 4, never
a signal (a pacing rate of 1e15 Mbit/s used to end it with SIGFPE)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
import zmq

from cellgym.paths import ns3_program
from cellgym.scenario import ScenarioSpec
from envs.bridge import Ns3Bridge, SimulatorError

pytestmark = pytest.mark.ns3

AGENT = ScenarioSpec(sim_time_s=1.0, flows=[{"cca": "agent"}])


@pytest.mark.parametrize(
    ("action", "field"),
    [
        ([1e5, 1e15], "pacing_rate_mbps"),
        ([1e5, float("inf")], "pacing_rate_mbps"),
        ([1e5, float("nan")], "pacing_rate_mbps"),
        ([-5.0, 10.0], "cwnd_bytes"),
        ([1e12, 10.0], "cwnd_bytes"),
    ],
)
def test_out_of_range_action_values_exit_with_a_message(action, field):
    with Ns3Bridge(ns3_program(), AGENT.to_ns3_args(1), timeout_s=30) as bridge:
        bridge.start()
        with pytest.raises(SimulatorError) as exc:
            bridge.step(np.array([action], dtype=np.float64))
            bridge.step(np.array([action], dtype=np.float64))
    assert exc.value.returncode == 2, str(exc.value)
    assert f"action[0].{field}=" in exc.value.stderr_tail
    assert "allowed [0, 1e+09]" in exc.value.stderr_tail


def test_the_largest_declared_action_runs():
    with Ns3Bridge(ns3_program(), AGENT.to_ns3_args(1), timeout_s=30) as bridge:
        bridge.start()
        for _ in range(5):
            _, done, _ = bridge.step(np.array([[1e9, 1e9]]))
        assert not done


@pytest.mark.parametrize("reply", [b"", b"\x08\x00"])
def test_an_init_reply_that_is_not_a_sim_init_ack_is_refused(reply):
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    port = sock.bind_to_random_port("tcp://127.0.0.1")
    cmd = [str(ns3_program()), *AGENT.to_ns3_args(1), f"--openGymPort={port}"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert sock.poll(30_000), "no SimInitMsg"
        sock.recv()
        sock.send(reply)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        sock.close()
        ctx.term()
    assert proc.returncode == 4, err
    assert "not a SimInitAck with done=true" in err


def test_a_silent_python_side_ends_the_simulator_with_a_message():
    """The program waits at most --recvTimeoutMs for each reply, then exits 3 saying so."""
    ctx = zmq.Context()
    sock = ctx.socket(zmq.REP)
    sock.setsockopt(zmq.LINGER, 0)
    port = sock.bind_to_random_port("tcp://127.0.0.1")
    cmd = [
        str(ns3_program()),
        *AGENT.to_ns3_args(1),
        f"--openGymPort={port}",
        "--recvTimeoutMs=500",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert sock.poll(30_000), "no SimInitMsg"
        sock.recv()  # and never answer
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
        sock.close()
        ctx.term()
    assert proc.returncode == 3, err
    assert "no reply from the Python side" in err
