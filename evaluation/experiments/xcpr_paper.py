"""The XCP-r paper's experiments on the fast backend: XCP and XCP-r, ON/OFF UDP, ACK loss.

    .venv/bin/python -m evaluation.experiments.xcpr_paper --out docs/xcp-r [--seeds 10] [--jobs 2]
    .venv/bin/python -m evaluation.experiments.xcpr_paper --out docs/xcp-r --render  # report only

Vicat-Blanc Primet and Lopez Pacheco (../shared/papers/xcp-r-receiver-side-xcp.txt): one and
three XCP flows over a 200 Mbit/s bottleneck with a 100 ms RTT and a 1,000-packet buffer, shared
with ON/OFF UDP sources, without ACK loss (its Figs. 3 and 4) and with 30 % of the ACKs lost on
the reverse path (Figs. 5 and 6), then XCP-r under the same loss (Figs. 9 and 10).

The set-up here (``paper_spec``): the servers reach a 200 Mbit/s wired bottleneck (XCP's router,
1,000-packet drop-tail buffer) in front of a large NR cell (100 MHz FR1, numerology 1, one UE at
50 m in line of sight; about 340 Mbit/s of TCP goodput alone, so the cell is never the
bottleneck), 47 ms each way between server and core (an RTT of about 100 ms with the air
interface). A CellGym scenario always has a cell; a pure wired last hop may replace it later. Ten
UDP sources of 10 Mbit/s switch together (fixed periods): off until 5 s, on for 10 s, off for
15 s, on again: the capacity left to the flows halves at 5 s and 30 s and comes back at 15 s and
40 s (the paper's halving at 5 s and its second event at 30 s). ACK loss: ``ack_loss`` 0 or 0.3.

The configurations where the timeouts happen (one flow, the 300-packet buffer) also run on ns-3
(real packets and TCP stacks; ``NS3_*``: the first halving and its return, fewer seeds), and on
the fast backend with ns-2's 200 ms minimum retransmission timeout instead of ns-3's 1 s (the
paper's simulator; ``NS2_MIN_RTO_MS``), to separate the timer from the controllers.

Each run records per 100 ms every flow's goodput (bytes the receiver's application read), its
window, whether it is in loss recovery after a timeout (``ST_LOSS``), and the bottleneck's queue
and drops. ``numbers.json`` holds the summaries of every run (and its provenance,
``cellgym.provenance`` over ``inputs.XCPR_PAPER``); the figures are drawn from seed 1's series,
and ``report.md`` from the numbers by ``xcpr_report`` (``--render`` rewrites it alone).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from cellgym.fields import FLOW
from cellgym.paths import REPO_ROOT
from cellgym.provenance import record
from cellgym.scenario import FlowSpec, ScenarioSpec
from envs.fastsim.codes import ST_LOSS
from envs.fastsim.params import FastSimParams
from envs.fastsim.sim import FastCellBatch
from envs.fastsim.state import I_CSTATE
from evaluation.experiments import inputs
from evaluation.rollouts import run_native

COMMAND = "python -m evaluation.experiments.xcpr_paper"
BOTTLENECK_MBPS = 200.0
UDP_SOURCES = 10
UDP_RATE_MBPS = 10.0
UDP_START_S = 5.0
UDP_ON_S = 10.0
UDP_OFF_S = 15.0
SIM_TIME_S = 45.0
STEP_MS = 100
#: (flows, controller, ACK loss) of every configuration; the paper's figure for each.
CONFIGS: tuple[tuple[int, str, float, str], ...] = (
    (1, "xcp", 0.0, "Fig. 3"),
    (3, "xcp", 0.0, "Fig. 4"),
    (1, "xcp", 0.3, "Fig. 5"),
    (3, "xcp", 0.3, "Fig. 6"),
    (1, "xcpr", 0.0, "Sec. IV-A"),
    (3, "xcpr", 0.0, "Sec. IV-A"),
    (1, "xcpr", 0.3, "Fig. 9"),
    (3, "xcpr", 0.3, "Fig. 10"),
)
#: A flow stalls while its goodput is under this share of its fair share of the capacity left.
STALL_SHARE = 0.1


#: Drop-tail buffers of the bottleneck, packets: the paper's 1,000 slots, and 300, standing in for
#: its RED queue, which drops well before the slots are full.
BUFFERS: tuple[int, ...] = (1000, 300)
#: The timeouts' configurations (one flow, 300-packet buffer), also run on ns-3 and with ns-2's
#: minimum RTO: (controller, ACK loss, the paper's figure).
TIMEOUT_CONFIGS: tuple[tuple[str, float, str], ...] = (
    ("xcp", 0.0, "Fig. 3"),
    ("xcp", 0.3, "Fig. 5"),
    ("xcpr", 0.0, "Sec. IV-A"),
    ("xcpr", 0.3, "Fig. 9"),
)
TIMEOUT_BUFFER = 300
#: ns-3's runs: the first halving (5 s) and its return (15 s); 5 seeds (about 1.5 min of wall
#: time each on these machines).
NS3_SIM_TIME_S = 20.0
NS3_SEEDS = 5
#: ns-2's minimum retransmission timeout (200 ms since 2004), the paper's simulator's; ns-3's
#: (and the fast model's) is 1 s.
NS2_MIN_RTO_MS = 200
#: The paper's mechanism alone: the 200 Mbit/s link (a Mahimahi trace) stops for 1.5 s, longer
#: than the 1 s minimum RTO, so the sender times out while its data waits in the paper's
#: 1,000-packet buffer; the ACKs of that data arrive after the timeout. One flow, no UDP.
OUTAGE_START_S = 5.0
OUTAGE_END_S = 6.5
OUTAGE_SIM_S = 12.0
OUTAGE_NS3_SEEDS = 3
#: Recovered: the first 100 ms step at this share of the link after the outage.
OUTAGE_BACK = 0.8
#: The segment the windows are counted in (the fast model's and ns-3's MSS).
SEG_BYTES = 1448.0


def paper_spec(
    n_flows: int, cca: str, ack_loss: float, sim_time_s: float = SIM_TIME_S, buffer: int = 1000
) -> ScenarioSpec:
    """The scenario of one configuration (module docstring)."""
    return ScenarioSpec(
        name=f"xcpr_paper_{cca}_{n_flows}_{ack_loss:g}",
        sim_time_s=sim_time_s,
        step_ms=STEP_MS,
        cell={
            "type": "nr",
            "numerology": 1,
            "bandwidth_mhz": 100.0,
            "frequency_ghz": 3.5,
            "propagation": "umi",
            "los": "los",
            "scheduler": "pf",
            "mcs_table": "256qam",
        },
        channel={"distances_m": [50.0], "mobility": "static"},
        rlc_buffer_pkts=4000,
        server_delay_ms=47.0,
        bottleneck_mbps=BOTTLENECK_MBPS,
        bottleneck_buffer_pkts=buffer,
        ack_loss=ack_loss,
        udp_sources=UDP_SOURCES,
        udp_rate_mbps=UDP_RATE_MBPS,
        udp_on_s=UDP_ON_S,
        udp_off_s=UDP_OFF_S,
        udp_periods="fixed",
        udp_start_s=UDP_START_S,
        flows=[FlowSpec(cca=cca, traffic="bulk") for _ in range(n_flows)],
    )


def available_mbps(t_s: np.ndarray) -> np.ndarray:
    """The bottleneck's rate the UDP sources leave at times ``t_s`` (fixed periods)."""
    period = UDP_ON_S + UDP_OFF_S
    phase = np.mod(t_s - UDP_START_S, period)
    on = (t_s >= UDP_START_S) & (phase < UDP_ON_S)
    return BOTTLENECK_MBPS - on * UDP_SOURCES * UDP_RATE_MBPS


