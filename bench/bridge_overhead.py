"""What the ns3-gym bridge costs: env steps/s with and without it on the same scenario.

    .venv/bin/python bench/bridge_overhead.py [--sim-time 10] [--repeats 3]

For the same ns-3 scenario (one UE, 50 RBs, one bulk CUBIC flow, 20 ms steps) it times:
- the scenario program alone (``--openGymPort=0``: the same per-step observation work, no bridge);
- the same program stepped from Python through the bridge (``evaluation.rollouts.run_native``);
- the environment's ``reset()`` (process start to first observation).
Runs are interleaved so that machine noise hits both alike; the ratio is reported per repeat.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium as gym  # noqa: E402

import envs  # noqa: E402,F401
from cellgym.paths import ns3_program  # noqa: E402
from cellgym.scenario import FlowSpec, ScenarioSpec  # noqa: E402
from evaluation.rollouts import run_native  # noqa: E402


def main() -> None:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sim-time", type=float, default=10.0, help="simulated seconds per run")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    spec = ScenarioSpec(name="bench", sim_time_s=args.sim_time, flows=[FlowSpec(cca="cubic")])
    steps = spec.num_steps
    program = ns3_program()
    rows = []
    for r in range(args.repeats):
        t0 = time.perf_counter()
        subprocess.run(
            [str(program), *spec.to_ns3_args(seed=1), "--openGymPort=0"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        alone = time.perf_counter() - t0
        t0 = time.perf_counter()
        run_native(spec, "cubic", seed=1)
        bridged = time.perf_counter() - t0
        rows.append((alone, bridged))
        print(
            f"repeat {r}: no bridge {steps / alone:8.1f} steps/s | bridge {steps / bridged:8.1f} "
            f"steps/s | bridge cost {100 * (bridged / alone - 1):+.1f}% "
            f"({args.sim_time / alone:.2f} vs {args.sim_time / bridged:.2f} sim-s per wall-s)"
        )

    env = gym.make("CellGym/LteSingleFlow-v0", scenario={"name": "reset", "sim_time_s": 60.0})
    resets = []
    for seed in range(5):
        t0 = time.perf_counter()
        env.reset(seed=seed)
        resets.append(time.perf_counter() - t0)
    env.close()

    ratio = statistics.median(b / a for a, b in rows)
    print(
        f"\nmedian bridged/alone wall-time ratio {ratio:.3f} "
        f"(bridge cost {100 * (ratio - 1):+.1f}%, goal < 5%)"
    )
    print(
        "reset (process start to first observation): "
        f"median {1000 * statistics.median(resets):.0f} ms"
    )


if __name__ == "__main__":
    main()
