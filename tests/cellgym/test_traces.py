"""Capacity traces: the series, the readers, the generators, the scenario fields (hand-worked)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cellgym.paths import traces_dir
from cellgym.scenario import ScenarioSpec, SpecError, load_scenario, scenario_names
from cellgym.traces import (
    CapacitySeries,
    IrishParams,
    bdp_packets,
    capacity_per_window,
    channel_head,
    channel_series,
    generate,
    parse_mahimahi,
    read_capacity_file,
    read_mahimahi,
    replay_error,
    resolve_buffers,
    series_from_rates,
    synthesize_irish5g,
    synthesize_irish5g_head,
    write_capacity_file,
    write_mahimahi,
)
from cellgym.traces.series import integer_bytes
from cellgym.traces.sources import CQI_EFFICIENCY, IrishSeconds, read_irish5g_seconds

SHARED = traces_dir()
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"no shared traces at {SHARED}")


def test_mahimahi_lines_become_bytes_per_ms_with_the_last_stamp_folded_into_ms_0():
    # stamps 0, 1, 1, 3: period 3 ms; ms 0 holds t=0 and t=3 (the next replay's start),
    # ms 1 two packets, ms 2 none -> [2, 2, 0] x 1500 bytes.
    s = parse_mahimahi(["0", "1", "1", "3"], "x")
    assert s.bytes.tolist() == [3000, 3000, 0]
    assert (s.interval_s, s.duration_s, s.source) == (0.001, 0.003, "mahimahi")
    # 6000 bytes in 3 ms = 16 Mbit/s.
    assert s.mean_rate_bps == pytest.approx(16e6)
    with pytest.raises(SpecError, match="non-decreasing"):
        parse_mahimahi(["2", "1"])
    with pytest.raises(SpecError, match="lasts 0 ms"):
        parse_mahimahi(["0", "0"])


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"0\n5\nfive\n", r"trace\.up:3: 'five' is not a timestamp"),
        (b"0\n\xff\xfe\n", r"trace\.up:2: not a Mahimahi trace \(bytes that are not UTF-8"),
        (b"", r"'trace\.up' has no delivery opportunity"),
    ],
)
def test_a_malformed_mahimahi_file_is_named_with_its_line(tmp_path, content, message):
    path = tmp_path / "trace.up"
    path.write_bytes(content)
    with pytest.raises(SpecError, match=message):
        read_mahimahi(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", r"irish\.csv: not an Irish 5G dataset CSV \(No columns"),
        (b"Timestamp,CQI\n\x80\x81\n", r"irish\.csv:2: not a CSV file"),
        (b"a,b\n1,2\n", r"irish\.csv: columns \['Timestamp', 'DL_bitrate', 'CQI'\] missing"),
    ],
)
def test_a_malformed_irish_csv_is_named(tmp_path, content, message):
    path = tmp_path / "irish.csv"
    path.write_bytes(content)
    with pytest.raises(SpecError, match=message):
        read_irish5g_seconds(path)


def test_a_malformed_capacity_file_is_named_with_its_line(tmp_path):
    path = tmp_path / "cap.txt"
    path.write_text("# cellgym-capacity v1\n# interval_us: 1000\n12\nx3\n")
    with pytest.raises(SpecError, match=r"cap\.txt:4: 'x3' is not a whole number of bytes"):
        read_capacity_file(path)
    path.write_bytes(b"\xff\n")
    with pytest.raises(SpecError, match=r"cap\.txt: not a capacity file \(bytes that are not"):
        read_capacity_file(path)


def test_series_resamples_windows_and_loops():
    s = CapacitySeries(np.array([1500, 0, 3000, 1500]), 0.001)
    # 2 ms intervals sum pairs; 0.5 ms intervals halve each ms.
    assert s.at_interval(0.002).bytes.tolist() == [1500, 4500]
    assert s.at_interval(0.0005).bytes.tolist() == [750, 750, 0, 0, 1500, 1500, 750, 750]
    # 3 ms windows over 6 ms (looped): [1500+0+3000, 1500+1500+0] = [4500, 3000].
    assert capacity_per_window(s, 0.003, duration_s=0.006).tolist() == [4500.0, 3000.0]
    assert s.window(0.003, 0.003).tolist() == [1500, 1500, 0]  # ms 3, 4 (= 0), 5 (= 1)
    assert s.rotated(0.001).bytes.tolist() == [0, 3000, 1500, 1500]
    assert s.scaled(0.5).bytes.tolist() == [750, 0, 1500, 750]
    assert s.digest != s.rotated(0.001).digest
    assert s.digest == CapacitySeries(s.bytes.copy(), 0.001).digest


def test_integer_bytes_keeps_every_prefix_sum_within_a_byte():
    v = np.full(1000, 1.0 / 3.0)
    out = integer_bytes(v)
    assert abs(out.sum() - 1000 / 3) <= 0.5
    assert np.all(np.abs(np.cumsum(out) - np.cumsum(v)) <= 0.5 + 1e-9)


def test_capacity_file_and_mahimahi_round_trip(tmp_path):
    s = CapacitySeries(np.array([1500, 0, 3000, 1500, 0]), 0.001, "array", "t")
    back = read_capacity_file(write_capacity_file(s, tmp_path / "c.txt"))
    assert back.bytes.tolist() == s.bytes.tolist() and back.digest == s.digest
    text = (tmp_path / "c.txt").read_text().splitlines()
    assert text[0] == "# cellgym-capacity v1" and "# interval_us: 1000" in text
    # Mahimahi: opportunities at ms 0, 2, 2, 3 and the period mark 5 -> the same bytes per ms
    # with one more packet in ms 0 (the period mark starts the next replay).
    m = read_mahimahi(write_mahimahi(s, tmp_path / "m.down"))
    assert (tmp_path / "m.down").read_text().split() == ["0", "2", "2", "3", "5"]
    assert m.bytes.tolist() == [3000, 0, 3000, 1500, 0]
    bad = tmp_path / "bad.txt"
    bad.write_text((tmp_path / "c.txt").read_text().replace("\n3000\n", "\n3001\n"))
    with pytest.raises(SpecError, match="digest"):
        read_capacity_file(bad)


def _seconds(rate_kbps, cqi, idle=None):
    n = len(rate_kbps)
    return IrishSeconds(
        np.array(rate_kbps, float),
        np.array(cqi, float),
        np.zeros(n, bool) if idle is None else np.array(idle),
        np.ones(n, bool),
        "t.csv",
    )


def test_irish_synthesis_keeps_each_seconds_bytes_and_is_seeded():
    # 8000 kbit/s = 1e6 bytes in the second, 16000 kbit/s = 2e6 bytes.
    sec = _seconds([8000, 16000, 0], [7, 12, 3])
    a = synthesize_irish5g(sec, 0.001, seed=4)
    per_s = a.bytes.reshape(3, 1000).sum(axis=1)
    assert np.all(np.abs(per_s - [1_000_000, 2_000_000, 0]) <= 1)
    assert a.bytes.tolist() == synthesize_irish5g(sec, 0.001, seed=4).bytes.tolist()
    assert a.digest != synthesize_irish5g(sec, 0.001, seed=5).digest
    assert np.std(a.bytes[:1000]) > 0  # the CQI jitter shapes the second
    # No jitter and a constant CQI: each 0.5 ms slot gets 1e6 / 2000 = 500 bytes.
    flat = synthesize_irish5g(_seconds([8000], [7]), 0.0005, 1, IrishParams(cqi_sigma=0.0))
    assert set(flat.bytes.tolist()) == {500}


def test_irish_cqi_envelope_scales_efficiency_by_a_quantile_of_busy_seconds():
    # Busy seconds: 2 Mbit/s at CQI 7 (eff 1.4766), 4 Mbit/s at CQI 7: rate/eff = 1354.5,
    # 2708.9 kbit/s; quantile 0.5 -> 2031.7. Idle second at CQI 15 (eff 5.5547): 11286 kbit/s.
    sec = _seconds([2000, 4000, 10], [7, 7, 15], idle=[False, False, True])
    p = IrishParams(cqi_sigma=0.0, envelope="cqi_idle", cqi_quantile=0.5)
    s = synthesize_irish5g(sec, 0.001, 0, p)
    k = np.quantile(np.array([2000, 4000]) / CQI_EFFICIENCY[7], 0.5)
    per_s = s.bytes.reshape(3, 1000).sum(axis=1)
    assert per_s[:2].tolist() == [250_000, 500_000]
    assert per_s[2] == pytest.approx(k * CQI_EFFICIENCY[15] * 125, abs=1)
    every = synthesize_irish5g(sec, 0.001, 0, IrishParams(cqi_sigma=0, envelope="cqi"))
    assert every.bytes[:1000].sum() == pytest.approx(
        np.quantile([2000 / 1.4766, 4000 / 1.4766], 0.9) * 1.4766 * 125, abs=1
    )


def test_generators_are_seeded_and_follow_their_parameters():
    # steps: 12 then 24 Mbit/s for 2 ms each = 1500 and 3000 bytes per ms, cycled.
    s = generate("steps", {"levels_mbps": [12.0, 24.0], "hold_s": 0.002, "duration_s": 0.006})
    assert s.bytes.tolist() == [1500, 1500, 3000, 3000, 1500, 1500]
    m = generate("markov_blockage", {"fading_sigma_db": 0.0, "duration_s": 20.0}, 0.001, 3)
    # Without fading only the two state rates appear: 800 and 50 Mbit/s = 100000, 6250 B/ms.
    assert set(m.bytes.tolist()) <= {100_000, 6_250} and len(set(m.bytes.tolist())) == 2
    assert m.digest == generate("markov_blockage", {"fading_sigma_db": 0.0, "duration_s": 20.0},
                                0.001, 3).digest  # fmt: skip
    walk = {"sigma": 1.0, "min_mbps": 8.0, "max_mbps": 16.0, "start_mbps": 10.0}
    w = generate("random_walk", walk, 0.001, 2)
    r = w.rates_mbps()
    assert r.min() >= 8.0 - 1e-6 and r.max() <= 16.0 + 1e-6 and np.unique(r).size > 10
    with pytest.raises(SpecError, match=r"params.hold_s=0 is out of range"):
        generate("steps", {"hold_s": 0})


def test_channel_fields_are_validated_by_name():
    cases = [
        ({"source": "mahimahi"}, "scenario.channel.trace is empty"),
        ({"trace": "x.down"}, "scenario.channel.trace='x.down' does not apply to source='dist"),
        ({"source": "synthetic", "generator": "walk"}, "scenario.channel.generator='walk'"),
        ({"source": "synthetic", "generator": "steps", "params": {"x": 1}}, "unknown field"),
        ({"source": "irish5g", "trace": "a.csv", "params": {"envelope": "x"}}, "envelope='x'"),
        ({"source": "mahimahi", "trace": "a", "mobility": "random"}, "mobility='random'"),
        ({"source": "mahimahi", "trace": "a", "params": {"cqi_sigma": 1}}, "params="),
    ]
    for channel, message in cases:
        with pytest.raises(SpecError, match=message.replace("(", r"\(").replace(")", r"\)")):
            ScenarioSpec(channel=channel)
    with pytest.raises(SpecError, match="buffer_bdp=5.0 needs a capacity"):
        ScenarioSpec(buffer_bdp=5.0)
    with pytest.raises(SpecError, match="give one"):
        ScenarioSpec(bottleneck_trace="a.down", bottleneck_mbps=10.0)


def test_both_backends_read_trace_channels_on_both_cell_types():
    from envs.fastsim.params import FastSimParams

    for cell in ("lte", "nr"):
        spec = ScenarioSpec(
            cell={"type": cell}, channel={"source": "synthetic", "generator": "steps"}
        )
        FastSimParams.from_spec(spec)  # the fast backend replays it slot by slot
        # ns-3 gets the source; the session adds the episode's --capacityTrace file.
        assert "--channelSource=synthetic" in spec.to_ns3_args(1)
    # Both read the wired bottleneck's trace; a missing file fails by field name.
    wired = ScenarioSpec(bottleneck_trace="mahimahi/x.down")
    with pytest.raises(SpecError, match="scenario.bottleneck_trace='mahimahi/x.down' is not a"):
        wired.to_ns3_args(1)
    with pytest.raises(SpecError, match="scenario.bottleneck_trace='mahimahi/x.down' is not a"):
        FastSimParams.from_spec(wired)


def test_ns3_arguments_resolve_the_buffer_regime_and_the_bottleneck_trace(tmp_path):
    spec = ScenarioSpec(bottleneck_mbps=24.0, buffer_bdp=5.0)
    assert "--bottleneckBufferPkts=380" in spec.to_ns3_args(1)
    trace = tmp_path / "t.down"
    trace.write_text("0\n1\n2\n")
    args = ScenarioSpec(bottleneck_trace=str(trace), buffer_bdp=1.0).to_ns3_args(1)
    # Period 2 ms (the stamp 2 counts in ms 0): 3 packets per 2 ms = 18 Mbit/s; x 38 ms = 57.
    assert f"--bottleneckTrace={trace.resolve()}" in args
    assert "--bottleneckBufferPkts=57" in args


def test_buffer_regimes_in_bdp_packets():
    # 12 Mbit/s x 40 ms = 60,000 bytes = 40 packets.
    assert [bdp_packets(12e6, 0.040, k) for k in (1, 5, 10)] == [40, 200, 400]
    assert bdp_packets(12e6, 0.040, math.inf) == 1_000_000
    assert bdp_packets(1e3, 0.001, 1) == 1  # at least one packet
    # A 24 Mbit/s bottleneck, base RTT 2 x 15 ms + 8 ms = 38 ms: 114,000 B = 76 packets; x 5.
    spec = ScenarioSpec(bottleneck_mbps=24.0, buffer_bdp=5.0)
    resolved = resolve_buffers(spec)
    assert (resolved.bottleneck_buffer_pkts, resolved.buffer_bdp) == (380, None)
    steps = ScenarioSpec(
        channel={"source": "synthetic", "generator": "steps", "params": {"levels_mbps": [12.0]}},
        buffer_bdp=1.0,
    )
    assert resolve_buffers(steps, base_rtt_s=0.040).rlc_buffer_pkts == 40


def test_replay_check_of_a_series_against_its_own_step_record():
    s = generate("random_walk", {"duration_s": 2.0, "step_s": 0.05}, 0.001, 7)
    # A backend that records the capacity per 20 ms step replays it within 2 % per 100 ms.
    per_step = s.at_interval(0.020)
    record = series_from_rates(per_step.rates_mbps(), 0.020)
    err = replay_error(capacity_per_window(s, 0.1), capacity_per_window(record, 0.1))
    assert err < 0.02
    assert replay_error(np.array([100.0, 0.0]), np.array([97.0, 0.0])) == pytest.approx(0.03)


def test_channel_series_applies_seed_offset_scale_and_the_cells_slot():
    walk = {"source": "synthetic", "generator": "random_walk", "params": {"duration_s": 1.0}}
    ch = ScenarioSpec(channel=walk).channel
    a, b = channel_series(ch, 0.001, seed=1), channel_series(ch, 0.001, seed=2)
    assert a.digest != b.digest  # trace_seed None: the run's seed draws the walk
    fixed = ScenarioSpec(channel={**walk, "trace_seed": 9}).channel
    assert channel_series(fixed, 0.001, 1).digest == channel_series(fixed, 0.001, 2).digest
    moved = ScenarioSpec(channel={**walk, "trace_offset_s": 0.25, "trace_scale": 2.0}).channel
    c = channel_series(moved, 0.001, seed=1)
    # Twice the bytes (within a byte per interval), starting 250 intervals in.
    assert np.all(np.abs(c.bytes - 2 * np.roll(a.bytes, -250)) <= 1)
    slots = channel_series(ch, 0.0005, seed=1)  # an NR slot of 0.5 ms
    assert slots.interval_s == 0.0005 and slots.n == 2000


TRACE_CONFIGS = [n for n in scenario_names() if n.startswith("traces/")]


@pytest.mark.parametrize("name", TRACE_CONFIGS)
def test_trace_configs_load_and_their_series_are_sane(name):
    spec = load_scenario(name)
    uses_file = spec.channel.trace or spec.bottleneck_trace
    if uses_file and not SHARED.is_dir():
        pytest.skip(f"no shared traces at {SHARED}")
    if spec.channel.source == "distance":
        assert resolve_buffers(spec).bottleneck_buffer_pkts > 1
        return
    s = channel_series(spec.channel, spec.cell.slot_s, seed=1)
    assert s.interval_s == spec.cell.slot_s
    assert 0.1 < s.mean_mbps < 1000 and s.duration_s >= spec.sim_time_s / 2


@needs_shared
def test_the_shared_mahimahi_traces_have_their_documented_means():
    att = read_mahimahi("mahimahi/ATT-LTE-driving.down")
    tmo = read_mahimahi("mahimahi/TMobile-LTE-short.down")
    assert att.duration_s == pytest.approx(786.1, abs=0.1) and att.mean_mbps == pytest.approx(
        5.2, abs=0.1
    )
    assert tmo.duration_s == pytest.approx(140.0, abs=0.1) and tmo.mean_mbps == pytest.approx(
        16.7, abs=0.1
    )


@needs_shared
def test_a_shared_irish_csv_keeps_its_measured_seconds():
    name = "irish5g/download-static/B_2020.02.14_13.21.26.csv"
    sec = read_irish5g_seconds(name)
    s = synthesize_irish5g(sec, 0.001, seed=1)
    per_s = s.bytes.reshape(-1, 1000).sum(axis=1)
    assert np.all(np.abs(per_s - sec.rate_kbps * 125) <= 1)
    assert sec.five_g.mean() > 0.9 and 50 < s.mean_mbps < 200


@pytest.mark.parametrize(
    "module",
    [
        "cellgym.traces.series",
        "cellgym.traces.sources",
        "cellgym.traces.synthetic",
        "cellgym.traces.spec",
        "cellgym.zeus",
        "cellgym.reward",
    ],
)
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0 and result.failed == 0


def test_a_trace_file_is_parsed_once_and_again_after_an_edit(tmp_path):
    """``read_mahimahi`` caches a parsed file by path, size and mtime: the same object while the
    file is unchanged (its arrays read-only), a fresh parse once the file is edited."""
    import os

    from cellgym.traces.sources import read_mahimahi

    path = tmp_path / "edited.trace"
    path.write_text("1\n2\n3\n")
    first = read_mahimahi(path)
    assert read_mahimahi(path) is first
    assert not first.bytes.flags.writeable
    path.write_text("1\n1\n2\n3\n4\n")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    second = read_mahimahi(path)
    assert second is not first
    assert second.total_bytes > first.total_bytes


@pytest.mark.parametrize(
    "params",
    [
        IrishParams(),
        IrishParams(cqi_sigma=0.0),
        IrishParams(cqi_corr_ms=0.0),
        IrishParams(cqi_sigma=2.5, cqi_corr_ms=1e6),
        IrishParams(envelope="cqi_idle", cqi_quantile=0.7),
        IrishParams(envelope="cqi"),
    ],
)
@pytest.mark.parametrize("slot_s", [0.001, 0.0005])
def test_an_irish_head_is_the_whole_synthesis_first_slots(params, slot_s):
    """``synthesize_irish5g_head`` computes only the head, with the whole series' values."""
    rng = np.random.default_rng(3)
    n_s = 41  # 41,000 or 82,000 slots: the skipped draws span several chunks
    sec = _seconds(rng.uniform(0, 60_000, n_s), rng.integers(0, 16, n_s), rng.random(n_s) < 0.2)
    full = synthesize_irish5g(sec, slot_s, 7, params).bytes
    per_s = int(round(1 / slot_s))
    for n in (0, 1, per_s - 1, per_s, per_s + 1, 20 * per_s, 77_777, full.size - 1, full.size):
        head = synthesize_irish5g_head(sec, slot_s, 7, n, params)
        assert head.dtype == np.int64 and head.tolist() == full[:n].tolist(), n
    assert synthesize_irish5g_head(sec, slot_s, 7, full.size + 9, params).tolist() == full.tolist()


