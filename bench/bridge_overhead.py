"""What the ns3-gym bridge costs: wall and CPU time of a step with and without it.

    .venv/bin/python bench/bridge_overhead.py [--sim-time 10] [--repeats 5]

For the same ns-3 scenario (one UE, 50 RBs, 20 ms steps) it times three ways of running it:

- ``alone``: the scenario program with ``--openGymPort=0`` (the same per-step observation work,
  no bridge);
- ``native``: one bulk CUBIC flow stepped from Python through the bridge
  (``evaluation.rollouts.run_native``: no agent flow, so the bridge answers each step before
  decoding it and the simulator runs on while Python stores the step);
- ``lock``: the same native run in strict lock step (each step decoded before it is answered,
  as every step was before ``reply_ahead``), for reference;
- ``agent``: one agent flow whose window and pacing rate Python sends at every step (a constant
  action through ``envs.ns3_session.Ns3Session``: the lock-step path of every learned policy),
  against the same scenario alone with ``--fixedAction`` (the same action applied in C++).

Runs are interleaved so that machine noise hits them alike; ratios are medians over repeats of
runs made side by side. Besides wall time it reports where the time goes per process: the
simulator's CPU time (``RUSAGE_CHILDREN``) with and without the bridge, and the Python side's
CPU time, per step.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import envs  # noqa: E402,F401
from cellgym.paths import ns3_program  # noqa: E402
from cellgym.scenario import FlowSpec, ScenarioSpec  # noqa: E402
from envs.ns3_session import Ns3Session  # noqa: E402
from evaluation.rollouts import run_native  # noqa: E402


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _self_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _measure(run: Callable[[], None]) -> tuple[float, float, float]:
    """Wall time, simulator CPU time and this process's CPU time of one run."""
    c0, p0, t0 = _children_cpu(), _self_cpu(), time.perf_counter()
    run()
    return time.perf_counter() - t0, _children_cpu() - c0, _self_cpu() - p0


#: The agent case's constant action: a 64 kB window and 30 Mbit/s pacing.
ACTION = (64_000.0, 30.0)


def _alone(spec: ScenarioSpec) -> None:
    """The program alone; its agent flows (if any) get ``ACTION`` at every step."""
    fixed = [f"--fixedAction={ACTION[0]:g},{ACTION[1]:g}"] if spec.agent_flows else []
    subprocess.run(
        [str(ns3_program()), *spec.to_ns3_args(seed=1), "--openGymPort=0", *fixed],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def _step_to_end(spec: ScenarioSpec, actions: np.ndarray, reply_ahead: bool = True) -> None:
    """Step ``spec`` on ns-3 with the same ``[A, 2]`` actions at every step to its end."""
    session = Ns3Session(spec, seed=1, reply_ahead=reply_ahead)
    try:
        raw = session.start()
        while not raw.done:
            raw = session.step(actions)
    finally:
        session.close()


def main() -> None:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sim-time", type=float, default=10.0, help="simulated seconds per run")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    native = ScenarioSpec(name="bench", sim_time_s=args.sim_time, flows=[FlowSpec(cca="cubic")])
    agent = ScenarioSpec(name="bench", sim_time_s=args.sim_time, flows=[FlowSpec(cca="agent")])
    steps = native.num_steps
    cases: dict[str, tuple[Callable[[], None], Callable[[], None]]] = {
        "native": (lambda: _alone(native), lambda: run_native(native, "cubic", seed=1)),
        "lock": (
            lambda: _alone(native),
            lambda: _step_to_end(native, np.zeros((0, 2)), reply_ahead=False),
        ),
        "agent": (lambda: _alone(agent), lambda: _step_to_end(agent, np.array([ACTION]))),
    }
    results: dict[str, list[tuple[tuple[float, float, float], tuple[float, float, float]]]] = {
        name: [] for name in cases
    }
    for r in range(args.repeats):
        for name, (alone, bridged) in cases.items():
            a, b = _measure(alone), _measure(bridged)
            results[name].append((a, b))
            print(
                f"repeat {r} {name:6s}: alone {steps / a[0]:6.1f} steps/s | bridge "
                f"{steps / b[0]:6.1f} steps/s | wall ratio {b[0] / a[0]:.3f} | simulator CPU "
                f"ratio {b[1] / a[1]:.3f} | Python CPU {1e3 * b[2] / steps:.3f} ms/step"
            )

    print(f"\nmedians over {args.repeats} repeats ({steps} steps of 20 ms per run):")
    for name, rows in results.items():
        wall = statistics.median(b[0] / a[0] for a, b in rows)
        sim_cpu = statistics.median(b[1] / a[1] for a, b in rows)
        extra_sim = statistics.median((b[1] - a[1]) / steps for a, b in rows)
        py = statistics.median(b[2] / steps for a, b in rows)
        print(
            f"{name:6s}: bridged/alone wall-time ratio {wall:.3f} (bridge cost "
            f"{100 * (wall - 1):+.1f}%, goal < 5%); simulator CPU ratio {sim_cpu:.3f} "
            f"({1e3 * extra_sim:+.3f} ms/step); Python CPU {1e3 * py:.3f} ms/step"
        )

    env = gym.make("CellGym/LteSingleFlow-v0", scenario={"name": "reset", "sim_time_s": 60.0})
    resets = []
    for seed in range(5):
        t0 = time.perf_counter()
        env.reset(seed=seed)
        resets.append(time.perf_counter() - t0)
    env.close()
    print(
        "reset (process start to first observation): "
        f"median {1000 * statistics.median(resets):.0f} ms"
    )


if __name__ == "__main__":
    main()
