"""A ZeroMQ REP endpoint over one TCP connection, speaking ZMTP 3.0 on the calling thread.

Written from the ZMTP 3.0 specification (rfc.zeromq.org/spec/23, NULL mechanism spec/24): a
64-byte greeting, a READY command carrying ``Socket-Type``, then frames of ``flags, size,
payload`` (flag bits: 1 more, 2 long size, 4 command). A REQ peer sends an empty delimiter frame
before each message, and the REP side answers with one too.

Why not pyzmq: libzmq moves every message through a background I/O thread, and in the lock
step between the simulator and Python those thread wake-ups were the largest part of the
bridge's cost (``bench/bridge_overhead.py``). Here a step is one ``send`` and, usually, one
``recv`` system call. On the wire this is an ordinary REP socket, so any ZeroMQ REQ peer (the
scenario programs' own peer, an ns3-gym scenario built on libzmq) connects to it unchanged;
``tests/envs/test_zmtp.py`` checks it against libzmq's REQ socket.
"""

from __future__ import annotations

import logging
import select
import socket
import struct
import time
from collections.abc import Callable

__all__ = ["ZmtpError", "ZmtpRep"]

log = logging.getLogger(__name__)

_MORE, _LONG, _COMMAND = 0x01, 0x02, 0x04
_GREETING = b"\xff" + b"\0" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\0") + b"\0" * 32
_MAX_FRAME = 1 << 30
#: Pending connections the listener holds: a stranger's connection waiting to be refused does
#: not push the expected peer's out of the queue.
_BACKLOG = 8


class ZmtpError(ConnectionError):
    """The peer broke the protocol or the connection."""


def _frame(flags: int, payload: bytes) -> bytes:
    """One frame: flags, a 1- or 8-byte size, the payload."""
    if len(payload) <= 255:
        return bytes((flags, len(payload))) + payload
    return bytes((flags | _LONG,)) + struct.pack(">Q", len(payload)) + payload


def _ready(socket_type: bytes) -> bytes:
    """The READY command announcing ``socket_type``."""
    body = b"\x05READY" + b"\x0bSocket-Type" + struct.pack(">I", len(socket_type)) + socket_type
    return _frame(_COMMAND, body)


