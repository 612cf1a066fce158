"""XCP and RCP in the fast backend: each rule against hand-worked numbers, then whole runs.

The router's rules (``enb_agents/xcp.py``, ``enb_agents/rcp.py``, ``enb_agents/router.py``) and
the senders' (``senders/xcp.py``, ``senders/rcp.py``) on small arrays, with the arithmetic
written out; then XCP and RCP with 2-4 flows behind a wired bottleneck and in a cell: fair
shares (Jain) and a near-empty queue.
"""

from __future__ import annotations

import numpy as np
import pytest

from cellgym import controllers
from cellgym.fields import FLOW, UE
from cellgym.metrics import jain_index
from cellgym.scenario import FlowSpec, ScenarioSpec
from cellgym.vocab import FAST_ONLY_CCAS, SpecError
from envs.fastsim import FastCellBatch, FastSimParams
from envs.fastsim.bottleneck import BN_WIRE_BYTES
from envs.fastsim.codes import (
    CCA_RCP,
    CCA_XCP,
    RCP_HEADER_BYTES,
    ROUTER_RCP,
    ROUTER_XCP,
    ST_OPEN,
    ST_RECOVERY,
    XCP_HEADER_BYTES,
)
from envs.fastsim.enb_agents.rcp import _rcp_update
from envs.fastsim.enb_agents.router import _router_interval, _router_packets
from envs.fastsim.enb_agents.xcp import _xcp_control, _xcp_packet_feedback
from envs.fastsim.params import (
    FC_CCA,
    FC_D_DOWN_MS,
    FC_D_SRV_UP_MS,
    FC_LEN,
    FC_UE,
    P_LEN,
    P_ROUTER,
    P_RWND_SEGS,
    P_SEG_BYTES,
)
from envs.fastsim.router_params import (
    RP_ALPHA,
    RP_BETA,
    RP_HDR_BYTES,
    RP_KIND,
    RP_RCP_UPDATE_MS,
    RP_XCP_SHUFFLE,
    RouterKnobs,
)
from envs.fastsim.senders.rcp import _rcp_feedback, _rcp_start
from envs.fastsim.senders.xcp import _xcp_feedback, _xcp_header
from envs.fastsim.state import (
    BS_RT0,
    FB_H_CWND,
    FB_H_RTT,
    FB_LEN,
    FB_RCP,
    FB_XCP,
    I_CSTATE,
    I_DATA_MS,
    I_LEN,
    I_RT_ARR,
    RT_C,
    RT_D,
    RT_IN,
    RT_LEN,
    RT_PHI,
    RT_QMIN,
    RT_RATE,
    RT_RTT_BYTES,
    RT_START,
    RT_SUM_RS,
    RT_SUM_RSC,
    RT_XIN,
    RT_XIP,
    U_RT0,
    X_CWND,
    X_LEN,
    X_PACING,
    X_RT_FB,
    X_SRTT,
    X_XCP_SEEN,
)


def _row(**sums: float) -> np.ndarray:
    row = np.zeros(RT_LEN)
    for k, v in sums.items():
        row[globals()[k]] = v
    return row


def _packets(flows: list[tuple[int, float, float]]) -> dict[str, float]:
    """The interval's sums over ``(packets, cwnd, rtt)`` per flow, packets of 1000 bytes."""
    s = 1000.0
    return {
        "RT_IN": sum(n * s for n, _, _ in flows),
        "RT_RTT_BYTES": sum(n * s for n, _, _ in flows),
        "RT_SUM_RS": sum(n * rtt * s for n, _, rtt in flows),
        "RT_SUM_RSC": sum(n * rtt * s / cwnd for n, cwnd, rtt in flows),
    }


