"""A trained ``learners.ppo`` policy as SB3 policies are used: ``predict``, files, an SB3 export.

``PPOPolicy`` is the policy a learner trained, behind SB3's ``PolicyPredictor.predict`` on raw
environment observations (so ``evaluation.rollouts.run_policy`` drives it like a baseline or a
``NormalizedPolicy``). ``save``/``load`` keep it in one torch file; ``export_sb3`` writes the SB3
``PPO`` model and ``VecNormalize`` pair that ``workflows/train.py`` writes for its runs, so
``evaluate.py`` and the periodic evaluation load it unchanged.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.running_mean_std import RunningMeanStd

from learners.ppo import PPO, ActorCritic, PPOConfig, normalize_obs


class PPOPolicy:
    """A trained policy behind SB3's ``predict``: raw environment observations in, actions out.

    It applies what training applied: the feature transform (``agents.features``) and the
    observation normalisation, then the network's mean (``deterministic``) or a sample, clipped to
    the action bounds, as ``agents.factory.NormalizedPolicy`` does around an SB3 model.

    Args:
        net: The actor-critic.
        obs_rms: Observation statistics (``None``: not normalised).
        features: The feature set the policy was trained on.
        clip_obs: Clip of normalised observations.
        observation_space: The policy's input space (after the features).
        action_space: The action space.
        config: The training hyperparameters (saved alongside).
    """

    def __init__(
        self,
        net: ActorCritic,
        obs_rms: RunningMeanStd | None,
        features: str,
        clip_obs: float,
        observation_space: spaces.Box,
        action_space: spaces.Box,
        config: PPOConfig | None = None,
    ) -> None:
        self.net = net
        self.obs_rms = obs_rms
        self.features = features
        self.clip_obs = clip_obs
        self.observation_space = observation_space
        self.action_space = action_space
        self.config = config or PPOConfig()

    def predict(
        self,
        observation: np.ndarray,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, Any]:
        """SB3's ``PolicyPredictor.predict`` on raw observations ``[11]`` or ``[n, 11]``."""
        from agents.features import transform

        obs = transform(np.asarray(observation, dtype=np.float32), self.features)
        single = obs.ndim == 1
        x = torch.from_numpy(
            normalize_obs(obs.reshape(-1, obs.shape[-1]), self.obs_rms, self.clip_obs)
        )
        with torch.no_grad():
            action = self.net.mean(x)
            if not deterministic:
                action = action + torch.exp(self.net.log_std) * torch.randn_like(action)
        out = np.clip(action.numpy(), self.action_space.low, self.action_space.high)
        return (out[0] if single else out), state

    def save(self, path: str | Path) -> None:
        """Write the policy to ``path`` (``torch.save``; ``PPOPolicy.load`` reads it)."""
        rms = self.obs_rms
        torch.save(
            {
                "format": "cellgym.learners.ppo/1",
                "config": {
                    k: list(v) if isinstance(v, tuple) else v
                    for k, v in asdict(self.config).items()
                },
                "state_dict": self.net.state_dict(),
                "features": self.features,
                "clip_obs": self.clip_obs,
                "obs_rms": None if rms is None else {
                    "mean": torch.from_numpy(rms.mean),
                    "var": torch.from_numpy(rms.var),
                    "count": float(rms.count),
                },
                "spaces": {
                    "obs_low": torch.from_numpy(self.observation_space.low),
                    "obs_high": torch.from_numpy(self.observation_space.high),
                    "act_low": torch.from_numpy(self.action_space.low),
                    "act_high": torch.from_numpy(self.action_space.high),
                },
            },
            str(path),
        )  # fmt: skip

    @classmethod
    def load(cls, path: str | Path) -> PPOPolicy:
        """The policy ``save`` wrote to ``path``."""
        data = torch.load(str(path), weights_only=True)
        config = PPOConfig(**data["config"])
        sp = data["spaces"]
        obs_space = spaces.Box(sp["obs_low"].numpy(), sp["obs_high"].numpy(), dtype=np.float32)
        act_space = spaces.Box(sp["act_low"].numpy(), sp["act_high"].numpy(), dtype=np.float32)
        with torch.random.fork_rng(devices=[]):  # the initialisation is overwritten
            net = ActorCritic(obs_space.shape[0], act_space.shape[0], config.net_arch)
        net.load_state_dict(data["state_dict"])
        rms = None
        if data["obs_rms"] is not None:
            rms = RunningMeanStd(shape=obs_space.shape)
            rms.mean = data["obs_rms"]["mean"].numpy().astype(np.float64)
            rms.var = data["obs_rms"]["var"].numpy().astype(np.float64)
            rms.count = float(data["obs_rms"]["count"])
        return cls(
            net, rms, data["features"], float(data["clip_obs"]), obs_space, act_space, config
        )

    def export_sb3(
        self,
        model_path: str | Path,
        vecnormalize_path: str | Path | None = None,
        num_timesteps: int = 0,
    ) -> None:
        """Write an SB3 ``PPO`` model (and its ``VecNormalize``) equal to this policy.

        The pair is what ``workflows/train.py`` writes (``model.zip``, ``vecnormalize.pkl``), so
        ``evaluate.py`` and ``agents.factory.NormalizedPolicy`` use it like any SB3 run.
        ``num_timesteps`` is recorded in the model (SB3's ``num_timesteps``: the steps trained).
        """
        import gymnasium as gym
        from stable_baselines3 import PPO as Sb3PPO
        from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

        obs_space, act_space = self.observation_space, self.action_space

        class _Spaces(gym.Env):
            observation_space, action_space = obs_space, act_space

            def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
                return obs_space.low * 0, {}

            def step(self, action: Any) -> Any:
                return obs_space.low * 0, 0.0, True, False, {}

        cfg = self.config
        venv = DummyVecEnv([_Spaces])
        with torch.random.fork_rng(devices=[]):  # its initialisation is overwritten
            model = Sb3PPO(
                "MlpPolicy",
                venv,
                learning_rate=cfg.learning_rate,
                gamma=cfg.gamma,
                gae_lambda=cfg.gae_lambda,
                clip_range=cfg.clip_range,
                ent_coef=cfg.ent_coef,
                vf_coef=cfg.vf_coef,
                max_grad_norm=cfg.max_grad_norm,
                policy_kwargs={
                    "net_arch": list(cfg.net_arch),
                    "log_std_init": cfg.log_std_init,
                    "ortho_init": cfg.ortho_init,
                },
                device="cpu",
            )
        model.policy.load_state_dict(self.net.state_dict())
        model.num_timesteps = int(num_timesteps)
        model.save(str(model_path))
        if vecnormalize_path is not None:
            vn = VecNormalize(
                venv,
                norm_obs=self.obs_rms is not None,
                norm_reward=cfg.norm_reward,
                clip_obs=self.clip_obs,
                clip_reward=cfg.clip_reward,
                gamma=cfg.gamma,
            )
            if self.obs_rms is not None:
                vn.obs_rms = self.obs_rms.copy()
            vn.save(str(vecnormalize_path))

    @classmethod
    def from_learner(cls, agent: PPO) -> PPOPolicy:
        """The learner's current policy (sharing its network; the statistics are copied)."""
        return cls(
            agent.net,
            None if agent.obs_rms is None else agent.obs_rms.copy(),
            agent.features,
            agent.cfg.clip_obs,
            agent.env.observation_space,
            agent.env.action_space,
            agent.cfg,
        )
