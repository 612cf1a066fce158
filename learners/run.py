"""``learners.ppo`` as a training algorithm of ``train.py``: ``agent.algo=FastPPO``.

``check_config(cfg)`` refuses what the learner cannot honour (before anything is built);
``ppo_config(cfg)`` takes the PPO hyperparameters, network and normalisation of ``cfg``
(``agent.kwargs``, ``agent.net_arch``, ``agent.policy_kwargs.log_std_init``, ``norm_obs``,
``norm_reward``), with overrides for what a caller runs differently; ``make_learner`` builds the
cells and the learner; ``train`` runs it for ``workflows/train.py``: logging through the run's
SB3 logger (``progress.csv``, TensorBoard, W&B), periodic evaluation (``eval_history.csv``, the
best model), checkpoints, and at the end the SB3 export (``model.zip``, ``vecnormalize.pkl``) that
``evaluate.py``, ``evaluation.transfer`` and the benchmark load like any SB3 run.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from agents.callbacks import PeriodicEvalCallback
from cellgym.vocab import FAST_PPO_KWARGS, FAST_PPO_SB3_KWARGS, SpecError
from configs.schema import TrainConfig
from learners.cells import FastCells
from learners.policy import PPOPolicy
from learners.ppo import PPO, PPOConfig

log = logging.getLogger(__name__)

#: The ``agent.algo`` of this learner.
ALGO = "FastPPO"

#: ``agent.kwargs`` of SB3's PPO that ``PPOConfig`` takes under the same name.
SHARED_KWARGS: tuple[str, ...] = FAST_PPO_SB3_KWARGS
#: ``agent.kwargs`` of ``agent.algo=FastPPO``: SB3's shared ones, the learner's thread counts and
#: ``cells_scale`` (every batch of training cells that many times larger, the mixture's
#: proportions kept).
KWARGS: tuple[str, ...] = FAST_PPO_KWARGS
#: ``agent.policy_kwargs`` the learner's network takes.
POLICY_KWARGS: tuple[str, ...] = ("log_std_init", "ortho_init")
#: Arguments that must be numbers (no SB3 schedules: the learner's are constant).
_NUMBERS: tuple[str, ...] = ("learning_rate", "clip_range")


def check_config(cfg: TrainConfig) -> None:
    """Refuse a training config that ``agent.algo=FastPPO`` cannot honour.

    ``agent.kwargs`` names and ranges are checked by ``agents.factory.check_agent_kwargs``.

    Raises:
        SpecError: One line naming the field and what is allowed: the ns-3 backend, a
            scenario with several agent flows, a policy other than ``MlpPolicy`` (recurrent
            ones), ``policy_kwargs`` the network does not take, a learning-rate or clip-range
            schedule, or ``resume=`` (the learner's optimiser state is not checkpointed).
    """
    if cfg.backend.name != "fast":
        raise SpecError(
            f"backend.name={cfg.backend.name!r} is not allowed with agent.algo={ALGO}: "
            "choose backend=fast (it steps the fast simulator's cells as arrays)"
        )
    if not cfg.mixture.scenarios and len(cfg.scenario.agent_flows) != 1:
        raise SpecError(
            f"scenario={cfg.scenario.name!r} has {len(cfg.scenario.agent_flows)} agent flows: "
            f"agent.algo={ALGO} trains exactly one agent flow per cell (multi-agent: agent=ppo)"
        )
    if cfg.agent.policy != "MlpPolicy":
        raise SpecError(
            f"agent.policy={cfg.agent.policy!r} is not allowed with agent.algo={ALGO}: "
            "choose MlpPolicy (recurrent policies: agent=recurrent_ppo)"
        )
    for name in cfg.agent.policy_kwargs:
        if name not in POLICY_KWARGS:
            raise SpecError(
                f"agent.policy_kwargs.{name} is not an argument of {ALGO}: "
                f"allowed {', '.join(POLICY_KWARGS)}"
            )
    for name in _NUMBERS:
        value = cfg.agent.kwargs.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise SpecError(
                f"agent.kwargs.{name}={value!r} is not allowed with agent.algo={ALGO}: "
                "give a number (schedules are not implemented)"
            )
    if cfg.resume is not None:
        raise SpecError(
            f"resume={cfg.resume} is not allowed with agent.algo={ALGO}: its checkpoints hold "
            "the policy, not the optimiser's state; start a new run"
        )


def ppo_config(cfg: TrainConfig, seed: int, **overrides: Any) -> PPOConfig:
    """``PPOConfig`` of ``cfg``'s PPO agent (SB3's defaults where ``cfg`` sets nothing).

    Args:
        cfg: A training config whose agent is ``FastPPO`` (or SB3's ``PPO``: the same
            hyperparameters run by this learner, as ``bench/train_throughput.py`` does).
        seed: The learner's seed.
        **overrides: ``PPOConfig`` fields to set instead (e.g. ``n_steps=32``).

    Raises:
        ValueError: ``cfg.agent.algo`` is not PPO, or ``agent.kwargs`` or ``policy_kwargs`` name
            something this learner does not implement (``clip_range_vf``, gSDE, another
            activation).
    """
    if cfg.agent.algo not in ("PPO", ALGO):
        raise ValueError(f"agent.algo={cfg.agent.algo!r}: learners.ppo is PPO")
    kwargs = dict(cfg.agent.kwargs)
    known = set(SHARED_KWARGS) | ({"stats_window_size"} if cfg.agent.algo == "PPO" else set(KWARGS))
    unsupported = sorted(set(kwargs) - known)
    if unsupported:
        raise ValueError(f"agent.kwargs {unsupported}: not implemented by learners.ppo")
    extra = sorted(set(cfg.agent.policy_kwargs) - set(POLICY_KWARGS))
    if extra:
        raise ValueError(f"agent.policy_kwargs {extra}: not implemented by learners.ppo")
    # SB3's defaults for what the config leaves out, where they differ from PPOConfig's.
    fields: dict[str, Any] = {"n_steps": 2048, "batch_size": 64, "n_epochs": 10, "gamma": 0.99}
    fields.update({k: kwargs[k] for k in KWARGS if k in kwargs and k != "cells_scale"})
    fields.update(
        net_arch=tuple(cfg.agent.net_arch),
        log_std_init=float(cfg.agent.policy_kwargs.get("log_std_init", 0.0)),
        ortho_init=bool(cfg.agent.policy_kwargs.get("ortho_init", True)),
        norm_obs=cfg.norm_obs,
        norm_reward=cfg.norm_reward,
        seed=seed,
    )
    fields.update(overrides)
    return PPOConfig(**fields)


def make_learner(
    cfg: TrainConfig,
    seed: int,
    cells_scale: int | None = None,
    parallel: bool | None = None,
    **overrides: Any,
) -> tuple[FastCells, PPO]:
    """The training cells of ``cfg`` (``cells_scale`` times as many) and a learner on them.

    Cell ``j`` is seeded ``seed + j``; the learner's network, noise and minibatches ``seed``.
    ``cells_scale`` defaults to ``agent.kwargs.cells_scale`` (else 1); ``parallel`` goes to
    ``FastCells``, ``overrides`` to ``ppo_config``.
    """
    if cells_scale is None:
        cells_scale = int(cfg.agent.kwargs.get("cells_scale", 1))
    threads = torch.get_num_threads()
    cells = FastCells.from_config(cfg, seed, cells_scale=cells_scale, parallel=parallel)
    # Cells stepped on threads start numba's OpenMP layer, which sets torch's thread count to
    # its own (the machine's cores): give the learner the count it was called with.
    torch.set_num_threads(threads)
    return cells, PPO(cells, ppo_config(cfg, seed, **overrides), features=cfg.features)


class LearnerEvalCallback(PeriodicEvalCallback):
    """``PeriodicEvalCallback`` on a ``learners.ppo.PPO``: the same rows, logs and best model.

    ``step()`` after every update evaluates when ``freq`` steps have passed since the last
    evaluation (as SB3's callback does per step, here at update boundaries); ``end()`` evaluates
    the final policy. The best model is written as an SB3 export (``best_model.zip``,
    ``best_vecnormalize.pkl``).

    Args:
        agent: The learner.
        logger: The run's SB3 logger.
        *args: ``PeriodicEvalCallback``'s arguments.
        **kwargs: ``PeriodicEvalCallback``'s keyword arguments.
    """

    def __init__(self, agent: PPO, logger: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.agent = agent
        self._sb3_logger = logger

    @property
    def logger(self) -> Any:  # noqa: D102  (SB3's callbacks read the model's)
        return self._sb3_logger

    def current_policy(self) -> Any:
        """The learner's policy on raw observations."""
        return PPOPolicy.from_learner(self.agent)

    def save_best(self) -> None:
        """The current policy as ``best_model.zip`` and ``best_vecnormalize.pkl``."""
        PPOPolicy.from_learner(self.agent).export_sb3(
            self.run_dir / "best_model.zip",
            self.run_dir / "best_vecnormalize.pkl",
            num_timesteps=self.agent.num_timesteps,
        )

    def step(self) -> None:
        """Evaluate if a period has passed (call between updates)."""
        self.num_timesteps = self.agent.num_timesteps
        self._on_step()

    def end(self) -> None:
        """Evaluate the final policy unless it just was."""
        self.num_timesteps = self.agent.num_timesteps
        self._on_training_end()


def save_checkpoint(agent: PPO, save_dir: Path, prefix: str) -> Path:
    """The learner's policy in ``save_dir``: SB3 export and ``PPOPolicy`` file.

    Files: ``<prefix>_<steps>_steps.zip`` and ``<prefix>_vecnormalize_<steps>_steps.pkl`` (the
    names of SB3 runs' checkpoints, so ``evaluate.py`` loads one as it loads theirs) and
    ``<prefix>_<steps>_steps.pt`` (``PPOPolicy.load``).
    """
    steps = agent.num_timesteps
    save_dir.mkdir(parents=True, exist_ok=True)
    policy = PPOPolicy.from_learner(agent)
    model = save_dir / f"{prefix}_{steps}_steps.zip"
    policy.export_sb3(
        model, save_dir / f"{prefix}_vecnormalize_{steps}_steps.pkl", num_timesteps=steps
    )
    policy.save(save_dir / f"{prefix}_{steps}_steps.pt")
    log.info("checkpoint at %d steps (%d updates)", steps, agent.iterations)
    return model


def record_stats(logger: Any, agent: PPO, t0: float, steps0: int) -> None:
    """One row of the run's log after an update, under SB3's PPO names."""
    s = agent.last_stats
    names = {
        "rollout/ep_rew_mean": "ep_return_mean",
        "rollout/ep_len_mean": "ep_length_mean",
        "train/policy_gradient_loss": "policy_loss",
        "train/value_loss": "value_loss",
        "train/clip_fraction": "clip_fraction",
        "train/approx_kl": "approx_kl",
        "train/explained_variance": "explained_variance",
        "train/std": "std",
    }
    for key, stat in names.items():
        value = s.get(stat, math.nan)
        if math.isfinite(value):
            logger.record(key, value)
    elapsed = max(time.monotonic() - t0, 1e-9)
    logger.record("train/n_updates", agent.iterations * agent.cfg.n_epochs)
    logger.record("time/iterations", agent.iterations)
    logger.record("time/fps", int((agent.num_timesteps - steps0) / elapsed))
    logger.record("time/time_elapsed", int(elapsed), exclude="tensorboard")
    logger.record("time/total_timesteps", agent.num_timesteps, exclude="tensorboard")
    logger.dump(agent.num_timesteps)


def train(
    cfg: TrainConfig,
    seed: int,
    run_dir: Path,
    logger: Any,
    evaluate: Callable[[str, Any], Any],
    baselines: Sequence[str] | None = None,
    progress_bar: bool = False,
) -> int:
    """Train ``cfg`` with ``learners.ppo`` into ``run_dir``; the steps trained.

    Writes ``progress.csv`` rows (through ``logger``) after every update, ``eval_history.csv``
    and ``best_model.zip`` every ``eval.freq`` steps (``evaluate``, as for SB3 runs),
    ``checkpoints/`` every ``checkpoint_freq`` steps rounded up to whole rollouts (and at the
    end), and at the end ``model.zip`` + ``vecnormalize.pkl`` (``PPOPolicy.export_sb3``) and
    ``policy.pt`` (``PPOPolicy.save``).

    Args:
        cfg: A validated config with ``agent.algo=FastPPO`` (``check_config``).
        seed: The run's seed (cells ``seed + j``, the learner ``seed``).
        run_dir: The run directory.
        logger: The run's SB3 logger (``agents.loggers.RunLoggers.sb3``).
        evaluate: ``workflows.train.periodic_evaluator``'s function.
        baselines: Controllers of the periodic evaluation (default ``cfg.eval.baselines``).
        progress_bar: Show a tqdm bar.
    """
    cells, agent = make_learner(cfg, seed)
    try:
        evaluator = LearnerEvalCallback(
            agent,
            logger,
            evaluate,
            cfg.agent.name,
            cfg.eval.baselines if baselines is None else baselines,
            cfg.eval.freq,
            run_dir,
            deterministic=cfg.eval.deterministic,
            features=cfg.features,
        )
        rollout = agent.cfg.n_steps * cells.num_envs
        period = _checkpoint_period(cfg.checkpoint_freq, rollout)
        log.info(
            "%s: %d cells, rollouts of %d steps (%d per cell), minibatches of %d, %d epochs",
            ALGO,
            cells.num_envs,
            rollout,
            agent.cfg.n_steps,
            agent.cfg.batch_size,
            agent.cfg.n_epochs,
        )
        ckpt_dir = run_dir / "checkpoints"
        bar = _progress_bar(cfg.total_timesteps) if progress_bar else None
        t0 = time.monotonic()
        last_saved = 0

        def after_update(a: PPO) -> None:
            nonlocal last_saved
            record_stats(logger, a, t0, 0)
            evaluator.step()
            if period and a.num_timesteps // period > last_saved // period:
                save_checkpoint(a, ckpt_dir, cfg.agent.name)
                last_saved = a.num_timesteps
            if bar is not None:
                bar.update(a.num_timesteps - bar.n)
                bar.set_postfix_str(f"ep_rew {a.last_stats.get('ep_return_mean', math.nan):.3f}")

        agent.learn(cfg.total_timesteps, callback=after_update)
        evaluator.end()
        if period and agent.num_timesteps > last_saved:
            save_checkpoint(agent, ckpt_dir, cfg.agent.name)
        if bar is not None:
            bar.close()
        _save_final(agent, run_dir)
    finally:
        cells.close()
    return agent.num_timesteps


def _checkpoint_period(checkpoint_freq: int, rollout: int) -> int:
    """``checkpoint_freq`` rounded up to whole rollouts of ``rollout`` steps (0: no checkpoints).

    The learner checkpoints between updates only, so a period that is not a whole number of
    rollouts is rounded up (and the rounding logged).
    """
    period = -(-checkpoint_freq // rollout) * rollout if checkpoint_freq else 0
    if period and period != checkpoint_freq:
        log.info(
            "checkpoint_freq=%d rounded up to %d steps (whole rollouts of %d steps)",
            checkpoint_freq,
            period,
            rollout,
        )
    return period


def _progress_bar(total_timesteps: int) -> Any:
    """A tqdm bar over the run's ``total_timesteps`` steps."""
    from tqdm.auto import tqdm

    return tqdm(total=total_timesteps, unit="step", unit_scale=True, desc="train")


def _save_final(agent: PPO, run_dir: Path) -> None:
    """The trained policy in ``run_dir``: ``model.zip`` + ``vecnormalize.pkl`` and ``policy.pt``."""
    policy = PPOPolicy.from_learner(agent)
    policy.export_sb3(
        run_dir / "model.zip", run_dir / "vecnormalize.pkl", num_timesteps=agent.num_timesteps
    )
    policy.save(run_dir / "policy.pt")