# -- XCP's router ---------------------------------------------------------------------------------
def test_xcp_spare_capacity_gives_every_flow_the_same_rate_gain():
    # C = 1000 B/ms, d = 100 ms. Flow A: cwnd 50,000 B (50 packets of 1000 B per RTT), flow B:
    # cwnd 25,000 B (25 packets): y = 75,000 B / 100 ms = 750 B/ms, no queue.
    # phi = 0.4 * 100 * (1000 - 750) - 0.226 * 0 = 10,000 B; h = max(0, 0.1 * 1000 * 100 - 10,000)
    # = 0. sum rtt s / cwnd = 50 * 100 * 1000 / 50,000 + 25 * 100 * 1000 / 25,000 = 100 + 100.
    # xi_p = 10,000 / (100 * 200) = 0.5; xi_n = 0.
    row = _row(**_packets([(50, 50_000.0, 100.0), (25, 25_000.0, 100.0)]))
    _xcp_control(row, 0, 1000.0, 750.0, 100.0, 100.0, 0.4, 0.226, 0.1)
    assert row[RT_PHI] == pytest.approx(10_000.0)
    assert row[RT_XIP] == pytest.approx(0.5)
    assert row[RT_XIN] == 0.0
    # Per packet: A 0.5 * 100^2 * 1000 / 50,000 = 100 B, B 0.5 * 100^2 * 1000 / 25,000 = 200 B.
    fa = _xcp_packet_feedback(row[RT_XIP], row[RT_XIN], 100.0, 50_000.0, 1000.0)
    fb = _xcp_packet_feedback(row[RT_XIP], row[RT_XIN], 100.0, 25_000.0, 1000.0)
    assert (fa, fb) == pytest.approx((100.0, 200.0))
    # Over an RTT: A 50 * 100 = 5000 B, B 25 * 200 = 5000 B: the same window (rate) gain, and
    # together phi.
    assert 50 * fa == pytest.approx(25 * fb) == pytest.approx(5000.0)


def test_xcp_overload_cuts_in_proportion_to_rate_and_shuffles_the_rest():
    # C = 1000 B/ms, d = 100 ms, Q = 5000 B. A: cwnd 80,000 B (80 packets), B: 40,000 (40):
    # y = 120,000 B / 100 ms = 1200 B/ms.
    # phi = 0.4 * 100 * (1000 - 1200) - 0.226 * 5000 = -8000 - 1130 = -9130 B.
    # h = max(0, 0.1 * 1000 * 100 - 9130) = 870 B shuffled.
    # sum rtt s / cwnd = 80 * 100 * 1000 / 80,000 + 40 * 100 * 1000 / 40,000 = 200;
    # xi_p = 870 / (100 * 200) = 0.0435; xi_n = (870 + 9130) / (100 * 120,000) = 1 / 1200.
    row = _row(RT_QMIN=5000.0, **_packets([(80, 80_000.0, 100.0), (40, 40_000.0, 100.0)]))
    _xcp_control(row, 0, 1000.0, 1200.0, 100.0, 100.0, 0.4, 0.226, 0.1)
    assert row[RT_PHI] == pytest.approx(-9130.0)
    assert row[RT_XIP] == pytest.approx(0.0435)
    assert row[RT_XIN] == pytest.approx(1.0 / 1200.0)
    # Per packet: A 0.0435 * 100^2 * 1000 / 80,000 - 100 * 1000 / 1200 = 5.4375 - 83.333 B;
    # B 10.875 - 83.333 B. Over an RTT: A 435 - 6666.67 = -6231.67 B, B 435 - 3333.33 =
    # -2898.33 B: the same positive part, negative parts 2:1 as the rates; the sum is phi.
    fa = _xcp_packet_feedback(row[RT_XIP], row[RT_XIN], 100.0, 80_000.0, 1000.0)
    fb = _xcp_packet_feedback(row[RT_XIP], row[RT_XIN], 100.0, 40_000.0, 1000.0)
    assert fa == pytest.approx(5.4375 - 1000.0 / 12.0)
    assert fb == pytest.approx(10.875 - 1000.0 / 12.0)
    assert 80 * fa == pytest.approx(-6231.6667, rel=1e-6)
    assert 40 * fb == pytest.approx(-2898.3333, rel=1e-6)
    assert 80 * fa + 40 * fb == pytest.approx(-9130.0)


