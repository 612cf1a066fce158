"""The XCP-r paper's experiments on the fast backend: XCP and XCP-r, ON/OFF UDP, ACK loss.

    .venv/bin/python -m evaluation.experiments.xcpr_paper --out docs/xcp-r [--seeds 10] [--jobs 2]

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
``cellgym.provenance`` over ``inputs.XCPR_PAPER``); ``report.md`` and the figures are written from
them and from seed 1's series.
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
from cellgym.provenance import markdown_line, record
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
#: Bootstrap resamples of the seeds' mean (95 % percentile intervals).
BOOTSTRAP = 2000


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
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="docs/xcp-r")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--sim-time-s", type=float, default=SIM_TIME_S)
    ap.add_argument("--ns3-seeds", type=int, default=NS3_SEEDS, help="0: no ns-3 runs")
    ap.add_argument("--jobs", type=int, default=1, help="ns-3 runs in parallel")
    args = ap.parse_args(argv)
    out = Path(args.out)
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
                "bootstrap": BOOTSTRAP,
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
    (out / "report.md").write_text(render(numbers))
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


def _outage_table(o: dict[str, Any]) -> str:
    """The outage study's table: one row per controller, ACK loss and backend."""
    rows = [OUTAGE_HEADER]
    for cca in ("xcp", "xcpr"):
        for loss in (0.0, 0.3):
            for backend in ("fast", "ns-3"):
                e = o.get(f"{cca}_loss{int(round(loss * 100))}|{backend}")
                if e is None:
                    continue
                back = [s["back_s"] for s in e["seeds"]]
                ok = [b for b in back if b is not None]
                never = len(back) - len(ok)
                back_txt = f"{np.mean(ok):.1f}" if ok else "-"
                one = [s["one_segment_s"] for s in e["seeds"]]
                util = [s["utilisation_after"] for s in e["seeds"]]
                lo, hi = _boot(util)
                rows.append(
                    f"| {cca.upper()} | {loss:.0%} | {backend} | {len(back)} | {back_txt} "
                    f"| {never} | {np.mean(one):.1f} | {np.mean(util):.3f} [{lo:.3f}, {hi:.3f}] |"
                )
    return "\n".join(rows)


def _boot(values: Sequence[float], other: Sequence[float] | None = None) -> tuple[float, float]:
    """The 95 % bootstrap interval of the seeds' mean (of the difference of two means)."""
    rng = np.random.default_rng(0)
    a = np.asarray(values, dtype=float)
    draws = a[rng.integers(0, len(a), (BOOTSTRAP, len(a)))].mean(axis=1)
    if other is not None:
        b = np.asarray(other, dtype=float)
        draws = draws - b[rng.integers(0, len(b), (BOOTSTRAP, len(b)))].mean(axis=1)
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return float(lo), float(hi)


def _per_seed(entry: dict[str, Any], field: str) -> list[float]:
    return [float(np.mean(s[field])) for s in entry["seeds"]]


def _timeout_table(t: dict[str, Any]) -> str:
    """The timeout study's table: one row per controller, ACK loss and variant."""
    rows = [TIMEOUT_HEADER]
    for cca, loss, fig in TIMEOUT_CONFIGS:
        for name, _, _ in VARIANTS:
            e = t.get(f"{_key(1, cca, loss, TIMEOUT_BUFFER)}|{name}")
            if e is None:
                continue
            one = _per_seed(e, "one_segment_s_per_flow")
            lo, hi = _boot(one)
            stall = _per_seed(e, "stall_s_per_flow")
            rows.append(
                f"| {cca.upper()} | {loss:.0%} | {fig} | {name} | {len(e['seeds'])} "
                f"| {np.mean(_per_seed(e, 'utilisation')):.3f} "
                f"| {np.mean(_per_seed(e, 'utilisation_halved')):.3f} "
                f"| {np.mean(stall):.1f} / {max(stall):.1f} "
                f"| {np.mean(one):.1f} [{lo:.1f}, {hi:.1f}] |"
            )
    return "\n".join(rows)


