"""XCP/RCP evaluation paper, section 5.1: flow completion time against flow length (fast backend).

A 100 Mbit/s dumbbell (``cell.type: wired`` of unlimited rate behind a 100 Mbit/s bottleneck),
RTT 100 ms for every flow, a Pareto flow stream (``traffic: pareto``: shape 1.2, mean 25 packets,
cut-off 40,000 packets, a flow every 3.33 ms on average: about 90 % load) on 256 flow slots;
CUBIC over RED (limit 1,000 packets, thresholds 250 / 750, max_p 0.1), XCP (alpha 0.4, beta
0.226) and RCP (alpha 0.1, beta 1.0) over an unlimited queue. The flows finished after the
warm-up are binned by length (equal widths on a log scale); per bin the mean FCT and its 5 % and
95 % quantiles, beside processor sharing and the minimum FCT.

    python -m evaluation.experiments.fct_paper --out docs/xcp-rcp-fct          # run + report
    python -m evaluation.experiments.fct_paper --out docs/xcp-rcp-fct --render # report only

Writes ``numbers.json`` (the bins, per-controller totals, timings and provenance:
``cellgym.provenance`` over ``inputs.FCT_PAPER``), ``fct.png`` and ``report.md`` under ``--out``
(``fct_report``).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cellgym.paths import REPO_ROOT
from cellgym.provenance import record
from cellgym.scenario import MAX_FLOWS, ScenarioSpec
from cellgym.workload import (
    ParetoSizes,
    minimum_fct_s,
    offered_load,
    processor_sharing_fct_s,
)
from evaluation.experiments import inputs
from evaluation.workers import map_jobs

log = logging.getLogger(__name__)

#: The paper's set-up (section 5.1).
RATE_MBPS = 100.0
RTT_MS = 100.0
SHAPE, MEAN_PKTS, CUTOFF_PKTS, IAT_MS = 1.2, 25.0, 40_000.0, 3.33
PAPER_SIM_S, PAPER_WARMUP_S = 3700.0, 100.0
#: The controllers, their queue and their knobs.
CONTROLLERS: dict[str, dict[str, Any]] = {
    "cubic": {
        "queue": dict(
            bottleneck_queue="red",
            bottleneck_buffer_pkts=1000,
            red_min_th_pkts=250.0,
            red_max_th_pkts=750.0,
            red_max_p=0.1,
        ),
        "knobs": {},
    },
    "xcp": {"queue": dict(bottleneck_buffer_pkts=1_000_000), "knobs": {}},
    "rcp": {
        "queue": dict(bottleneck_buffer_pkts=1_000_000),
        "knobs": {"explicit": {"rcp_alpha": 0.1, "rcp_beta": 1.0}},
    },
}
#: Bin edges in packets: 5 per decade from 10^0.6 (the distribution's lower bound is ~4.2).
BIN_EDGES = 10.0 ** np.arange(0.6, 4.61 + 1e-9, 0.2)
COMMAND = "python -m evaluation.experiments.fct_paper"


def scenario(cca: str, sim_time_s: float, slots: int = MAX_FLOWS) -> ScenarioSpec:
    """The dumbbell with one Pareto stream of ``cca`` on ``slots`` flow slots."""
    flow = {
        "cca": cca,
        "traffic": "pareto",
        "pareto_shape": SHAPE,
        "pareto_mean_pkts": MEAN_PKTS,
        "pareto_cutoff_pkts": CUTOFF_PKTS,
        "pareto_iat_ms": IAT_MS,
    }
    return ScenarioSpec(
        name=f"fct_{cca}",
        sim_time_s=sim_time_s,
        step_ms=10,
        cell={"type": "wired"},
        server_delay_ms=RTT_MS / 2.0,
        bottleneck_mbps=RATE_MBPS,
        flows=[flow] * slots,
        **CONTROLLERS[cca]["queue"],
    )


def run_one(cca: str, sim_time_s: float, seed: int, slots: int) -> dict[str, Any]:
    """Run one controller; the finished flows and the run's totals."""
    from envs.fastsim import FastCellBatch, FastSimParams

    spec = scenario(cca, sim_time_s, slots)
    sim = FastCellBatch(FastSimParams.from_spec(spec, **CONTROLLERS[cca]["knobs"]), 1)
    sim.reset(np.array([seed]))
    sim.step()  # compiles
    t0 = time.perf_counter()
    active, queue = [], []
    for _ in range(spec.num_steps - 1):
        sim.step()
        active.append(int(sim.workload.active()[0]))
        queue.append(float(sim.bottleneck()["queue_pkts"][0]))
    wall = time.perf_counter() - t0
    wl = sim.workload
    rec = wl.finished()
    bn = sim.bottleneck()
    return {
        "size_pkts": rec["size_pkts"].tolist(),
        "arrival_ms": rec["arrival_ms"].tolist(),
        "fct_s": rec["fct_s"].tolist(),
        "arrivals": int(wl.arrivals[0]),
        "waited": int(wl.waited[0]),
        "unfinished": int(wl.arrivals[0] - len(rec)),
        "active_mean": float(np.mean(active)),
        "active_max": int(np.max(active)),
        "queue_mean_pkts": float(np.mean(queue)),
        "queue_max_pkts": float(np.max(queue)),
        "drops": int(bn["drops"][0]),
        "sent_pkts": int(bn["sent_pkts"][0]),
        "wall_s": wall,
    }


