"""The Pareto flow-arrival workload, RED and the wired last hop (fast backend).

Rules against hand-worked numbers (the sizes' distribution, RED's average and drop rule), then
short whole runs: a single flow over a wired dumbbell fills the bottleneck at the configured
RTT, a Pareto stream reuses its slots and records every finished flow, and the same seed gives
the same flows.
"""

from __future__ import annotations

import numpy as np
import pytest

from cellgym.scenario import ScenarioSpec
from cellgym.vocab import SpecError
from cellgym.workload import (
    ParetoSizes,
    bounded_pareto_low,
    bounded_pareto_mean,
    minimum_fct_s,
    processor_sharing_fct_s,
)
from envs.fastsim import FastCellBatch, FastSimParams
from envs.fastsim.bottleneck import BN_WIRE_BYTES
from envs.fastsim.red import _red_average, _red_decide, _red_probability

# -- the Pareto sizes --


def test_bounded_pareto_mean_hand_worked() -> None:
    # a = 2 on [1, 2]: density 2 x^-3 / (1 - 1/4); mean = (8/3) * (1 - 1/2) = 4/3.
    assert bounded_pareto_mean(1.0, 2.0, 2.0) == pytest.approx(4.0 / 3.0)
    # The lower bound that gives a mean of 4/3 with a = 2 and H = 2 is 1.
    assert bounded_pareto_low(4.0 / 3.0, 2.0, 2.0) == pytest.approx(1.0, rel=1e-9)


def test_pareto_sizes_mean_cutoff_and_cdf() -> None:
    sizes = ParetoSizes(1.2, 25.0, 40_000.0)
    # The paper's distribution: shape 1.2, mean 25 packets, cut-off 40,000.
    assert bounded_pareto_mean(sizes.low, sizes.high, 1.2) == pytest.approx(25.0, rel=1e-9)
    u = np.random.default_rng(7).random(400_000)
    x = sizes.continuous(u)
    assert x.min() >= sizes.low and x.max() <= 40_000.0
    se = np.sqrt(sizes.variance() / x.size)
    assert abs(x.mean() - 25.0) < 5.0 * se
    # The empirical CDF against the analytic one (Kolmogorov-Smirnov: 1.95 / sqrt(n) at 0.1 %).
    qs = np.quantile(x, [0.1, 0.5, 0.9, 0.99])
    assert np.allclose(sizes.cdf(qs), [0.1, 0.5, 0.9, 0.99], atol=1.95 / np.sqrt(x.size))
    pk = sizes.sample(np.random.default_rng(7), 100_000)
    assert pk.dtype == np.int64 and pk.min() >= 1 and pk.max() <= 40_000


def test_pareto_sizes_seeded() -> None:
    sizes = ParetoSizes(1.2, 25.0, 40_000.0)
    a = sizes.sample(np.random.default_rng(3), 1000)
    b = sizes.sample(np.random.default_rng(3), 1000)
    c = sizes.sample(np.random.default_rng(4), 1000)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_fct_curves_hand_worked() -> None:
    # 25 packets of 1500 B at 100 Mbit/s: 3 ms; RTT 100 ms -> minimum 150 + 3 ms.
    assert minimum_fct_s(np.array([25]), 0.1, 100.0)[0] == pytest.approx(0.153)
    # Processor sharing at load 0.9: 150 + 3 / 0.1 = 180 ms.
    assert processor_sharing_fct_s(np.array([25]), 0.1, 100.0, 0.9)[0] == pytest.approx(0.18)


# -- RED --


def test_red_average_hand_worked() -> None:
    # w = 0.5: avg 0 -> 0.5 * 4 = 2 -> 0.5 * 2 + 0.5 * 6 = 4.
    avg = _red_average(0.0, 4, 0.0, 0.12, 0.5)
    assert avg == pytest.approx(2.0)
    assert _red_average(avg, 6, 0.0, 0.12, 0.5) == pytest.approx(4.0)
    # An idle link for 3 packet times decays 8 by 0.5^3 to 1, then the empty arrival: 0.5.
    assert _red_average(8.0, 0, 0.36, 0.12, 0.5) == pytest.approx(0.5)


