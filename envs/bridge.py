"""The Python side of the ns3-gym wire protocol, and the ns-3 process it serves.

The bridge knows nothing about RL: it starts a scenario program, serves its ZeroMQ REQ socket from a
REP endpoint bound to 127.0.0.1 on a free port (``envs.zmtp``: ZMTP 3.0 without libzmq's I/O
thread), converts ns3-gym's space descriptions and data
containers to Gymnasium spaces and numpy values, and sends actions back. It fixes what ns3-gym's
users complain about:

- every receive is bounded: a dead simulator raises ``SimulatorError`` with its exit code and the
  tail of its stderr; a silent one raises ``SimulatorTimeout`` and is killed;
- ``close()``, garbage collection and the death of the Python parent (``PR_SET_PDEATHSIG``) all end
  the ns-3 process, so none is orphaned; the process is started from one long-lived thread per
  Python process, because the kernel sends the parent-death signal when the *thread* that forked
  the child exits: an environment made in a short-lived thread (a pool, an async framework) keeps
  its simulator;
- it binds only to loopback, on a port the OS picks, so many bridges run at once; any local
  process can connect there, so it accepts only a connection whose socket belongs to the
  simulator it started (Linux: ``peer_owned_by``), refusing others, and stops listening once
  the simulator is connected.

Message names and field numbers are ns3-gym's (package ``ns3opengym``), so ns3-gym's own scenarios
can be served too.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import socket
import struct
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import IO, Any

import gymnasium as gym
import numpy as np

from cellgym.processes import die_with_parent, reap
from cellgym.proto import ns3opengym_pb2 as pb
from envs.zmtp import ZmtpError, ZmtpRep

log = logging.getLogger(__name__)

_DTYPES: dict[int, type[np.generic]] = {
    pb.INT: np.int32,
    pb.UINT: np.uint32,
    pb.FLOAT: np.float32,
    pb.DOUBLE: np.float64,
}
_POLL_MS = 50
_STDERR_TAIL_LINES = 40


class SimulatorError(RuntimeError):
    """The simulator process failed; carries its exit code and the tail of its stderr."""

    def __init__(self, message: str, returncode: int | None = None, stderr_tail: str = "") -> None:
        detail = f"{message} (exit code {returncode})" if returncode is not None else message
        if stderr_tail:
            detail += f"\n--- simulator stderr (tail) ---\n{stderr_tail}"
        super().__init__(detail)
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class SimulatorTimeout(SimulatorError):
    """The simulator did not answer within the timeout; it has been killed."""


# -- wire format: pure functions -------------------------------------------------------------------
def space_from_description(desc: pb.SpaceDescription) -> gym.Space:
    """Convert an ns3-gym ``SpaceDescription`` to a Gymnasium space."""
    if desc.type == pb.Discrete:
        d = pb.DiscreteSpace()
        desc.space.Unpack(d)
        return gym.spaces.Discrete(d.n)
    if desc.type == pb.Box:
        b = pb.BoxSpace()
        desc.space.Unpack(b)
        dtype = _DTYPES.get(b.dtype, np.float32)
        return gym.spaces.Box(low=b.low, high=b.high, shape=tuple(b.shape), dtype=dtype)
    if desc.type in (pb.Tuple, pb.Dict):
        msg = pb.TupleSpace() if desc.type == pb.Tuple else pb.DictSpace()
        desc.space.Unpack(msg)
        elements = [space_from_description(e) for e in msg.element]
        if desc.type == pb.Tuple:
            return gym.spaces.Tuple(elements)
        return gym.spaces.Dict({e.name: s for e, s in zip(msg.element, elements, strict=True)})
    raise ValueError(f"SpaceDescription.type={desc.type} is not supported: allowed 1-4")


def decode_container(container: pb.DataContainer) -> Any:
    """Convert an ns3-gym ``DataContainer`` to numpy values (dicts and tuples for containers)."""
    if container.type == pb.Discrete:
        d = pb.DiscreteDataContainer()
        container.data.Unpack(d)
        return int(d.data)
    if container.type == pb.Box:
        b = pb.BoxDataContainer()
        container.data.Unpack(b)
        field = {pb.INT: b.intData, pb.UINT: b.uintData, pb.FLOAT: b.floatData}.get(
            b.dtype, b.doubleData
        )
        arr = np.asarray(field, dtype=_DTYPES.get(b.dtype, np.float64))
        return arr.reshape(tuple(b.shape)) if len(b.shape) else arr
    if container.type in (pb.Tuple, pb.Dict):
        msg = pb.TupleDataContainer() if container.type == pb.Tuple else pb.DictDataContainer()
        container.data.Unpack(msg)
        if container.type == pb.Tuple:
            return tuple(decode_container(e) for e in msg.element)
        return {e.name: decode_container(e) for e in msg.element}
    if container.type == pb.NoSpaceType:
        return None
    raise ValueError(f"DataContainer.type={container.type} is not supported: allowed 0-4")


def encode_box(value: np.ndarray | Sequence[float], name: str = "") -> pb.DataContainer:
    """Encode an array as a Box ``DataContainer``, keeping its shape and dtype.

    float64 goes as DOUBLE (not truncated to FLOAT as ns3-gym does), float32 as FLOAT, signed
    integers as INT and unsigned as UINT.
    """
    arr = np.asarray(value)
    box = pb.BoxDataContainer()
    box.shape.extend(int(d) for d in arr.shape)
    flat = arr.reshape(-1)
    if arr.dtype == np.float32:
        box.dtype = pb.FLOAT
        box.floatData.extend(flat.tolist())
    elif np.issubdtype(arr.dtype, np.floating):
        box.dtype = pb.DOUBLE
        box.doubleData.extend(flat.astype(np.float64).tolist())
    elif np.issubdtype(arr.dtype, np.unsignedinteger):
        box.dtype = pb.UINT
        box.uintData.extend(flat.tolist())
    elif np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_:
        box.dtype = pb.INT
        box.intData.extend(flat.astype(np.int64).tolist())
    else:
        raise ValueError(f"action dtype {arr.dtype} is not supported: use a float or int array")
    container = pb.DataContainer(type=pb.Box, name=name)
    container.data.Pack(box)
    return container


def encode_discrete(value: int) -> pb.DataContainer:
    """Encode an integer as a Discrete ``DataContainer``."""
    container = pb.DataContainer(type=pb.Discrete)
    container.data.Pack(pb.DiscreteDataContainer(data=int(value)))
    return container


def _parse_info(text: str) -> Any:
    if not text:
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


class _Spawner:
    """Starts processes from one daemon thread that lives as long as the Python process.

    ``PR_SET_PDEATHSIG`` fires when the thread that forked the child ends, not the process: a
    simulator started directly from a worker thread would be killed when that thread exits. A
    forked Python child gets its own spawner (the thread does not survive ``fork``).
    """

    _lock = threading.Lock()
    _pid: int | None = None
    _jobs: queue.SimpleQueue[tuple[dict[str, Any], queue.SimpleQueue[Any]]]

    @classmethod
    def popen(cls, **kwargs: Any) -> subprocess.Popen[bytes]:
        """``subprocess.Popen(**kwargs)``, forked from the spawner thread."""
        with cls._lock:
            if cls._pid != os.getpid():
                cls._jobs = queue.SimpleQueue()
                threading.Thread(
                    target=cls._serve, args=(cls._jobs,), name="cellgym-spawner", daemon=True
                ).start()
                cls._pid = os.getpid()
            jobs = cls._jobs
        reply: queue.SimpleQueue[Any] = queue.SimpleQueue()
        jobs.put((kwargs, reply))
        result = reply.get()
        if isinstance(result, BaseException):
            raise result
        return result

    @staticmethod
    def _serve(jobs: queue.SimpleQueue[tuple[dict[str, Any], queue.SimpleQueue[Any]]]) -> None:
        while True:
            kwargs, reply = jobs.get()
            try:
                reply.put(subprocess.Popen(**kwargs))
            except BaseException as exc:  # handed to the caller, raised there
                reply.put(exc)
            # Hold nothing between jobs: the caller's files (its stderr) are its own to close.
            del kwargs, reply


# -- who is at the other end of a loopback connection ----------------------------------------------
_PROC_NET_TCP = ("/proc/net/tcp", "/proc/net/tcp6")


def _proc_net_address(text: str) -> tuple[str, int]:
    """``/proc/net/tcp(6)``'s ``HEX_IP:HEX_PORT`` as ``(ip, port)``.

    The address is the kernel's in-memory words printed as hex, so each 32-bit word is in host
    (little-endian) order: ``0100007F`` is 127.0.0.1.
    """
    hex_ip, hex_port = text.split(":")
    raw = b"".join(struct.pack("=I", int(hex_ip[i : i + 8], 16)) for i in range(0, len(hex_ip), 8))
    family = socket.AF_INET if len(raw) == 4 else socket.AF_INET6
    return socket.inet_ntop(family, raw), int(hex_port, 16)


def _peer_socket_inode(conn: socket.socket) -> int | None:
    """Inode of the socket at the other end of the loopback connection ``conn`` (None: unseen).

    The peer's socket is the row of ``/proc/net/tcp`` (or ``tcp6``, for an IPv6 socket mapped to
    127.0.0.1) whose local address is ``conn``'s peer address and whose remote address is
    ``conn``'s own.
    """
    peer_ip, peer_port = conn.getpeername()[:2]
    own_ip, own_port = conn.getsockname()[:2]
    for table in _PROC_NET_TCP:
        try:
            with open(table) as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if len(cols) < 10:
                continue
            local, remote = _proc_net_address(cols[1]), _proc_net_address(cols[2])
            if local[1] != peer_port or remote[1] != own_port:
                continue
            if local[0] in (peer_ip, f"::ffff:{peer_ip}") and remote[0] in (
                own_ip,
                f"::ffff:{own_ip}",
            ):
                inode = int(cols[9])
                return inode or None
    return None


def _session_pids(pid: int) -> Iterator[int]:
    """``pid``, then every other process of the session it leads (``start_new_session``)."""
    yield pid
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == pid:
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and fields[3] == str(pid):  # state ppid pgrp session
            yield int(entry.name)


def peer_owned_by(conn: socket.socket, pid: int) -> bool:
    """Whether the other end of the loopback connection ``conn`` is a socket of process ``pid``.

    Linux: the peer's socket inode (``/proc/net/tcp``) must be among the open files of ``pid``
    or of a process in the session it leads (a launcher's child). Where ``/proc`` has no TCP
    tables (another OS) the check cannot be made and the connection is accepted.
    """
    if not any(os.path.isfile(t) for t in _PROC_NET_TCP):
        log.debug("no /proc/net/tcp: cannot check who connected; accepting the connection")
        return True
    try:
        inode = _peer_socket_inode(conn)
    except OSError:  # the peer has already gone
        return False
    if inode is None:
        return False
    target = f"socket:[{inode}]"
    for p in _session_pids(pid):
        try:
            fds = os.scandir(f"/proc/{p}/fd")
        except OSError:
            continue
        with fds:
            for fd in fds:
                try:
                    if os.readlink(fd.path) == target:
                        return True
                except OSError:
                    continue
    return False


def _cleanup(proc: subprocess.Popen[bytes] | None, sock: ZmtpRep, stderr: IO[bytes]) -> None:
    if proc is not None:
        reap(proc)
    sock.close()
    stderr.close()  # a bridge dropped unclosed leaves no open file behind


class Ns3Bridge:
    """One ns-3 scenario process, served over the ns3-gym protocol.

    Args:
        program: The scenario executable.
        args: Its arguments, without ``--openGymPort`` (the bridge appends it).
        timeout_s: Longest wait for any message from the simulator.
        cwd: Working directory of the process (default: a fresh temporary directory).
        reply_ahead: An action that answers every observation as soon as it arrives, before it is
            decoded, for scenarios whose actions do not depend on observations (native
            controllers only: the empty action). The simulator then computes the next step while
            Python decodes and stores this one; ``step`` must be given this same action.

    Attributes:
        observation_space: From the simulator's ``SimInitMsg`` (after ``start``).
        action_space: Likewise.
        port: The loopback port the bridge listens on.
        pid: The simulator's process id (after ``start``).
    """

    def __init__(
        self,
        program: str | os.PathLike[str],
        args: Sequence[str] = (),
        timeout_s: float = 60.0,
        cwd: str | os.PathLike[str] | None = None,
        reply_ahead: np.ndarray | None = None,
    ) -> None:
        self.program = Path(program).resolve()
        if not self.program.is_file():
            raise FileNotFoundError(f"program={self.program} does not exist")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s={timeout_s!r} is out of range: allowed (0, inf)")
        self.args = [str(a) for a in args]
        self.timeout_s = float(timeout_s)
        self._cwd = cwd
        self._sock = ZmtpRep()
        self.port = self._sock.port
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr = tempfile.TemporaryFile()
        self._awaiting_reply = False
        self._finished = False
        self._reply_ahead = None if reply_ahead is None else np.asarray(reply_ahead)
        self._ahead_msg: bytes | None = None  # the encoded reply_ahead (after the handshake)
        self._replied_ahead = False
        self.observation_space: gym.Space | None = None
        self.action_space: gym.Space | None = None
        self.pid: int | None = None
        self._finalizer = weakref.finalize(self, _cleanup, None, self._sock, self._stderr)

    @property
    def command(self) -> list[str]:
        """The simulator's full command line."""
        return [str(self.program), *self.args, f"--openGymPort={self.port}"]

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> tuple[Any, dict[str, Any] | str]:
        """Start the simulator, complete the handshake and return the first observation and info."""
        if self._proc is not None:
            raise RuntimeError("the bridge was already started: make a new one per episode")
        log.debug("starting %s", " ".join(self.command))
        cwd = self._cwd if self._cwd is not None else tempfile.gettempdir()
        self._proc = _Spawner.popen(
            args=self.command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=die_with_parent,
        )
        self.pid = self._proc.pid
        # Only the simulator started here may connect; anyone else on the host is refused.
        # (A partial on the pid, not a bound method: the socket must not keep ``self`` alive.)
        self._sock.accept_peer = partial(peer_owned_by, pid=self._proc.pid)
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, _cleanup, self._proc, self._sock, self._stderr)

        init = pb.SimInitMsg()
        init.ParseFromString(self._recv())
        self.observation_space = space_from_description(init.obsSpace)
        self.action_space = space_from_description(init.actSpace)
        if self._reply_ahead is not None:
            msg = pb.EnvActMsg(stopSimReq=False)
            msg.actData.CopyFrom(self._encode_action(self._reply_ahead))
            self._ahead_msg = msg.SerializeToString()
        self._send(pb.SimInitAck(done=True, stopSimReq=False))
        obs, game_over, info = self._recv_state()
        if game_over:
            self._finish()
        return obs, info

    def step(self, action: Any) -> tuple[Any, bool, dict[str, Any] | str]:
        """Send an action; return the next observation, whether the simulation ended, and info."""
        if self._proc is None or not (self._awaiting_reply or self._replied_ahead):
            raise RuntimeError("no observation is waiting for an action: call reset() first")
        if self._finished:
            raise RuntimeError("the simulation has ended")
        if self._replied_ahead:
            assert self._reply_ahead is not None
            given = np.asarray(action).reshape(-1)
            if not np.array_equal(given, self._reply_ahead.reshape(-1)):
                raise ValueError(
                    f"action={action!r}: this bridge answers every step with reply_ahead="
                    f"{self._reply_ahead!r}"
                )
            self._replied_ahead = False
        else:
            msg = pb.EnvActMsg(stopSimReq=False)
            msg.actData.CopyFrom(self._encode_action(action))
            self._send(msg)
        obs, game_over, info = self._recv_state()
        if game_over:
            self._finish()
        return obs, game_over, info

    def _encode_action(self, action: Any) -> pb.DataContainer:
        """The action as a container of the simulator's action space (shape checked)."""
        if isinstance(self.action_space, gym.spaces.Discrete):
            return encode_discrete(int(np.asarray(action).reshape(-1)[0]))
        arr = np.asarray(action)
        shape = getattr(self.action_space, "shape", None)
        if shape is not None and arr.size != int(np.prod(shape)):
            raise ValueError(
                f"action has shape {arr.shape}: the simulator's action space is {shape}"
            )
        if shape is not None:
            arr = arr.reshape(shape)
        return encode_box(arr)

    def close(self) -> None:
        """Stop the simulation (if running) and the process; idempotent."""
        if self._proc is not None and self._proc.poll() is None and self._awaiting_reply:
            try:
                self._send(pb.EnvActMsg(stopSimReq=True))
                self._proc.wait(1.0)
            except (ZmtpError, subprocess.TimeoutExpired):
                pass
        self._finalizer()

    def __enter__(self) -> Ns3Bridge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------------------------
    def stderr_tail(self, lines: int = _STDERR_TAIL_LINES) -> str:
        """The last lines the simulator wrote to stderr."""
        try:
            self._stderr.seek(0)
            text = self._stderr.read().decode(errors="replace")
        except (ValueError, OSError):
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def _recv(self) -> bytes:
        assert self._proc is not None
        deadline = time.monotonic() + self.timeout_s
        while True:
            if self._sock.poll(_POLL_MS):
                data = self._sock.recv()
                self._awaiting_reply = True
                return data
            code = self._proc.poll()
            if code is not None:
                # It may have sent its last message just before exiting.
                if self._sock.poll(0):
                    continue
                raise SimulatorError(
                    f"the simulator exited unexpectedly: {' '.join(self.command)}",
                    code,
                    self.stderr_tail(),
                )
            if time.monotonic() > deadline:
                tail = self.stderr_tail()
                reap(self._proc, grace_s=0.2)
                raise SimulatorTimeout(
                    f"no message from the simulator within {self.timeout_s:g} s; it was killed",
                    self._proc.returncode,
                    tail,
                )

    def _send(self, msg: Any) -> None:
        try:
            self._sock.send(msg.SerializeToString())
        except ZmtpError as exc:
            # The simulator closed its end: _recv reports how it ended (exit code, stderr).
            self._recv()
            raise SimulatorError(
                "the simulator closed the connection", None, self.stderr_tail()
            ) from exc
        self._awaiting_reply = False

    def _recv_state(self) -> tuple[Any, bool, dict[str, Any] | str]:
        state = pb.EnvStateMsg()
        state.ParseFromString(self._recv())
        if self._ahead_msg is not None and not state.isGameOver:
            # Answer first: the simulator runs the next step while this one is decoded.
            self._sock.send(self._ahead_msg)
            self._awaiting_reply = False
            self._replied_ahead = True
        return decode_container(state.obsData), bool(state.isGameOver), _parse_info(state.info)

    def _finish(self) -> None:
        """Answer the game-over message and let the simulator exit by itself."""
        assert self._proc is not None
        self._finished = True
        self._send(pb.EnvActMsg(stopSimReq=True))
        try:
            self._proc.wait(min(self.timeout_s, 10.0))
        except subprocess.TimeoutExpired:
            reap(self._proc)
        if self._proc.returncode not in (0, None):
            raise SimulatorError(
                "the simulator failed while ending", self._proc.returncode, self.stderr_tail()
            )
