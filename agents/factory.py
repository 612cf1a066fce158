"""Build the pieces of a training run: vectorised environments, the SB3 model, the policy wrapper.

The ns-3 backend runs one simulator process per environment under ``SubprocVecEnv``; the fast
backend steps all environments as one batch (``envs.fastsim.vector_env.make_fast_vec_env``), or,
with ``mixture.scenarios``, one batch per scenario and model variant side by side
(``agents.mixture``).
Either way the stack is ``base -> VecMonitor/Monitor -> VecNormalize``, so episode statistics are
raw rewards and the policy sees normalised observations.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from agents.features import FeatureVecEnv, transform
from configs.schema import TrainConfig


class NormalizedPolicy:
    """A trained model behind the observation normalisation it was trained with.

    ``predict`` follows SB3's ``PolicyPredictor``: the recurrent state and ``episode_start`` are
    passed through unchanged, so a ``RecurrentPPO`` policy keeps its LSTM state across the steps
    of ``evaluation.rollouts.run_policy``'s loop.

    Args:
        model: An SB3 model.
        vec_normalize: The training ``VecNormalize`` (its statistics are used, not updated), or
            ``None`` when observations were not normalised.
        features: The feature set the model was trained on (``agents.features``).
        deterministic: When set, overrides the caller's ``deterministic``.
    """

    def __init__(
        self,
        model: Any,
        vec_normalize: Any,
        features: str = "raw",
        deterministic: bool | None = None,
    ) -> None:
        self.model = model
        self.vec_normalize = vec_normalize
        self.features = features
        self.deterministic = deterministic

    def predict(
        self,
        observation: np.ndarray,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = True,
    ) -> tuple[np.ndarray, Any]:
        """SB3's ``predict`` on normalised observations."""
        obs = transform(observation, self.features)
        if self.vec_normalize is not None and self.vec_normalize.norm_obs:
            obs = self.vec_normalize.normalize_obs(obs)
        if self.deterministic is not None:
            deterministic = self.deterministic
        return self.model.predict(
            obs, state=state, episode_start=episode_start, deterministic=deterministic
        )


def algo_class(name: str) -> type:
    """The SB3 / sb3-contrib class called ``name``: the class that loads its saved models.

    ``FastPPO`` (``learners.ppo``) saves SB3 ``PPO`` models (``PPOPolicy.export_sb3``), so its
    runs load as ``PPO``.
    """
    if name == "FastPPO":
        from stable_baselines3 import PPO

        return PPO
    if name == "RecurrentPPO":
        from sb3_contrib import RecurrentPPO

        return RecurrentPPO
    import stable_baselines3

    return getattr(stable_baselines3, name)


#: Arguments ``make_model`` sets itself (not allowed in ``agent.kwargs``).
_SET_BY_FACTORY: tuple[str, ...] = ("policy", "env", "seed", "verbose", "device", "policy_kwargs")

#: Ranges of common ``agent.kwargs`` values: ``(low, high, low_open)``; ``None``: unbounded.
KWARG_RANGES: dict[str, tuple[float | None, float | None, bool]] = {
    "n_steps": (1, None, False),
    "batch_size": (1, None, False),
    "n_epochs": (1, None, False),
    "buffer_size": (1, None, False),
    "learning_starts": (0, None, False),
    "gradient_steps": (-1, None, False),
    "policy_delay": (1, None, False),
    "learning_rate": (0.0, None, True),
    "gamma": (0.0, 1.0, False),
    "gae_lambda": (0.0, 1.0, False),
    "tau": (0.0, 1.0, False),
    "clip_range": (0.0, None, True),
    "vf_coef": (0.0, None, False),
    "max_grad_norm": (0.0, None, True),
    "target_policy_noise": (0.0, None, False),
    "target_noise_clip": (0.0, None, False),
    "cells_scale": (1, None, False),
    "torch_threads": (0, None, False),
    "update_threads": (0, None, False),
}