def test_a_channel_head_is_the_replays_first_slots(tmp_path):
    """``channel_head`` == ``channel_series(...).bytes[:n]``: seeds, offsets (also wrapping at
    the end), scale, a fixed trace seed, NR slots, and the sources it does not shorten."""
    rng = np.random.default_rng(5)
    rows = ["Timestamp,DL_bitrate,CQI,State,NetworkMode"]
    for k in range(30):
        rows.append(
            f"2020.02.13_13.57.{k:02d},{rng.uniform(0, 90_000):.1f},{rng.integers(1, 16)},D,5G"
        )
    csv = tmp_path / "irish.csv"
    csv.write_text("\n".join(rows) + "\n")
    irish = {"source": "irish5g", "trace": str(csv)}
    walk = {"source": "synthetic", "generator": "random_walk", "params": {"duration_s": 3.0}}
    channels = [
        irish,
        {**irish, "trace_offset_s": 4.2, "trace_scale": 1.7},
        {**irish, "trace_offset_s": 25.0},  # a head of 8 s wraps around the 30 s trace
        {**irish, "trace_seed": 3, "params": {"cqi_sigma": 0.5, "envelope": "cqi"}},
        walk,
        {**walk, "trace_offset_s": 0.5},
    ]
    for channel in channels:
        ch = ScenarioSpec(channel=channel).channel
        for slot_s, seed, n in ((0.001, 1, 8000), (0.001, 2, 1), (0.0005, 1, 16_001)):
            full = channel_series(ch, slot_s, seed).bytes
            head = channel_head(ch, slot_s, seed, n)
            assert head.tolist() == full[:n].tolist(), (channel, slot_s, seed, n)
        assert (
            channel_head(ch, 0.001, 1, 10**9).tolist()
            == channel_series(ch, 0.001, 1).bytes.tolist()
        )
