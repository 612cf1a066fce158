"""The ns3-gym wire format and the bridge's process handling."""

from __future__ import annotations

import gc
import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import time
import warnings

import gymnasium as gym
import numpy as np
import pytest

from cellgym.paths import ns3_build_dir
from cellgym.proto import ns3opengym_pb2 as pb
from envs.bridge import (
    Ns3Bridge,
    SimulatorError,
    SimulatorTimeout,
    decode_container,
    encode_box,
    peer_owned_by,
    space_from_description,
)

ECHO = ns3_build_dir() / "cellgym-bridge-echo"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# -- wire format, from the protobuf encoding rules ------------------------------------------------
def _assert_simulator_dies_with(code: str) -> None:
    """Run ``code`` (which prints a simulator's pid) in a Python process, kill that process and
    require the simulator to follow it."""
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(parent.stdout.readline())
        time.sleep(0.3)  # a wrongly sent parent-death signal would have arrived
        assert _alive(pid)
        parent.kill()
        parent.wait(5)
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid)
    finally:
        parent.kill()
        parent.wait()


def _key(field: int, wire_type: int) -> bytes:
    return bytes([(field << 3) | wire_type])


def _len(field: int, payload: bytes) -> bytes:
    assert len(payload) < 128
    return _key(field, 2) + bytes([len(payload)]) + payload


def test_sim_init_ack_bytes():
    # SimInitAck{done=true}: field 1 varint 1 -> 0x08 0x01.
    assert pb.SimInitAck(done=True).SerializeToString() == b"\x08\x01"
    assert pb.SimInitAck(done=True, stopSimReq=True).SerializeToString() == b"\x08\x01\x10\x01"


def test_env_act_msg_with_a_double_box_bytes():
    box = (
        _key(1, 0)
        + b"\x04"  # dtype DOUBLE = 4
        + _len(2, b"\x02")  # shape [2], packed uint32
        + _len(6, struct.pack("<2d", 1.5, -2.0))  # doubleData, packed fixed64
    )
    url = b"type.googleapis.com/ns3opengym.BoxDataContainer"
    any_msg = _len(1, url) + _len(2, box)
    container = _key(1, 0) + b"\x02" + _len(2, any_msg)  # type Box = 2
    expected = _len(1, container)
    msg = pb.EnvActMsg()
    msg.actData.CopyFrom(encode_box(np.array([1.5, -2.0])))
    assert msg.SerializeToString() == expected


def test_decode_a_hand_encoded_env_state_msg():
    box = _key(1, 0) + b"\x03" + _len(2, b"\x03") + _len(5, struct.pack("<3f", 1, 2, 3))
    any_msg = _len(1, b"type.googleapis.com/ns3opengym.BoxDataContainer") + _len(2, box)
    container = _key(1, 0) + b"\x02" + _len(2, any_msg)
    raw = (
        _len(1, container)
        + _key(2, 5)
        + struct.pack("<f", 0.5)  # reward
        + _key(3, 0)
        + b"\x01"  # isGameOver
        + _len(5, b'{"t": 1}')
    )
    state = pb.EnvStateMsg()
    state.ParseFromString(raw)
    assert state.isGameOver and state.reward == 0.5 and state.info == '{"t": 1}'
    obs = decode_container(state.obsData)
    assert obs.dtype == np.float32
    np.testing.assert_array_equal(obs, [1, 2, 3])


def test_spaces_and_nested_containers_round_trip():
    desc = pb.SpaceDescription(type=pb.Dict)
    dict_space = pb.DictSpace()
    e = dict_space.element.add(type=pb.Box, name="flows")
    e.space.Pack(pb.BoxSpace(low=-1, high=10, dtype=pb.DOUBLE, shape=[2, 3]))
    d = dict_space.element.add(type=pb.Discrete, name="mode")
    d.space.Pack(pb.DiscreteSpace(n=4))
    desc.space.Pack(dict_space)
    space = space_from_description(desc)
    assert isinstance(space, gym.spaces.Dict)
    assert space["flows"].shape == (2, 3) and space["flows"].dtype == np.float64
    assert space["mode"].n == 4
    data = pb.DictDataContainer()
    data.element.add().CopyFrom(encode_box(np.arange(6.0).reshape(2, 3), name="flows"))
    c = pb.DataContainer(type=pb.Dict)
    c.data.Pack(data)
    out = decode_container(c)
    np.testing.assert_array_equal(out["flows"], np.arange(6.0).reshape(2, 3))