def test_xcp_interval_longer_than_d_scales_its_sums_to_d():
    # The same traffic as the first test measured over 200 ms (twice the packets): the sums are
    # scaled by d / T = 1/2, so xi_p and the feedback per packet are those of a 100 ms interval.
    sums = _packets([(100, 50_000.0, 100.0), (50, 25_000.0, 100.0)])
    row = _row(**sums)
    _xcp_control(row, 0, 1000.0, 750.0, 200.0, 100.0, 0.4, 0.226, 0.1)
    assert row[RT_XIP] == pytest.approx(0.5)


def _router_arrays(n_flows: int, mode: int, alpha: float, beta: float):
    p = np.zeros(P_LEN)
    p[P_ROUTER + RP_KIND], p[P_ROUTER + RP_ALPHA], p[P_ROUTER + RP_BETA] = mode, alpha, beta
    p[P_ROUTER + RP_XCP_SHUFFLE], p[P_SEG_BYTES] = 0.1, 1000.0
    fc = np.zeros((n_flows, FC_LEN))
    fc[:, FC_UE] = 0
    fc[:, FC_D_DOWN_MS] = 2
    fi = np.zeros((1, n_flows, I_LEN), np.int64)
    fx = np.zeros((1, n_flows, X_LEN))
    ue = np.zeros((1, 1, U_RT0 + RT_LEN))
    bqs = np.zeros((1, BS_RT0 + RT_LEN))
    fbr = np.zeros((1, n_flows, 16, FB_LEN))
    return p, fc, fi, fx, ue, bqs, fbr


def test_xcp_router_counts_packets_with_the_header_they_were_sent_with():
    # Two flows at the eNB (UE 0), packets of s = 1000 B (the sender's payload is also 1000 B
    # here, so the header's window is in the router's bytes). Sent at t = 8 with headers
    # (cwnd 50,000, rtt 100) and (25,000, 100); they reach the router at t = 10 (2 ms down).
    p, fc, fi, fx, ue, bqs, fbr = _router_arrays(2, ROUTER_XCP, 0.4, 0.226)
    fbr[0, 0, 8, FB_H_CWND], fbr[0, 0, 8, FB_H_RTT] = 50_000.0, 100.0
    fbr[0, 1, 8, FB_H_CWND], fbr[0, 1, 8, FB_H_RTT] = 25_000.0, 100.0
    rt = ue[0, 0, U_RT0:]  # the UE's router, xi from the first test
    rt[RT_XIP] = 0.5
    fi[0, 0, I_RT_ARR], fi[0, 1, I_RT_ARR] = 5, 3
    _router_packets(0, 10, p, fc, fi, fx, ue, bqs, fbr, False, 1000.0)
    assert fi[0, :, I_RT_ARR].tolist() == [0, 0]
    assert rt[RT_IN] == 8000.0 and rt[RT_RTT_BYTES] == 8000.0
    assert rt[RT_SUM_RS] == 100.0 * 8000.0
    assert rt[RT_SUM_RSC] == pytest.approx(5 * 100 * 1000 / 50_000 + 3 * 100 * 1000 / 25_000)
    # 5 packets x 100 B and 3 x 200 B of feedback, stored by time for the ACKs.
    assert fx[0, :, X_RT_FB].tolist() == pytest.approx([500.0, 600.0])
    assert fbr[0, :, 10, FB_XCP].tolist() == pytest.approx([500.0, 600.0])