def check_agent_kwargs(algo: str, kwargs: dict[str, Any], where: str = "agent.kwargs") -> None:
    """Check ``agent.kwargs`` against the constructor of ``algo`` before any model is built.

    ``FastPPO``'s arguments are ``cellgym.vocab.FAST_PPO_KWARGS`` (``learners.run.check_config``
    checks the rest of its config).

    Raises:
        SpecError: For a name the constructor does not take (listing the ones it does, with a
            close match first when there is one) or a value out of its range (``KWARG_RANGES``;
            numbers only: schedules given as strings or callables are left to SB3).
    """
    import difflib
    import inspect

    from cellgym.vocab import SpecError, check_above, check_range

    if algo == "FastPPO":  # learners.ppo: its own arguments
        from cellgym.vocab import FAST_PPO_KWARGS

        allowed = sorted(FAST_PPO_KWARGS)
    else:
        params = inspect.signature(algo_class(algo).__init__).parameters
        allowed = sorted(
            n
            for n, p in params.items()
            if n != "self" and not n.startswith("_") and n not in _SET_BY_FACTORY
            and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        )  # fmt: skip
    for name, value in kwargs.items():
        if name not in allowed:
            close = difflib.get_close_matches(str(name), allowed, n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            set_here = f" ({name} is set by train.py itself)" if name in _SET_BY_FACTORY else ""
            raise SpecError(
                f"{where}.{name} is not an argument of {algo}{set_here}: {hint}"
                f"allowed {', '.join(allowed)}"
            )
        bounds = KWARG_RANGES.get(str(name))
        if bounds is None or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        low, high, low_open = bounds
        check = check_above if low_open else check_range
        check(
            f"{where}.{name}",
            value,
            -math.inf if low is None else low,
            math.inf if high is None else high,
        )


def env_kwargs(cfg: TrainConfig) -> dict[str, Any]:
    """Environment arguments shared by training and evaluation."""
    return {"max_change": cfg.max_change, "action_mode": cfg.action_mode}


def fast_model(cfg: TrainConfig) -> Any:
    """``FastSimParams`` of ``cfg.scenario`` with ``cfg.backend.fast_params`` applied."""
    from envs.fast_params import fast_sim_params

    return fast_sim_params(cfg.scenario, dict(cfg.backend.fast_params))


def _make_ns3_env_fn(spec: dict[str, Any], reward: dict[str, Any], kwargs: dict[str, Any]):
    def make() -> Any:
        from stable_baselines3.common.monitor import Monitor

        from envs.lte_cell import LteCellEnv

        return Monitor(LteCellEnv(scenario=spec, reward=reward, backend="ns3", **kwargs))

    return make


def make_base_vec_env(cfg: TrainConfig, seed: int) -> Any:
    """The training environments of ``cfg.backend`` (without normalisation), seeded ``seed + i``."""
    from dataclasses import asdict

    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecMonitor

    from cellgym.processes import use_standard_start_method

    spec, reward = asdict(cfg.scenario), asdict(cfg.reward)
    n = cfg.backend.n_envs
    if cfg.mixture.scenarios:
        from agents.mixture import make_mixture_vec_env

        venv = make_mixture_vec_env(cfg, seed, env_kwargs(cfg))
        return FeatureVecEnv(VecMonitor(venv), cfg.features)
    if len(cfg.scenario.agent_flows) > 1:
        return FeatureVecEnv(VecMonitor(make_multi_agent_vec_env(cfg, seed)), cfg.features)
    if cfg.backend.name == "fast":
        from envs.fastsim.vector_env import make_fast_vec_env

        venv = make_fast_vec_env(
            spec,
            n,
            seed=seed,
            sb3=True,
            reward=reward,
            params=fast_model(cfg),
            **env_kwargs(cfg),
        )
        return FeatureVecEnv(VecMonitor(venv), cfg.features)
    kwargs = {**env_kwargs(cfg), "timeout_s": cfg.timeout_s}
    fns = [_make_ns3_env_fn(spec, reward, kwargs)] * n
    if n > 1:
        use_standard_start_method(cfg.backend.start_method)
        venv = SubprocVecEnv(fns, start_method=cfg.backend.start_method)
    else:
        venv = DummyVecEnv(fns)
    venv.seed(seed)
    return FeatureVecEnv(venv, cfg.features)


def make_multi_agent_vec_env(cfg: TrainConfig, seed: int) -> Any:
    """Several agent flows as one SB3 vector env: one policy shared by every flow.

    Each of ``cfg.backend.n_envs`` cells contributes one entry per agent flow (``n_envs x
    agents`` entries). The fast backend steps all cells in one batch
    (``envs.fastsim.multi_vector_env.FastMultiAgentVecEnv``); on ns-3 each cell is a
    ``MultiFlowCellEnv`` (worker processes when ``n_envs > 1``) turned into entries by
    SuperSuit's ``pettingzoo_env_to_vec_env_v1`` and ``concat_vec_envs_v1``. Either way an
    agent whose flow has not started or has ended observes zeros and gets no reward
    (``keep_agents=True``: a vector needs a fixed set of agents).
    """
    from dataclasses import asdict

    spec, reward = asdict(cfg.scenario), asdict(cfg.reward)
    if cfg.backend.name == "fast":
        from envs.fastsim.multi_vector_env import FastMultiAgentVecEnv

        fast = FastMultiAgentVecEnv(
            spec, cfg.backend.n_envs, reward, params=fast_model(cfg), **env_kwargs(cfg)
        )
        fast.seed(seed)
        return fast

    import supersuit as ss

    from envs.multi_flow import MultiFlowCellEnv

    kwargs: dict[str, Any] = {**env_kwargs(cfg), "backend": "ns3", "timeout_s": cfg.timeout_s}
    env = MultiFlowCellEnv(spec, reward, keep_agents=True, **kwargs)
    venv = ss.pettingzoo_env_to_vec_env_v1(env)
    n = cfg.backend.n_envs
    venv = ss.concat_vec_envs_v1(
        venv, n, num_cpus=n if n > 1 else 0, base_class="stable_baselines3"
    )
    out = _SeededVecEnv(venv)
    out.seed(seed)
    return out


class _SeededVecEnv:
    """SuperSuit's SB3 vector with the seeding SB3 expects (its own ``seed`` fails).

    ``seed(s)`` takes effect at the next ``reset``: cell ``i`` resets with seed ``s + i``, and
    later resets continue from each cell's generator.
    """

    def __new__(cls, venv: Any) -> Any:
        from stable_baselines3.common.vec_env import VecEnvWrapper

        class SeededVecEnv(VecEnvWrapper):
            def __init__(self, venv: Any) -> None:
                super().__init__(venv)
                self._seed: int | None = None

            def seed(self, seed: int | None = None) -> list[int | None]:
                self._seed = seed
                return [None if seed is None else seed + i for i in range(self.num_envs)]

            def reset(self) -> Any:
                if self._seed is None:
                    return self.venv.reset()
                obs, self.venv.reset_infos = self.venv.venv.reset(seed=self._seed)
                self._seed = None
                return obs

            def step_wait(self) -> Any:
                return self.venv.step_wait()

        return SeededVecEnv(venv)


def make_vec_env(cfg: TrainConfig, seed: int, vecnormalize_path: Path | None = None) -> Any:
    """Training environments wrapped in ``VecNormalize`` (fresh, or loaded from a checkpoint)."""
    from stable_baselines3.common.vec_env import VecNormalize

    base = make_base_vec_env(cfg, seed)
    if vecnormalize_path is not None:
        venv = VecNormalize.load(str(vecnormalize_path), base)
        venv.training = True
        return venv
    return VecNormalize(
        base,
        norm_obs=cfg.norm_obs,
        norm_reward=cfg.norm_reward,
        clip_obs=10.0,
        gamma=float(cfg.agent.kwargs.get("gamma", 0.99)),
    )


def make_model(cfg: TrainConfig, venv: Any, seed: int) -> Any:
    """A fresh SB3 model of ``cfg.agent`` on ``venv``."""
    cls = algo_class(cfg.agent.algo)
    policy_kwargs = {**cfg.agent.policy_kwargs, "net_arch": list(cfg.agent.net_arch)}
    return cls(
        cfg.agent.policy,
        venv,
        seed=seed,
        verbose=0,
        device="cpu",
        policy_kwargs=policy_kwargs,
        **cfg.agent.kwargs,
    )


def load_model(cfg: TrainConfig, path: Path, venv: Any, replay_buffer: Path | None = None) -> Any:
    """A model saved at ``path``, attached to ``venv`` (and its replay buffer, if off-policy)."""
    cls = algo_class(cfg.agent.algo)
    model = cls.load(str(path), env=venv, device="cpu")
    if replay_buffer is not None and replay_buffer.is_file():
        model.load_replay_buffer(str(replay_buffer))
    return model
