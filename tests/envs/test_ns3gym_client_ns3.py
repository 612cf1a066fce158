"""The scenario program driven the way ns3-gym's own Python client drives a simulator.

ns3-gym's client (``ns3gym.ns3env.Ns3Env``) is not a dependency: this module mimics what it does on
the wire (read from its sources, written here independently): it serves a REP socket, starts the
program with ``--openGymPort=P --simSeed=S`` followed by the user's ``key=value`` arguments, answers
``SimInitMsg`` with ``SimInitAck{done}``, builds flat Boxes from the space descriptions (DOUBLE
becomes float64), reads every Box's data as a flat array (ignoring the shape it carries), packs an
action as shape ``[len(action)]`` and a float64 action as FLOAT, answers game over with
``EnvActMsg{stopSimReq}``, and on ``close()`` mid-episode sends ``EnvActMsg{stopSimReq}`` without
data.
"""

from __future__ import annotations

import json
import subprocess

import gymnasium as gym
import numpy as np
import pytest
import zmq

from cellgym.fields import FLOW_FIELDS, UE_FIELDS
from cellgym.paths import ns3_program
from cellgym.proto import ns3opengym_pb2 as pb

pytestmark = pytest.mark.ns3

POLL_MS = 30_000
CWND = FLOW_FIELDS.index("cwnd_bytes")
PACING = FLOW_FIELDS.index("pacing_rate_mbps")
ACTIVE = FLOW_FIELDS.index("active")

# Two UEs, three flows of which two are agent flows (A = 2): the action layout is visible.
SIM_ARGS = {
    "--simTime": "1.2",
    "--numUes": "2",
    "--distances": "100,150",
    "--flows": "ue=0,cca=agent;ue=1,cca=cubic;ue=1,cca=agent",
}
F, U, A = 3, 2, 2
AGENT_FLOWS = (0, 2)


def _space(desc: pb.SpaceDescription) -> gym.Space:
    """A space description as the client reads it: Boxes with their declared shape."""
    if desc.type == pb.Box:
        box = pb.BoxSpace()
        desc.space.Unpack(box)
        dtype = {pb.INT: np.int64, pb.UINT: np.uint64}.get(box.dtype, np.float64)
        return gym.spaces.Box(low=box.low, high=box.high, shape=tuple(box.shape), dtype=dtype)
    if desc.type == pb.Dict:
        dict_space = pb.DictSpace()
        desc.space.Unpack(dict_space)
        return gym.spaces.Dict({e.name: _space(e) for e in dict_space.element})
    raise AssertionError(f"unexpected space type {desc.type}")


def _data(container: pb.DataContainer):
    """Data as the client reads it: a Box's values as a flat array, whatever shape it carries."""
    if container.type == pb.Box:
        box = pb.BoxDataContainer()
        container.data.Unpack(box)
        field = {pb.INT: box.intData, pb.UINT: box.uintData, pb.DOUBLE: box.doubleData}.get(
            box.dtype, box.floatData
        )
        return np.array(field)
    if container.type == pb.Dict:
        dict_data = pb.DictDataContainer()
        container.data.Unpack(dict_data)
        return {e.name: _data(e) for e in dict_data.element}
    raise AssertionError(f"unexpected container type {container.type}")


def _pack(action: np.ndarray) -> pb.DataContainer:
    """A float Box action as the client packs it: shape [len(action)], FLOAT (float32) values."""
    box = pb.BoxDataContainer(dtype=pb.FLOAT)
    box.shape.extend([len(action)])
    box.floatData.extend(action)
    container = pb.DataContainer(type=pb.Box)
    container.data.Pack(box)
    return container


class Client:
    """The wire behaviour of ns3-gym's ``Ns3ZmqBridge``, with bounded waits for the test's sake."""

    def __init__(self, seed: int, sim_args: dict[str, str]) -> None:
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.REP)
        self.sock.setsockopt(zmq.LINGER, 0)
        port = self.sock.bind_to_random_port("tcp://127.0.0.1")
        # Its start_sim.py: '--openGymPort=P', '--simSeed=S' (when non-zero), then 'key=value'.
        cmd = [str(ns3_program()), f"--openGymPort={port}", f"--simSeed={seed}"]
        cmd += [f"{k}={v}" for k, v in sim_args.items()]
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )

    def recv(self, msg_type):
        if not self.sock.poll(POLL_MS):
            self.proc.kill()
            raise AssertionError(f"no message; stderr: {self.proc.communicate()[1].decode()}")
        msg = msg_type()
        msg.ParseFromString(self.sock.recv())
        return msg

    def send(self, msg) -> None:
        self.sock.send(msg.SerializeToString())

    def initialize(self) -> tuple[gym.Space, gym.Space, pb.SimInitMsg]:
        init = self.recv(pb.SimInitMsg)
        self.send(pb.SimInitAck(done=True, stopSimReq=False))
        return _space(init.obsSpace), _space(init.actSpace), init

    def state(self):
        msg = self.recv(pb.EnvStateMsg)
        return _data(msg.obsData), msg.reward, msg.isGameOver, msg.reason, msg.info

    def send_actions(self, action: np.ndarray, stop: bool = False) -> None:
        msg = pb.EnvActMsg(stopSimReq=stop)
        msg.actData.CopyFrom(_pack(action))
        self.send(msg)

    def send_close_command(self) -> None:
        self.send(pb.EnvActMsg(stopSimReq=True))

    def wait(self) -> tuple[int, str]:
        try:
            _, err = self.proc.communicate(timeout=30)
        finally:
            self.proc.kill()
            self.sock.close()
            self.ctx.term()
        return self.proc.returncode, err.decode()


