"""The run's draws (``cellgym.draws``): one seed, one set of draws, as both backends read them."""

from __future__ import annotations

import numpy as np
import pytest

from cellgym.draws import (
    START_OFFSET_MS,
    draw,
    num_moves,
    pareto_streams,
    read_draws_file,
    udp_periods_per_source,
    write_draws_file,
)
from cellgym.scenario import ScenarioSpec
from cellgym.vocab import SpecError
from cellgym.workload import ParetoSizes

MOBILE = {
    "sim_time_s": 10.0,
    "num_ues": 3,
    "channel": {"mobility": "random", "mobility_period_s": 0.5, "distances_m": [100.0]},
    "flows": [{"ue": 0, "cca": "cubic"}, {"ue": 1, "cca": "bbr", "start_s": 2.0}, {"ue": 2}],
}
PARETO = {"traffic": "pareto", "cca": "cubic", "pareto_iat_ms": 20.0, "pareto_cutoff_pkts": 400.0}
MIXED = {
    "sim_time_s": 20.0,
    "bottleneck_mbps": 10.0,
    "udp_sources": 2,
    "udp_periods": "exponential",
    "udp_on_s": 0.5,
    "udp_off_s": 1.5,
    "flows": [{"cca": "cubic"}, PARETO, PARETO, {**PARETO, "pareto_iat_ms": 50.0}],
}


def _same(a, b) -> bool:
    if len(a.pareto) != len(b.pareto) or len(a.udp_periods_s) != len(b.udp_periods_s):
        return False
    pareto = zip(a.pareto, b.pareto, strict=True)
    return (
        np.array_equal(a.start_offset_ms, b.start_offset_ms)
        and np.array_equal(a.moves_m, b.moves_m)
        and all(
            np.array_equal(x.after_ms, y.after_ms) and np.array_equal(x.size_pkts, y.size_pkts)
            for x, y in pareto
        )
        and all(np.array_equal(x, y) for x, y in zip(a.udp_periods_s, b.udp_periods_s, strict=True))
    )


def test_a_seed_gives_the_same_draws_and_another_seed_others():
    for cfg in (MOBILE, MIXED):
        spec = ScenarioSpec.from_config(cfg)
        assert _same(draw(spec, 11), draw(spec, 11))
        a, b = draw(spec, 11), draw(spec, 12)
        assert not np.array_equal(a.start_offset_ms, b.start_offset_ms) or not np.array_equal(
            a.moves_m, b.moves_m
        )
    a, b = draw(ScenarioSpec.from_config(MIXED), 11), draw(ScenarioSpec.from_config(MIXED), 12)
    assert not np.array_equal(a.pareto[0].size_pkts[:20], b.pareto[0].size_pkts[:20])
    assert not np.array_equal(a.udp_periods_s[0], b.udp_periods_s[0])


def test_draws_have_their_ranges_and_counts():
    spec = ScenarioSpec.from_config(MOBILE)
    d = draw(spec, 5)
    assert d.start_offset_ms.dtype == np.int64
    assert ((d.start_offset_ms >= 0) & (d.start_offset_ms < START_OFFSET_MS)).all()
    # 10 s of moves every 0.5 s: at 0.5, 1.0, ..., 10.0.
    assert num_moves(spec) == 20 and d.moves_m.shape == (20, 3)
    assert ((d.moves_m >= 100.0) & (d.moves_m <= 380.0)).all()
    # Offsets over many seeds cover [0, 100) ms, about uniformly.
    offs = np.concatenate([draw(spec, s).start_offset_ms for s in range(1, 400)])
    assert offs.min() == 0 and offs.max() == START_OFFSET_MS - 1
    assert abs(offs.mean() - 49.5) < 3.0
    assert draw(ScenarioSpec(), 5).moves_m.shape == (0, 1)


def test_pareto_arrivals_and_sizes_follow_the_stream_and_slots_start_without_offset():
    spec = ScenarioSpec.from_config(MIXED)
    assert pareto_streams(spec) == [[1, 2], [3]]
    d = draw(spec, 3)
    assert list(d.start_offset_ms[1:]) == [0, 0, 0]
    a = d.pareto[0]
    gaps = np.diff(np.concatenate([[0.0], a.after_ms]))
    assert (gaps >= 0).all() and a.after_ms[-1] <= 20_000.0
    # About 20 s / 20 ms arrivals of exponential gaps with that mean.
    assert 900 < a.after_ms.size < 1100
    assert gaps.mean() == pytest.approx(20.0, rel=0.1)
    sizes = ParetoSizes(1.2, 25.0, 400.0)
    se = np.sqrt(sizes.variance() / a.size_pkts.size)
    assert abs(a.size_pkts.mean() - 25.0) < 4 * se + 0.5
    assert a.size_pkts.min() >= 1 and a.size_pkts.max() <= 400
    assert 350 < d.pareto[1].after_ms.size < 450


def test_udp_periods_alternate_with_their_means_and_cover_the_run():
    spec = ScenarioSpec.from_config(MIXED)
    d = draw(spec, 9)
    n = udp_periods_per_source(spec)
    assert len(d.udp_periods_s) == 2 and d.udp_periods_s[0].size == n
    for p in d.udp_periods_s:
        assert p.sum() > spec.sim_time_s
        assert (p >= 1e-6).all()
    many = np.concatenate([draw(spec, s).udp_periods_s[0] for s in range(1, 60)])
    on, off = many[0::2], many[1::2]
    assert on.mean() == pytest.approx(0.5, rel=0.08) and off.mean() == pytest.approx(1.5, rel=0.08)
    assert draw(ScenarioSpec.from_config({**MIXED, "udp_periods": "fixed"}), 9).udp_periods_s == []


def test_adding_a_ue_or_lengthening_the_run_keeps_the_other_draws():
    spec = ScenarioSpec.from_config(MOBILE)
    more = ScenarioSpec.from_config({**MOBILE, "num_ues": 4, "sim_time_s": 20.0})
    a, b = draw(spec, 21), draw(more, 21)
    assert np.array_equal(b.moves_m[:20, :3], a.moves_m)
    assert np.array_equal(b.start_offset_ms, a.start_offset_ms)
    spec = ScenarioSpec.from_config(MIXED)
    a, b = draw(spec, 21), draw(spec.replace(sim_time_s=40.0), 21)
    n = a.pareto[0].after_ms.size
    assert np.array_equal(b.pareto[0].after_ms[:n], a.pareto[0].after_ms)
    assert np.array_equal(b.pareto[0].size_pkts[:n], a.pareto[0].size_pkts)


def test_the_draws_file_reads_back_exactly(tmp_path):
    for cfg in (MOBILE, MIXED):
        d = draw(ScenarioSpec.from_config(cfg), 77)
        back = read_draws_file(write_draws_file(d, tmp_path / "d.txt"))
        assert back.rng_run == 77 and _same(back, d)
    (tmp_path / "bad.txt").write_text("hello\n")
    with pytest.raises(SpecError, match="not a draws file"):
        read_draws_file(tmp_path / "bad.txt")
    with pytest.raises(SpecError, match=r"rng_run=-1"):
        draw(ScenarioSpec(), -1)
