"""The handshake's round trip is the sender's first RTT sample, as on ns-3.

ns-3's ``TcpSocketBase`` takes an RTT sample from the SYN's timestamp echo in the SYN-ACK, so a
flow starts sending data with a smoothed RTT, a retransmission timeout computed from it and (with
XRC's base station) the explicit feedback stamped on the SYN-ACK. A controller that reads the RTT
(the XRC policy sets the window to rate x RTT) thus has an RTT from its first data step. Before
the fast model took this sample, a controller saw no RTT until the first data ACK: on a trace
that opens at 0.2 Mbit/s (Irish 5G static download, the main job's training mixture) the XRC
policy grew the window fourfold per step for 160 ms, to 7.4 MB, and the flow then starved for
6 s behind the window's unrecoverable losses (utilization 0.085 against ns-3's 0.809).
"""

from __future__ import annotations

import numpy as np
import pytest

from cellgym.fields import FLOW
from cellgym.scenario import load_scenario
from envs.fastsim.session import FastSession
from envs.fastsim.state import I_DATA_MS, I_RTO_MS, I_START_MS, X_MIN_RTT, X_SRTT
from evaluation.experiments import calibration_drivers as drivers
from evaluation.experiments.calibrate import scenario


def test_the_first_rtt_sample_is_the_handshake_in_the_step_data_starts():
    spec = load_scenario("calibration/static_cubic", sim_time_s=1.0)
    session = FastSession(spec, 7)
    raw = session.start()
    fi, fx = session.cell.state.fi, session.cell.state.fx
    step_ms = spec.step_ms
    steps = [raw]
    while not raw.done:
        raw = session.step(np.zeros((0, 2)))
        steps.append(raw)
    start, data = int(fi[0, 0, I_START_MS]), int(fi[0, 0, I_DATA_MS])
    handshake = data - start
    assert 20 <= handshake <= 100
    rtt_last = np.array([s.flows[0, FLOW["rtt_last_ms"]] for s in steps])
    first = int(np.argmax(rtt_last > 0))
    # The step holding the data start (its end after it) reports the handshake's RTT.
    assert first == data // step_ms + (1 if data % step_ms else 0)
    assert rtt_last[first] == handshake
    assert steps[first].flows[0, FLOW["rtt_samples"]] >= 1
    assert fx[0, 0, X_MIN_RTT] <= handshake and fx[0, 0, X_SRTT] > 0
    # The retransmission timeout follows the estimate (RFC 6298, at least min_rto_ms).
    assert fi[0, 0, I_RTO_MS] >= session.params.min_rto_ms
    session.close()


def test_the_xrc_policy_opens_at_the_traces_rate_not_fourfold_per_step():
    spec = scenario("xrc_policy_irish5g_static", 3.0)
    rec = drivers.drive(spec, drivers.DRIVERS["xrc_policy_irish5g_static"], 1, "fast")
    flows = np.stack(rec.flows)[:, 0]
    t = np.array(rec.times)
    early = t <= 0.6
    # The trace carries about 0.17 Mbit/s for its first seconds: the window stays near what one
    # window of the start (IW and a step's growth) holds, never megabytes.
    assert flows[early, FLOW["cwnd_bytes"]].max() < 200_000
    assert flows[early, FLOW["bytes_in_flight"]].max() < 200_000
    assert flows[t > 0.25, FLOW["rtt_last_ms"]].min() > 0


@pytest.mark.ns3
def test_both_backends_report_the_handshake_rtt_in_the_same_step():
    spec = scenario("xrc_policy_irish5g_static", 2.0)
    first = {}
    for backend in ("ns3", "fast"):
        rec = drivers.drive(spec, drivers.DRIVERS["xrc_policy_irish5g_static"], 1, backend)
        rtt = np.stack(rec.flows)[:, 0, FLOW["rtt_last_ms"]]
        i = int(np.argmax(rtt > 0))
        first[backend] = (i, float(rtt[i]))
    assert first["ns3"][0] == first["fast"][0]
    assert first["fast"][1] == pytest.approx(first["ns3"][1], abs=15.0)
