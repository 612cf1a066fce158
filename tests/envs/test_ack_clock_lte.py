"""An ACK-clocked window on an LTE cell: the twin's round trip and RTT samples are ns-3's.

Measured on ns-3 (``single_flow``, a constant 15 kB window, NS_LOG of ``LteUeMac``/``LteEnbMac``):
a window's ACKs are generated at the UE just before a TTI boundary k, the UE reports its buffer
at k, the eNB's MAC has the report at k+4.93 ms and the UE its uplink grant at k+7.21 ms, and the
ACKs reach the eNB at k+11.93 ms; an ACK that finds a grant already coming (a streaming ACK)
reaches it at k+4.93 ms. An ACK after an idle uplink therefore waits 7 ms more than a streaming
one, and the window's cycle is exactly 45 ms. The twin's ``bsr`` uplink models the wait as
``ul_grant_ms`` whole TTIs: 7 (it was 8, which made every idle-uplink cycle 46 ms and an
ACK-clocked flow about 2 % slower than on ns-3).

ns-3's sender takes an RTT sample from an ACK that advances the cumulative ACK only
(``TcpSocketBase::CalculateRttSample``); a duplicate ACK during loss recovery times nothing. The
twin used to count every ACK, so loss recovery added samples (with the full queue's delay) that
ns-3 never takes, and the RTT statistic of the observation and the reward's end-to-end delay read
higher on the twin.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cellgym.fields import FLOW, SEGMENT_BYTES
from cellgym.scenario import ScenarioSpec, load_scenario
from envs.lte_cell import LteCellEnv

WINDOW_BYTES = 15_000.0
#: ns-3's cycle of a lone ACK-clocked window on this cell (measured above), ms.
NS3_CYCLE_MS = 45.0
MAX_CHANGE = 4.0


def _constant_window(backend: str, seconds: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """1 ms steps of the agent flow held at ``WINDOW_BYTES``: step end times (ms) and rows."""
    spec = load_scenario("single_flow", sim_time_s=seconds).replace(step_ms=1.0)
    env = LteCellEnv(scenario=spec, backend=backend, max_change=MAX_CHANGE, action_mode="cwnd")
    times, rows = [], []
    try:
        _, info = env.reset(seed=201)
        done = False
        while not done:
            cwnd = info["flows"][0][FLOW["cwnd_bytes"]] or 10 * SEGMENT_BYTES
            a = max(-1.0, min(1.0, math.log(WINDOW_BYTES / cwnd) / math.log(MAX_CHANGE)))
            _, _, term, trunc, info = env.step(np.array([a], dtype=np.float32))
            done = term or trunc
            times.append(round(info["t"] * 1000.0))
            rows.append(np.asarray(info["flows"])[0])
    finally:
        env.close()
    keep = np.array(times) > 1000  # the window long settled
    return np.array(times)[keep], np.stack(rows)[keep]


def _cycles_ms(times: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The window's cycles: the time between the first deliveries of consecutive windows."""
    rx = rows[:, FLOW["rx_bytes"]] > 0
    starts = times[1:][rx[1:] & ~rx[:-1]]
    return np.diff(starts)


def test_fast_idle_uplink_cycle_is_ns3s():
    times, rows = _constant_window("fast")
    assert rows[:, FLOW["cwnd_bytes"]].min() == pytest.approx(WINDOW_BYTES, rel=1e-6)
    cycles = _cycles_ms(times, rows)
    assert len(cycles) >= 15
    assert np.all(cycles == NS3_CYCLE_MS), cycles
    sampled = rows[:, FLOW["rtt_samples"]] > 0
    assert np.all(rows[sampled, FLOW["rtt_mean_ms"]] == NS3_CYCLE_MS)


@pytest.mark.ns3
def test_ns3_idle_uplink_cycle_and_the_twin_agree():
    (t_ns3, ns3), (t_fast, fast) = _constant_window("ns3"), _constant_window("fast")
    assert np.all(_cycles_ms(t_ns3, ns3) == NS3_CYCLE_MS)
    assert np.all(_cycles_ms(t_fast, fast) == NS3_CYCLE_MS)
    for rows in (ns3, fast):
        sampled = rows[:, FLOW["rtt_samples"]] > 0
        assert np.all(rows[sampled, FLOW["rtt_mean_ms"]] == NS3_CYCLE_MS)


def _lossy_cubic() -> np.ndarray:
    """``[steps, FLOW_FIELDS]`` of a CUBIC download into a 16-packet RLC buffer (fast, 6 s)."""
    from evaluation.rollouts import run_native

    spec = ScenarioSpec.from_config(
        {
            "name": "rtt_samples",
            "sim_time_s": 6.0,
            "rlc_buffer_pkts": 16,
            "flows": [{"cca": "cubic"}],
        }
    )
    rec = run_native(spec, "cubic", 1, "fast")
    return np.stack(rec.flows)[:, 0]


def test_fast_duplicate_acks_take_no_rtt_sample():
    rows = _lossy_cubic()
    assert rows[:, FLOW["loss_events"]].sum() >= 3, "the small buffer should cost losses"
    samples = rows[:, FLOW["rtt_samples"]]
    advanced = rows[:, FLOW["acked_bytes"]] / SEGMENT_BYTES
    # An RTT sample needs an ACK that advances the cumulative ACK by a segment at least (after
    # the handshake, whose SYN-ACK is the first sample).
    data = np.cumsum(advanced) > 0
    assert np.all(samples[data] <= advanced[data] + 1e-9)
    # The rule binds: some steps just after a loss hear only duplicate ACKs (nothing advances),
    # where every ACK used to count as a sample.
    lossy = np.convolve(rows[:, FLOW["loss_events"]] > 0, np.ones(3), mode="full")[: len(rows)]
    assert np.sum((lossy > 0) & (advanced == 0)) >= 1
