"""The fast backend's wired bottleneck: the link against hand-worked numbers, then whole cells."""

from __future__ import annotations

import numpy as np
import pytest

from cellgym.fields import FLOW, SEGMENT_BYTES, UE
from cellgym.metrics import compute_metrics
from cellgym.scenario import FlowSpec, ScenarioSpec
from cellgym.traces import (
    capacity_per_window,
    generate,
    read_mahimahi,
    replay_error,
    write_mahimahi,
)
from cellgym.traces.replay import delivered_per_window, looped_windows
from cellgym.vocab import SpecError
from envs.fastsim import FastCellBatch, FastSimParams
from envs.fastsim.bottleneck import (
    BN_BUF_PKTS,
    BN_MODE,
    BN_TRACE0,
    BN_TRACE_LEN,
    BN_TX_MS,
    BN_WIRE_BYTES,
    BQ_LEN,
    BQ_SEQ,
    BS_COLS,
    BS_DROPS,
    BS_HEAD,
    BS_LEN,
    BS_QDELAY_MS,
    _bn_opportunities,
    _bn_push,
    _bn_sendable,
)
from envs.fastsim.codes import BN_RATE, BN_TRACE
from evaluation.rollouts import run_native


# -- the link alone ------------------------------------------------------------------------------
def _link(mode: int, buf: int, tx_ms: float = 0.0, trace: list[int] | None = None):
    bnp = np.zeros(BN_TRACE0 + len(trace or []))
    bnp[BN_MODE], bnp[BN_BUF_PKTS], bnp[BN_TX_MS] = mode, buf, tx_ms
    if trace:
        bnp[BN_TRACE_LEN] = len(trace)
        bnp[BN_TRACE0:] = trace
    return bnp, np.zeros((1, BS_COLS)), np.zeros((1, buf + 2, BQ_LEN), np.int64)


def _run_link(bnp, bqs, bq, arrivals: dict[int, int], ticks: int) -> list[tuple[int, int, float]]:
    """Push ``arrivals[t]`` packets at tick ``t``, serve; ``(seq, tick, delay_ms)`` departures."""
    out, seq = [], 0
    for t in range(ticks):
        for _ in range(arrivals.get(t, 0)):
            _bn_push(0, 0, seq, t, False, t, bnp, bqs, bq, np.zeros(1, np.uint64))
            seq += 1
        budget = _bn_opportunities(t, bnp)
        while bqs[0, BS_LEN] > 0:
            h = int(bqs[0, BS_HEAD])
            budget = _bn_sendable(0, t, bnp, bqs, bq, budget)
            if budget < 0:
                break
            out.append((int(bq[0, h, BQ_SEQ]), t, float(bqs[0, BS_QDELAY_MS])))
    return out


def test_constant_rate_link_serialises_and_drops_at_the_tail():
    # 1502 B at 12.016 Mbit/s take exactly 1 ms: a burst of 6 packets into a 4-packet buffer
    # keeps 5 (4 waiting + 1 on the wire) and drops 1; packet k leaves at k ms, so its queueing
    # delay is (packets ahead + 1) / rate.
    tx = BN_WIRE_BYTES * 8 / 12_016.0
    assert tx == pytest.approx(1.0)
    bnp, bqs, bq = _link(BN_RATE, 4, tx_ms=tx)
    out = _run_link(bnp, bqs, bq, {0: 6}, 10)
    assert bqs[0, BS_DROPS] == 1
    assert [s for s, _, _ in out] == [0, 1, 2, 3, 4]
    assert [t for _, t, _ in out] == [0, 1, 2, 3, 4]  # done at 1..5 ms: sent in ticks 0..4
    assert [d for _, _, d in out] == pytest.approx([1.0, 2.0, 3.0, 4.0, 5.0])


def test_constant_rate_link_carries_its_rate_under_saturation():
    # 10 Mbit/s: 1502 B every 1.2016 ms; offered 2 packets per ms for 1 s.
    bnp, bqs, bq = _link(BN_RATE, 100, tx_ms=BN_WIRE_BYTES * 8 / 10_000.0)
    out = _run_link(bnp, bqs, bq, {t: 2 for t in range(1000)}, 1000)
    assert len(out) == 1000 // 1.2016 // 1  # 832 packets in 1 s
    # Full after the tick's arrivals (100 waiting + 1 on the wire), less the one sent in it.
    assert bqs[0, BS_LEN] == 100 and bqs[0, BS_DROPS] == 2000 - 832 - 100
    # Queueing delay of a full buffer: 101 packets x 1.2016 ms.
    assert out[-1][2] == pytest.approx(101 * 1.2016, abs=1.21)


def test_trace_link_uses_each_opportunity_once_and_loses_idle_ones():
    # Opportunities per ms: 2, 0, 1 (looped). Nothing queued in ms 0: its two are lost.
    bnp, bqs, bq = _link(BN_TRACE, 3, trace=[2, 0, 1])
    out = _run_link(bnp, bqs, bq, {1: 5}, 7)
    assert bqs[0, BS_DROPS] == 2  # 3-packet buffer, 5 arrive
    # ms 1: none; ms 2: one; ms 3 (the loop's ms 0 again): the other two.
    assert [(s, t) for s, t, _ in out] == [(0, 2), (1, 3), (2, 3)]
    assert [d for _, _, d in out] == [1.0, 2.0, 2.0]