def test_router_interval_ends_after_the_average_rtt_and_starts_the_next():
    # The first interval lasts 10 ms (no RTT known); it saw packets with a 40 ms average RTT, so
    # the next lasts 40 ms. The persistent queue is the smallest of the interval.
    p, *_ = _router_arrays(1, ROUTER_XCP, 0.4, 0.226)
    row = np.zeros(RT_LEN)
    for t, q in enumerate([3000.0, 1000.0, 2000.0, 4000.0, 5000.0, 6000.0, 6000.0, 6000.0, 6000.0]):
        _router_interval(row, 0, t, p, 1000.0, q, 1000.0, 0.0)
    assert row[RT_D] == 10.0 and row[RT_QMIN] == 1000.0
    row[RT_IN], row[RT_RTT_BYTES], row[RT_SUM_RS] = 10_000.0, 10_000.0, 40.0 * 10_000.0
    _router_interval(row, 0, 9, p, 1000.0, 6000.0, 1000.0, 0.0)
    # y = 10,000 B / 10 ms = 1000 B/ms = C; phi = 0.4 * 40 * 0 - 0.226 * 1000 = -226 B.
    assert row[RT_PHI] == pytest.approx(-226.0)
    assert row[RT_D] == 40.0 and row[RT_START] == 10.0 and row[RT_C] == 1000.0
    assert row[RT_IN] == 0.0 and row[RT_QMIN] == 6000.0


def test_router_on_a_trace_link_takes_the_intervals_delivery_opportunities_as_capacity():
    # A Mahimahi link offers 1, 0, 2, 1, ... packets per ms: over the first 10 ms interval
    # 1 + 0 + 2 + 1 + 1 + 0 + 2 + 1 + 1 + 0 = 9 packets of 1502 B: C = 9 x 1502 / 10 B/ms.
    p, *_ = _router_arrays(1, ROUTER_RCP, 0.4, 0.226)
    row = np.zeros(RT_LEN)
    for t, opp in enumerate([1, 0, 2, 1, 1, 0, 2, 1, 1, 0]):
        _router_interval(row, 0, t, p, 1502.0, 0.0, -1.0, opp * 1502.0)
    assert row[RT_C] == pytest.approx(9 * 1502 / 10)
    assert row[RT_RATE] == pytest.approx(9 * 1502 / 10)  # min(C (1 + 0.4), C)


# -- RCP's router ---------------------------------------------------------------------------------
def test_rcp_rate_follows_equation_3():
    # C = 1000 B/ms, d = T = 100 ms, alpha = 0.4, beta = 0.226, packets of 1000 B.
    row = np.zeros(RT_LEN)
    # First update, nothing sent: R starts at C; 1000 * (1 + 0.4 * 1000 / 1000) = 1400 -> C.
    _rcp_update(row, 0, 1000.0, 0.0, 0.0, 100.0, 100.0, 0.4, 0.226, 1000.0)
    assert row[RT_RATE] == 1000.0
    # Two flows at R: y = 2000 B/ms, q = 20,000 B:
    # R = 1000 * (1 + (0.4 * (1000 - 2000) - 0.226 * 20,000 / 100) / 1000) = 1000 * 0.5548.
    _rcp_update(row, 0, 1000.0, 2000.0, 20_000.0, 100.0, 100.0, 0.4, 0.226, 1000.0)
    assert row[RT_RATE] == pytest.approx(554.8)
    # y = 2 * 554.8 = 1109.6, q = 10,000: R = 554.8 * (1 - 0.04384 - 0.0226) = 517.939088.
    _rcp_update(row, 0, 1000.0, 1109.6, 10_000.0, 100.0, 100.0, 0.4, 0.226, 1000.0)
    assert row[RT_RATE] == pytest.approx(517.939088)


