"""Soak test of the ns-3 backend: many episodes with random kills and stops (not a unit test).

    .venv/bin/python bench/soak.py --episodes 150 --max-minutes 20

Each episode picks one of several short scenarios, resets ``LteCellEnv(backend="ns3")`` and steps
it; at random it SIGKILLs the simulator mid-episode, or calls ``close()`` mid-episode, or runs the
episode to its end. It reports hangs (an episode over its timeout), orphans (``cellgym-lte``
processes alive after ``close()`` and after the run), leaked file descriptors (``/proc/self/fd``
before and after) and exceptions by type. Loopback traffic only; every loop is bounded.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import signal
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envs.lte_cell import LteCellEnv  # noqa: E402

SCENARIOS = {
    "single": {"sim_time_s": 0.5, "flows": [{"cca": "agent"}]},
    "vs_cubic": {"sim_time_s": 0.5, "flows": [{"cca": "agent"}, {"cca": "cubic"}]},
    "two_ues_random": {
        "sim_time_s": 0.5,
        "num_ues": 2,
        "channel": {
            "distances_m": [100.0, 250.0],
            "mobility": "random",
            "mobility_period_s": 0.1,
        },  # fmt: skip
        "flows": [{"cca": "agent", "ue": 0}, {"cca": "bbr", "ue": 1, "traffic": "video"}],
    },
    "short_rate": {
        "sim_time_s": 0.3,
        "step_ms": 10.0,
        "flows": [{"cca": "agent"}, {"cca": "xrc", "traffic": "short", "size_bytes": 100_000}],
    },  # fmt: skip
}
EPISODE_TIMEOUT_S = 60.0


def ns3_pids() -> set[int]:
    """Live (non-zombie) ``cellgym-lte`` children of this process (not other users' runs)."""
    pids = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes().split(b"\0")[0]
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        if cmd.endswith(b"cellgym-lte") and state != "Z" and ppid == os.getpid():
            pids.add(int(entry.name))
    return pids


def fd_count() -> int:
    return len(os.listdir("/proc/self/fd"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=1000)
    ap.add_argument("--max-minutes", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    before_pids = ns3_pids()
    # Warm-up episode so that lazily opened descriptors (imports, ZeroMQ) count in the baseline.
    env = LteCellEnv(SCENARIOS["single"], backend="ns3", timeout_s=EPISODE_TIMEOUT_S)
    env.reset(seed=0)
    env.close()
    fds_before = fd_count()
    t0 = time.monotonic()
    kinds: collections.Counter[str] = collections.Counter()
    exceptions: collections.Counter[str] = collections.Counter()
    hangs = orphans_after_close = steps = 0
    durations = []
    done_episodes = 0
    for ep in range(args.episodes):
        if time.monotonic() - t0 > args.max_minutes * 60:
            break
        name = rng.choice(sorted(SCENARIOS))
        kind = rng.choices(["full", "kill", "close"], weights=[2, 1, 1])[0]
        kinds[kind] += 1
        cut = rng.randint(1, 10)
        start = time.monotonic()
        env = LteCellEnv(SCENARIOS[name], backend="ns3", timeout_s=EPISODE_TIMEOUT_S,
                         action_mode=rng.choice(["cwnd", "rate"]))  # fmt: skip
        pid = None
        try:
            env.reset(seed=ep)
            pid = env._session.pid  # type: ignore[union-attr]
            for k in range(env.spec_scenario.num_steps + 1):
                if kind == "kill" and k == cut and pid is not None:
                    os.kill(pid, signal.SIGKILL)
                if kind == "close" and k == cut:
                    break
                _, _, terminated, _, _ = env.step(np.array([rng.uniform(-1, 1)], np.float32))
                steps += 1
                if terminated:
                    break
        except Exception as exc:  # noqa: BLE001 - counted by type
            if not (kind == "kill" and type(exc).__name__ == "SimulatorError"):
                if not exceptions:
                    traceback.print_exc()
                exceptions[type(exc).__name__] += 1
            else:
                exceptions["SimulatorError (expected, after kill)"] += 1
        finally:
            env.close()
        elapsed = time.monotonic() - start
        durations.append(elapsed)
        if elapsed > EPISODE_TIMEOUT_S:
            hangs += 1
        if pid is not None and pid in ns3_pids():
            orphans_after_close += 1
        done_episodes += 1
    time.sleep(0.5)
    orphans_after_run = len(ns3_pids() - before_pids)
    fds_after = fd_count()
    minutes = (time.monotonic() - t0) / 60
    print(f"episodes: {done_episodes} ({dict(kinds)}), steps: {steps}, minutes: {minutes:.1f}")
    print(f"episode seconds: median {np.median(durations):.2f}, max {max(durations):.2f}")
    print(f"hangs (episode > {EPISODE_TIMEOUT_S:g} s): {hangs}")
    print(f"orphans after close(): {orphans_after_close}; after the run: {orphans_after_run}")
    print(f"file descriptors: before {fds_before}, after {fds_after}, "
          f"leaked {fds_after - fds_before}")  # fmt: skip
    print(f"exceptions by type: {dict(exceptions) or 'none'}")
    bad = hangs or orphans_after_close or orphans_after_run or fds_after > fds_before
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
