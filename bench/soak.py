"""Soak test of the ns-3 backend: many episodes with random kills and stops (not a unit test).

    .venv/bin/python bench/soak.py --episodes 150 --max-minutes 20

Each episode picks one of several short scenarios, resets ``LteCellEnv(backend="ns3")`` and steps
it; at random it SIGKILLs the simulator mid-episode, or calls ``close()`` mid-episode, or runs the
episode to its end. It reports hangs (an episode over its timeout), orphans (``cellgym-lte``
processes alive after ``close()`` and after the run), leaked file descriptors (``/proc/self/fd``
before and after) and exceptions by type. Loopback traffic only; every loop is bounded.

    .venv/bin/python bench/soak.py --episodes 0 --entry-points 8

``--entry-points N`` also kills the entry points ``evaluate.py`` (a fast-backend evaluation with a
worker pool) and ``train.py`` (a short PPO run with checkpoints) N times in all, each with SIGTERM
or SIGKILL at a random moment, then reruns the evaluation or resumes the training to its end. It
reports orphans (processes of the killed tree alive after it), lost or duplicated steps (runs
missing from or doubled in the results, steps short of each run's length; PPO updates missing
from or doubled in the resumed training's log) and leaked temporary files (what is left in the
run's own ``TMPDIR``).
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cellgym.scenario import load_scenario  # noqa: E402
from envs.lte_cell import LteCellEnv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

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


def env_soak(args: argparse.Namespace) -> int:
    """The environment soak: ``--episodes`` episodes with random kills and stops."""
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


# --------------------------------------------------------------------------------------------
# Entry points killed at random moments (--entry-points)
# --------------------------------------------------------------------------------------------

#: The evaluation each evaluate.py trial runs (fast backend, two workers).
EVAL_CONTROLLERS = ("xrc_policy", "explicit_rate")
EVAL_SCENARIO = "vs_cubic"
EVAL_SEEDS = (1, 2)
EVAL_SIM_TIME_S = 2.0
#: The training of each train.py trial: PPO, 4 envs x 256 steps a rollout, 8 rollouts.
TRAIN_ENVS, TRAIN_N_STEPS, TRAIN_STEPS = 4, 256, 8192
#: The signals a trial sends (what ``timeout``, Slurm's ``scancel`` and container stops send).
SIGNALS = (signal.SIGTERM, signal.SIGKILL)
#: Caches a run keeps in its TMPDIR by design, killed or not (torch's compiled kernels): not leaks.
TMP_CACHES = ("torchinductor_",)
#: How long after its start a trial's entry point is killed, at most (seconds; uniform).
MAX_KILL_DELAY_S = {"evaluate": 30.0, "train": 60.0}


def entry_point_command(name: str, work: Path) -> list[str]:
    """The command line of trial ``name`` (``evaluate`` or ``train``) writing under ``work``."""
    if name == "evaluate":
        return [
            sys.executable, "evaluate.py", f"controllers=[{','.join(EVAL_CONTROLLERS)}]",
            f"scenarios=[{EVAL_SCENARIO}]", f"seeds=[{','.join(map(str, EVAL_SEEDS))}]",
            "backend=fast", "jobs=2", f"sim_time_s={EVAL_SIM_TIME_S}",
            f"out_dir={work / 'eval'}", f"hydra.run.dir={work / 'hydra'}",
        ]  # fmt: skip
    return [
        sys.executable, "train.py", f"hydra.run.dir={work / 'run'}", "backend=fast",
        f"backend.n_envs={TRAIN_ENVS}", "scenario.sim_time_s=1", "agent.net_arch=[8]",
        "eval.seeds=[7]", "eval_backend=fast", "eval_seeds=[7]", "eval_baselines=[xrc_policy]",
        f"total_timesteps={TRAIN_STEPS}", f"agent.kwargs.n_steps={TRAIN_N_STEPS}",
        "checkpoint_freq=2048", "eval.freq=2048", "progress_bar=false",
    ]  # fmt: skip


def _tree(root: psutil.Process) -> set[tuple[int, float]]:
    """(pid, start time) of ``root`` and its descendants (the start time guards against reuse)."""
    out = set()
    for p in [root, *root.children(recursive=True)]:
        try:
            out.add((p.pid, p.create_time()))
        except psutil.NoSuchProcess:
            pass
    return out


def _alive(procs: set[tuple[int, float]]) -> list[psutil.Process]:
    alive = []
    for pid, started in procs:
        try:
            p = psutil.Process(pid)
            if p.create_time() == started and p.status() != psutil.STATUS_ZOMBIE:
                alive.append(p)
        except psutil.NoSuchProcess:
            pass
    return alive


def _csv_rows(path: Path) -> list[dict[str, str]]:
    import csv

    if not path.is_file():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def lost_and_duplicated_steps(name: str, work: Path) -> tuple[int, int]:
    """Steps missing from and doubled in the finished output of trial ``name``.

    evaluate.py: every controller x seed once, each ``steps`` long (a missing or failed run loses
    all its steps). train.py: ``TRAIN_STEPS / (TRAIN_ENVS x TRAIN_N_STEPS)`` PPO updates logged
    once each (``progress.csv``), counted in steps of one rollout.
    """
    if name == "evaluate":
        expected = load_scenario(EVAL_SCENARIO, sim_time_s=EVAL_SIM_TIME_S).num_steps
        rows = _csv_rows(work / "eval" / "results.csv")
        keys = [(r["controller"], int(r["seed"])) for r in rows]
        steps = {
            (r["controller"], int(r["seed"])): int(r["steps"]) if r["status"] == "ok" else 0
            for r in rows
        }
        duplicated = (len(keys) - len(set(keys))) * expected
        lost = sum(
            max(0, expected - steps.get((c, seed), 0))
            for c in EVAL_CONTROLLERS
            for seed in EVAL_SEEDS
        )
        return lost, duplicated
    rollout = TRAIN_ENVS * TRAIN_N_STEPS
    updates = [
        int(float(r["time/total_timesteps"]))
        for r in _csv_rows(work / "run" / "progress.csv")
        if r.get("time/iterations")
    ]
    duplicated = (len(updates) - len(set(updates))) * rollout
    lost = max(0, TRAIN_STEPS // rollout - len(set(updates))) * rollout
    return lost, duplicated


def kill_trial(name: str, sig: signal.Signals, delay_s: float) -> dict[str, object]:
    """Start entry point ``name``, send ``sig`` after ``delay_s``, then finish its work."""
    with tempfile.TemporaryDirectory(prefix="cellgym-soak-") as d:
        work = Path(d)
        tmp = work / "tmp"
        tmp.mkdir()
        env = {**os.environ, "TMPDIR": str(tmp), "WANDB_MODE": "disabled"}
        cmd = entry_point_command(name, work)
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        root = psutil.Process(proc.pid)
        seen: set[tuple[int, float]] = set()
        t0 = time.monotonic()
        while proc.poll() is None and time.monotonic() - t0 < delay_s:
            seen |= _tree(root)
            time.sleep(0.05)
        killed = proc.poll() is None
        if killed:
            seen |= _tree(root)
            proc.send_signal(sig)
        try:
            proc.wait(timeout=60)
            hang = False
        except subprocess.TimeoutExpired:
            hang = True
        time.sleep(2.0)  # what a torn-down tree may take to exit
        orphans = [p for p in _alive(seen) if p.pid != proc.pid]
        for p in orphans:  # do not let them pile up over the soak
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        if hang:
            proc.kill()
            proc.wait()
        leaked = sorted(p.name for p in tmp.iterdir() if not p.name.startswith(TMP_CACHES))
        # Finish the work: the evaluation again, or the training resumed from its checkpoint.
        resumable = name == "train" and (work / "run" / "checkpoints" / "latest.json").is_file()
        again = [sys.executable, "train.py", f"resume={work / 'run'}"] if resumable else cmd
        if name == "train" and not resumable:
            shutil.rmtree(work / "run", ignore_errors=True)  # killed before its first checkpoint
        done = subprocess.run(
            again, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800
        )
        lost, duplicated = lost_and_duplicated_steps(name, work)
        leaked += [
            f"after the rerun: {p.name}"
            for p in tmp.iterdir()
            if p.name not in leaked and not p.name.startswith(TMP_CACHES)
        ]
        return {
            "entry": name,
            "signal": sig.name,
            "delay_s": round(delay_s, 2),
            "killed": killed,
            "resumed": resumable,
            "hang": hang,
            "orphans": [" ".join(p.cmdline())[:100] for p in orphans if _safe(p)],
            "n_orphans": len(orphans),
            "rerun_rc": done.returncode,
            "rerun_error": done.stderr.strip().splitlines()[-1:] if done.returncode else [],
            "lost_steps": lost,
            "duplicated_steps": duplicated,
            "leaked": leaked,
        }


def _safe(p: psutil.Process) -> bool:
    try:
        p.cmdline()
        return True
    except psutil.Error:
        return False


def entry_point_soak(args: argparse.Namespace) -> int:
    """``--entry-points`` trials: evaluate.py and train.py killed and finished (module doc)."""
    rng = random.Random(args.seed)
    trials = []
    for k in range(args.entry_points):
        name = args.entry_point or rng.choice(["evaluate", "train"])
        sig = signal.Signals[args.signal] if args.signal else rng.choice(list(SIGNALS))
        delay = rng.uniform(0.5, MAX_KILL_DELAY_S[name])
        trial = kill_trial(name, sig, delay)
        trials.append(trial)
        print(f"trial {k}: {trial}", flush=True)
    orphans = sum(t["n_orphans"] for t in trials)  # type: ignore[misc]
    lost = sum(t["lost_steps"] for t in trials)  # type: ignore[misc]
    duplicated = sum(t["duplicated_steps"] for t in trials)  # type: ignore[misc]
    leaked = sum(len(t["leaked"]) for t in trials)  # type: ignore[arg-type]
    failed = sum(t["rerun_rc"] != 0 for t in trials)
    hangs = sum(bool(t["hang"]) for t in trials)
    kinds = collections.Counter(f"{t['entry']}/{t['signal']}" for t in trials)
    print(f"entry-point trials: {len(trials)} ({dict(kinds)})")
    print(f"orphans: {orphans}; lost steps: {lost}; duplicated steps: {duplicated}")
    print(f"leaked temporary files: {leaked}; hangs: {hangs}; failed reruns: {failed}")
    return 1 if orphans or lost or duplicated or leaked or failed or hangs else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=1000, help="environment episodes (0: none)")
    ap.add_argument("--max-minutes", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--entry-points", type=int, default=0,
        help="kill evaluate.py / train.py this many times in all (module doc)",
    )  # fmt: skip
    ap.add_argument("--entry-point", choices=["evaluate", "train"], help="only this one")
    ap.add_argument("--signal", choices=[s.name for s in SIGNALS], help="only this signal")
    args = ap.parse_args()
    rc = env_soak(args) if args.episodes > 0 else 0
    if args.entry_points > 0:
        rc = max(rc, entry_point_soak(args))
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