#: The timeout study's comparisons: (label, first configuration, second), each (cca, ACK loss).
COMPARISONS: tuple[tuple[str, tuple[str, float], tuple[str, float]], ...] = (
    ("XCP-r minus XCP, 30 % ACK loss (the paper: XCP-r far shorter)", ("xcpr", 0.3), ("xcp", 0.3)),
    ("XCP, 30 % ACK loss minus none (the paper: longer)", ("xcp", 0.3), ("xcp", 0.0)),
)


def _timeout_findings(t: dict[str, Any]) -> str:
    """The comparisons per variant: differences of the means and their 95 % intervals."""
    lines = []
    for label, (c1, l1), (c2, l2) in COMPARISONS:
        lines.append(f"- {label}:")
        for name, _, _ in VARIANTS:
            a = t.get(f"{_key(1, c1, l1, TIMEOUT_BUFFER)}|{name}")
            b = t.get(f"{_key(1, c2, l2, TIMEOUT_BUFFER)}|{name}")
            if a is None or b is None:
                continue
            x, y = _per_seed(a, "one_segment_s_per_flow"), _per_seed(b, "one_segment_s_per_flow")
            lo, hi = _boot(x, y)
            u, v = _per_seed(a, "utilisation_halved"), _per_seed(b, "utilisation_halved")
            ulo, uhi = _boot(u, v)
            lines.append(
                f"  - {name} ({len(x)} seeds): one-segment window {np.mean(x) - np.mean(y):+.1f} s "
                f"[{lo:+.1f}, {hi:+.1f}]; utilisation of the halved capacity "
                f"{np.mean(u) - np.mean(v):+.3f} [{ulo:+.3f}, {uhi:+.3f}]."
            )
    return "\n".join(lines)


def _mean(runs: dict[str, Any], key: str, field: str) -> float:
    vals = []
    for s in runs[key]["seeds"]:
        v = s[field]
        vals.append(float(np.mean(v)) if isinstance(v, list) else float(v))
    return float(np.mean(vals))


def _worst(runs: dict[str, Any], key: str, field: str) -> float:
    return float(max(max(s[field]) for s in runs[key]["seeds"]))


def render(numbers: dict[str, Any]) -> str:
    """report.md from numbers.json (the table, the figures and the comparison with the paper)."""
    runs = numbers["runs"]
    setup = numbers["setup"]
    tables = {}
    figs = {}
    for buffer in BUFFERS:
        rows = [HEADER]
        for n, cca, loss, fig in CONFIGS:
            k = _key(n, cca, loss, buffer)
            jain = f"{_mean(runs, k, 'jain_mean'):.3f}" if n > 1 else "-"
            mean, worst = _mean(runs, k, "stall_s_per_flow"), _worst(runs, k, "stall_s_per_flow")
            stall = f"{mean:.1f} / {worst:.1f}"
            rows.append(
                f"| {cca.upper()} | {n} | {loss:.0%} | {fig} | {_mean(runs, k, 'utilisation'):.3f}"
                f" | {_mean(runs, k, 'utilisation_halved'):.3f} | {stall}"
                f" | {_mean(runs, k, 'timeout_s_per_flow'):.1f} | {jain} | "
                f"{_mean(runs, k, 'drops'):.0f} |"
            )
        tables[buffer] = "\n".join(rows)
        figs[buffer] = "\n".join(
            f"![{cca} {n} {loss:.0%} {buffer}]({_key(n, cca, loss, buffer)}.png)"
            for n, cca, loss, _ in CONFIGS
        )
    tsetup = setup["timeouts"]
    timeouts = numbers["timeouts"]
    ns3_figs = "\n".join(
        f"![ns-3 {cca} {loss:.0%}](ns3_{_key(1, cca, loss, TIMEOUT_BUFFER)}.png)"
        for cca, loss, _ in TIMEOUT_CONFIGS
        if f"{_key(1, cca, loss, TIMEOUT_BUFFER)}|ns-3" in timeouts
    )
    return REPORT.format(
        seeds=setup["seeds"],
        sim=setup["sim_time_s"],
        wall=numbers["meta"]["wall_s"],
        ns3_wall=numbers["meta"]["ns3_wall_s"],
        t_sim=tsetup["sim_time_s"],
        t_fast_seeds=tsetup["fast_seeds"],
        t_ns3_seeds=tsetup["ns3_seeds"],
        ns2_rto=tsetup["ns2_min_rto_ms"],
        rto_s=tsetup["min_rto_ms"] / 1000.0,
        timeout_table=_timeout_table(timeouts),
        timeout_findings=_timeout_findings(timeouts),
        ns3_figs=ns3_figs,
        outage_table=_outage_table(numbers["outage"]),
        outage_figs="\n".join(
            f"![outage {b} {c}](outage_{b}_{c}_loss30.png)"
            for b in ("fast", "ns3")
            for c in ("xcp", "xcpr")
        ),
        o_fast_seeds=setup["outage"]["fast_seeds"],
        o_ns3_seeds=setup["outage"]["ns3_seeds"],
        o_wall=numbers["meta"]["outage_wall_s"],
        table1000=tables[1000],
        table300=tables[300],
        figs1000=figs[1000],
        figs300=figs[300],
        prov=markdown_line(numbers["provenance"]),
        findings=_findings(runs),
    )


