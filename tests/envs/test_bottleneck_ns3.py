"""The ns-3 program's trace-driven wired bottleneck (``--bottleneckTrace``, cellgym-trace-link)."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from cellgym.fields import FLOW
from cellgym.paths import ns3_program
from cellgym.scenario import FlowSpec, ScenarioSpec
from cellgym.traces import (
    capacity_per_window,
    generate,
    read_mahimahi,
    replay_error,
    write_mahimahi,
)
from cellgym.traces.replay import delivered_per_window, looped_windows
from evaluation.rollouts import run_native

pytestmark = pytest.mark.ns3


def test_trace_bottleneck_replays_its_capacity_per_100_ms(tmp_path):
    # As tests/fastsim/test_bottleneck.py measures it: a 6-18 Mbit/s random walk written as a
    # Mahimahi trace, a NewReno flow that keeps the link backlogged without loss (buffer above
    # its 4 MiB receive window), its payload per 100 ms as IP bytes against the trace's
    # capacity per 100 ms, from 1 s on.
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
    assert f"--bottleneckTrace={path.resolve()}" in spec.to_ns3_args(1)
    rec = run_native(spec, "newreno", seed=1)
    rx = np.stack(rec.flows)[1:, 0, FLOW["rx_bytes"]]
    got = delivered_per_window(rx, spec.step_ms / 1000, 0.1)
    want = looped_windows(capacity_per_window(read_mahimahi(path), 0.1), got.size)
    assert replay_error(want[10:], got[10:]) < 0.02


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "no delivery opportunity"),
        ("0\n5\n3\n", "below the previous one"),
        ("0\nx\n", "is not a timestamp"),
        ("0\n0\n", "lasts 0 ms"),
    ],
)
def test_the_program_rejects_a_bad_trace_naming_the_field(tmp_path, content, message):
    trace = tmp_path / "bad.down"
    trace.write_text(content)
    out = subprocess.run(
        [str(ns3_program()), f"--bottleneckTrace={trace}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 2
    assert "--bottleneckTrace=" in out.stderr and "allowed" in out.stderr
    assert message in out.stderr
    both = [str(ns3_program()), f"--bottleneckTrace={trace}", "--bottleneckMbps=5"]
    out = subprocess.run(both, capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "bottleneckMbps=0" in out.stderr
