"""The XCP-r paper's experiments (``xcpr_paper``) and report (``xcpr_report``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cellgym.paths import REPO_ROOT
from evaluation.experiments import xcpr_paper as xp
from evaluation.experiments import xcpr_report as xr


def _series(goodput: list[float], cwnd: list[float]) -> dict[str, np.ndarray]:
    n = len(goodput)
    return {
        "t_s": np.arange(1, n + 1) * xp.STEP_MS / 1000.0,
        "goodput_mbps": np.asarray(goodput, dtype=float)[:, None],
        "cwnd_segs": np.asarray(cwnd, dtype=float)[:, None],
    }


def test_summary_counts_one_segment_windows_after_the_first_second() -> None:
    # 30 steps of 100 ms: full capacity (200 Mbit/s before 5 s) except a stall at 2.0-2.5 s
    # with a one-segment window, and a one-segment window at 0.5 s (before 1 s: not counted).
    goodput = [200.0] * 30
    cwnd = [1700.0] * 30
    for i in range(19, 24):  # steps ending at 2.0 .. 2.4 s
        goodput[i], cwnd[i] = 0.0, 1.0
    cwnd[4] = 1.0
    s = xp.summary(_series(goodput, cwnd))
    assert s["one_segment_s_per_flow"] == [0.5]
    assert s["stall_s_per_flow"] == [0.5]
    # From 1 s (steps ending at 1.1 .. 3.0 s): 15 of 20 steps at capacity.
    assert abs(s["utilisation"] - 15 / 20) < 1e-9
    assert "timeout_s_per_flow" not in s and "drops" not in s  # ns-3's series carry neither


def test_bootstrap_interval_of_a_mean_and_of_a_difference() -> None:
    a = [1.0, 2.0, 3.0, 4.0, 5.0]
    lo, hi = xr._boot(a)
    assert lo < 3.0 < hi and 1.0 <= lo and hi <= 5.0
    assert xr._boot([2.0, 2.0, 2.0]) == (2.0, 2.0)  # no spread, no interval
    # Two samples 10 apart: the difference's interval is around 10 and excludes 0.
    lo, hi = xr._boot([11.0, 12.0, 13.0], [1.0, 2.0, 3.0])
    assert 8.0 <= lo < 10.0 < hi <= 12.0
    assert xr._boot(a) == xr._boot(a)  # a fixed generator: the report does not move


def test_outage_trace_stops_the_link_for_the_outage(tmp_path: Path) -> None:
    path = tmp_path / "outage.trace"
    xp.write_outage_trace(path)
    ms = np.array([int(x) for x in path.read_text().split()])
    # 200 Mbit/s of 1500-byte packets: 50 every 3 ms; none in (5000, 6500] ms; to 12,000 ms.
    assert ms.size == 200_000 - 108_333 + 83_333
    assert not np.any((ms > 5000) & (ms <= 6500))
    assert ms.min() == 1 and ms.max() == 12_000 and np.all(np.diff(ms) >= 0)
    assert np.bincount(ms[ms <= 3])[1:].tolist() == [16, 17, 17]
    spec = xp.outage_spec("xcpr", 0.3, path)
    assert spec.bottleneck_trace == str(path) and spec.bottleneck_mbps == 0.0
    assert spec.udp_sources == 0 and spec.bottleneck_buffer_pkts == 1000
    assert spec.sim_time_s == xp.OUTAGE_SIM_S and spec.ack_loss == 0.3


def test_outage_summary_times_the_way_back() -> None:
    # 120 steps: the link at 190 Mbit/s, nothing in the outage (5-6.5 s) and for 0.4 s after
    # it at a one-segment window, then 100 Mbit/s for 0.2 s, then 170.
    t = np.arange(1, 121) * xp.STEP_MS / 1000.0
    goodput = np.full(t.size, 190.0)
    cwnd = np.full(t.size, 1700.0)
    goodput[(t > 5.0) & (t <= 6.9 + 1e-9)] = 0.0
    cwnd[(t > 6.5 + 1e-9) & (t <= 6.9 + 1e-9)] = 1.0
    goodput[(t > 6.9 + 1e-9) & (t <= 7.1 + 1e-9)] = 100.0
    goodput[t > 7.1 + 1e-9] = 170.0
    s = xp.outage_summary(_series(goodput.tolist(), cwnd.tolist()))
    assert abs(s["back_s"] - 0.7) < 1e-9  # the step ending at 7.2 s, the first at 160+
    assert abs(s["one_segment_s"] - 0.4) < 1e-9
    after = t > 6.5 + 1e-9
    assert abs(s["utilisation_after"] - goodput[after].mean() / 200.0) < 1e-12
    never = xp.outage_summary(_series([0.0] * 120, [1.0] * 120))
    assert never["back_s"] is None and never["utilisation_after"] == 0.0


def test_committed_report_has_the_timeout_study_on_both_backends() -> None:
    numbers = json.loads((REPO_ROOT / "docs" / "xcp-r" / "numbers.json").read_text())
    study = numbers["timeouts"]
    variants = {v for v, _, _ in xp.VARIANTS}
    for cca, loss, _ in xp.TIMEOUT_CONFIGS:
        for name in variants:
            entry = study[f"{xp._key(1, cca, loss, xp.TIMEOUT_BUFFER)}|{name}"]
            seeds = numbers["setup"]["timeouts"]["ns3_seeds" if name == "ns-3" else "fast_seeds"]
            assert len(entry["seeds"]) == seeds > 0
    report = (REPO_ROOT / "docs" / "xcp-r" / "report.md").read_text()
    assert xr._timeout_table(study) in report and xr._timeout_findings(study) in report
    outage = numbers["outage"]
    for cca in ("xcp", "xcpr"):
        for loss in (0, 30):
            assert (
                len(outage[f"{cca}_loss{loss}|fast"]["seeds"])
                == numbers["setup"]["outage"]["fast_seeds"]
            )
            assert (
                len(outage[f"{cca}_loss{loss}|ns-3"]["seeds"])
                == numbers["setup"]["outage"]["ns3_seeds"]
            )
    assert xr._outage_table(outage) in report


def _committed() -> tuple[dict, str]:
    out = REPO_ROOT / "docs" / "xcp-r"
    return json.loads((out / "numbers.json").read_text()), (out / "report.md").read_text()


def test_committed_report_is_what_render_makes_of_its_numbers() -> None:
    numbers, report = _committed()
    assert report == xr.render(numbers), (
        "docs/xcp-r/report.md differs from xcpr_report.render(numbers.json): run "
        "`python -m evaluation.experiments.xcpr_paper --render --out docs/xcp-r`"
    )


def _backs(outage: dict, key: str) -> list[float | None]:
    return [s["back_s"] for s in outage[key]["seeds"]]


def test_committed_numbers_bear_out_the_reports_claims() -> None:
    # The findings' prose states directions; the committed numbers must still show them.
    numbers, _ = _committed()
    study = numbers["timeouts"]
    for name, _, _ in xp.VARIANTS:  # "no clearly shorter time at a one-segment window"
        a, b = (study[f"{xp._key(1, c, 0.3, xp.TIMEOUT_BUFFER)}|{name}"] for c in ("xcpr", "xcp"))
        x, y = (xr._per_seed(e, "one_segment_s_per_flow") for e in (a, b))
        _, hi = xr._boot(x, y)
        assert hi >= 0, name  # the interval of XCP-r minus XCP includes zero or favours XCP
        u, v = (xr._per_seed(e, "utilisation_halved") for e in (a, b))
        lo, _ = xr._boot(u, v)
        assert lo <= 0, name  # "no clearly larger share of the halved capacity"
    outage = numbers["outage"]
    # Fast backend: XCP-r back in every run, most runs within 0.5 s and sooner than any XCP
    # run, with and without loss (one of ten seeds with 30 % ACK loss took 3.9 s); XCP under
    # ACK loss has runs not back by the end.
    for loss in (0, 30):
        xcpr = _backs(outage, f"xcpr_loss{loss}|fast")
        xcp = [b for b in _backs(outage, f"xcp_loss{loss}|fast") if b is not None]
        assert None not in xcpr and np.median(xcpr) <= 0.5
        assert sum(b < min(xcp) for b in xcpr) >= 0.8 * len(xcpr)
    assert None in _backs(outage, "xcp_loss30|fast")
    # ns-3: XCP-r slower than XCP (the means of the runs that are back).
    for loss in (0, 30):
        xcpr = [b for b in _backs(outage, f"xcpr_loss{loss}|ns-3") if b is not None]
        xcp = [b for b in _backs(outage, f"xcp_loss{loss}|ns-3") if b is not None]
        assert np.mean(xcpr) > np.mean(xcp)
