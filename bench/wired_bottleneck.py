"""Bare-kernel steps per second with and without a wired bottleneck, side by side.

    .venv/bin/python bench/wired_bottleneck.py [--seconds 2] [--rounds 3]

One UE at 100 m, 50 RBs, one bulk CUBIC flow, 20 ms steps (``FastCellBatch.step``, one thread),
1 and 64 cells: no bottleneck; a 100 Mbit/s bottleneck, above the cell's ~35 Mbit/s, so the same
traffic as without one (the cost of the bottleneck's code); a 10 Mbit/s one (100 packets) and a
trace-driven one (a 6-18 Mbit/s random walk written as a Mahimahi trace), which carry less traffic
than the cell and so step faster. Rounds alternate them; each figure is the median over rounds
of CPU time (``time.process_time``: the machine is shared), with its ratio to no bottleneck.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from cellgym.scenario import FlowSpec, ScenarioSpec  # noqa: E402
from cellgym.traces import generate, write_mahimahi  # noqa: E402
from envs.fastsim import FastCellBatch, FastSimParams  # noqa: E402

LONG_S = 1e6


def kernel_rate(spec: ScenarioSpec, cells: int, seconds: float) -> float:
    """Cell steps per second of the bare kernel."""
    batch = FastCellBatch(FastSimParams.from_spec(spec), cells, parallel=False)
    batch.reset(np.arange(cells) + 1)
    for _ in range(50):  # past the flow's start and slow start
        batch.step()
    n, t0 = 0, time.process_time()
    while True:
        batch.step()
        n += 1
        if n % 8 == 0 and time.process_time() - t0 >= seconds:
            break
    return n * cells / (time.process_time() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=2.0, help="wall s per measurement")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (medians)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        walk = generate("random_walk", {"min_mbps": 6, "max_mbps": 18, "start_mbps": 12}, 0.001, 1)
        trace = write_mahimahi(walk, Path(tmp) / "walk.down")
        base = ScenarioSpec(name="bench", sim_time_s=LONG_S, flows=[FlowSpec(cca="cubic")])
        specs = {
            "no bottleneck": base,
            "100 Mbit/s bottleneck": base.replace(bottleneck_mbps=100.0),
            "10 Mbit/s bottleneck": base.replace(bottleneck_mbps=10.0),
            "trace bottleneck": base.replace(bottleneck_trace=str(trace)),
        }
        for cells in (1, 64):
            rates: dict[str, list[float]] = {k: [] for k in specs}
            for _ in range(args.rounds):
                for name, spec in specs.items():
                    rates[name].append(kernel_rate(spec, cells, args.seconds))
            ref = statistics.median(rates["no bottleneck"])
            for name, r in rates.items():
                med = statistics.median(r)
                print(f"{cells:>3} cells  {name:<22} {med:>10,.0f} steps/s  x{med / ref:.2f}")


if __name__ == "__main__":
    main()
