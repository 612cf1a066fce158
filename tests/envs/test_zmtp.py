"""``envs.zmtp.ZmtpRep`` against libzmq's own REQ socket (pyzmq), and against protocol errors."""

from __future__ import annotations

import socket
import threading

import pytest
import zmq

from envs.zmtp import ZmtpError, ZmtpRep


def _poll_until(rep: ZmtpRep, limit_s: float = 5.0) -> None:
    for _ in range(int(limit_s / 0.05)):
        if rep.poll(50):
            return
    raise AssertionError("no request arrived")


def test_libzmq_req_round_trips_short_and_long_messages():
    rep = ZmtpRep()
    ctx = zmq.Context()
    req = ctx.socket(zmq.REQ)
    req.setsockopt(zmq.LINGER, 0)
    req.connect(f"tcp://127.0.0.1:{rep.port}")
    bodies = [b"", b"x", b"a" * 255, b"b" * 256, bytes(range(256)) * 400]  # 0 B .. 100 kB
    replies: list[bytes] = []

    def client() -> None:
        for body in bodies:
            req.send(body)
            replies.append(req.recv())

    t = threading.Thread(target=client)
    t.start()
    try:
        for body in bodies:
            _poll_until(rep)
            assert rep.recv() == body
            rep.send(body[::-1] + b"!")
        t.join(5)
        assert replies == [b[::-1] + b"!" for b in bodies]
    finally:
        req.close()
        ctx.term()
        rep.close()


def test_a_peer_that_is_not_zmtp_is_refused():
    rep = ZmtpRep()
    with socket.create_connection(("127.0.0.1", rep.port)) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + b"\0" * 64)
        with pytest.raises(ZmtpError, match="not a ZMTP 3 endpoint"):
            for _ in range(100):
                rep.poll(50)
    rep.close()


def test_a_closed_peer_ends_polling_and_recv_without_a_request_is_an_error():
    rep = ZmtpRep()
    with socket.create_connection(("127.0.0.1", rep.port)):
        assert not rep.poll(100)  # accepted, greeting incomplete
    assert not rep.poll(10) and not rep.poll(10)
    with pytest.raises(ZmtpError, match="no request is waiting"):
        rep.recv()
    rep.close()
    rep.close()


def test_a_refused_connection_is_closed_and_the_endpoint_waits_on_for_its_peer(caplog):
    """``accept_peer`` refuses the first connection; the second is the peer; then no listener.

    Before ``accept_peer`` existed, the endpoint took the first connection as its peer and
    kept listening on the port for its whole life.
    """
    seen: list[int] = []
    rep = ZmtpRep(accept_peer=lambda conn: seen.append(conn.getpeername()[1]) or len(seen) > 1)
    ctx = zmq.Context()
    req = ctx.socket(zmq.REQ)
    req.setsockopt(zmq.LINGER, 0)
    try:
        with socket.create_connection(("127.0.0.1", rep.port), timeout=2) as first:
            with caplog.at_level("WARNING", logger="envs.zmtp"):
                assert not rep.poll(100)  # the stranger is refused; nothing arrived
            first.settimeout(2)
            assert first.recv(64) == b""  # closed by the endpoint, no greeting sent
            assert "refused a connection" in caplog.text and str(rep.port) in caplog.text
            req.connect(f"tcp://127.0.0.1:{rep.port}")
            req.send(b"hello")
            _poll_until(rep)
            assert rep.recv() == b"hello" and len(seen) == 2
            rep.send(b"ok")
            assert req.recv() == b"ok"
            with pytest.raises(ConnectionRefusedError):  # the listener closed with the handshake
                socket.create_connection(("127.0.0.1", rep.port), timeout=1)
    finally:
        req.close()
        ctx.term()
        rep.close()