def outage_mbps(t_s: np.ndarray) -> np.ndarray:
    """The outage study's link rate at times ``t_s``."""
    off = (t_s >= OUTAGE_START_S) & (t_s < OUTAGE_END_S)
    return np.where(off, 0.0, BOTTLENECK_MBPS)


def write_outage_trace(path: Path) -> None:
    """The outage study's Mahimahi trace: 200 Mbit/s, no opportunity in the outage.

    Each ms offers the difference of the cumulative whole 1500-byte packets.
    """
    per_ms = BOTTLENECK_MBPS * 1e6 / 8.0 / 1500.0 / 1000.0
    lines = []
    for ms in range(1, int(OUTAGE_SIM_S * 1000) + 1):
        if OUTAGE_START_S * 1000 < ms <= OUTAGE_END_S * 1000:
            continue
        n = int(ms * per_ms) - int((ms - 1) * per_ms)
        lines.append(f"{ms}\n" * n)
    path.write_text("".join(lines))


def outage_spec(cca: str, ack_loss: float, trace: Path) -> ScenarioSpec:
    """One flow through the outage link: the paper's path, 1,000-packet buffer, no UDP."""
    return dataclasses.replace(
        paper_spec(1, cca, ack_loss, OUTAGE_SIM_S, 1000),
        name=f"xcpr_outage_{cca}_{ack_loss:g}",
        bottleneck_mbps=0.0,
        bottleneck_trace=str(trace),
        udp_sources=0,
    )