def test_red_drop_rule_hand_worked() -> None:
    # min 2, max 4, max_p 0.5. avg 3: pb = 0.5 * (3 - 2) / (4 - 2) = 0.25.
    lo, hi, mp = 2.0, 4.0, 0.5
    assert _red_probability(3.0, 0.0, lo, hi, mp) == pytest.approx(0.25)
    # count 2: pa = 0.25 / (1 - 2 * 0.25) = 0.5; count 4: count * pb = 1 -> 1.
    assert _red_probability(3.0, 2.0, lo, hi, mp) == pytest.approx(0.5)
    assert _red_probability(3.0, 4.0, lo, hi, mp) == 1.0
    # Gentle: avg 6 (between max and 2 max): pb = 0.5 + 0.5 * (6 - 4) / 4 = 0.75; avg 8: 1.
    assert _red_probability(6.0, 0.0, lo, hi, mp) == pytest.approx(0.75)
    assert _red_probability(8.0, 0.0, lo, hi, mp) == 1.0
    # A sequence at avg 3 with uniforms 0.9, 0.9, 0.4, 0.3:
    # count 0 -> pa 0.25, 0.9 keeps (count 1); pa = 0.25 / 0.75 = 1/3, 0.9 keeps (count 2);
    # pa = 0.5, 0.4 drops (count 0); pa = 0.25, 0.3 keeps (count 1).
    count = 0.0
    seq = []
    for u in (0.9, 0.9, 0.4, 0.3):
        drop, count = _red_decide(3.0, count, u, lo, hi, mp)
        seq.append((bool(drop), count))
    assert seq == [(False, 1.0), (False, 2.0), (True, 0.0), (False, 1.0)]
    # Below the minimum: never dropped, the count restarts.
    assert _red_decide(1.9, 5.0, 0.0, lo, hi, mp) == (False, 0.0)


def _dumbbell(**kw) -> ScenarioSpec:
    base = dict(
        name="dumbbell",
        sim_time_s=6.0,
        step_ms=10,
        cell={"type": "wired"},
        server_delay_ms=50.0,
        bottleneck_mbps=50.0,
        bottleneck_buffer_pkts=1000,
        flows=[{"cca": "cubic"}],
    )
    base.update(kw)
    return ScenarioSpec(**base)


def _run(spec: ScenarioSpec, seed: int = 1, **knobs) -> tuple[FastCellBatch, np.ndarray]:
    sim = FastCellBatch(FastSimParams.from_spec(spec, **knobs), 1)
    sim.reset(np.array([seed]))
    acked = np.zeros((spec.num_steps, len(spec.flows)))
    for i in range(spec.num_steps):
        sim.step()
        acked[i] = sim.flows[0, :, 9]
    return sim, acked


def test_red_keeps_the_average_queue_between_thresholds() -> None:
    # Two CUBIC flows over 50 Mbit/s with RED 20/60 packets: RED drops early, the tail never.
    spec = _dumbbell(
        sim_time_s=8.0,
        bottleneck_queue="red",
        red_min_th_pkts=20,
        red_max_th_pkts=60,
        red_max_p=0.1,
        flows=[{"cca": "cubic"}, {"cca": "cubic", "start_s": 0.5}],
    )
    sim, acked = _run(spec)
    s = sim.state.bqs[0]
    from envs.fastsim.bottleneck import BS_DROPS, BS_RED_AVG, BS_RED_DROPS

    assert s[BS_RED_DROPS] > 0 and s[BS_RED_DROPS] == s[BS_DROPS]
    assert 0.0 < s[BS_RED_AVG] < 2 * 60
    drop_tail, _ = _run(_dumbbell(sim_time_s=8.0, flows=spec.flows))
    # Drop-tail with 1000 packets keeps a far longer queue than RED.
    assert drop_tail.bottleneck()["delay_ms"][0] > sim.bottleneck()["delay_ms"][0]


# -- the wired last hop --


@pytest.mark.parametrize("cca", ["cubic", "newreno"])
def test_wired_dumbbell_single_flow_fills_the_bottleneck(cca: str) -> None:
    spec = _dumbbell(flows=[{"cca": cca}])
    sim, acked = _run(spec)
    # The last 2 s: goodput near 50 Mbit/s of 1500-byte packets' 1448-byte payloads.
    tail = acked[-200:, 0].sum() * 8 / 2.0 / 1e6
    assert tail > 0.9 * 50.0 * 1448 / BN_WIRE_BYTES
    # RTT = configured: 2 x 50 ms of server links, no air interface; the minimum RTT adds the
    # packet's 0.24 ms on the wire and the 1 ms ticks.
    min_rtt = sim.flows[0, 0, 3]
    assert 100.0 <= min_rtt <= 102.0


def test_wired_cell_rate_limits() -> None:
    # A 20 Mbit/s wired last hop behind nothing else: the flow gets its rate, not more.
    spec = _dumbbell(bottleneck_mbps=0.0, cell={"type": "wired", "wired_mbps": 20.0})
    _, acked = _run(spec)
    tail = acked[-200:, 0].sum() * 8 / 2.0 / 1e6
    assert 0.85 * 20.0 < tail <= 20.0


