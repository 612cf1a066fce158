"""Fast-backend kernel speed with a capacity trace against the distance model, in one run.

    .venv/bin/python bench/trace_replay.py [--seconds 3] [--rounds 3] [--batch 1 64]

The same cell (one UE, 50 RBs, one agent bulk flow, 20 ms steps, ``FastCellBatch.step``, one
thread) twice: ``channel.source: distance`` (100 m) and ``channel.source: synthetic`` with the
``steps`` generator at one level, the distance cell's own mean capacity (measured first over 1 s),
seeded per cell (``trace_seed`` null: each cell has its own row of the capacity array). So the
traffic is the same and the difference is the capacity source (and, on NR, HARQ: the distance
cell's 10 % first-transmission BLER, off on a trace). Rounds alternate between the two; the
figures are medians. Prints TTIs per second of each and the ratio trace / distance (the issue's
target: the trace no more than 10 % slower, ratio >= 0.9). NR: ``--nr`` (20 MHz at 30 kHz).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench.fast_backend import LONG_S, timed  # noqa: E402
from cellgym.fields import UE  # noqa: E402
from cellgym.scenario import ScenarioSpec  # noqa: E402
from envs.fastsim import FastCellBatch, FastSimParams  # noqa: E402


def trace_channel(level_mbps: float) -> dict:
    """A constant capacity of ``level_mbps`` from the ``steps`` generator, drawn per cell."""
    return {
        "source": "synthetic",
        "generator": "steps",
        "params": {"levels_mbps": [level_mbps], "hold_s": 1.0, "duration_s": 60.0},
    }


def spec_of(level_mbps: float | None, nr: bool) -> ScenarioSpec:
    """The benchmark cell: the distance model (``level_mbps`` None) or a trace at that level."""
    channel = {"distances_m": [100.0]} if level_mbps is None else trace_channel(level_mbps)
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


def distance_capacity_mbps(nr: bool) -> float:
    """The distance cell's mean ``UE capacity_mbps`` over its first second."""
    cells = FastCellBatch(FastSimParams.from_spec(spec_of(None, nr)), 1, parallel=False)
    cells.reset(np.array([1]))
    caps = []
    for _ in range(50):
        cells.step(np.array([[[200_000.0, 0.0]]]))
        caps.append(float(cells.ues[0, 0, UE["capacity_mbps"]]))
    return float(np.mean(caps))


def kernel_rate(level_mbps: float | None, nr: bool, batch: int, seconds: float) -> float:
    """Cell-TTIs (1 ms ticks) per second of the bare kernel."""
    params = FastSimParams.from_spec(spec_of(level_mbps, nr))
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
    level = distance_capacity_mbps(args.nr)
    print(f"{cell}, trace at the distance cell's {level:.2f} Mbit/s")
    print(f"kernel TTIs/s (1 ms ticks), median of {args.rounds} alternating rounds")
    print(f"{'cells':>6} {'distance':>12} {'trace':>12} {'trace/distance':>15}")
    for batch in args.batch:
        dist, trace = [], []
        for _ in range(args.rounds):
            dist.append(kernel_rate(None, args.nr, batch, args.seconds))
            trace.append(kernel_rate(level, args.nr, batch, args.seconds))
        d, t = statistics.median(dist), statistics.median(trace)
        print(f"{batch:>6} {d:>12.0f} {t:>12.0f} {t / d:>15.3f}")


if __name__ == "__main__":
    main()