def _flows(obs) -> np.ndarray:
    return obs["flows"].reshape(F, len(FLOW_FIELDS))


def test_a_whole_episode_with_sampled_actions_ends_in_game_over():
    seed = 3_000_000_000  # the client draws seeds up to 2**32 - 1
    client = Client(seed, SIM_ARGS)
    obs_space, act_space, init = client.initialize()
    assert init.simProcessId == client.proc.pid
    assert init.wafShellProcessId == 0  # the client would SIGTERM a non-zero one on close
    # Flat spaces: every Box is 1-D.
    assert isinstance(obs_space, gym.spaces.Dict)
    assert {k: s.shape for k, s in obs_space.spaces.items()} == {
        "flows": (F * len(FLOW_FIELDS),),
        "ues": (U * len(UE_FIELDS),),
        "time": (1,),
    }
    assert isinstance(act_space, gym.spaces.Box) and act_space.shape == (2 * A,)
    assert act_space.dtype == np.float64
    act_space.seed(seed)

    obs, reward, over, _, info = client.state()
    assert not over and reward == 0.0
    assert obs_space.contains(obs)
    first = json.loads(info)
    assert first["t"] == 0 and tuple(first["flow_fields"]) == FLOW_FIELDS
    assert tuple(first["ue_fields"]) == UE_FIELDS

    # Fixed windows and pacing rates for the first 0.6 s, laid out (cwnd, pacing) per agent flow,
    # then samples from a sub-box of the declared space, and the client's own samples from the
    # whole declared space for the last steps: uniform draws from [0, 1e9] (windows of ~500 MB,
    # ~5e8 Mbit/s) are valid but slow the simulator down to seconds per step.
    fixed = np.array([20_000.0, 5.0, 30_000.0, 7.0])
    moderate = gym.spaces.Box(low=0.0, high=np.tile([200_000.0, 50.0], A), dtype=np.float64)
    moderate.seed(seed)
    steps = 0
    seen_fixed = False
    while True:
        t = float(obs["time"][0])
        if t < 0.6:
            action = fixed
        elif t < 1.15:
            action = moderate.sample()
        else:
            action = act_space.sample()
        assert action.shape == act_space.shape and action.dtype == np.float64
        client.send_actions(action)
        obs, reward, over, reason, info = client.state()
        steps += 1
        assert obs_space.contains(obs), obs
        assert json.loads(info)["t"] == pytest.approx(float(obs["time"][0]))
        flows = _flows(obs)
        if 0.4 < float(obs["time"][0]) <= 0.6 and flows[list(AGENT_FLOWS), ACTIVE].all():
            seen_fixed = True
            np.testing.assert_array_equal(flows[list(AGENT_FLOWS), CWND], fixed[0::2])
            np.testing.assert_allclose(flows[list(AGENT_FLOWS), PACING], fixed[1::2])
        if over:
            assert reason == pb.EnvStateMsg.SimulationEnd
            client.send_close_command()
            break
        assert steps < 200
    assert seen_fixed
    assert float(obs["time"][0]) == pytest.approx(1.2)
    code, err = client.wait()
    assert code == 0, err


@pytest.mark.parametrize("how", ["close", "step_after_force_stop"])
def test_a_stop_request_mid_episode_ends_the_simulator(how):
    client = Client(7, SIM_ARGS)
    _, act_space, _ = client.initialize()
    client.state()
    for _ in range(5):
        client.send_actions(act_space.sample())
        obs, _, over, _, _ = client.state()
        assert not over
    if how == "close":
        # Ns3ZmqBridge.close(): EnvActMsg{stopSimReq} without data.
        client.send_close_command()
    else:
        # Ns3ZmqBridge.send_actions() once force_env_stop() was called: data and stopSimReq.
        client.send_actions(act_space.sample(), stop=True)
    code, err = client.wait()
    assert code == 0, err
    assert float(obs["time"][0]) < 0.2


def test_a_cell_without_agent_flows_takes_empty_actions():
    client = Client(1, {"--simTime": "0.2", "--flows": "ue=0,cca=cubic"})
    _, act_space, _ = client.initialize()
    assert act_space.shape == (0,)
    _, _, over, _, _ = client.state()
    while not over:
        client.send_actions(act_space.sample())
        _, _, over, _, _ = client.state()
    client.send_close_command()
    code, err = client.wait()
    assert code == 0, err