def test_integer_and_float32_actions_keep_their_dtype():
    box = pb.BoxDataContainer()
    encode_box(np.array([1, 2], dtype=np.int64)).data.Unpack(box)
    assert box.dtype == pb.INT and list(box.intData) == [1, 2]
    encode_box(np.array([0.5], dtype=np.float32)).data.Unpack(box)
    assert box.dtype == pb.FLOAT


# -- a real process ------------------------------------------------------------------------------
needs_echo = pytest.mark.skipif(
    not ECHO.is_file() and not os.environ.get("CI"), reason="ns-3 scenarios not built"
)


@needs_echo
@pytest.mark.ns3
def test_full_episode_and_seed():
    with Ns3Bridge(ECHO, ["--steps=5", "--simSeed=9"], timeout_s=10) as b:
        obs, info = b.start()
        assert b.observation_space["x"].shape == (3,)
        assert obs["x"][2] == 9 and info == {"step": 0}
        done, k = False, 0
        while not done:
            obs, done, info = b.step(np.array([1.0, 2.5]))
            k += 1
        assert k == 5 and obs["x"][1] == 3.5
        b.proc_returncode = b._proc.wait(5)
        assert b.proc_returncode == 0


@needs_echo
@pytest.mark.ns3
def test_reply_ahead_gives_the_same_episode_as_lock_step():
    """Answering each observation before decoding it changes nothing the simulator sees."""
    runs = []
    for ahead in (None, np.array([1.0, 2.5])):
        with Ns3Bridge(ECHO, ["--steps=6", "--simSeed=4"], timeout_s=10, reply_ahead=ahead) as b:
            obs, _ = b.start()
            seen, done = [obs["x"].tolist()], False
            while not done:
                obs, done, info = b.step(np.array([1.0, 2.5]))
                seen.append(obs["x"].tolist())
            assert info == {"step": 6} and b._proc.wait(5) == 0
            runs.append(seen)
    assert runs[0] == runs[1] and len(runs[0]) == 7 and runs[0][-1][1] == 3.5


@needs_echo
@pytest.mark.ns3
def test_reply_ahead_refuses_another_action_and_closes_mid_episode():
    with Ns3Bridge(ECHO, ["--steps=50"], timeout_s=10, reply_ahead=np.zeros(2)) as b:
        b.start()
        b.step(np.zeros(2))
        with pytest.raises(ValueError, match="reply_ahead"):
            b.step(np.ones(2))
        pid = b.pid
    assert pid is not None and not _alive(pid)


@needs_echo
@pytest.mark.ns3
def test_wrong_action_shape_names_the_space():
    with Ns3Bridge(ECHO, ["--steps=5"], timeout_s=10) as b:
        b.start()
        with pytest.raises(ValueError, match="action space"):
            b.step(np.zeros(3))


@needs_echo
@pytest.mark.ns3
def test_crash_raises_with_exit_code_and_stderr():
    b = Ns3Bridge(ECHO, ["--steps=5", "--crashAtStep=2"], timeout_s=10)
    b.start()
    b.step(np.zeros(2))
    with pytest.raises(SimulatorError) as exc:
        b.step(np.zeros(2))
    assert exc.value.returncode == -signal.SIGABRT
    assert "crashing on purpose at step 2" in str(exc.value)
    b.close()


