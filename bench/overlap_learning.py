"""Learning per env step of ``PPOConfig(overlap=True)`` against synchronous PPO, on the main job.

    .venv/bin/python bench/overlap_learning.py [--steps 1200000] [--seeds 1] [--cells-scale 32]

Both train the main job (``experiment=default``: the mixture, ``derived`` features,
``VecNormalize``, MLP [64, 64]) with ``learners.ppo``'s recipe (``--cells-scale`` times the cells,
rollouts of 32 steps, 4 minibatches, 4 epochs) for ``--steps`` env steps from the same seeds; the
only difference is ``overlap`` (the rollout used by update ``k`` collected during update ``k - 1``
by the policy before it). Each final policy (deterministic: the Gaussian's mean, observations
normalised by its statistics, not updated) then runs one 10 s episode (500 steps) on unseen cells
of the same mixture (4 times the main job's cells, seeded 10,000 on); printed: the mean reward
per step of each, of the untrained policy and of uniformly random actions, and each run's wall
time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bench.train_throughput import main_job_config, warm  # noqa: E402
from configs.schema import TrainConfig  # noqa: E402
from learners.cells import FastCells  # noqa: E402
from learners.ppo import PPO, normalize_obs  # noqa: E402
from learners.run import make_learner  # noqa: E402

EVAL_SEED, EVAL_SCALE, EVAL_STEPS = 10_000, 4, 500


def score(cfg: TrainConfig, act: object) -> float:
    """Mean reward per step of ``act`` (features -> actions) on unseen cells of the mixture."""
    cells = FastCells.from_config(cfg, seed=EVAL_SEED, cells_scale=EVAL_SCALE)
    obs = cells.reset()
    total = 0.0
    for _ in range(EVAL_STEPS):
        obs, reward, _ = cells.step(act(obs))  # type: ignore[operator]
        total += float(np.mean(reward))
    cells.close()
    return total / EVAL_STEPS


def policy_of(agent: PPO) -> object:
    """The learner's deterministic policy on features (statistics frozen)."""

    def act(obs: np.ndarray) -> np.ndarray:
        x = torch.from_numpy(normalize_obs(obs, agent.obs_rms, agent.cfg.clip_obs))
        with torch.no_grad():
            return np.clip(agent.net.mean(x).numpy(), -1.0, 1.0)

    return act


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_200_000, help="env steps of each run")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1], help="training seeds")
    parser.add_argument("--cells-scale", type=int, default=32, help="cells x the main job's")
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as run_dir:
        cfg = main_job_config(run_dir)
        warm(cfg)
        n_cells = sum(e.n_envs for e in cfg.mixture.scenarios) * len(cfg.mixture.variants)
        rollout = n_cells * args.cells_scale * 32
        rng = np.random.default_rng(0)
        rand = score(cfg, lambda o: rng.uniform(-1, 1, (len(o), 1)).astype(np.float32))
        print(f"random actions: {rand:.4f} mean reward per step")
        rows = []
        for seed in args.seeds:
            for overlap in (False, True):
                cells, agent = make_learner(
                    cfg, seed, args.cells_scale, n_steps=32, batch_size=rollout // 4,
                    n_epochs=4, overlap=overlap,
                )  # fmt: skip
                untrained = score(cfg, policy_of(agent))
                t0 = time.perf_counter()
                agent.learn(args.steps)
                wall = time.perf_counter() - t0
                cells.close()
                trained = score(cfg, policy_of(agent))
                rows.append((seed, overlap, agent.num_timesteps, wall, untrained, trained))
                print(
                    f"seed {seed}, overlap {overlap}: {agent.num_timesteps:,} steps, {wall:.1f} s, "
                    f"untrained {untrained:.4f}, trained {trained:.4f}",
                    flush=True,
                )
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("| seed | overlap | env steps | wall s | untrained | trained | gain over random |")
    print("|---|---|---|---|---|---|---|")
    for seed, overlap, steps, wall, untrained, trained in rows:
        print(
            f"| {seed} | {overlap} | {steps:,} | {wall:.1f} | {untrained:.4f} | {trained:.4f} "
            f"| {trained - rand:.4f} |"
        )
    for overlap in (False, True):
        gains = [r[5] - rand for r in rows if r[1] is overlap]
        print(f"overlap {overlap}: mean gain over random {np.mean(gains):.4f}")


if __name__ == "__main__":
    main()
