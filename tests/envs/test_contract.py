"""The environment contract (``envs.contract``) by hand: observation, action limits, arguments."""

from __future__ import annotations

import numpy as np
import pytest

from cellgym.fields import FLOW, FLOW_FIELDS, SEGMENT_BYTES
from cellgym.reward import TERMS
from cellgym.scenario import FlowSpec, ScenarioSpec
from cellgym.vocab import SpecError
from envs.contract import (
    MAX_CWND_BYTES,
    MAX_RATE_MBPS,
    MIN_CWND_BYTES,
    MIN_RATE_MBPS,
    OBS,
    OBS_ACKED,
    OBS_FIELDS,
    OBS_HIGH,
    OBS_RAW_COLUMNS,
    REWARD_TERMS,
    action_space,
    agent_flow,
    check_env_args,
    flow_command,
    flow_observation,
    observation_space,
)


def _row(**values: float) -> np.ndarray:
    row = np.zeros(len(FLOW_FIELDS))
    for name, v in values.items():
        row[FLOW[name]] = v
    return row


def test_spaces_and_limits():
    obs = observation_space()
    assert obs.shape == (11,) and obs.dtype == np.float32
    assert obs.low.tolist() == [0.0] * 11
    # Bounds in the table's order: rates 1e4 Mbit/s, delays 1e5 ms, bytes 1e10, counts 1e6.
    assert obs.high.tolist() == [1e4, 1e5, 1e5, 1e5, 1e5, 1e10, 1e10, 1e4, 1e6, 1e6, 1e4]
    assert np.array_equal(obs.high, OBS_HIGH)
    assert OBS_FIELDS[0] == "fair_rate_mbps" and OBS_FIELDS[-1] == "pacing_rate_mbps"
    assert OBS_ACKED == OBS["delivery_rate_mbps"] == 7
    # Each observation column reads its raw flow column (the fair rate is the eNB's feedback).
    assert OBS_RAW_COLUMNS[OBS["fair_rate_mbps"]] == FLOW["fb_rate_mbps"]
    assert OBS_RAW_COLUMNS[OBS["hol_delay_ms"]] == FLOW["fb_hol_ms"]
    assert OBS_RAW_COLUMNS[OBS_ACKED] == FLOW["acked_bytes"]
    act = action_space()
    assert act.shape == (1,) and act.low.tolist() == [-1.0] and act.high.tolist() == [1.0]
    # Two segments of 1448 bytes at least; 50 kbit/s to 10 Gbit/s.
    assert (MIN_CWND_BYTES, MAX_CWND_BYTES) == (2896, 1e9)
    assert (MIN_RATE_MBPS, MAX_RATE_MBPS) == (0.05, 1e4)
    assert REWARD_TERMS == TERMS


def test_flow_observation_by_hand():
    flows = np.stack([_row(), _row()])
    flows[1] = _row(
        fb_rate_mbps=12.5,
        fb_hol_ms=7.0,
        rtt_last_ms=45.0,
        rtt_min_ms=40.0,
        rtt_mean_ms=42.0,
        cwnd_bytes=2e10,  # above its bound 1e10: clipped
        bytes_in_flight=-3.0,  # below 0: clipped
        acked_bytes=25_000,  # 25,000 B * 8 / 0.02 s = 10 Mbit/s
        loss_events=2,
        retx_segments=3,
        pacing_rate_mbps=0.0,
    )
    before = flows.copy()
    obs = flow_observation(flows, 1, step_s=0.02)
    assert obs.dtype == np.float32
    assert obs.tolist() == [12.5, 7.0, 45.0, 40.0, 42.0, 1e10, 0.0, 10.0, 2.0, 3.0, 0.0]
    assert np.array_equal(flows, before)  # the raw step is not changed
    # The other flow's row is all zeros; so is its observation. A 1 s step: 25,000 B = 0.2 Mbit/s.
    assert flow_observation(flows, 0, 0.02).tolist() == [0.0] * 11
    assert flow_observation(flows, 1, 1.0)[OBS_ACKED] == pytest.approx(0.2)
    # A delivery rate above 1e4 Mbit/s: 1e9 B over 0.02 s = 4e5 Mbit/s, clipped to 1e4.
    flows[1, FLOW["acked_bytes"]] = 1e9
    assert flow_observation(flows, 1, 0.02)[OBS_ACKED] == 1e4