@needs_echo
@pytest.mark.ns3
def test_hang_raises_timeout_and_kills():
    b = Ns3Bridge(ECHO, ["--steps=5", "--hangAtStep=1"], timeout_s=1.0)
    b.start()
    t0 = time.monotonic()
    with pytest.raises(SimulatorTimeout, match="hanging on purpose"):
        b.step(np.zeros(2))
    assert time.monotonic() - t0 < 3.0
    assert not _alive(b.pid)
    # The next step names what the user calls (reset), not the bridge's internals.
    with pytest.raises(RuntimeError, match=r"call reset\(\) first") as exc:
        b.step(np.zeros(2))
    assert "start()" not in str(exc.value)
    b.close()


@needs_echo
@pytest.mark.ns3
def test_close_mid_episode_and_gc_leave_no_process():
    b = Ns3Bridge(ECHO, ["--steps=1000"], timeout_s=10)
    b.start()
    pid = b.pid
    b.close()
    b.close()  # idempotent
    assert not _alive(pid)
    b = Ns3Bridge(ECHO, ["--steps=1000"], timeout_s=10)
    b.start()
    pid = b.pid
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del b
        gc.collect()
    assert not _alive(pid)
    # Nor an open file: its stderr's file closes with it, not in whichever test collects it.
    assert [str(w.message) for w in caught if w.category is ResourceWarning] == []


@needs_echo
@pytest.mark.ns3
def test_parent_killed_leaves_no_process():
    code = textwrap.dedent(
        f"""
        import time
        from envs.bridge import Ns3Bridge
        b = Ns3Bridge({str(ECHO)!r}, ["--steps=1000"], timeout_s=100)
        b.start()
        print(b.pid, flush=True)
        time.sleep(60)
        """
    )
    _assert_simulator_dies_with(code)


@needs_echo
@pytest.mark.ns3
def test_two_bridges_at_once():
    with Ns3Bridge(ECHO, ["--simSeed=1"]) as a, Ns3Bridge(ECHO, ["--simSeed=2"]) as b:
        assert a.port != b.port
        oa, _ = a.start()
        ob, _ = b.start()
        assert oa["x"][2] == 1 and ob["x"][2] == 2
        a.step(np.ones(2))
        b.step(np.ones(2))


def test_missing_program_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="program="):
        Ns3Bridge(tmp_path / "nope")


@needs_echo
@pytest.mark.ns3
def test_simulator_survives_the_thread_that_started_it():
    """PR_SET_PDEATHSIG follows the forking thread: a simulator started in a thread that then ends
    must keep running (thread pools, async frameworks), and still die with the process."""
    import threading

    made = {}

    def start():
        b = Ns3Bridge(ECHO, ["--steps=1000"], timeout_s=10)
        b.start()
        made["bridge"] = b

    worker = threading.Thread(target=start)
    worker.start()
    worker.join()
    b = made["bridge"]
    time.sleep(0.3)  # the kernel's signal, were it sent, would have arrived
    assert _alive(b.pid)
    obs, done, _ = b.step(np.ones(2))
    assert not done
    b.close()


@needs_echo
@pytest.mark.ns3
def test_process_killed_after_its_thread_ended_leaves_no_process():
    code = textwrap.dedent(
        f"""
        import threading, time
        from envs.bridge import Ns3Bridge
        made = []
        def start():
            b = Ns3Bridge({str(ECHO)!r}, ["--steps=1000"], timeout_s=100)
            b.start()
            made.append(b)
        t = threading.Thread(target=start); t.start(); t.join()
        print(made[0].pid, flush=True)
        time.sleep(60)
        """
    )
    _assert_simulator_dies_with(code)


# -- only the simulator the bridge started may connect ---------------------------------------------
_CONNECT_AND_WAIT = (
    "import socket, sys, time; s = socket.create_connection(('127.0.0.1', {port})); time.sleep(30)"
)


def _accept_from(
    listener: socket.socket, argv: list[str]
) -> tuple[subprocess.Popen, socket.socket]:
    child = subprocess.Popen(argv, start_new_session=True)
    listener.settimeout(10)
    conn, _ = listener.accept()
    return child, conn