def outage_summary(series: dict[str, np.ndarray]) -> dict[str, Any]:
    """The flow after the outage.

    Seconds until a step at ``OUTAGE_BACK`` of the link (None: not by the end), seconds at a
    one-segment window, and the goodput's share of the link.
    """
    t = series["t_s"]
    g = series["goodput_mbps"][:, 0]
    after = t > OUTAGE_END_S + 1e-9
    back = np.nonzero(after & (g >= OUTAGE_BACK * BOTTLENECK_MBPS))[0]
    return {
        "back_s": float(t[back[0]] - OUTAGE_END_S) if back.size else None,
        "one_segment_s": float(((series["cwnd_segs"][:, 0] < 1.5) & after).sum() * STEP_MS / 1e3),
        "utilisation_after": float(g[after].mean() / BOTTLENECK_MBPS),
    }


def run(spec: ScenarioSpec, seed: int, min_rto_ms: int | None = None) -> dict[str, np.ndarray]:
    """One run's series per step: time, goodput and window per flow, timeout state, queue.

    ``min_rto_ms`` replaces the fast model's minimum retransmission timeout (1 s, as ns-3's).
    """
    params = FastSimParams.from_spec(spec)
    if min_rto_ms is not None:
        params = dataclasses.replace(params, min_rto_ms=min_rto_ms)
    batch = FastCellBatch(params, 1)
    batch.reset(np.array([seed]))
    n, nf = spec.num_steps, len(spec.flows)
    out = {
        "t_s": np.arange(1, n + 1) * STEP_MS / 1000.0,
        "goodput_mbps": np.zeros((n, nf)),
        "cwnd_segs": np.zeros((n, nf)),
        "timeout": np.zeros((n, nf), dtype=bool),
        "queue_max_pkts": np.zeros(n),
        "drops": np.zeros(n),
    }
    for i in range(n):
        batch.step()
        o = batch.flows[0]
        out["goodput_mbps"][i] = o[:, 10] * 8.0 / (STEP_MS * 1000.0)
        out["cwnd_segs"][i] = o[:, 6] / SEG_BYTES
        out["timeout"][i] = batch.state.fi[0, :, I_CSTATE] == ST_LOSS
        bn = batch.bottleneck()
        out["queue_max_pkts"][i] = bn["max_queue_pkts"][0]
        out["drops"][i] = bn["drops"][0]
    return out


def run_ns3(spec: ScenarioSpec, seed: int) -> dict[str, np.ndarray]:
    """One ns-3 run's series per step: goodput and window per flow.

    ns-3's records carry no congestion state, so ``timeout`` is left out; ``summary`` counts the
    time at a one-segment window (where a timeout leaves the sender) on both backends.
    """
    rec = run_native(spec, spec.flows[0].cca, seed, backend="ns3", timeout_s=600.0)
    flows = np.stack(rec.flows)[1:]
    n = flows.shape[0]
    return {
        "t_s": np.arange(1, n + 1) * STEP_MS / 1000.0,
        "goodput_mbps": flows[:, :, FLOW["rx_bytes"]] * 8.0 / (STEP_MS * 1000.0),
        "cwnd_segs": flows[:, :, FLOW["cwnd_bytes"]] / SEG_BYTES,
    }