def test_rcp_update_period_shorter_than_d_and_the_evaluation_papers_parameters():
    # T = 50 ms, d = 100 ms: R = 1000 * (1 + 0.5 * (0.4 * (1000 - 2000)) / 1000) = 800.
    row = np.zeros(RT_LEN)
    row[RT_RATE] = 1000.0
    _rcp_update(row, 0, 1000.0, 2000.0, 0.0, 50.0, 100.0, 0.4, 0.226, 1000.0)
    assert row[RT_RATE] == pytest.approx(800.0)
    # alpha = 0.1, beta = 1.0 (section 5.1): R = 1000 * (1 + 0.1 * (1000 - 2000) / 1000) = 900.
    row[RT_RATE] = 1000.0
    _rcp_update(row, 0, 1000.0, 2000.0, 0.0, 100.0, 100.0, 0.1, 1.0, 1000.0)
    assert row[RT_RATE] == pytest.approx(900.0)
    # A queue of 10 BDPs would make R negative: it stays at one packet per d (10 B/ms).
    _rcp_update(row, 0, 1000.0, 1000.0, 1_000_000.0, 100.0, 100.0, 0.1, 1.0, 1000.0)
    assert row[RT_RATE] == pytest.approx(10.0)
    # No capacity measured yet (a UE not served): no rate.
    row[RT_RATE] = 0.0
    _rcp_update(row, 0, 0.0, 0.0, 0.0, 100.0, 100.0, 0.4, 0.226, 1000.0)
    assert row[RT_RATE] == 0.0


def test_rcp_router_signals_its_rate_to_every_flow_in_payload_bytes():
    # The wired router (packets of 1502 B on the wire, 1448 B of payload): R = 1502 B/ms is
    # signalled as 1448 B/ms of payload to each flow.
    p, fc, fi, fx, ue, bqs, fbr = _router_arrays(3, ROUTER_RCP, 0.4, 0.226)
    p[P_SEG_BYTES] = 1448.0
    bqs[0, BS_RT0 + RT_RATE] = 1502.0
    _router_packets(0, 5, p, fc, fi, fx, ue, bqs, fbr, True, 1502.0)
    assert fbr[0, :, 5, FB_RCP].tolist() == pytest.approx([1448.0] * 3)
    # RCP's update period: every rcp_update_ms when set, else every d.
    p[P_ROUTER + RP_RCP_UPDATE_MS] = 20.0
    row = np.zeros(RT_LEN)
    for t in range(19):
        _router_interval(row, 0, t, p, 1000.0, 0.0, 1000.0, 0.0)
    assert row[RT_RATE] == 0.0
    _router_interval(row, 0, 19, p, 1000.0, 0.0, 1000.0, 0.0)
    assert row[RT_RATE] == 1000.0  # min(C * 1.4, C)


# -- the senders ----------------------------------------------------------------------------------
def test_xcp_sender_adds_the_new_feedback_to_its_window_outside_recovery():
    fx = np.zeros((1, 1, X_LEN))
    fi = np.zeros((1, 1, I_LEN), np.int64)
    fbr = np.zeros((1, 1, 8, FB_LEN))
    fx[0, 0, X_CWND], fx[0, 0, X_SRTT] = 14_480.0, 52.5
    _xcp_header(0, 0, 11, fx, fbr)  # t = 11 -> slot 3
    assert fbr[0, 0, 3, FB_H_CWND] == 14_480.0 and fbr[0, 0, 3, FB_H_RTT] == 52.5
    fi[0, 0, I_CSTATE] = ST_OPEN
    fbr[0, 0, 1, FB_XCP] = 2500.5  # feedback collected so far
    _xcp_feedback(fx, fi, 0, 0, fbr, 1, 1448.0)
    assert fx[0, 0, X_CWND] == 16_980.0  # floor(14,480 + 2500.5)
    assert fx[0, 0, X_XCP_SEEN] == 2500.5
    fbr[0, 0, 2, FB_XCP] = 2500.5 - 100_000.0  # a large cut: one segment at least
    _xcp_feedback(fx, fi, 0, 0, fbr, 2, 1448.0)
    assert fx[0, 0, X_CWND] == 1448.0
    fi[0, 0, I_CSTATE] = ST_RECOVERY  # in recovery the feedback is dropped (TCP's rules)
    fbr[0, 0, 3, FB_XCP] = 2500.5
    _xcp_feedback(fx, fi, 0, 0, fbr, 3, 1448.0)
    assert fx[0, 0, X_CWND] == 1448.0 and fx[0, 0, X_XCP_SEEN] == 2500.5


