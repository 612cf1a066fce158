"""RED and the Pareto flow workload on the real simulator (the program run alone, no bridge).

- RED (``bottleneck_queue: red``, ns-3's RedQueueDisc at the 10 Mbit/s wired bottleneck in
  front of an LTE cell of about 33 Mbit/s): four CUBIC flows keep the queue near RED's
  thresholds and RED drops early, where the same flows over drop-tail keep a far longer queue.
- Pareto streams (``traffic: pareto``; CUBIC, XCP and RCP, the latter two with their router at
  the bottleneck): a run completes flows whose sizes have the configured
  mean (within a CLT bound for the number finished) and whose FCTs are at least the minimum RTT
  plus the size at the bottleneck's rate.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from cellgym.paths import ns3_build_dir
from cellgym.scenario import FlowSpec, ScenarioSpec
from cellgym.workload import ParetoSizes
from envs.ns3_draws import draws_args
from envs.ns3_flows import flow_log_args, read_flow_log

pytestmark = pytest.mark.ns3

LINK_MBPS = 10.0
RED = {"red_min_th_pkts": 20.0, "red_max_th_pkts": 60.0, "red_max_p": 0.1}
LIMIT_PKTS = 300
FLOWS = 4


def _run_program(spec: ScenarioSpec, tmp_path: Path, *extra: str, seed: int = 1) -> None:
    args = [
        str(ns3_build_dir() / spec.cell.ns3_program),
        *spec.to_ns3_args(seed),
        *draws_args(spec, seed, tmp_path),
        *extra,
    ]
    out = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]


def _bottleneck(queue: str, tmp_path: Path) -> dict[str, np.ndarray]:
    spec = ScenarioSpec(
        name=f"cubic_{queue}",
        sim_time_s=8.0,
        rlc_buffer_pkts=1000,
        bottleneck_mbps=LINK_MBPS,
        bottleneck_buffer_pkts=LIMIT_PKTS,
        bottleneck_queue=queue,
        flows=[FlowSpec(cca="cubic")] * FLOWS,
        **(RED if queue == "red" else {}),
    )
    log = tmp_path / f"bn_{queue}.csv"
    _run_program(spec, tmp_path, f"--bottleneckLogPath={log}")
    data = np.genfromtxt(log, delimiter=",", names=True)
    return {name: data[name] for name in data.dtype.names}


def test_red_keeps_the_queue_near_its_thresholds_and_drops_early(tmp_path):
    red = _bottleneck("red", tmp_path)
    tail = _bottleneck("droptail", tmp_path)
    settled = red["t_s"] >= 3.0
    q_red = red["queue_pkts"][settled]
    q_tail = tail["queue_pkts"][tail["t_s"] >= 3.0]
    print(
        f"RED: queue mean {q_red.mean():.1f} pkts (p5 {np.percentile(q_red, 5):.0f}, p95 "
        f"{np.percentile(q_red, 95):.0f}), early drops {red['early_drops'][-1]:.0f}, forced "
        f"{red['forced_drops'][-1]:.0f}; drop-tail: mean {q_tail.mean():.1f} pkts"
    )
    # RED drops early (its probabilistic drops), and rarely or never at its limit.
    assert red["early_drops"][-1] > 0
    assert red["forced_drops"][-1] <= red["early_drops"][-1]
    # Its queue stays near the thresholds: the mean between half the minimum and twice the
    # maximum (gentle RED drops every packet above it), and never at the limit.
    assert RED["red_min_th_pkts"] / 2 < q_red.mean() < 2 * RED["red_max_th_pkts"]
    assert q_red.max() < LIMIT_PKTS
    # The same flows over drop-tail: a queue well above RED's.
    assert q_tail.mean() > 2 * q_red.mean()


PARETO = {"pareto_shape": 1.2, "pareto_mean_pkts": 25.0, "pareto_cutoff_pkts": 400.0}
IAT_MS = 60.0  # 25 packets of 1500 bytes per 60 ms: 5 Mbit/s, half the link
SLOTS = 8


def _pareto_run(
    tmp_path: Path, seed: int, cca: str, sim_time_s: float = 12.0
) -> tuple[np.ndarray, float]:
    flows = [FlowSpec(cca=cca, traffic="pareto", pareto_iat_ms=IAT_MS, **PARETO)] * SLOTS
    spec = ScenarioSpec(
        name="pareto",
        sim_time_s=sim_time_s,
        rlc_buffer_pkts=1000,
        bottleneck_mbps=LINK_MBPS,
        bottleneck_buffer_pkts=1000,
        flows=flows,
    )
    rec = tmp_path / f"rec{seed}.csv"
    log = tmp_path / f"flows{seed}.csv"
    _run_program(spec, tmp_path, f"--recordPath={rec}", *flow_log_args(log), seed=seed)
    lines = rec.read_text().splitlines()
    col = lines[0].split(",").index("rtt_min_ms")
    rtt_min = [float(r.split(",")[col]) for r in lines[1:] if r.split(",")[1] == "flow"]
    return read_flow_log(log), min(r for r in rtt_min if r > 0) / 1e3


@pytest.mark.parametrize("cca", ["cubic", "xcp", "rcp"])
def test_pareto_flows_have_the_configured_sizes_and_plausible_fcts(cca, tmp_path):
    flows, rtt_s = _pareto_run(tmp_path, seed=1, cca=cca)
    n = len(flows)
    sizes = ParetoSizes(PARETO["pareto_shape"], PARETO["pareto_mean_pkts"], 400.0)
    # About 12 s / 60 ms = 195 arrivals after the 0.1 s attach.
    se = np.sqrt(sizes.variance() / n)
    print(
        f"{cca}: {n} flows: mean size {flows['size_pkts'].mean():.1f} pkts (configured 25, "
        f"4 se = {4 * se:.1f}), largest {flows['size_pkts'].max()}, min RTT {rtt_s * 1e3:.1f} ms,"
        f" FCT median {np.median(flows['fct_s']) * 1e3:.0f} ms"
    )
    assert n > 100
    # The sizes: within 4 standard errors of the mean (plus half a packet of rounding), all in
    # [1, cut-off].
    assert abs(flows["size_pkts"].mean() - 25.0) < 4 * se + 0.5
    assert flows["size_pkts"].min() >= 1 and flows["size_pkts"].max() <= 400
    # Every FCT at least the handshake's RTT and the flow's bytes at the link's rate.
    least = rtt_s + flows["size_pkts"] * 1500 * 8 / (LINK_MBPS * 1e6)
    assert np.all(flows["fct_s"] >= least * 0.999)
    # Records: start no earlier than arrival; FCT = end - arrival; slots are the stream's flows.
    assert np.all(flows["start_ms"] >= flows["arrival_ms"] - 1)
    assert np.all(np.isin(flows["slot"], np.arange(SLOTS)))
    # Same seed, same flows.
    again, _ = _pareto_run(tmp_path, seed=1, cca=cca)
    assert np.array_equal(again["size_pkts"], flows["size_pkts"])
    assert np.allclose(again["fct_s"], flows["fct_s"])
    if cca == "cubic":
        # Another seed, other arrivals: already in its first 3 s (some 45 flows), and differing
        # first flows are differing flows.
        other, _ = _pareto_run(tmp_path, seed=2, cca=cca, sim_time_s=3.0)
        k = min(len(other), n)
        assert not np.array_equal(other["size_pkts"][:k], flows["size_pkts"][:k])