def summary(series: dict[str, np.ndarray]) -> dict[str, Any]:
    """A run's figures: utilisation of the capacity left, stalls, timeouts, fairness, drops."""
    t = series["t_s"]
    g = series["goodput_mbps"]
    nf = g.shape[1]
    avail = available_mbps(t - STEP_MS / 2000.0)
    total = g.sum(axis=1)
    warm = t > 1.0
    fair = avail[:, None] / nf
    stalled = (g < STALL_SHARE * fair) & warm[:, None]
    halved = warm & (avail < BOTTLENECK_MBPS)
    full = warm & (avail >= BOTTLENECK_MBPS)
    out: dict[str, Any] = {
        "utilisation": float(total[warm].sum() / avail[warm].sum()),
        "utilisation_full": float(total[full].sum() / avail[full].sum()),
        "utilisation_halved": float(total[halved].sum() / avail[halved].sum()),
        "stall_s_per_flow": [float(s) for s in stalled.sum(axis=0) * STEP_MS / 1000.0],
        # A one-segment window at the end of a step (after 1 s): the timeouts' mark on both
        # backends (XCP's and XCP-r's windows are never one segment otherwise here).
        "one_segment_s_per_flow": [
            float(s)
            for s in ((series["cwnd_segs"] < 1.5) & warm[:, None]).sum(axis=0) * STEP_MS / 1000.0
        ],
        "goodput_mbps_per_flow": [float(x) for x in g[warm].mean(axis=0)],
    }
    if "timeout" in series:  # the fast model's congestion state
        out["timeout_s_per_flow"] = [
            float(s) for s in series["timeout"].sum(axis=0) * STEP_MS / 1000.0
        ]
        out["drops"] = float(series["drops"][-1])
        out["queue_max_pkts"] = float(series["queue_max_pkts"].max())
    if nf > 1:
        # Jain's index over 1 s windows, from 2 s on.
        w = int(1000 / STEP_MS)
        idx = []
        for k in range(int(2000 / STEP_MS), g.shape[0] - w + 1, w):
            x = g[k : k + w].mean(axis=0)
            idx.append(float(x.sum() ** 2 / (nf * (x**2).sum())) if x.sum() > 0 else 0.0)
        out["jain_mean"] = float(np.mean(idx))
        out["jain_min"] = float(np.min(idx))
    return out


def _key(n: int, cca: str, loss: float, buffer: int) -> str:
    return f"{cca}_{n}flow{'s' if n > 1 else ''}_loss{int(round(loss * 100))}_buf{buffer}"