def test_rcp_sender_paces_at_the_rate_from_its_syn_ack_then_from_its_acks():
    p = np.zeros(P_LEN)
    p[P_RWND_SEGS] = 100
    fc = np.zeros((1, FC_LEN))
    fc[0, FC_D_SRV_UP_MS] = 20
    fi = np.zeros((1, 1, I_LEN), np.int64)
    fx = np.zeros((1, 1, X_LEN))
    fbr = np.zeros((1, 1, 64, FB_LEN))
    fbr[0, 0, 10, FB_RCP] = 600.0  # R when the SYN-ACK passed the router (t = 10)
    fbr[0, 0, 11, FB_RCP] = 700.0
    fi[0, 0, I_DATA_MS] = 30
    _rcp_start(0, 0, 29, p, fc, fi, fx, fbr, 1448.0)  # before the data starts: nothing
    assert fx[0, 0, X_PACING] == 0.0
    _rcp_start(0, 0, 30, p, fc, fi, fx, fbr, 1448.0)
    assert fx[0, 0, X_PACING] == 600.0 and fx[0, 0, X_CWND] == 100 * 1448.0
    _rcp_start(0, 0, 31, p, fc, fi, fx, fbr, 1448.0)  # only once
    assert fx[0, 0, X_PACING] == 600.0
    _rcp_feedback(fx, 0, 0, fbr, 11)
    assert fx[0, 0, X_PACING] == 700.0


# -- parameters -----------------------------------------------------------------------------------
def test_parameters_validate_by_name_and_ns3_takes_xcp_and_rcp():
    spec = ScenarioSpec(flows=[FlowSpec(cca="xcp"), FlowSpec(cca="xcp")])
    params = FastSimParams.from_spec(spec)
    p = params.scalars()[P_ROUTER:]
    assert p[RP_KIND] == ROUTER_XCP and p[RP_ALPHA] == 0.4 and p[RP_BETA] == 0.226
    assert p[RP_XCP_SHUFFLE] == 0.1 and p[RP_HDR_BYTES] == XCP_HEADER_BYTES == 20
    assert params.flow_config()[:, FC_CCA].tolist() == [CCA_XCP, CCA_XCP]
    rcp = FastSimParams.from_spec(
        ScenarioSpec(flows=[FlowSpec(cca="rcp")]), explicit={"rcp_alpha": 0.1, "rcp_beta": 1.0}
    )
    p = rcp.scalars()[P_ROUTER:]
    assert p[RP_KIND] == ROUTER_RCP and p[RP_ALPHA] == 0.1 and p[RP_BETA] == 1.0
    assert p[RP_HDR_BYTES] == RCP_HEADER_BYTES == 16
    assert rcp.explicit == RouterKnobs(rcp_alpha=0.1, rcp_beta=1.0)
    assert rcp.flow_config()[0, FC_CCA] == CCA_RCP
    # Scenarios without XCP or RCP: the router is off, no header.
    off = FastSimParams.from_spec(ScenarioSpec(flows=[FlowSpec(cca="cubic")])).scalars()
    assert off[P_ROUTER + RP_KIND] == 0 and off[P_ROUTER + RP_HDR_BYTES] == 0
    with pytest.raises(SpecError, match=r"fastsim\.explicit\.xcp_alpha=0\.0: allowed \(0, 1\]"):
        FastSimParams.from_spec(spec, explicit={"xcp_alpha": 0.0})
    with pytest.raises(SpecError, match=r"fastsim\.explicit\.rcp_beta=3\.0: allowed \[0, 2\]"):
        FastSimParams.from_spec(spec, explicit=RouterKnobs(rcp_beta=3.0))
    with pytest.raises(SpecError, match=r"fastsim\.explicit\.gamma is not a knob"):
        FastSimParams.from_spec(spec, explicit={"gamma": 0.1})
    with pytest.raises(SpecError, match=r"flows\[1\]\.cca='rcp': XCP and RCP flows cannot"):
        FastSimParams.from_spec(ScenarioSpec(flows=[FlowSpec(cca="xcp"), FlowSpec(cca="rcp")]))
    for cca in ("xcp", "rcp"):
        ns3 = ScenarioSpec(flows=[FlowSpec(cca="cubic"), FlowSpec(cca=cca)])
        assert ns3.to_ns3_args(seed=1)[-1].endswith(f"ue=0,cca={cca},traffic=bulk,start=0")
    with pytest.raises(SpecError, match=r"flows\[0\]\.cca='xcp': XCP, XCP-r and RCP flows cannot"):
        ScenarioSpec(
            bottleneck_mbps=10.0, flows=[FlowSpec(cca="xcp"), FlowSpec(cca="rcp")]
        ).to_ns3_args(seed=1)


