"""Wall time of the Zeus command's whole table on the fast backend (issue: "in minutes").

    .venv/bin/python bench/zeus_table.py [--jobs 2] [--seeds 3] [--duration 60] [--stand-in]

The issue's matrix: 6 controllers (NewReno, CUBIC, BBR, XRC, the oracle and the optimum) x the 4
shared traces x 4 buffer regimes (1, 5, 10 BDP, inf) x 3 seeds, 60 s each, plus Fig. 9's BBR-vs-
CUBIC sweep, written to a temporary folder with every table and figure. Per cell the command
runs each controller solo, twice and beside CUBIC (CUBIC solo and twice: 14 simulations), so the
matrix is 48 cells x 14 + 12 x 7 Fig. 9 runs = 756 simulations.

Without the shared traces, or with ``--stand-in``, the same number of runs goes on the
distance-channel cell ``single_flow``: one scenario with 4 x the seeds. A smaller ``--seeds`` /
``--duration`` is extrapolated to the full matrix by simulated seconds per wall second (printed
beside the measured time).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cellgym.vocab import SpecError  # noqa: E402
from evaluation.experiments import zeus  # noqa: E402

FULL_SEEDS = 3
FULL_DURATION_S = 60.0


def traces_run_on_fast() -> bool:
    """True when the fast backend replays the shared traces (wired, and the files present)."""
    try:
        for trace in zeus.DEFAULT_TRACES:
            spec = zeus.trace_scenario(trace, ["cubic"], "1", 2.0, 1)
            zeus.preflight(spec, "fast", trace)
    except SpecError as exc:
        print(f"shared traces do not run on the fast backend: {exc}")
        return False
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=FULL_SEEDS)
    ap.add_argument("--duration", type=float, default=FULL_DURATION_S)
    ap.add_argument("--stand-in", action="store_true", help="distance channel, not the traces")
    ap.add_argument("--out", default="", help="keep the outputs here (default: a temp folder)")
    args = ap.parse_args()

    stand_in = args.stand_in or not traces_run_on_fast()
    traces = ["single_flow"] if stand_in else list(zeus.DEFAULT_TRACES)
    seeds = args.seeds * (len(zeus.DEFAULT_TRACES) if stand_in else 1)
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or tmp
        argv = [
            "--backend",
            "fast",
            "--traces",
            ",".join(traces),
            "--seeds",
            str(seeds),
            "--duration",
            f"{args.duration:g}",
            "--jobs",
            str(args.jobs),
            "--out",
            out,
        ]
        t0 = time.perf_counter()
        numbers = zeus.main(argv)
        wall = time.perf_counter() - t0
    t = numbers["meta"]["timings"]["fast"]
    full_runs = t["simulations"] * FULL_SEEDS / args.seeds
    full_sim_s = full_runs * FULL_DURATION_S
    rate = t["simulated_s"] / wall
    print()
    print(f"matrix: {', '.join(numbers['matrix']['fast']['controllers'])} x {', '.join(traces)}")
    print(f"        x buffers {numbers['matrix']['fast']['buffers']} x {seeds} seeds")
    print(f"simulations: {t['simulations']} ({t['failed']} failed), {args.duration:g} s each")
    print(f"wall: {wall:.1f} s in all ({t['wall_s']:.1f} s simulating, {args.jobs} jobs)")
    print(f"simulated seconds per wall second: {rate:.0f}")
    print(
        f"full matrix ({full_runs:.0f} simulations x {FULL_DURATION_S:g} s): "
        f"{full_sim_s / rate / 60:.1f} min"
        + (" (measured)" if args.seeds == FULL_SEEDS and args.duration == FULL_DURATION_S else "")
    )


if __name__ == "__main__":
    main()