def _findings(runs: dict[str, Any]) -> str:
    """One line per buffer and flow count: timeouts and utilisation, XCP beside XCP-r."""
    lines = []
    for buffer in BUFFERS:
        for n in (1, 3):

            def f(cca, loss, field, worst=False, n=n, buffer=buffer):
                k = _key(n, cca, loss, buffer)
                return _worst(runs, k, field) if worst else _mean(runs, k, field)

            lines.append(
                f"- {buffer}-packet buffer, {n} flow{'s' if n > 1 else ''}: with 30 % ACK loss XCP "
                f"spent {f('xcp', 0.3, 'timeout_s_per_flow'):.1f} s per flow in recovery after "
                f"timeouts (worst flow stalled {f('xcp', 0.3, 'stall_s_per_flow', True):.1f} s) "
                f"and used {f('xcp', 0.3, 'utilisation_halved'):.2f} of the halved capacity; "
                f"XCP-r {f('xcpr', 0.3, 'timeout_s_per_flow'):.1f} s (worst stall "
                f"{f('xcpr', 0.3, 'stall_s_per_flow', True):.1f} s), "
                f"{f('xcpr', 0.3, 'utilisation_halved'):.2f}. Without loss: XCP "
                f"{f('xcp', 0.0, 'timeout_s_per_flow'):.1f} s, "
                f"{f('xcp', 0.0, 'utilisation_halved'):.2f}; XCP-r "
                f"{f('xcpr', 0.0, 'timeout_s_per_flow'):.1f} s, "
                f"{f('xcpr', 0.0, 'utilisation_halved'):.2f}."
            )
    return "\n".join(lines)