def test_cwnd_command_by_hand():
    seg = SEGMENT_BYTES  # 1448
    row = _row(cwnd_bytes=10 * seg)  # 14,480 B
    # max_change 2: a = 1 doubles, a = -1 halves, a = 0 keeps; the rate passes through, no pacing.
    assert flow_command(row, 1.0, "cwnd", 2.0, 7.0) == (28_960.0, 0.0, 7.0)
    assert flow_command(row, -1.0, "cwnd", 2.0, 0.0) == (7_240.0, 0.0, 0.0)
    assert flow_command(row, 0.0, "cwnd", 2.0, 0.0)[0] == 14_480.0
    # max_change 4, a = 0.5: a factor of 4 ** 0.5 = 2.
    assert flow_command(row, 0.5, "cwnd", 4.0, 0.0)[0] == 28_960.0
    # No window yet (0): ten segments, 14,480 B, times the factor 2.
    assert flow_command(_row(), 1.0, "cwnd", 2.0, 0.0)[0] == 28_960.0
    # Two segments halved (1448 B) stay at two segments; 9e8 B doubled (1.8e9) stays at 1e9.
    assert flow_command(_row(cwnd_bytes=2 * seg), -1.0, "cwnd", 2.0, 0.0)[0] == 2 * seg
    assert flow_command(_row(cwnd_bytes=9e8), 1.0, "cwnd", 2.0, 0.0)[0] == 1e9


def test_rate_command_by_hand():
    row = _row(fb_rate_mbps=12.0, rtt_min_ms=40.0)
    # First action (rate 0): start from the fair rate 12, doubled: 24 Mbit/s. The window is two
    # rate-RTTs: 2 * 24e6 / 8 B/s * 0.04 s = 240,000 B.
    cwnd, pacing, rate = flow_command(row, 1.0, "rate", 2.0, 0.0)
    assert (pacing, rate) == (24.0, 24.0)
    assert cwnd == pytest.approx(240_000.0)
    # Next action from the rate passed back (24), halved: 12 Mbit/s, 120,000 B.
    cwnd, pacing, rate = flow_command(row, -1.0, "rate", 2.0, 24.0)
    assert (pacing, rate) == (12.0, 12.0) and cwnd == pytest.approx(120_000.0)
    # No fair rate and no RTT yet: 1 Mbit/s and 40 ms: 2 * 125,000 * 0.04 = 10,000 B.
    cwnd, pacing, _ = flow_command(_row(), 0.0, "rate", 2.0, 0.0)
    assert pacing == 1.0 and cwnd == pytest.approx(10_000.0)
    # 0.06 halved is 0.03, raised to 0.05 Mbit/s; its window (2 * 6,250 * 0.02 = 250 B) is raised
    # to four segments (5,792 B).
    low = _row(rtt_min_ms=20.0)
    cwnd, pacing, _ = flow_command(low, -1.0, "rate", 2.0, 0.06)
    assert pacing == 0.05 and cwnd == 4 * SEGMENT_BYTES
    # 8000 doubled is 16,000, lowered to 1e4 Mbit/s; over a 1 s RTT its window (2.5e9 B) is
    # lowered to 1e9 B.
    high = _row(rtt_min_ms=1000.0)
    cwnd, pacing, _ = flow_command(high, 1.0, "rate", 2.0, 8000.0)
    assert pacing == 1e4 and cwnd == 1e9


def test_agent_flow_is_the_one_agent():
    spec = ScenarioSpec(flows=[FlowSpec(cca="cubic"), FlowSpec(cca="agent")])
    assert agent_flow(spec) == 1
    with pytest.raises(SpecError, match="has 0 flows with cca='agent'"):
        agent_flow(ScenarioSpec(flows=[FlowSpec(cca="cubic")]))
    with pytest.raises(SpecError, match="has 2 flows with cca='agent'"):
        agent_flow(ScenarioSpec(flows=[FlowSpec(cca="agent"), FlowSpec(cca="agent")]))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"action_mode": "window", "max_change": 2.0}, "action_mode='window' is not allowed"),
        ({"action_mode": 3, "max_change": 2.0}, "action_mode=3 is a int"),
        ({"action_mode": "cwnd", "max_change": 1.0}, r"max_change=1.0 is out of range"),
        ({"action_mode": "rate", "max_change": 100.5}, r"max_change=100.5 is out of range"),
        ({"action_mode": "rate", "max_change": "2"}, "max_change='2' is a str"),
    ],
)
def test_env_args_are_checked(args, message):
    with pytest.raises(SpecError, match=message):
        check_env_args(**args)


def test_env_args_at_their_bounds_pass():
    # max_change in (1, 100]: 100 is allowed, and an integer is a number; other keys are ignored.
    check_env_args("rate", 100.0)
    check_env_args("cwnd", 2, scenario="any")
