"""Training throughput of the main job: SB3's PPO path against ``learners.ppo``, in one run.

    .venv/bin/python bench/train_throughput.py [--steps 200000] [--cells-scale 32] [--n-steps 32]
        [--minibatches 4] [--n-epochs 4] [--threads 1] [--update-threads 0] [--parallel]
        [--overlap] [--skip-sb3] [--skip-same-config] [--skip-fast] [--whole-trace-resets]

Every path trains the main job (``configs/experiment/default.yaml``: the mixture of six
scenarios x two uplink models, ``derived`` features, ``VecNormalize`` of observations and
rewards, ``MlpPolicy`` [64, 64] with ``log_std_init=-1``, gamma 0.98) for about ``--steps``
environment steps (whole rollouts) from the same seed, and prints env-steps/s (counting every
cell's step) and where the time went:

- (a) today's path: ``agents.factory.make_vec_env`` + ``make_model`` + ``model.learn``, exactly as
  ``workflows/train.py`` builds it (36 cells, n_steps 128, minibatches of 512, 10 epochs), with no
  callbacks or periodic evaluation;
- (b) ``learners.ppo.PPO`` on ``learners.cells.FastCells``: the same mixture, ``--cells-scale``
  times as many cells in the same proportions, ``--n-steps`` per rollout, the rollout split into
  ``--minibatches`` minibatches, ``--n-epochs`` epochs;
- (c) ``learners.ppo.PPO`` with (a)'s configuration (36 cells, 128, 512, 10 epochs): what the
  implementation alone gives, apart from the configuration;
- (d) (b) with each batch's cells stepped on two threads (``FastCells(parallel=True)``,
  ``envs.fastsim.threads``): the same algorithm and arithmetic as (b);
- (e) (d) with ``PPOConfig(overlap=True)``: the next rollout collected on a second thread during
  the update, by the policy before it (one update of policy lag: another algorithm;
  ``bench/overlap_learning.py`` measures its learning); the same cells, rollouts, minibatches
  and epochs;
- (b0), with ``--whole-trace-resets``: (b) with the resets of a seed-dependent trace cell as they
  were before ``cellgym.traces.channel_head``: the whole series synthesized (an Irish 5G cell:
  all 3,498 s of its trace) on one thread, then cut to the episode's slots (the same values).

The first reset of every cell (``FastVecEnv.reset`` of all cells at the start) is timed apart
("first reset s") and a throughput without it is printed too: it costs once per run, but a short
run of many cells pays it in full. Time split after it (seconds per million env steps, and shares
of the wall time): ``kernel`` the fast simulator's compiled step (``EnvStepper.step``: action,
20 TTIs, observation, reward terms); ``resets`` the resets of cells whose episode ended
(``FastVecEnv._reset_cells``: their run's draws and, for a seed-dependent trace channel, its
capacity series); ``env Python`` the rest of stepping the environments
(SB3: ``FastVecEnv.step``'s own Python, the adapter's info dicts, ``ConcatVecEnv``,
``VecMonitor``, ``FeatureVecEnv``, ``VecNormalize``; learner: ``FastVecEnv.step``'s Python, the
loop over batches, the features); ``inference`` the rollout's forward passes (SB3:
``policy.forward``); ``rollout other`` the rest of the rollout (SB3: tensor conversion,
``RolloutBuffer.add``, callbacks, GAE; learner: normalisation, buffers, GAE); ``update`` the
gradient steps. Torch runs ``--threads`` intra-op threads in every path (``workflows/train.py``
uses 1).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from configs.schema import TrainConfig, compose_train, validate_train  # noqa: E402
from learners.cells import FastCells  # noqa: E402
from learners.run import make_learner  # noqa: E402

PARTS = ("kernel", "resets", "env Python", "inference", "rollout other", "update")


class Timer:
    """Seconds spent inside the methods it wraps (nested or re-entrant calls counted once)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._depth = 0

    def wrap(self, obj: Any, name: str) -> None:
        """Replace ``obj.name`` by a timed call of it."""
        fn: Callable[..., Any] = getattr(obj, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            self._depth += 1
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self.seconds += time.perf_counter() - t0

        setattr(obj, name, timed)


class ThreadCPU:
    """CPU seconds inside the method it wraps: the calling thread's (``time.thread_time``) or,
    with ``clock=time.process_time``, the process's (for a call that nothing overlaps)."""

    def __init__(self, clock: Callable[[], float] = time.thread_time) -> None:
        self.seconds = 0.0
        self.clock = clock

    def wrap(self, obj: Any, name: str) -> None:
        """Replace ``obj.name`` by a call of it whose thread's CPU time is counted."""
        fn: Callable[..., Any] = getattr(obj, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            c0 = self.clock()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += self.clock() - c0

        setattr(obj, name, counted)


def time_sim(venvs: list[Any]) -> tuple[Timer, Timer]:
    """Timers of the simulator in ``FastVecEnv``s: its compiled step and its cell resets."""
    kernel, resets = Timer(), Timer()
    for venv in venvs:
        kernel.wrap(venv._stepper, "step")
        resets.wrap(venv, "_reset_cells")
    return kernel, resets


def time_first_reset(obj: Any, name: str, inner: tuple[Timer, ...]) -> Timer:
    """A timer of ``obj.name`` (the first reset of every cell) that the ``inner`` timers skip."""
    timer = Timer()
    fn: Callable[..., Any] = getattr(obj, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        before = [t.seconds for t in inner]
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            timer.seconds += time.perf_counter() - t0
            for t, b in zip(inner, before, strict=True):
                t.seconds = b

    setattr(obj, name, timed)
    return timer


@contextlib.contextmanager
def whole_trace_resets() -> Iterator[None]:
    """Within the block, trace cells reset as before ``channel_head``: whole series, serially."""
    from cellgym.traces import channel_series
    from envs.fastsim import trace_capacity as tc

    def head(self: Any, seed: int) -> np.ndarray:
        series = channel_series(self._channel, self._slot_s, int(seed))
        return series.bytes[: self._episode_slots]

    saved = tc.TraceCapacity.head, tc.RESET_THREADS
    tc.TraceCapacity.head, tc.RESET_THREADS = head, 1  # type: ignore[method-assign]
    try:
        yield
    finally:
        tc.TraceCapacity.head, tc.RESET_THREADS = saved  # type: ignore[method-assign]


def main_job_config(run_dir: str) -> TrainConfig:
    """The main job's typed config (``experiment=default``)."""
    return validate_train(compose_train(["experiment=default", f"run_dir={run_dir}"]))


def warm(cfg: TrainConfig) -> None:
    """Load the compiled kernels and torch's autograd once, before anything is timed."""
    cells = FastCells.from_config(cfg, seed=0)
    cells.reset()
    cells.step(np.zeros((cells.num_envs, 1), dtype=np.float32))
    net = torch.nn.Linear(4, 1)
    net(torch.zeros(2, 4)).sum().backward()


def run_sb3(cfg: TrainConfig, steps: int, seed: int) -> dict[str, Any]:
    """(a): SB3's PPO as ``workflows/train.py`` builds it, timed in parts."""
    from agents.factory import make_model, make_vec_env

    venv = make_vec_env(cfg, seed)
    model = make_model(cfg, venv, seed)
    timers = {k: Timer() for k in ("env", "inference", "rollout", "update")}
    timers["env"].wrap(venv, "step")
    concat = venv.venv.venv.venv  # VecNormalize > FeatureVecEnv > VecMonitor > ConcatVecEnv
    timers["kernel"], timers["resets"] = time_sim([adapter.venv for adapter in concat.venvs])
    first = time_first_reset(venv, "reset", (timers["kernel"], timers["resets"]))
    first_cpu = ThreadCPU(time.process_time)
    first_cpu.wrap(venv, "reset")
    timers["inference"].wrap(model.policy, "forward")
    timers["rollout"].wrap(model, "collect_rollouts")
    timers["update"].wrap(model, "train")
    update_cpu = ThreadCPU()
    update_cpu.wrap(model, "train")
    t0, c0 = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=steps)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    s = {k: t.seconds for k, t in timers.items()}
    parts = {
        "kernel": s["kernel"],
        "resets": s["resets"],
        "env Python": s["env"] - s["kernel"] - s["resets"],
        "inference": s["inference"],
        "rollout other": s["rollout"] - s["env"] - s["inference"],
        "update": s["update"],
    }
    kw = cfg.agent.kwargs
    venv.close()
    return {
        "path": "(a) SB3 PPO, train.py",
        "cells": venv.num_envs,
        "n_steps": kw["n_steps"],
        "minibatch": kw["batch_size"],
        "epochs": kw["n_epochs"],
        "steps": model.num_timesteps,
        "wall": wall,
        "cpu": cpu,
        "first_reset": first.seconds,
        "first_reset_cpu": first_cpu.seconds,
        "update_cpu": update_cpu.seconds,
        "parts": parts,
    }


def run_learner(
    cfg: TrainConfig,
    steps: int,
    seed: int,
    label: str,
    cells_scale: int,
    n_steps: int,
    batch_size: int,
    n_epochs: int,
    parallel: bool | None = None,
    update_threads: int = 0,
    overlap: bool = False,
) -> dict[str, Any]:
    """(b) or (c): ``learners.ppo.PPO`` on the main job's cells, timed in parts."""
    cells, agent = make_learner(
        cfg,
        seed,
        cells_scale,
        parallel=parallel,
        n_steps=n_steps,
        batch_size=batch_size,
        n_epochs=n_epochs,
        update_threads=update_threads,
        overlap=overlap,
    )
    kernel, resets = time_sim(cells.venvs)
    first = time_first_reset(cells, "reset", (kernel, resets))
    first_cpu = ThreadCPU(time.process_time)  # the first rollout's reset: nothing overlaps it
    first_cpu.wrap(cells, "reset")
    update_cpu = ThreadCPU()
    update_cpu.wrap(agent, "update")
    t0, c0 = time.perf_counter(), time.process_time()
    agent.learn(steps)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    t = agent.timings
    parts = {
        "kernel": kernel.seconds,
        "resets": resets.seconds,
        "env Python": t["env"] - first.seconds - kernel.seconds - resets.seconds,
        "inference": t["inference"],
        "rollout other": t["rollout_other"],
        "update": t["update"],
    }
    cells.close()
    return {
        "path": label,
        "cells": cells.num_envs,
        "n_steps": n_steps,
        "minibatch": batch_size,
        "epochs": n_epochs,
        "steps": agent.num_timesteps,
        "wall": wall,
        "cpu": cpu,
        "first_reset": first.seconds,
        "first_reset_cpu": first_cpu.seconds,
        "update_cpu": update_cpu.seconds,
        "parts": parts,
    }


def report(rows: list[dict[str, Any]]) -> None:
    """Print the throughput table, the time split and the ratios."""
    print(
        "| path | cells | n_steps | minibatch | epochs | env steps | wall s | CPU s "
        "| first reset s | env-steps/s | per CPU s | env-steps/s after the first reset |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        rate = r["steps"] / r["wall"]
        steady = r["steps"] / (r["wall"] - r["first_reset"])
        print(
            f"| {r['path']} | {r['cells']} | {r['n_steps']} | {r['minibatch']:,} | {r['epochs']} "
            f"| {r['steps']:,} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['first_reset']:.1f} "
            f"| {rate:,.0f} | {r['steps'] / r['cpu']:,.0f} | {steady:,.0f} |"
        )
    print()
    print("Time split: seconds per million env steps (share of the wall time)")
    print("| path | " + " | ".join(PARTS) + " | unaccounted |")
    print("|---|" + "---|" * (len(PARTS) + 1))
    for r in rows:
        per = 1e6 / r["steps"]
        cells = [
            f"{r['parts'][k] * per:.2f} ({100 * r['parts'][k] / r['wall']:.0f} %)" for k in PARTS
        ]
        rest = r["wall"] - r["first_reset"] - sum(r["parts"].values())
        cells.append(f"{rest * per:.2f} ({100 * rest / r['wall']:.0f} %)")
        print(f"| {r['path']} | " + " | ".join(cells) + " |")
    print()
    print(
        "CPU after the first reset, microseconds per env step (update: time.thread_time of the "
        "update's thread; rest: the process's CPU time less the update's and the first "
        "reset's); the bound on two free cores: (d) the update, then half the rest; (e) the "
        "larger of the update and half the total; else all of it on one core"
    )
    print("| path | update | rest | total | bound on 2 free cores, env-steps/s |")
    print("|---|---|---|---|---|")
    for r in rows:
        per = 1e6 / r["steps"]
        upd = r["update_cpu"] * per
        rest = (r["cpu"] - r["update_cpu"] - r["first_reset_cpu"]) * per
        total = upd + rest
        if r["path"].startswith("(e)"):  # update and rollout at once
            bound = 1e6 / max(upd, total / 2)
        elif r["path"].startswith("(d)"):  # in turn, the rollout's CPU on two threads at best
            bound = 1e6 / (upd + rest / 2)
        else:
            bound = 1e6 / total
        print(f"| {r['path']} | {upd:.2f} | {rest:.2f} | {total:.2f} | {bound:,.0f} |")
    base = next((r for r in rows if r["path"].startswith("(a)")), None)
    if base is not None:
        print()
        base_rate = base["steps"] / base["wall"]
        for r in rows:
            if r is not base:
                cpu_ratio = r["steps"] / r["cpu"] / (base["steps"] / base["cpu"])
                print(
                    f"{r['path']}: x{r['steps'] / r['wall'] / base_rate:.1f} the steps/s of (a), "
                    f"x{cpu_ratio:.1f} its steps per CPU second"
                )


def report_pair(rows: list[dict[str, Any]], a: str, b: str) -> None:
    """Print path ``b``'s throughput as a multiple of path ``a``'s (both with the first reset)."""
    ra = next((r for r in rows if r["path"].startswith(a)), None)
    rb = next((r for r in rows if r["path"].startswith(b)), None)
    if ra is None or rb is None:
        return
    whole = rb["steps"] / rb["wall"] / (ra["steps"] / ra["wall"])
    steady = (rb["steps"] / (rb["wall"] - rb["first_reset"])) / (
        ra["steps"] / (ra["wall"] - ra["first_reset"])
    )
    print(f"{rb['path']}: x{whole:.2f} the steps/s of {a}, x{steady:.2f} after the first reset")


def parse_args() -> argparse.Namespace:
    """The command line's options (the module's docstring lists them)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000, help="env steps of each path")
    parser.add_argument("--cells-scale", type=int, default=32, help="(b): cells x the main job's")
    parser.add_argument("--n-steps", type=int, default=32, help="(b): steps per cell per rollout")
    parser.add_argument("--minibatches", type=int, default=4, help="(b): minibatches per epoch")
    parser.add_argument("--n-epochs", type=int, default=4, help="(b): epochs per update")
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument(
        "--update-threads", type=int, default=0, help="(b): torch threads in updates (0: --threads)"
    )
    parser.add_argument(
        "--parallel",
        action="store_true",
        help="(b): numba threads over each batch's cells (compiles the threaded kernels first)",
    )
    parser.add_argument(
        "--overlap",
        action="store_true",
        help="(b): collect the next rollout during the update (PPOConfig.overlap)",
    )
    parser.add_argument(
        "--skip-fast",
        action="store_true",
        help="leave out (d) and (e): (b) with cells on two threads, then with overlap",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-sb3", action="store_true", help="leave out (a)")
    parser.add_argument("--skip-same-config", action="store_true", help="leave out (c)")
    parser.add_argument(
        "--whole-trace-resets",
        action="store_true",
        help="add (b0): (b) with trace cells reset by whole-series synthesis (the code before)",
    )
    return parser.parse_args()


def run_paths(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Train the main job on every path ``args`` asks for; one ``run_sb3``/``run_learner`` row each.

    In the order (a), (b0), (b), (d), (e), (c), each left out by its ``--skip-*`` option (and
    (b0) unless ``--whole-trace-resets``).
    """
    with tempfile.TemporaryDirectory() as run_dir:
        cfg = main_job_config(run_dir)
        warm(cfg)
        kw = cfg.agent.kwargs
        n_cells = sum(e.n_envs for e in cfg.mixture.scenarios) * max(len(cfg.mixture.variants), 1)
        rollout = n_cells * args.cells_scale * args.n_steps
        rows = []
        if not args.skip_sb3:
            rows.append(run_sb3(cfg, args.steps, args.seed))
        b_args: dict[str, Any] = dict(
            cells_scale=args.cells_scale,
            n_steps=args.n_steps,
            batch_size=-(-rollout // args.minibatches),
            n_epochs=args.n_epochs,
            parallel=True if args.parallel else None,
            update_threads=args.update_threads,
            overlap=args.overlap,
        )
        if args.whole_trace_resets:
            with whole_trace_resets():
                rows.append(
                    run_learner(
                        cfg, args.steps, args.seed, "(b0) (b), whole-trace resets", **b_args
                    )
                )
        rows.append(
            run_learner(cfg, args.steps, args.seed, "(b) learners.ppo, its config", **b_args)
        )
        if not args.skip_fast:
            threaded = {**b_args, "parallel": True}
            rows.append(
                run_learner(cfg, args.steps, args.seed, "(d) (b) + 2 sim threads", **threaded)
            )
            rows.append(
                run_learner(
                    cfg, args.steps, args.seed, "(e) (d) + overlap", **{**threaded, "overlap": True}
                )
            )
        if not args.skip_same_config:
            rows.append(
                run_learner(
                    cfg,
                    args.steps,
                    args.seed,
                    "(c) learners.ppo, (a)'s config",
                    1,
                    int(kw["n_steps"]),
                    int(kw["batch_size"]),
                    int(kw["n_epochs"]),
                )
            )
    return rows


def main() -> None:
    """Run the paths and print their throughput and where the time went."""
    args = parse_args()
    torch.set_num_threads(args.threads)
    rows = run_paths(args)
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} intra-op thread(s); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    report(rows)
    report_pair(rows, "(b)", "(d)")
    report_pair(rows, "(b)", "(e)")


if __name__ == "__main__":
    main()