def bins(size: np.ndarray, fct: np.ndarray, load: float) -> list[dict[str, float]]:
    """Per length bin: flows, mean length, mean FCT, 5 % / 95 % quantiles, PS and minimum."""
    rows = []
    for lo, hi in zip(BIN_EDGES[:-1], BIN_EDGES[1:], strict=True):
        m = (size >= lo) & (size < hi)
        n = int(m.sum())
        if n == 0:
            continue
        mean_len = float(size[m].mean())
        f = fct[m]
        rows.append(
            {
                "lo_pkts": float(lo),
                "hi_pkts": float(hi),
                "n": n,
                "len_pkts": mean_len,
                "fct_mean_s": float(f.mean()),
                "fct_se_s": float(f.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan"),
                "fct_p5_s": float(np.quantile(f, 0.05)),
                "fct_p95_s": float(np.quantile(f, 0.95)),
                "ps_s": float(
                    processor_sharing_fct_s(np.array([mean_len]), RTT_MS / 1e3, RATE_MBPS, load)[0]
                ),
                "min_s": float(minimum_fct_s(np.array([mean_len]), RTT_MS / 1e3, RATE_MBPS)[0]),
            }
        )
    return rows


def summarise(raw: dict[str, Any], warmup_s: float, sim_time_s: float, load: float) -> dict:
    """The bins and totals of one controller's run (flows that arrived after the warm-up)."""
    size = np.asarray(raw["size_pkts"], dtype=np.float64)
    fct = np.asarray(raw["fct_s"])
    keep = np.asarray(raw["arrival_ms"]) >= warmup_s * 1000.0
    size, fct = size[keep], fct[keep]
    ps = processor_sharing_fct_s(size, RTT_MS / 1e3, RATE_MBPS, load)
    out = {k: v for k, v in raw.items() if k not in ("size_pkts", "arrival_ms", "fct_s")}
    out.update(
        flows=int(size.size),
        fct_mean_s=float(fct.mean()),
        fct_over_ps_mean=float(np.mean(fct / ps)),
        short_fct_mean_s=float(fct[size <= 25].mean()),
        long_fct_mean_s=float(fct[size >= 1000].mean()) if (size >= 1000).any() else None,
        long_flows=int((size >= 1000).sum()),
        utilisation=raw["sent_pkts"] * 1500 * 8 / (RATE_MBPS * 1e6 * sim_time_s),
        mean_size_pkts=float(size.mean()),
        bins=bins(size, fct, load),
        sim_per_wall=sim_time_s / raw["wall_s"],
    )
    return out


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", default="docs/xcp-rcp-fct", help="output directory")
    ap.add_argument("--sim-time-s", type=float, default=400.0, help="simulated seconds per run")
    ap.add_argument("--warmup-s", type=float, default=40.0, help="ignore flows arriving earlier")
    ap.add_argument("--seed", type=int, default=1, help="the cells' seed")
    ap.add_argument("--slots", type=int, default=MAX_FLOWS, help="flow slots of the stream")
    ap.add_argument("--controllers", default="cubic,xcp,rcp", help="comma list")
    ap.add_argument("--jobs", type=int, default=1, help="runs in parallel")
    ap.add_argument("--render", action="store_true", help="rewrite the report from numbers.json")
    return ap.parse_args(argv)


def _run_item(item: tuple[str, float, int, int]) -> dict[str, Any]:
    """``run_one`` of one ``(cca, sim_time_s, seed, slots)``: a job of the one pool."""
    return run_one(*item)


def _item_name(item: tuple[str, float, int, int]) -> str:
    return f"fct {item[0]}"


def run(args: argparse.Namespace, argv: Sequence[str]) -> dict[str, Any]:
    """Run every controller; return ``numbers``."""
    prov = record(COMMAND, list(argv), inputs.FCT_PAPER, REPO_ROOT)
    ccas = [c for c in args.controllers.split(",") if c]
    load = offered_load(MEAN_PKTS, IAT_MS, RATE_MBPS)
    t0 = time.perf_counter()
    items = [(c, args.sim_time_s, args.seed, args.slots) for c in ccas]
    results = map_jobs(_run_item, items, args.jobs, name=_item_name)
    raws = dict(zip(ccas, results, strict=True))
    wall = time.perf_counter() - t0
    sizes = ParetoSizes(SHAPE, MEAN_PKTS, CUTOFF_PKTS)
    return {
        "setup": {
            "rate_mbps": RATE_MBPS,
            "rtt_ms": RTT_MS,
            "shape": SHAPE,
            "mean_pkts": MEAN_PKTS,
            "cutoff_pkts": CUTOFF_PKTS,
            "pareto_low_pkts": sizes.low,
            "iat_ms": IAT_MS,
            "offered_load": load,
            "sim_time_s": args.sim_time_s,
            "warmup_s": args.warmup_s,
            "seed": args.seed,
            "slots": args.slots,
            "paper_sim_s": PAPER_SIM_S,
            "paper_warmup_s": PAPER_WARMUP_S,
            "red": CONTROLLERS["cubic"]["queue"],
            "rcp": CONTROLLERS["rcp"]["knobs"]["explicit"],
        },
        "controllers": {c: summarise(raws[c], args.warmup_s, args.sim_time_s, load) for c in ccas},
        "meta": {"wall_s": wall, "jobs": args.jobs},
        "provenance": prov,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run (or ``--render``), then write numbers.json, the figure and the report."""
    from evaluation.experiments import fct_report

    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(args.out)
    if args.render:
        numbers = json.loads((out / "numbers.json").read_text())
    else:
        out.mkdir(parents=True, exist_ok=True)
        numbers = run(args, argv)
        (out / "numbers.json").write_text(json.dumps(numbers, indent=1) + "\n")
    fct_report.write(numbers, out)
    return numbers


if __name__ == "__main__":
    main()
