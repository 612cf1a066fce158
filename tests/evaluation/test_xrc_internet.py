"""The XRC reproduction's Internet-bottleneck experiment, analysed on fast-backend runs."""

from __future__ import annotations

import pytest

from evaluation.experiments import xrc_paper
from evaluation.experiments.xrc_report import internet_section
from evaluation.rollouts import run_native


@pytest.fixture(scope="module")
def numbers():
    jobs = xrc_paper.make_jobs([1], quick=False, figures=("internet",))
    assert [j.label for j in jobs] == list(xrc_paper.INTERNET_CCAS)
    results = [(j, run_native(j.spec, j.label, j.seed, backend="fast"), 0.0) for j in jobs]
    return xrc_paper.analyse(results)["internet"]


def test_xrc_falls_back_to_newreno_behind_an_internet_bottleneck(numbers):
    xrc, newreno, cubic = numbers["xrc"], numbers["newreno"], numbers["cubic"]
    # The HoL delay is within budget, the end-to-end delay is not: XRC runs NewReno's window.
    assert xrc["same_window_as_newreno"] >= 0.9 and cubic["same_window_as_newreno"] < 0.5
    # Each carries the 10 Mbit/s link's payload share (10 x 1448 / 1502 = 9.64 Mbit/s) ...
    for m in (xrc, newreno, cubic):
        assert m["throughput_mbps"] == pytest.approx(9.64, rel=0.03)
    # ... and queues in the Internet, not at the base station.
    assert xrc["hol_p90_ms"] < 3.0 and xrc["queueing_p50_ms"] > 30.0
    text = "\n".join(internet_section(numbers))
    assert "XRC ran as standard TCP" in text and "its queue is in the Internet" in text