OUTAGE_HEADER = (
    "| controller | ACK loss | backend | seeds | back to 80 %, s (mean of those back) "
    "| not back by 12 s | one-segment window, s | goodput / link after [95 %] |\n"
    "|---|---|---|---|---|---|---|---|"
)
TIMEOUT_HEADER = (
    "| controller | ACK loss | paper | backend | seeds | utilisation | utilisation, halved "
    "| stalled, s | one-segment window, s [95 %] |\n|---|---|---|---|---|---|---|---|---|"
)
HEADER = (
    "| controller | flows | ACK loss | paper | utilisation | utilisation, halved | stalled, s "
    "| timeout, s | Jain | drops |\n|---|---|---|---|---|---|---|---|---|---|"
)
REPORT = """# XCP-r reproduction (fast backend and ns-3)

The XCP-r paper (../shared/papers/xcp-r-receiver-side-xcp.txt; XCP-r in CellGym: docs/xcp-r.md),
its Figs. 3-6 and 9-10: one and three flows over a 200 Mbit/s bottleneck (1,000-packet buffer,
RTT about 100 ms) shared with ON/OFF UDP traffic, without and with 30 % ACK loss on the reverse
path. Made by `evaluation/experiments/xcpr_paper.py` ({seeds} seeds of {sim:g} s each, {wall:g} s
of wall time); the figures show seed 1.

Set-up: a 200 Mbit/s wired bottleneck (the XCP router) in front of an NR cell of 100 MHz (FR1,
one UE at 50 m, about 340 Mbit/s alone: never the bottleneck). Ten UDP sources of 10 Mbit/s,
switching together: the capacity left to the flows is 200 Mbit/s until 5 s, 100 from 5 to 15 s,
200 from 15 to 30 s, 100 from 30 to 40 s, then 200. The paper's topology has 17 UDP sources whose
exact schedule it does not give; its text names a halving at 5 s and a second event at 30 s.

## Results

Utilisation: the flows' goodput over the capacity the UDP sources leave (from 1 s; "halved": in
the 100 Mbit/s phases). Stalled: seconds a flow's goodput is below 10 % of its fair share of that
capacity (mean over flows and seeds / worst flow). Timeout: seconds a flow spends in loss recovery
after a retransmission timeout (mean per flow). Jain: fairness over 1 s windows from 2 s (mean).
Drops: packets the bottleneck's buffer dropped (flows' and UDP's).

### The paper's 1,000-packet buffer (drop-tail)

{table1000}

### A 300-packet buffer (standing in for the paper's RED, which drops before the slots are full)

{table300}

### The timeouts: one flow, 300-packet buffer, on ns-3 and with ns-2's timer

The configurations where timeouts happen, {t_sim:g} s each (the halving at 5 s and its return at
15 s): the fast model ({t_fast_seeds} seeds) with its minimum retransmission timeout of
{rto_s:g} s (ns-3's), the fast model with ns-2's {ns2_rto} ms (the paper's simulator), and ns-3
with real packets and TCP ({t_ns3_seeds} seeds, {ns3_wall:g} s of wall time). "One-segment
window": seconds a flow ends a 100 ms step with a window of one segment (from 1 s), where a
retransmission timeout leaves it until an ACK raises the window; mean over seeds with its 95 %
bootstrap interval.

{timeout_table}

Differences of the means, with their 95 % bootstrap intervals over the seeds:

{timeout_findings}

{ns3_figs}

### The paper's mechanism alone: an outage

The timeouts above come with XCP's own instability. To test the mechanism the paper credits on
its own, the 200 Mbit/s link (a Mahimahi trace) stops from 5 to 6.5 s, longer than the 1 s
minimum RTO, with the paper's 1,000-packet buffer and no UDP sources: the sender times out while
its data waits in the buffer, and the ACKs of that data arrive after the timeout. One flow, 12 s,
{o_fast_seeds} seeds on the fast backend and {o_ns3_seeds} on ns-3 ({o_wall:g} s of wall time).
"Back": the first 100 ms step at 80 % of the link after the outage.

{outage_table}

{outage_figs}

### Figures (seed 1): the 300-packet buffer, then the 1,000-packet one

{figs300}

{figs1000}

## The paper's findings beside ours

Means over the seeds:

{findings}


The paper's findings, and where ours agree:

- **XCP without ACK loss (Figs. 3, 4)**: the paper's XCP follows the bandwidth variations; at the
  halving (5 s) a burst of drops causes a timeout that is quickly recovered. Ours follows the
  capacity too. With the 1,000-packet drop-tail buffer the halving never causes a timeout: the
  queue peaks near the buffer (about 60 ms of the link, less than the RTT XCP needs to react) and
  the drops are repaired by fast recovery. With the 300-packet buffer the single flow times out,
  as the paper's does, and recovers more slowly than the paper's (the fast model's timer backs
  off), while three flows (smaller windows each) do not time out at all.
- **XCP with 30 % ACK loss (Figs. 5, 6)**: the paper's XCP stalls after the halving: after the
  timeout the one-segment window needs the one ACK that carries the large feedback, and when it is
  lost the sender waits for the next retransmission timeout; with three flows one flow stays
  inactive for about 4 s. In the 45 s runs above one flow with the 300-packet buffer spends
  longer in recovery after timeouts with ACK loss than without (the means), but the timeout
  study puts that difference within the seeds' spread on each backend (the second comparison),
  and with ns-2's timer ACK loss even raises XCP's utilisation of the halved capacity: losing
  part of the positive feedback damps XCP's overshoot after a timeout. So the stall of Fig. 5 is
  not reproduced beyond the noise either. Three flows do not time out here, so the three-flow
  stall of Fig. 6 does not appear.
- **XCP-r (Sec. IV-A, Figs. 9, 10)**: without loss the paper's XCP-r behaves as XCP, and so does
  ours (the rows agree within the seeds' spread). With 30 % ACK loss the paper's XCP-r has a much
  shorter inactivity after the timeout. **Ours does not reproduce this, on either backend**: in
  the timeout study XCP-r spends no less time at a one-segment window than XCP and uses no more
  of the halved capacity, on the fast model with either timer and on ns-3 (the first
  comparison; its intervals say how far the seeds allow a conclusion). What the study rules out
  and what it shows:
  - *Not the timer alone*: with ns-2's 200 ms minimum the fast model's XCP-r is not better
    either.
  - *Not the fast model's simplifications alone*: ns-3, with per-packet ACK loss, real TCP
    recovery and per-segment receiver updates, points the same way.
  - *XCP itself is unstable here*: without any ACK loss one flow ends steps at a one-segment
    window and uses well under the capacity left, on both backends. The timeouts come from
    XCP's overshoot into a buffer of about 17 % of the path's BDP (no slow start; after a
    timeout the router's per-packet feedback, proportional to 1 / H_cwnd, gives the first
    packets most of an interval's increase) and from fast recoveries whose retransmissions are
    lost, not from lost feedback. The paper's contrast needs an XCP that is stable without ACK
    loss (its Fig. 3), which this regime does not give us.
  - *The mechanism needs ACKs after the timeout*: the paper credits the receiver's unchanged
    window, carried by ACKs of data sent before the timeout that arrive after it. Here a
    timeout ends a failed fast recovery, at least one minimum RTO after it began, so few such
    ACKs are still on their way; and the window the receiver summed meanwhile includes the
    router's feedback to the recovery's few packets, which can be far more than the path holds.
    The outage study isolates the mechanism:
  - *On the fast backend the outage reproduces the paper* (its Figs. 5 and 9): XCP-r is back
    within a few hundred ms with or without ACK loss, as the ACKs of the buffered data bring
    the receiver's window; XCP climbs back from one segment on the feedback those ACKs carry,
    and under 30 % ACK loss some runs are not back by the end.
  - *On ns-3 it does not*: XCP is back in about a second with or without ACK loss, and XCP-r
    is slower. Its window is restored as the buffered data's ACKs arrive, and then nothing is
    acknowledged until a second timeout (seed 1's figure, without ACK loss the same). Our
    reading, from the window series: ns-3's TCP is still in its loss state after the timeout,
    where it resends everything not yet acknowledged, so the restored window goes out as one
    burst and the retransmission of the hole is lost in it. The fast model resends only what
    it knows lost (docs/xcp-r.md), so its restored window sends new data. The paper's ns-2 TCP
    also resent from the first unacknowledged segment; how its XCP-r avoided the burst, the
    paper does not say.

## Differences from the paper

- **Cell in the path**: the receiver sits behind an NR cell that is faster than the bottleneck;
  its scheduling adds a few ms of delay and jitter that the paper's wired dumbbell does not have.
- **UDP schedule**: fixed, synchronous periods chosen to match the events the text names; the
  paper's figures (not in the text we have) may differ in the number and timing of changes.
- **No RED**: the paper's routers run RED with the XCP paper's settings; here the bottleneck is
  drop-tail (XCP's queue stays short except right after a capacity drop).
- **The fast model's ACKs**: ACKs of a 1 ms tick arrive as one bunch; a bunch is lost only when
  every ACK in it is (envs/fastsim/ack_loss.py), and XCP loses the lost ACKs' share of the
  bunch's feedback. At 200 Mbit/s a tick carries several ACKs, so whole-tick losses are rare
  except when the window is small (after a timeout), which is where the paper's effect lives.
- **The XCP-r receiver reads the router's feedback by time** (envs/fastsim/xcpr_receiver.py), not
  from a header field carried with the packet; the sums are the same.
- **Start**: XCP has no slow start; its first feedback takes the window from 10 segments towards
  the 1,700-segment BDP within a few RTTs, which overflows the 300-packet buffer: the losses and
  oscillation of the first seconds in those figures. The paper's flows start before its plots'
  interesting part; the summaries count from 1 s.
- **Timeout**: the fast model's retransmission timer (minimum 1 s, as ns-3's default) and its
  loss recovery; the paper's XCP ran on ns-2's TCP (minimum 200 ms). The timeout study above
  runs the fast model with both.

{prov}
"""


if __name__ == "__main__":
    main()
