"""BBR's start as ns-3's ``TcpBbr`` (and Linux ``bbr_init``/``bbr_set_cwnd``) makes it.

- The handshake's RTT sample is BBR's first min RTT (ns-3 ``CongestionStateSet(CA_OPEN)``:
  ``m_minRtt = srtt`` of the SYN-ACK's sample, stamped then; Linux: ``tcp_min_rtt``). Before the
  fast model took it, the first data ACK's RTT set the minimum: on the ATT LTE driving trace the
  first segments queue (a 73 ms ACK against a 45 ms handshake), BBR kept a 64-73 ms minimum for
  the run, a window 1.4x ns-3's, and the queue (HoL mean 140 ms against ns-3's 86 ms on seed 201)
  never drained far enough to show the lower RTT.
- Before the pipe is full the window grows by every delivery until an initial window is
  delivered, whatever the target (``m_delivered < m_initialCWnd * m_segmentSize``): on a trace
  that opens at 0.17 Mbit/s (Irish 5G static) ns-3 grows 10 to 19 segments where the fast model
  held 10-11 (the target from the tiny bandwidth estimate is below the initial window).
"""

from __future__ import annotations

import numpy as np

from cellgym.fields import SEGMENT_BYTES
from cellgym.scenario import load_scenario
from envs.fastsim.session import FastSession
from envs.fastsim.state import (
    I_DATA_MS,
    I_HANDED,
    I_START_MS,
    I_UNA,
    X_B_DELIV,
    X_B_MINRTT,
    X_B_MINSTAMP,
    X_CWND,
)
from evaluation.rollouts import with_native_agent


def _session(name: str, sim_time_s: float, seed: int) -> FastSession:
    spec = with_native_agent(load_scenario(name).replace(sim_time_s=sim_time_s), "bbr")
    return FastSession(spec, seed)


def test_the_handshake_rtt_is_bbrs_first_min_rtt_and_bounds_it_after():
    session = _session("traces/att_lte_driving", 2.5, 201)
    raw = session.start()
    fi, fx = session.cell.state.fi, session.cell.state.fx
    seen = False
    while not raw.done:
        raw = session.step(np.zeros((0, 2)))
        data = int(fi[0, 0, I_DATA_MS])
        handshake = float(data - fi[0, 0, I_START_MS])
        if not seen and raw.t * 1000.0 >= data + 1:
            seen = True
            # From the handshake on (before any data ACK can return) BBR has the SYN's RTT.
            assert fx[0, 0, X_B_MINRTT] <= handshake
            assert fx[0, 0, X_B_MINSTAMP] >= data
        if seen:
            # A windowed minimum: never above a sample it has taken.
            assert fx[0, 0, X_B_MINRTT] <= handshake
    assert seen
    session.close()


def test_the_window_grows_by_the_initial_window_before_any_target():
    session = _session("traces/irish5g_static", 3.0, 201)
    raw = session.start()
    fx = session.cell.state.fx
    iw = session.params.init_cwnd_segs * SEGMENT_BYTES
    cwnd_at_iw = None
    while not raw.done and cwnd_at_iw is None:
        raw = session.step(np.zeros((0, 2)))
        if fx[0, 0, X_B_DELIV] >= iw:
            cwnd_at_iw = float(fx[0, 0, X_CWND])
    assert cwnd_at_iw is not None, "the trace delivers an initial window within 3 s"
    # Every delivery before the initial window's end grew the window (ns-3: 10 -> 19 segments);
    # the bandwidth estimate's target alone would hold it at the initial window.
    assert cwnd_at_iw >= 1.5 * iw
    session.close()


def test_an_expired_min_rtt_enters_probe_rtt_as_ns3_does():
    """A min RTT 10 s old sends BBR into ProbeRTT (ns-3 ``UpdateRTprop`` then ``CheckProbeRTT``).

    ns-3 decides the filter's expiry before the ACK's sample refreshes it, and enters ProbeRTT
    on that decision. The fast model refreshed the stamp first and then asked whether it was
    stale, so it never probed: on ``calibration/fluctuating_bbr`` ns-3 holds 4 segments from
    10.76-10.84 s on six of nine seeds (seed 4: 10.76 s; its last RTT at the minimum came at
    0.8 s), the fast model did not, and its min RTT jumped from 38 to 61 ms at 10.83 s instead.
    """
    spec = with_native_agent(
        load_scenario("calibration/fluctuating_bbr").replace(sim_time_s=11.5), "bbr"
    )
    session = FastSession(spec, 4)
    raw = session.start()
    fx = session.cell.state.fx
    probing = []
    while not raw.done:
        raw = session.step(np.zeros((0, 2)))
        if 10.0 <= raw.t and fx[0, 0, X_CWND] <= 4 * SEGMENT_BYTES:
            probing.append(raw.t)
    assert probing and 10.7 <= probing[0] <= 11.0, probing[:3]
    assert fx[0, 0, X_B_MINRTT] < 45.0  # the probe found the empty queue's RTT again


def test_the_application_never_queues_more_than_the_send_buffer():
    """BBR leaving a recovery in startup takes ssthresh, still unset (4e9 bytes), as its window.

    ns-3's application then writes what the 4 MiB send buffer takes; the fast one handed about
    5.5 million segments at that instant (seed 6, 0.625 s) and was never application-limited
    again, so a recovery stalled on a lost retransmission went on sending new data until its
    timeout.
    """
    session = _session("calibration/fluctuating_bbr", 1.5, 6)
    raw = session.start()
    fi = session.cell.state.fi
    bound = session.params.rcv_buf_bytes // SEGMENT_BYTES
    ahead = 0
    while not raw.done:
        raw = session.step(np.zeros((0, 2)))
        ahead = max(ahead, int(fi[0, 0, I_HANDED] - fi[0, 0, I_UNA]))
        assert ahead <= bound, f"{ahead} segments queued beyond the ACK at {raw.t:.3f} s"
    # The bound is reached: the window did jump past what the buffer holds.
    assert ahead == bound
    session.close()
