"""Fast-backend kernel speed with a capacity trace against the distance model, in one run.

    .venv/bin/python bench/trace_replay.py [--seconds 3] [--rounds 3] [--batch 1 64]

The same cell (one UE, 50 RBs, one agent bulk flow, 20 ms steps, ``FastCellBatch.step``, one
thread) twice: ``channel.source: distance`` (100 m) and ``channel.source: synthetic`` with the
``random_walk`` generator (a new rate every 100 ms, 5-70 Mbit/s, seeded per cell, so each cell has
its own row of the capacity array). Rounds alternate between the two; the figures are medians.
Prints TTIs per second of each and the ratio trace / distance (the issue's target: the trace no
more than 10 % slower, ratio >= 0.9). NR: the same with ``--nr`` (20 MHz at 30 kHz).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench.fast_backend import LONG_S, timed  # noqa: E402
from cellgym.scenario import ScenarioSpec  # noqa: E402
from envs.fastsim import FastCellBatch, FastSimParams  # noqa: E402

TRACE_CHANNEL = {
    "source": "synthetic",
    "generator": "random_walk",
    "params": {"start_mbps": 30.0, "min_mbps": 5.0, "max_mbps": 70.0, "duration_s": 60.0},
}


def spec_of(trace: bool, nr: bool) -> ScenarioSpec:
    """The benchmark cell, on the distance model or on the trace."""
    channel = dict(TRACE_CHANNEL) if trace else {"distances_m": [100.0]}
    cell = {"type": "nr", "numerology": 1, "bandwidth_mhz": 20.0} if nr else {}
    return ScenarioSpec.from_config(
        {
            "sim_time_s": LONG_S,
            "num_ues": 1,
            "channel": channel,
            "cell": cell,
            "flows": [{"ue": 0, "cca": "agent", "traffic": "bulk"}],
        }
    )


def kernel_rate(trace: bool, nr: bool, batch: int, seconds: float) -> float:
    """Cell-TTIs (1 ms ticks) per second of the bare kernel."""
    params = FastSimParams.from_spec(spec_of(trace, nr))
    cells = FastCellBatch(params, batch, parallel=False)
    cells.reset(np.arange(1, batch + 1))
    actions = np.zeros((batch, 1, 2))
    actions[:, :, 0] = 200_000.0  # a window that keeps the cell saturated
    return timed(lambda: cells.step(actions), seconds, batch * cells.step_ms)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 64])
    ap.add_argument("--nr", action="store_true", help="an NR cell (20 MHz, 30 kHz)")
    args = ap.parse_args()
    cell = "NR 20 MHz mu=1" if args.nr else "LTE 50 RB"
    print(f"{cell}, kernel TTIs/s (1 ms ticks), median of {args.rounds} alternating rounds")
    print(f"{'cells':>6} {'distance':>12} {'trace':>12} {'trace/distance':>15}")
    for batch in args.batch:
        dist, trace = [], []
        for _ in range(args.rounds):
            dist.append(kernel_rate(False, args.nr, batch, args.seconds))
            trace.append(kernel_rate(True, args.nr, batch, args.seconds))
        d, t = statistics.median(dist), statistics.median(trace)
        print(f"{batch:>6} {d:>12.0f} {t:>12.0f} {t / d:>15.3f}")


if __name__ == "__main__":
    main()