def test_peer_owned_by_tells_the_started_process_from_a_stranger():
    """The peer of a loopback connection is traced to its process through /proc (Linux)."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    code = _CONNECT_AND_WAIT.format(port=port)
    # The connecting process itself, and a launcher whose own child connects (same session).
    direct, conn = _accept_from(listener, [sys.executable, "-c", code])
    launcher_code = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {code!r}])"
    launcher, conn2 = _accept_from(listener, [sys.executable, "-c", launcher_code])
    stranger = socket.create_connection(("127.0.0.1", port))
    conn3, _ = listener.accept()
    try:
        assert peer_owned_by(conn, direct.pid)
        assert peer_owned_by(conn2, launcher.pid)
        assert not peer_owned_by(conn, launcher.pid)
        assert not peer_owned_by(conn3, direct.pid)  # this test's own connection
        assert peer_owned_by(conn3, os.getpid())
    finally:
        for c in (conn, conn2, conn3, stranger, listener):
            c.close()
        for p in (direct, launcher):
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


@needs_echo
@pytest.mark.ns3
def test_a_stranger_connecting_first_is_refused_and_the_listener_closes_after_the_handshake(
    caplog,
):
    """Another local process connects to the port before the simulator does.

    Before the fix the bridge took that first connection as the simulator: ``start`` waited on
    it until the timeout (SimulatorTimeout), and the port stayed open for the whole episode.
    """
    with Ns3Bridge(ECHO, ["--steps=3", "--simSeed=7"], timeout_s=5) as b:
        stranger = socket.create_connection(("127.0.0.1", b.port), timeout=2)
        with caplog.at_level("WARNING", logger="envs.zmtp"):
            obs, info = b.start()
        assert obs["x"][2] == 7 and info == {"step": 0}
        assert "refused a connection" in caplog.text
        stranger.settimeout(2)
        assert stranger.recv(64) == b""  # closed by the bridge, no ZMTP greeting
        stranger.close()
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", b.port), timeout=2)
        done, k = False, 0
        while not done:
            _, done, _ = b.step(np.array([1.0, 2.5]))
            k += 1
        assert k == 3 and b._proc.wait(5) == 0


# -- the ns-3 session's check of the declared spaces -----------------------------------------------
def _session_spaces(flows: int, ues: int, act: tuple[int, ...]) -> tuple[gym.Space, gym.Space]:
    box = gym.spaces.Box
    obs = gym.spaces.Dict(
        {
            "flows": box(-1, 1e12, (flows,)),
            "ues": box(-1, 1e12, (ues,)),
            "time": box(-1, 1e12, (1,)),
        }
    )
    return obs, box(0, 1e9, act, dtype=np.float64)


def test_session_checks_the_declared_flat_sizes_against_the_scenario():
    from cellgym.scenario import ScenarioSpec
    from envs.ns3_session import Ns3Session

    spec = ScenarioSpec(
        num_ues=2, flows=[{"cca": "agent"}, {"ue": 1, "cca": "cubic"}, {"ue": 1, "cca": "agent"}]
    )
    session = Ns3Session(spec, seed=1, program="unused")
    session._check_spaces(*_session_spaces(3 * 18, 2 * 7, (4,)))  # the flat wire format
    session._check_spaces(*_session_spaces(3 * 18, 2 * 7, (2, 2)))  # same sizes, 2-D: accepted
    with pytest.raises(SimulatorError, match=r"'flows' has shape \(36,\): expected 54 values"):
        session._check_spaces(*_session_spaces(2 * 18, 2 * 7, (4,)))
    with pytest.raises(SimulatorError, match=r"action space has shape \(2,\): expected 4 values"):
        session._check_spaces(*_session_spaces(3 * 18, 2 * 7, (2,)))
    with pytest.raises(SimulatorError, match="F=3 flows, U=2 UEs, A=2 agent flows"):
        session._check_spaces(*_session_spaces(3 * 18, 7, (4,)))
