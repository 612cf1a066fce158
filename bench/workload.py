"""What the wired last hop, RED and the Pareto workload cost scenarios that do not use them.

    .venv/bin/python bench/workload.py [--baseline 00ddd5b] [--seconds 2] [--rounds 3]

Scenarios without these features pay the wired-cell branch of the MAC (one per slot), the RED
branch of the bottleneck (one per packet reaching it), two more real columns per flow and the
``pareto`` receiver check (one per segment received). This times the bare kernel
(``FastCellBatch.step``, one thread, 1 and 64 cells) of such scenarios here and in the baseline
commit (``git archive`` into a temporary directory, its kernels compiled there first: minutes),
with ``bench/explicit_feedback.py``'s worker, and prints this tree / the baseline (medians of CPU
time over alternating rounds). For scale, this tree only: a CUBIC flow over a wired dumbbell
(unlimited last hop, 10 Mbit/s bottleneck) with drop-tail and with RED, and the section 5.1
workload (256 Pareto slots at 100 Mbit/s) in simulated seconds per CPU second.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from explicit_feedback import ROOT, export, side_by_side  # noqa: E402

OWN = r"""
import json, sys, time
sys.path.insert(0, {root!r})
import numpy as np
from evaluation.experiments.fct_paper import scenario
from cellgym.scenario import ScenarioSpec
from envs.fastsim import FastCellBatch, FastSimParams

which, seconds = {which!r}, {seconds}
if which == "fct":
    spec = scenario("cubic", 1e6)
else:
    spec = ScenarioSpec(name="b", sim_time_s=1e6, cell={{"type": "wired"}}, server_delay_ms=20.0,
                        bottleneck_mbps=10.0, bottleneck_buffer_pkts=100,
                        bottleneck_queue=which, red_min_th_pkts=20, red_max_th_pkts=60)
batch = FastCellBatch(FastSimParams.from_spec(spec), 1, parallel=False)
batch.reset(np.array([1]))
for _ in range(500):
    batch.step()
k, t0 = 0, time.process_time()
while time.process_time() - t0 < seconds:
    batch.step()
    k += 1
print(json.dumps(k * spec.step_ms / 1000.0 / (time.process_time() - t0)))
"""


def own(which: str, seconds: float) -> float:
    """Simulated seconds per CPU second of this tree's ``which`` scenario (a fresh process)."""
    code = OWN.format(root=str(ROOT), which=which, seconds=seconds)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--baseline", default="00ddd5b", help="git ref without these features")
    ap.add_argument("--seconds", type=float, default=2.0, help="CPU s per measurement")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (medians)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = export(args.baseline, Path(tmp))
        print(f"baseline {args.baseline} in {base} (its kernels compile on first use)")
        side_by_side(base, args.rounds, args.seconds)
    print("\nThis tree, simulated s per CPU s (1 cell, 20 ms steps; section 5.1: 10 ms steps):")
    for label, which in (
        ("1 CUBIC flow, wired dumbbell, drop-tail", "droptail"),
        ("1 CUBIC flow, wired dumbbell, RED", "red"),
        ("section 5.1 workload, CUBIC over RED, 256 slots", "fct"),
    ):
        r = statistics.median(own(which, args.seconds) for _ in range(args.rounds))
        print(f"| {label} | {r:,.1f} |")


if __name__ == "__main__":
    main()