class ZmtpRep:
    """A REP endpoint bound to 127.0.0.1 on a port the OS picks, serving one REQ peer.

    ``poll`` accepts the peer's connection and completes the handshake when it arrives, so the
    endpoint can be created before the peer process starts. Messages are single byte strings.

    Any local process can connect to a loopback port. ``accept_peer``, when set, vets each
    accepted connection: one it refuses is closed (with a logged warning) and the endpoint goes
    on waiting for the right peer within the same ``poll`` timeout. Once a peer is accepted the
    listening socket is closed, so no later connection reaches the endpoint.

    Args:
        accept_peer: Called with each accepted connection; False refuses it (``None``: the first
            connection is the peer). May also be set as the attribute before the peer connects.
    """

    def __init__(self, accept_peer: Callable[[socket.socket], bool] | None = None) -> None:
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(_BACKLOG)
        self.port: int = self._listener.getsockname()[1]
        self.accept_peer = accept_peer
        self._conn: socket.socket | None = None
        self._buf = bytearray()
        self._handshake_done = False
        self._messages: list[bytes] = []
        self._closed = False

    # -- public API ---------------------------------------------------------------------------
    def poll(self, timeout_ms: float) -> bool:
        """Wait up to ``timeout_ms`` for a whole request; True if one is ready for ``recv``."""
        if self._messages:
            return True
        timeout = max(0.0, timeout_ms / 1000.0)
        if self._closed:  # nothing can arrive any more: wait as a poll would
            time.sleep(timeout)
            return False
        if self._conn is None and not self._accept(timeout):
            return False
        assert self._conn is not None
        while True:
            if self._parse():
                return True
            if not select.select([self._conn], [], [], timeout)[0]:
                return False
            try:
                data = self._conn.recv(1 << 16)
            except ConnectionError:
                data = b""
            if not data:
                self._closed = True
                return False
            self._buf += data

    def recv(self) -> bytes:
        """The next request (call after ``poll`` returned True)."""
        if not self._messages:
            raise ZmtpError("no request is waiting: poll() first")
        return self._messages.pop(0)

    def send(self, body: bytes) -> None:
        """Answer the last request with ``body``."""
        if self._conn is None:
            raise ZmtpError("no peer is connected")
        try:
            self._conn.sendall(_frame(_MORE, b"") + _frame(0, bytes(body)))
        except OSError as exc:
            raise ZmtpError(f"the peer is gone: {exc}") from exc

    def close(self) -> None:
        """Close the connection and the listening socket; idempotent."""
        for s in (self._conn, self._listener):
            if s is not None:
                s.close()
        self._conn = None
        self._closed = True

    # -- internals ----------------------------------------------------------------------------
    def _accept(self, timeout: float) -> bool:
        """Accept the peer within ``timeout`` s (refusing others), then stop listening."""
        deadline = time.monotonic() + timeout
        while True:
            left = max(0.0, deadline - time.monotonic())
            if not select.select([self._listener], [], [], left)[0]:
                return False
            conn, addr = self._listener.accept()
            check = self.accept_peer
            if check is not None and not check(conn):
                log.warning(
                    "refused a connection to port %d from %s:%d: not the expected peer",
                    self.port,
                    addr[0],
                    addr[1],
                )
                conn.close()
                continue
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            conn.sendall(_GREETING + _ready(b"REP"))
            self._conn = conn
            self._listener.close()  # one peer per endpoint: nobody else gets in from now on
            return True

    def _take_frame(self, pos: int) -> tuple[int, bytes, int] | None:
        """The frame at ``pos`` in the buffer as (flags, payload, next position), or None."""
        buf = self._buf
        if len(buf) < pos + 2:
            return None
        flags = buf[pos]
        if flags & _LONG:
            if len(buf) < pos + 9:
                return None
            (size,) = struct.unpack_from(">Q", buf, pos + 1)
            start = pos + 9
        else:
            size, start = buf[pos + 1], pos + 2
        if size > _MAX_FRAME:
            raise ZmtpError(f"a frame of {size} bytes: over 1 GiB")
        if len(buf) < start + size:
            return None
        return flags, bytes(buf[start : start + size]), start + size

    def _parse(self) -> bool:
        """Move complete items out of the buffer; True once a request is waiting."""
        if not self._handshake_done:
            if len(self._buf) < len(_GREETING):
                return False
            greeting = bytes(self._buf[: len(_GREETING)])
            if greeting[0] != 0xFF or greeting[9] != 0x7F or greeting[10] < 3:
                raise ZmtpError("the peer is not a ZMTP 3 endpoint (bad greeting)")
            if greeting[12:32].rstrip(b"\0") != b"NULL":
                raise ZmtpError("the peer asks for a security mechanism other than NULL")
            ready = self._take_frame(len(_GREETING))
            if ready is None:
                return False
            flags, body, end = ready
            if not flags & _COMMAND or body[:6] != b"\x05READY":
                raise ZmtpError("the peer did not send READY")
            if b"Socket-Type" in body and b"REQ" not in body and b"DEALER" not in body:
                raise ZmtpError(f"the peer is not a REQ or DEALER socket: {body!r}")
            del self._buf[:end]
            self._handshake_done = True
        pos, parts = 0, []
        while True:
            frame = self._take_frame(pos)
            if frame is None:
                return False
            flags, payload, pos = frame
            if flags & _COMMAND:  # PING and other commands between messages: consumed
                del self._buf[:pos]
                pos, parts = 0, []
                continue
            parts.append(payload)
            if not flags & _MORE:
                break
        del self._buf[:pos]
        # REQ's envelope: an empty delimiter frame, then the body.
        if len(parts) < 2 or parts[0] != b"":
            raise ZmtpError("a request without REQ's empty delimiter frame")
        self._messages.append(b"".join(parts[1:]))
        return True