def _figure(path: Path, series: dict[str, np.ndarray], title: str, outage: bool = False) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = series["t_s"]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    if outage:
        ax1.plot(t, outage_mbps(t - STEP_MS / 2000.0), "k--", lw=1, label="link")
    else:
        ax1.plot(t, available_mbps(t - STEP_MS / 2000.0), "k--", lw=1, label="capacity left by UDP")
    for f in range(series["goodput_mbps"].shape[1]):
        ax1.plot(t, series["goodput_mbps"][:, f], lw=1, label=f"flow {f + 1}")
        ax2.plot(t, series["cwnd_segs"][:, f], lw=1, label=f"flow {f + 1}")
    ax1.set_ylabel("goodput, Mbit/s (100 ms)")
    ax1.set_ylim(0, BOTTLENECK_MBPS * 1.1)
    ax1.legend(loc="lower right", fontsize=8)
    ax2.set_ylabel("window, segments")
    ax2.set_xlabel("time, s")
    ax1.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run every configuration and seed; write numbers.json, the figures and report.md."""
    from evaluation.experiments import xcpr_report

    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/xcp-r")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--sim-time-s", type=float, default=SIM_TIME_S)
    ap.add_argument("--ns3-seeds", type=int, default=NS3_SEEDS, help="0: no ns-3 runs")
    ap.add_argument("--jobs", type=int, default=1, help="ns-3 runs in parallel")
    ap.add_argument("--render", action="store_true", help="rewrite the report from numbers.json")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.render:
        numbers = json.loads((out / "numbers.json").read_text())
        xcpr_report.write(numbers, out)
        return numbers
    out.mkdir(parents=True, exist_ok=True)
    prov = record(COMMAND, argv, inputs.XCPR_PAPER, REPO_ROOT)
    t0 = time.time()
    runs: dict[str, Any] = {}
    for buffer in BUFFERS:
        for n, cca, loss, fig in CONFIGS:
            key = _key(n, cca, loss, buffer)
            spec = paper_spec(n, cca, loss, args.sim_time_s, buffer)
            per_seed = []
            for seed in range(1, args.seeds + 1):
                series = run(spec, seed)
                per_seed.append(summary(series))
                if seed == 1:
                    title = (
                        f"{cca.upper()}, {n} flow{'s' if n > 1 else ''}, {loss:.0%} ACK loss, "
                        f"{buffer}-packet buffer"
                    )
                    _figure(out / f"{key}.png", series, f"{title} (paper: {fig}), seed 1")
            runs[key] = {
                "flows": n,
                "cca": cca,
                "ack_loss": loss,
                "buffer_pkts": buffer,
                "paper": fig,
                "seeds": per_seed,
            }
    fast_wall = time.time() - t0
    timeouts, ns3_wall = _timeout_runs(out, args.seeds, args.ns3_seeds, args.jobs)
    t_out = time.time()
    outage = _outage_runs(out, args.seeds, min(args.ns3_seeds, OUTAGE_NS3_SEEDS), args.jobs)
    outage_wall = time.time() - t_out
    numbers = {
        "setup": {
            "bottleneck_mbps": BOTTLENECK_MBPS,
            "buffer_pkts": list(BUFFERS),
            "udp": {
                "sources": UDP_SOURCES,
                "rate_mbps": UDP_RATE_MBPS,
                "start_s": UDP_START_S,
                "on_s": UDP_ON_S,
                "off_s": UDP_OFF_S,
                "periods": "fixed",
            },
            "sim_time_s": args.sim_time_s,
            "seeds": args.seeds,
            "step_ms": STEP_MS,
            "stall_share": STALL_SHARE,
            "timeouts": {
                "buffer_pkts": TIMEOUT_BUFFER,
                "sim_time_s": NS3_SIM_TIME_S,
                "fast_seeds": args.seeds,
                "ns3_seeds": args.ns3_seeds,
                "ns2_min_rto_ms": NS2_MIN_RTO_MS,
                "min_rto_ms": FastSimParams.min_rto_ms,
            },
            "outage": {
                "start_s": OUTAGE_START_S,
                "end_s": OUTAGE_END_S,
                "sim_time_s": OUTAGE_SIM_S,
                "buffer_pkts": 1000,
                "back_share": OUTAGE_BACK,
                "fast_seeds": args.seeds,
                "ns3_seeds": min(args.ns3_seeds, OUTAGE_NS3_SEEDS),
            },
        },
        "runs": runs,
        "timeouts": timeouts,
        "outage": outage,
        "meta": {
            "wall_s": round(time.time() - t0, 1),
            "fast_wall_s": round(fast_wall, 1),
            "ns3_wall_s": round(ns3_wall, 1),
            "outage_wall_s": round(outage_wall, 1),
            "jobs": args.jobs,
        },
        "provenance": prov,
    }
    (out / "numbers.json").write_text(json.dumps(numbers, indent=1) + "\n")
    xcpr_report.write(numbers, out)
    return numbers


#: The timeout study's variants: (name, backend, minimum RTO in ms or None for the default).
VARIANTS: tuple[tuple[str, str, int | None], ...] = (
    ("fast", "fast", None),
    ("fast, ns-2's minimum RTO", "fast", NS2_MIN_RTO_MS),
    ("ns-3", "ns3", None),
)


def _timeout_runs(
    out: Path, fast_seeds: int, ns3_seeds: int, jobs: int
) -> tuple[dict[str, Any], float]:
    """One flow, 300-packet buffer, 20 s: the fast model (two timers) and ns-3; its figures."""
    result: dict[str, Any] = {}
    ns3_jobs = []
    for cca, loss, fig in TIMEOUT_CONFIGS:
        spec = paper_spec(1, cca, loss, NS3_SIM_TIME_S, TIMEOUT_BUFFER)
        key = _key(1, cca, loss, TIMEOUT_BUFFER)
        for name, backend, rto in VARIANTS:
            entry = {"cca": cca, "ack_loss": loss, "paper": fig, "variant": name, "seeds": []}
            result[f"{key}|{name}"] = entry
            if backend == "fast":
                entry["seeds"] = [summary(run(spec, s, rto)) for s in range(1, fast_seeds + 1)]
            else:
                ns3_jobs += [(f"{key}|{name}", spec, s) for s in range(1, ns3_seeds + 1)]
    t0 = time.time()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        series = list(ex.map(lambda j: run_ns3(j[1], j[2]), ns3_jobs))
    wall = time.time() - t0
    for (k, _spec, seed), ser in zip(ns3_jobs, series, strict=True):
        result[k]["seeds"].append(summary(ser))
        if seed == 1:
            e = result[k]
            title = (
                f"ns-3: {e['cca'].upper()}, 1 flow, {e['ack_loss']:.0%} ACK loss, 300-packet buffer"
            )
            _figure(
                out / f"ns3_{k.split('|')[0]}.png", ser, f"{title} (paper: {e['paper']}), seed 1"
            )
    result = {k: v for k, v in result.items() if v["seeds"]}
    return result, wall


def _outage_runs(out: Path, fast_seeds: int, ns3_seeds: int, jobs: int) -> dict[str, Any]:
    """The outage study on both backends; the figures of seed 1 under 30 % ACK loss."""
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="cellgym-outage-") as tmp:
        trace = Path(tmp) / "outage-200mbps.trace"
        write_outage_trace(trace)
        ns3_jobs = []
        for cca in ("xcp", "xcpr"):
            for loss in (0.0, 0.3):
                spec = outage_spec(cca, loss, trace)
                key = f"{cca}_loss{int(round(loss * 100))}"
                fast = []
                for s in range(1, fast_seeds + 1):
                    series = run(spec, s)
                    fast.append(outage_summary(series))
                    if s == 1 and loss > 0:
                        _outage_figure(out, "fast", cca, loss, series)
                result[f"{key}|fast"] = {"cca": cca, "ack_loss": loss, "seeds": fast}
                result[f"{key}|ns-3"] = {"cca": cca, "ack_loss": loss, "seeds": []}
                ns3_jobs += [(f"{key}|ns-3", spec, s) for s in range(1, ns3_seeds + 1)]
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
            series_list = list(ex.map(lambda j: run_ns3(j[1], j[2]), ns3_jobs))
    for (k, spec, seed), ser in zip(ns3_jobs, series_list, strict=True):
        result[k]["seeds"].append(outage_summary(ser))
        if seed == 1 and spec.ack_loss > 0:
            _outage_figure(out, "ns3", result[k]["cca"], spec.ack_loss, ser)
    return {k: v for k, v in result.items() if v["seeds"]}


def _outage_figure(
    out: Path, backend: str, cca: str, loss: float, series: dict[str, np.ndarray]
) -> None:
    name = "ns-3" if backend == "ns3" else "fast"
    title = (
        f"{name}: {cca.upper()}, 1 flow, {loss:.0%} ACK loss, a 1.5 s outage "
        f"(1,000-packet buffer), seed 1"
    )
    _figure(out / f"outage_{backend}_{cca}_loss{int(round(loss * 100))}.png", series, title, True)


if __name__ == "__main__":
    main()
