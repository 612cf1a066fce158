"""The XCP-r paper's experiments (``experiments.xcpr_paper``): its summaries and intervals."""

from __future__ import annotations

import json

import numpy as np

from cellgym.paths import REPO_ROOT
from evaluation.experiments import xcpr_paper as xp


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
    lo, hi = xp._boot(a)
    assert lo < 3.0 < hi and 1.0 <= lo and hi <= 5.0
    assert xp._boot([2.0, 2.0, 2.0]) == (2.0, 2.0)  # no spread, no interval
    # Two samples 10 apart: the difference's interval is around 10 and excludes 0.
    lo, hi = xp._boot([11.0, 12.0, 13.0], [1.0, 2.0, 3.0])
    assert 8.0 <= lo < 10.0 < hi <= 12.0
    assert xp._boot(a) == xp._boot(a)  # a fixed generator: the report does not move


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
    assert xp._timeout_table(study) in report and xp._timeout_findings(study) in report