def test_scenario_router_section_feeds_both_backends():
    """``ScenarioSpec.router`` is the fast backend's default knobs and ns-3's arguments."""
    spec = ScenarioSpec(
        bottleneck_mbps=10.0,
        flows=[FlowSpec(cca="rcp")],
        router={"rcp_alpha": 0.1, "rcp_beta": 1.0, "xcp_shuffle": 0.05},
    )
    assert FastSimParams.from_spec(spec).explicit == RouterKnobs(
        rcp_alpha=0.1, rcp_beta=1.0, xcp_shuffle=0.05
    )
    args = spec.to_ns3_args(seed=1)
    for arg in ("--rcpAlpha=0.1", "--rcpBeta=1", "--xcpShuffle=0.05", "--xcpAlpha=0.4"):
        assert arg in args
    # An explicit argument still overrides the scenario's section (other helpers rely on it).
    assert FastSimParams.from_spec(spec, explicit={"rcp_alpha": 0.2}).explicit == RouterKnobs(
        rcp_alpha=0.2
    )
    assert FastSimParams.from_spec(ScenarioSpec()).explicit == RouterKnobs()
    with pytest.raises(SpecError, match=r"scenario\.router\.xcp_alpha=0\.0 is out of range"):
        ScenarioSpec(router={"xcp_alpha": 0.0})
    with pytest.raises(SpecError, match=r"scenario\.router\.rcp_beta=3\.0 is out of range"):
        spec.replace(router={"rcp_beta": 3.0})
    with pytest.raises(SpecError, match=r"scenario\.router.*gamma"):
        ScenarioSpec(router={"gamma": 0.1})


def test_registry_lists_xcp_and_rcp_on_both_backends():
    assert "xcp" not in FAST_ONLY_CCAS and "rcp" not in FAST_ONLY_CCAS
    for name in ("xcp", "rcp"):
        c = controllers.CONTROLLERS[name]
        assert controllers.is_native(name)
        assert c.fast_model == name
        assert c.backends == ("ns3", "fast")
        assert c.ns3_type == f"ns3::Tcp{name.capitalize()}"
        assert controllers.get(name, backend="ns3", field_name="controllers[0]") is c


# -- whole runs -----------------------------------------------------------------------------------
WINDOW_STEPS = 10  # Jain and throughput over 200 ms windows (10 steps of 20 ms)