# -- whole cells ---------------------------------------------------------------------------------
def _cubic(**kw) -> ScenarioSpec:
    return ScenarioSpec(name="bn", flows=[FlowSpec(cca="cubic")], **kw)


@pytest.mark.parametrize("cell", [{}, {"type": "nr", "numerology": 1, "bandwidth_mhz": 20.0}])
def test_bulk_cubic_behind_10_mbits_gets_the_links_goodput(cell):
    spec = _cubic(sim_time_s=6.0, bottleneck_mbps=10.0, bottleneck_buffer_pkts=100, cell=cell)
    rec = run_native(spec, "cubic", seed=1, backend="fast")
    m = compute_metrics(rec, from_s=2.0)
    # Payload share of the link: 10 Mbit/s x 1448 / 1502 = 9.64 Mbit/s; CUBIC's loss recoveries
    # leave it idle a little (ns-3's calibration row ``wired_bottleneck_cubic``: 9.4 Mbit/s).
    link = 10.0 * SEGMENT_BYTES / 1502
    assert 0.97 * link <= m["flows"][0]["throughput_mbps"] <= 1.005 * link
    # The queue is at the bottleneck, not in the cell: the RLC buffer stays (almost) empty and
    # the RTT exceeds the minimum by the bottleneck's queue (at most 101 x 1.2 ms).
    ues = np.stack(rec.ues)[100:, 0]
    assert ues[:, UE["rlc_bytes"]].mean() < 3000
    flows = np.stack(rec.flows)[100:, 0]
    extra = flows[:, FLOW["rtt_mean_ms"]] - flows[:, FLOW["rtt_min_ms"]]
    assert 5.0 < extra.mean() < 101 * 1.2016 + 10


def test_same_seed_same_trajectory_and_batch_cells_equal_single_cells():
    spec = _cubic(sim_time_s=3.0, bottleneck_mbps=8.0, bottleneck_buffer_pkts=30)
    params = FastSimParams.from_spec(spec)

    def run(seeds):
        cells = FastCellBatch(params, len(seeds))
        cells.reset(np.array(seeds))
        out, stats = [], []
        while not cells.done.all():
            cells.step()
            out.append(cells.flows.copy())
        stats = cells.bottleneck()
        return np.stack(out), stats

    a, sa = run([4, 5])
    b, sb = run([4, 5])
    single, ss = run([5])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a[:, 1], single[:, 0])
    assert sa["drops"][1] == ss["drops"][0] > 0  # 30 packets: slow start overflows it
    assert sa["sent_pkts"][0] > 0 and not np.array_equal(a[:, 0], a[:, 1])


def test_trace_bottleneck_replays_its_capacity_per_100_ms(tmp_path):
    # A synthetic 6-18 Mbit/s random walk (looped every 3 s) written as a Mahimahi trace; a
    # NewReno flow with a buffer above its receive window (no loss) keeps the link backlogged
    # from about 0.5 s on. Measured: its payload per 100 ms (five 20 ms records, as IP bytes)
    # against capacity_per_window of the trace read back, from 1 s on.
    walk = generate(
        "random_walk",
        {"start_mbps": 12, "min_mbps": 6, "max_mbps": 18, "sigma": 0.05, "duration_s": 3.0},
        0.001,
        3,
    )
    path = write_mahimahi(walk, tmp_path / "walk.down")
    spec = ScenarioSpec(
        name="bn_trace",
        sim_time_s=4.0,
        bottleneck_trace=str(path),
        bottleneck_buffer_pkts=3000,
        flows=[FlowSpec(cca="newreno")],
    )
    rec = run_native(spec, "newreno", seed=1, backend="fast")
    rx = np.stack(rec.flows)[1:, 0, FLOW["rx_bytes"]]  # record 0: the start, nothing received
    got = delivered_per_window(rx, spec.step_ms / 1000, 0.1)
    want = looped_windows(capacity_per_window(read_mahimahi(path), 0.1), got.size)
    assert replay_error(want[10:], got[10:]) < 0.02


def test_bottleneck_fields_validate_by_name(tmp_path):
    with pytest.raises(SpecError, match="bottleneck_trace="):
        FastSimParams.from_spec(_cubic(bottleneck_trace=str(tmp_path / "missing.down")))
    empty = tmp_path / "empty.down"
    empty.write_text("")
    with pytest.raises(SpecError, match="no delivery opportunity"):
        FastSimParams.from_spec(_cubic(bottleneck_trace=str(empty)))
    # A buffer regime turns into packets of the bottleneck: 24 Mbit/s x 38 ms = 76 packets.
    p = FastSimParams.from_spec(_cubic(bottleneck_mbps=24.0, buffer_bdp=1.0))
    assert p.spec.bottleneck_buffer_pkts == 76 and p.spec.buffer_bdp is None
    assert p.bottleneck_table()[BN_BUF_PKTS] == 76
