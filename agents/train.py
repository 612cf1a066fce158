"""Train a Stable-Baselines3 agent on a CellGym scenario, then evaluate it beside baselines.

``train(cfg)`` does the work on a composed config (tests call it directly); ``main()`` is the Hydra
entry point behind ``python train.py``. The run directory receives the composed config (Hydra's
``.hydra/``), ``command.txt``, ``seed.txt``, checkpoints with their VecNormalize statistics,
``model.zip`` + ``vecnormalize.pkl``, and the evaluation (``evaluation/summary.json``,
``evaluation/comparison.txt``) of the trained policy and the baselines on the same seeds, run
through the same loop (``cellgym.evaluation``).
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import numpy as np

from configs.schema import register_configs, to_dict

log = logging.getLogger(__name__)
register_configs()

ALGOS: tuple[str, ...] = ("PPO", "A2C", "SAC", "TD3")


class NormalizedPolicy:
    """A trained model behind the observation normalisation it was trained with.

    Args:
        model: An SB3 model.
        vec_normalize: The training ``VecNormalize`` (its statistics are used, not updated).
    """

    def __init__(self, model: Any, vec_normalize: Any) -> None:
        self.model = model
        self.vec_normalize = vec_normalize

    def predict(
        self,
        observation: np.ndarray,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = True,
    ) -> tuple[np.ndarray, Any]:
        """SB3's ``predict`` on normalised observations."""
        obs = self.vec_normalize.normalize_obs(np.asarray(observation, dtype=np.float32))
        return self.model.predict(
            obs, state=state, episode_start=episode_start, deterministic=deterministic
        )


def _make_env_fn(spec_dict: dict[str, Any], reward: dict[str, Any], env_kwargs: dict[str, Any]):
    def make() -> Any:
        from stable_baselines3.common.monitor import Monitor

        from envs.lte_cell import LteCellEnv

        return Monitor(LteCellEnv(scenario=spec_dict, reward=reward, **env_kwargs))

    return make


def train(cfg: Any) -> dict[str, Any]:
    """Train, save and evaluate; return the evaluation metrics by controller."""
    import torch
    from stable_baselines3 import A2C, PPO, SAC, TD3
    from stable_baselines3.common.callbacks import CheckpointCallback
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecNormalize

    from cellgym.evaluation import run_controller
    from cellgym.metrics import compute_metrics
    from cellgym.report import comparison_table
    from cellgym.reward import RewardSpec
    from cellgym.scenario import ScenarioSpec

    # With simulators in subprocesses, more torch threads only compete with them.
    torch.set_num_threads(1)
    spec = ScenarioSpec.from_config(cfg.scenario)
    reward = RewardSpec(**to_dict(cfg.reward))
    if cfg.agent.algo not in ALGOS:
        raise ValueError(f"agent.algo={cfg.agent.algo!r}: choose one of {', '.join(ALGOS)}")
    if cfg.n_envs < 1:
        raise ValueError(f"n_envs={cfg.n_envs!r} is out of range: allowed [1, inf)")
    if cfg.total_timesteps < 1:
        raise ValueError(f"total_timesteps={cfg.total_timesteps!r}: allowed [1, inf)")
    run_dir = Path(cfg.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    seed = cfg.seed if cfg.seed is not None else int(np.random.SeedSequence().entropy % 2**31)
    log.info("seed %d, run directory %s", seed, run_dir)
    (run_dir / "seed.txt").write_text(f"{seed}\n")
    (run_dir / "command.txt").write_text(" ".join(sys.argv) + "\n")

    env_kwargs = {
        "backend": cfg.backend,
        "max_change": cfg.max_change,
        "action_mode": cfg.action_mode,
        "timeout_s": cfg.timeout_s,
    }
    fns = [_make_env_fn(to_dict(cfg.scenario), to_dict(cfg.reward), env_kwargs)] * cfg.n_envs
    venv = SubprocVecEnv(fns, start_method="forkserver") if cfg.n_envs > 1 else DummyVecEnv(fns)
    venv = VecNormalize(venv, norm_obs=True, norm_reward=True, clip_obs=10.0)
    venv.seed(seed)
    algo = {"PPO": PPO, "A2C": A2C, "SAC": SAC, "TD3": TD3}[cfg.agent.algo]
    kwargs = dict(to_dict(cfg.agent.kwargs))
    model = algo(
        "MlpPolicy",
        venv,
        seed=seed,
        verbose=0,
        device="cpu",
        policy_kwargs={"net_arch": list(cfg.agent.net_arch)},
        **kwargs,
    )
    checkpoints = CheckpointCallback(
        save_freq=max(1, cfg.total_timesteps // (4 * cfg.n_envs)),
        save_path=str(run_dir / "checkpoints"),
        name_prefix=cfg.agent.name,
        save_vecnormalize=True,
    )
    try:
        model.learn(total_timesteps=cfg.total_timesteps, callback=checkpoints)
        model.save(run_dir / "model.zip")
        venv.save(str(run_dir / "vecnormalize.pkl"))
    finally:
        venv.close()

    venv.training = False
    policy = NormalizedPolicy(model, venv)
    eval_dir = run_dir / "evaluation"
    eval_dir.mkdir(exist_ok=True)
    results = []
    for controller in [cfg.agent.name, *cfg.eval_baselines]:
        for eval_seed in cfg.eval_seeds:
            rec = run_controller(
                spec,
                controller,
                eval_seed,
                reward,
                cfg.backend,
                cfg.timeout_s,
                cfg.max_change,
                cfg.action_mode,
                policy=policy if controller == cfg.agent.name else None,
            )
            results.append(compute_metrics(rec, delay_budget_ms=reward.delay_budget_ms))
    (eval_dir / "summary.json").write_text(json.dumps(results, indent=2))
    table = comparison_table(results)
    (eval_dir / "comparison.txt").write_text(table + "\n")
    print(table)
    print(f"\nrun directory: {run_dir.resolve()}")
    return {"seed": seed, "results": results}


def main() -> None:
    """Hydra entry point: ``python train.py [overrides]``."""
    import hydra

    @hydra.main(config_path="../configs", config_name="train", version_base="1.3")
    def _main(cfg: Any) -> None:
        train(cfg)

    _main()