def test_wired_fields_validated_by_name() -> None:
    with pytest.raises(SpecError, match=r"scenario\.cell\.wired_mbps"):
        _dumbbell(cell={"type": "wired", "wired_mbps": -1.0})
    with pytest.raises(SpecError, match=r"scenario\.cell\.rbs"):
        _dumbbell(cell={"type": "wired", "rbs": 100})
    with pytest.raises(SpecError, match=r"scenario\.cell\.wired_mbps"):
        _dumbbell(cell={"type": "lte", "wired_mbps": 10.0})
    with pytest.raises(SpecError, match=r"scenario\.bottleneck_queue"):
        _dumbbell(bottleneck_queue="codel")
    with pytest.raises(SpecError, match=r"scenario\.red_max_th_pkts"):
        _dumbbell(bottleneck_queue="red", red_min_th_pkts=50, red_max_th_pkts=40)
    with pytest.raises(SpecError, match=r"scenario\.bottleneck_queue"):
        _dumbbell(bottleneck_queue="red", bottleneck_mbps=0.0)
    with pytest.raises(SpecError, match=r"flow\.pareto_shape"):
        _dumbbell(flows=[{"traffic": "pareto", "pareto_shape": 1.0}])
    with pytest.raises(SpecError, match=r"flow\.cca='bbr'"):
        _dumbbell(flows=[{"traffic": "pareto", "cca": "bbr"}])


def test_ns3_refuses_by_field() -> None:
    # The wired last hop is fast-only; RED and Pareto streams render the program's arguments.
    with pytest.raises(SpecError, match="scenario.cell.type"):
        _dumbbell().check_ns3()
    red = _dumbbell(cell={"type": "lte"}, bottleneck_queue="red").to_ns3_args(1)
    assert "--bottleneckQueue=red" in red and "--redMaxP=0.02" in red
    pareto = _dumbbell(cell={"type": "lte"}, flows=[{"traffic": "pareto"}]).to_ns3_args(1)
    flows = next(a for a in pareto if a.startswith("--flows="))
    assert "traffic=pareto" in flows and "pareto_iat_ms=3.33" in flows


# -- the Pareto stream --


def _stream(slots: int, iat_ms: float, seconds: float = 4.0, **kw) -> ScenarioSpec:
    flow = {"cca": "cubic", "traffic": "pareto", "pareto_iat_ms": iat_ms, **kw}
    return _dumbbell(sim_time_s=seconds, bottleneck_mbps=100.0, flows=[flow] * slots)


def test_pareto_stream_reuses_slots_and_records_flows() -> None:
    # 4 slots, a flow every 20 ms of mean 25 packets (15 % of 100 Mbit/s): ~200 flows in 4 s.
    spec = _stream(4, 20.0)
    sim, _ = _run(spec)
    wl = sim.workload
    rec = wl.finished()
    assert wl.arrivals[0] > 4 * 4  # more flows than slots: slots were reused
    assert len(rec) >= 0.8 * wl.arrivals[0]
    assert set(rec["slot"]) == {0, 1, 2, 3}
    # Each FCT is at least the minimum: handshake, half an RTT, the packets at 100 Mbit/s.
    floor = minimum_fct_s(rec["size_pkts"], 0.1, 100.0) - 0.003
    assert np.all(rec["fct_s"] >= floor)
    assert np.all(rec["start_ms"] >= rec["arrival_ms"])
    # 4 slots for ~8 flows in progress (a flow per 20 ms, 150 ms or more each): some waited,
    # and their FCT counts the wait (from the arrival, not from the start on a slot).
    assert wl.waited[0] > 0
    waited = rec["start_ms"] > rec["arrival_ms"]
    assert waited.any()
    assert np.allclose(rec["fct_s"] * 1000.0, rec["done_ms"] - rec["arrival_ms"])


def test_pareto_stream_same_seed_same_flows() -> None:
    spec = _stream(32, 10.0, seconds=2.0)
    a = _run(spec, seed=5)[0].workload.finished()
    b = _run(spec, seed=5)[0].workload.finished()
    c = _run(spec, seed=6)[0].workload.finished()
    assert np.array_equal(a, b)
    assert not np.array_equal(a["size_pkts"][:20], c["size_pkts"][:20])


def test_pareto_small_flow_fct_is_handshake_plus_slow_start() -> None:
    # Light load (a flow every 200 ms, 32 slots): a 4-10 packet flow takes the handshake (100
    # ms), half an RTT to the receiver and one window (initial window 10): 150-160 ms.
    spec = _stream(32, 200.0, seconds=6.0)
    rec = _run(spec)[0].workload.finished()
    small = rec[(rec["size_pkts"] <= 10) & (rec["start_ms"] == rec["arrival_ms"])]
    assert small.size > 5
    assert np.all((small["fct_s"] >= 0.150) & (small["fct_s"] <= 0.160))


def test_environments_one_call_step_refuses_a_pareto_stream() -> None:
    from cellgym.reward import RewardSpec
    from envs.fastsim.single import EnvStepper

    cells = FastCellBatch(FastSimParams.from_spec(_stream(2, 20.0)), 1)
    with pytest.raises(SpecError, match=r"traffic='pareto'"):
        EnvStepper(
            cells,
            action_mode="cwnd",
            max_change=2.0,
            flow=0,
            flow_ue=np.zeros(2, dtype=np.int64),
            reward=RewardSpec(),
        )