def _run(
    cca: str, n: int, wired: bool, seconds: float = 5.0, every_s: float = 0.0
) -> dict[str, np.ndarray]:
    """``n`` bulk flows of ``cca``, flow i starting at ``i * every_s`` (plus the model's seeded
    0-100 ms jitter)."""
    kw = {"bottleneck_mbps": 10.0, "bottleneck_buffer_pkts": 1000} if wired else {}
    flows = [FlowSpec(cca=cca, start_s=i * every_s) for i in range(n)]
    spec = ScenarioSpec(
        name=f"{cca}{n}", sim_time_s=seconds, flows=flows, rlc_buffer_pkts=1000, **kw
    )
    sim = FastCellBatch(FastSimParams.from_spec(spec), 1)
    sim.reset(np.array([1]))
    acked, queue, cap = [], [], []
    while not sim.done[0]:
        sim.step()
        acked.append(sim.flows[0][:, FLOW["acked_bytes"]].copy())
        cap.append(sim.ues[0][0, UE["capacity_mbps"]])
        if wired:
            queue.append(sim.bottleneck()["queue_pkts"][0] * BN_WIRE_BYTES)
        else:
            queue.append(sim.ues[0][0, UE["rlc_bytes"]])
    a = np.array(acked)
    w = a[: len(a) // WINDOW_STEPS * WINDOW_STEPS].reshape(-1, WINDOW_STEPS, n).sum(axis=1)
    return {
        "mbps": w * 8 / (WINDOW_STEPS * spec.step_ms * 1000.0),  # [window, flow]
        "jain": np.array([jain_index(x) for x in w]),
        "queue": np.array(queue),  # bytes, per step
        "capacity_mbps": np.array(cap),  # the cell's, as XRC's agent measures it, per step
    }


def _converged_s(jain: np.ndarray, after_s: float, at_least: float = 0.95) -> float:
    """Time from ``after_s`` to the first 200 ms window from which every window is fair."""
    first = int(round(after_s / (WINDOW_STEPS * 0.02)))
    bad = np.nonzero(jain[first:] <= at_least)[0] + first
    k = 0 if bad.size == 0 else bad[-1] + 1
    return max(k * WINDOW_STEPS * 0.02 - after_s, 0.0)


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("cca", ["xcp", "rcp"])
@pytest.mark.parametrize("wired", [True, False], ids=["wired", "cell"])
def test_flows_converge_to_fair_shares_with_a_near_empty_queue(cca, wired, n):
    # Flow i starts at i x 0.6 s: each newcomer has to take its share from flows that fill the
    # link. The last starts at (n - 1) x 0.6 s (+ up to 0.1 s of jitter, + the handshake).
    every = 0.6
    last = (n - 1) * every + 0.2
    r = _run(cca, n, wired, seconds=last + 4.0, every_s=every)
    conv = _converged_s(r["jain"], last)
    late = slice(int((last + 2.0) / 0.2), None)  # 200 ms windows from 2 s after the last start
    steps = slice(int((last + 2.0) / 0.02), None)
    share = r["mbps"][late].mean(axis=0)
    queue = r["queue"][steps]
    print(
        f"{cca} {'wired' if wired else 'cell'} x{n}: fair {conv:.1f} s after the last start, Jain "
        f"(200 ms) from +2 s min {r['jain'][late].min():.3f}, rates {np.round(share, 2)} Mbit/s,"
        f" queue mean {queue.mean():.0f} B max {queue.max():.0f} B"
    )
    # Fair within 2 s (about 40 RTTs of ~45 ms) of the last arrival, and from then on. With LTE's
    # uplink as ns-3's (``bsr``) a newcomer's few ACKs each wait for a grant after an idle uplink
    # (45 ms RTT against the incumbent's 37 ms), and XCP x2 behind the wired link takes 1.6 s
    # (1.0 s on the periodic uplink's grid).
    assert conv <= 2.0
    assert r["jain"][late].min() > 0.95
    # The link is used: the payload of 10 Mbit/s of 1502-byte packets with the 20 (XCP) or 16
    # (RCP) header bytes taken out (9.5 Mbit/s); in the cell, the capacity XRC's agent measures
    # (headers included, ~35 Mbit/s).
    header = XCP_HEADER_BYTES if cca == "xcp" else RCP_HEADER_BYTES
    link = 10.0 * (1448 - header) / 1502 if wired else r["capacity_mbps"][steps].mean()
    assert share.sum() > 0.9 * link
    # The queue stays near empty: on average under 8 packets, a fraction of the BDP (10 Mbit/s x
    # ~47 ms = 39 packets; the cell's ~35 Mbit/s x ~44 ms = 128), at most under 16 packets.
    assert queue.mean() < 8 * 1502
    assert queue.max() < 16 * 1502
