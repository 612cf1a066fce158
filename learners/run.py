"""A ``learners.ppo`` learner for a training config: the bridge ``workflows/train.py`` will use.

``ppo_config(cfg)`` takes the PPO hyperparameters, network and normalisation of ``cfg``
(``agent.kwargs``, ``agent.net_arch``, ``agent.policy_kwargs.log_std_init``, ``norm_obs``,
``norm_reward``), with overrides for what the fast learner runs differently (cells, rollout
length, minibatch, epochs); ``make_learner`` builds the cells and the learner.
"""

from __future__ import annotations

from typing import Any

from configs.schema import TrainConfig
from learners.cells import FastCells
from learners.ppo import PPO, PPOConfig

#: ``agent.kwargs`` of SB3's PPO that ``PPOConfig`` takes under the same name.
SHARED_KWARGS: tuple[str, ...] = (
    "n_steps",
    "batch_size",
    "n_epochs",
    "learning_rate",
    "gamma",
    "gae_lambda",
    "clip_range",
    "ent_coef",
    "vf_coef",
    "max_grad_norm",
    "normalize_advantage",
    "target_kl",
)


def ppo_config(cfg: TrainConfig, seed: int, **overrides: Any) -> PPOConfig:
    """``PPOConfig`` of ``cfg``'s PPO agent (SB3's defaults where ``cfg`` sets nothing).

    Args:
        cfg: A training config whose agent is PPO.
        seed: The learner's seed.
        **overrides: ``PPOConfig`` fields to set instead (e.g. ``n_steps=32``).

    Raises:
        ValueError: ``cfg.agent.algo`` is not PPO, or ``agent.kwargs`` or ``policy_kwargs`` name
            something this learner does not implement (``clip_range_vf``, gSDE, another
            activation).
    """
    if cfg.agent.algo != "PPO":
        raise ValueError(f"agent.algo={cfg.agent.algo!r}: learners.ppo is PPO")
    kwargs = dict(cfg.agent.kwargs)
    unsupported = sorted(set(kwargs) - set(SHARED_KWARGS) - {"stats_window_size"})
    if unsupported:
        raise ValueError(f"agent.kwargs {unsupported}: not implemented by learners.ppo")
    extra = sorted(set(cfg.agent.policy_kwargs) - {"log_std_init", "ortho_init"})
    if extra:
        raise ValueError(f"agent.policy_kwargs {extra}: not implemented by learners.ppo")
    # SB3's defaults for what the config leaves out, where they differ from PPOConfig's.
    fields: dict[str, Any] = {"n_steps": 2048, "batch_size": 64, "n_epochs": 10, "gamma": 0.99}
    fields.update({k: kwargs[k] for k in SHARED_KWARGS if k in kwargs})
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
    cells_scale: int = 1,
    parallel: bool | None = None,
    **overrides: Any,
) -> tuple[FastCells, PPO]:
    """The training cells of ``cfg`` (``cells_scale`` times as many) and a learner on them.

    Cell ``j`` is seeded ``seed + j``; the learner's network, noise and minibatches ``seed``.
    ``parallel`` goes to ``FastCells``, ``overrides`` to ``ppo_config``.
    """
    cells = FastCells.from_config(cfg, seed, cells_scale=cells_scale, parallel=parallel)
    return cells, PPO(cells, ppo_config(cfg, seed, **overrides), features=cfg.features)
