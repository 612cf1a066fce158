"""PPO for thousands of fast cells stepped as one batch: one self-contained file, CleanRL's way.

Stable-Baselines3's PPO drives the fast simulator's cells through a stack of ``VecEnv`` wrappers
and a rollout buffer that pay Python per step and per cell (info dicts, ``VecMonitor``, buffer
copies), and its update pays for many small minibatches. Here the whole batch of cells is one
numpy array (``learners.cells.FastCells``, or any ``BatchEnv``), and:

- policy inference runs once per step on every cell in torch, without autograd;
- the rollout lives in preallocated tensors ``[n_steps, num_envs, ...]``;
- observation and reward normalisation are SB3's ``VecNormalize`` arithmetic on whole arrays,
  with SB3's ``RunningMeanStd`` (so the statistics export as a ``VecNormalize``);
- GAE runs over time with every cell at once;
- the update takes large minibatches and keeps its statistics as tensors until the end.

The algorithm, network and initialisation are SB3's ``PPO`` with ``MlpPolicy`` (separate policy
and value MLPs with tanh, orthogonal init with gains sqrt(2), 0.01 and 1, a state-independent
Gaussian with ``log_std_init``, Adam with eps 1e-5, clipped surrogate, unclipped value loss,
per-minibatch advantage normalisation, gradient-norm clipping), and its parameter names are
those of SB3's ``ActorCriticPolicy``: ``learners.policy.PPOPolicy`` gives the trained policy SB3's
``predict``, and its ``export_sb3`` writes an SB3 model and ``VecNormalize`` that ``evaluate.py``
loads like any SB3 run. Not implemented: learning-rate and
clip-range schedules, value clipping, gSDE, bootstrapping of time-limit truncations (the fast
cells report the end of an episode as termination, which SB3's path does not bootstrap either).

>>> from learners.cells import FastCells
>>> cells = FastCells([({"flows": [{"cca": "agent"}], "sim_time_s": 1.0}, {}, 8)], seed=0)
>>> agent = PPO(cells, PPOConfig(n_steps=4, batch_size=16, n_epochs=1, net_arch=(8,), seed=0))
>>> agent.learn(64).num_timesteps
64
>>> agent.timings["update"] > 0
True
"""

from __future__ import annotations

import copy
import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.running_mean_std import RunningMeanStd
from torch import nn

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
#: ``VecNormalize``'s epsilon in its square roots.
EPSILON = 1e-8


class BatchEnv(Protocol):
    """What ``PPO`` steps: ``num_envs`` environments as arrays, each reset when its episode ends.

    ``step`` returns the next observations ``[N, D]`` (a finished environment's first one of its
    next episode), rewards ``[N]`` and episode ends ``[N]`` (not bootstrapped).
    """

    num_envs: int
    observation_space: spaces.Box
    action_space: spaces.Box

    def reset(self) -> np.ndarray: ...  # noqa: D102

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...  # noqa: D102


@dataclass(frozen=True)
class PPOConfig:
    """Hyperparameters (SB3's names and meanings); defaults: the fast learner's configuration.

    Attributes:
        n_steps: Steps per cell in a rollout (a rollout is ``n_steps * num_envs`` samples).
        batch_size: Samples per minibatch.
        n_epochs: Passes over each rollout.
        learning_rate: Adam's step size (constant).
        gamma: Discount factor (also the reward normalisation's).
        gae_lambda: GAE's lambda.
        clip_range: PPO's ratio clip.
        ent_coef: Entropy bonus weight.
        vf_coef: Value loss weight.
        max_grad_norm: Gradient-norm clip.
        normalize_advantage: Normalise advantages per minibatch.
        target_kl: Stop an update's epochs once the approximate KL exceeds 1.5 times this.
        net_arch: Hidden layers of the policy MLP and, separately, of the value MLP.
        log_std_init: Initial log standard deviation of the Gaussian actions.
        ortho_init: SB3's orthogonal initialisation.
        norm_obs: Normalise observations by running statistics (``VecNormalize``).
        norm_reward: Scale rewards by the running discounted return's deviation.
        clip_obs: Clip normalised observations to +-this.
        clip_reward: Clip scaled rewards to +-this.
        torch_threads: Torch's intra-op threads, set by ``learn`` (0: leave them).
        update_threads: Torch's intra-op threads during an update, while the simulator is idle
            (0: ``torch_threads``).
        seed: Seeds the network's initialisation, the action noise and the minibatch order.
        overlap: Collect the next rollout on a second thread while the update runs, with the
            policy and value function from before that update (a copy): one update of policy
            lag, as in asynchronous PPO. The importance ratios and the clip are then relative to
            that behaviour policy. The rollout's action noise has its own generator (seeded
            ``seed + 1``), so a run is reproducible; ``False``: SB3's synchronous PPO.
    """

    n_steps: int = 32
    batch_size: int = 8192
    n_epochs: int = 4
    learning_rate: float = 3e-4
    gamma: float = 0.98
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    normalize_advantage: bool = True
    target_kl: float | None = None
    net_arch: tuple[int, ...] = (64, 64)
    log_std_init: float = -1.0
    ortho_init: bool = True
    norm_obs: bool = True
    norm_reward: bool = True
    clip_obs: float = 10.0
    clip_reward: float = 10.0
    torch_threads: int = 0
    update_threads: int = 0
    seed: int = 0
    overlap: bool = False

    def __post_init__(self) -> None:
        """Check the ranges."""
        for name in ("n_steps", "batch_size", "n_epochs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)!r}: allowed [1, inf)")
        if not 0.0 <= self.gamma <= 1.0 or not 0.0 <= self.gae_lambda <= 1.0:
            raise ValueError("gamma and gae_lambda: allowed [0, 1]")
        if self.learning_rate <= 0 or self.clip_range <= 0 or self.max_grad_norm <= 0:
            raise ValueError("learning_rate, clip_range and max_grad_norm: allowed (0, inf)")
        object.__setattr__(self, "net_arch", tuple(int(n) for n in self.net_arch))


def _mlp(n_in: int, hidden: Sequence[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for n_out in hidden:
        layers += [nn.Linear(n_in, n_out), nn.Tanh()]
        n_in = n_out
    return nn.Sequential(*layers)


class _Trunks(nn.Module):
    """The two MLPs, named as SB3's ``MlpExtractor`` names them."""

    def __init__(self, obs_dim: int, hidden: Sequence[int]) -> None:
        super().__init__()
        self.policy_net = _mlp(obs_dim, hidden)
        self.value_net = _mlp(obs_dim, hidden)


class ActorCritic(nn.Module):
    """SB3's ``ActorCriticPolicy`` for Box spaces, with its parameter names.

    Policy and value MLPs, a linear mean, a linear value and a state-independent log std; the
    ``state_dict`` loads into SB3's policy of the same ``net_arch``.

    Args:
        obs_dim: Input width.
        act_dim: Action width.
        net_arch: Hidden layers of each MLP.
        log_std_init: Initial log standard deviation.
        ortho_init: Orthogonal weights (gains sqrt(2) for the MLPs, 0.01 for the mean, 1 for the
            value) and zero biases, as SB3.
    """

    def __init__(
        self,
        obs_dim: int,
        act_dim: int,
        net_arch: Sequence[int] = (64, 64),
        log_std_init: float = 0.0,
        ortho_init: bool = True,
    ) -> None:
        super().__init__()
        last = net_arch[-1] if net_arch else obs_dim
        self.mlp_extractor = _Trunks(obs_dim, net_arch)
        self.action_net = nn.Linear(last, act_dim)
        self.value_net = nn.Linear(last, 1)
        self.log_std = nn.Parameter(torch.full((act_dim,), float(log_std_init)))
        if ortho_init:
            for module, gain in (
                (self.mlp_extractor, math.sqrt(2)),
                (self.action_net, 0.01),
                (self.value_net, 1.0),
            ):
                for layer in module.modules():
                    if isinstance(layer, nn.Linear):
                        nn.init.orthogonal_(layer.weight, gain=gain)
                        nn.init.zeros_(layer.bias)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Action means ``[B, A]`` and values ``[B]``."""
        mean = self.action_net(self.mlp_extractor.policy_net(obs))
        value = self.value_net(self.mlp_extractor.value_net(obs)).squeeze(-1)
        return mean, value

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """Values ``[B]``."""
        return self.value_net(self.mlp_extractor.value_net(obs)).squeeze(-1)

    def mean(self, obs: torch.Tensor) -> torch.Tensor:
        """Action means ``[B, A]``."""
        return self.action_net(self.mlp_extractor.policy_net(obs))


def gaussian_log_prob(
    actions: torch.Tensor, mean: torch.Tensor, log_std: torch.Tensor
) -> torch.Tensor:
    """Log density ``[B]`` of ``actions`` under independent Gaussians (summed over dimensions)."""
    z = (actions - mean) * torch.exp(-log_std)
    return (-0.5 * z.square() - log_std).sum(-1) - _LOG_SQRT_2PI * actions.shape[-1]


def _mean(values: deque) -> float:
    return float(np.mean(values)) if values else float("nan")


def normalize_obs(obs: np.ndarray, rms: RunningMeanStd | None, clip: float) -> np.ndarray:
    """``VecNormalize.normalize_obs``: ``(obs - mean) / sqrt(var + eps)`` clipped, float32."""
    if rms is None:
        return np.asarray(obs, dtype=np.float32)
    return np.clip((obs - rms.mean) / np.sqrt(rms.var + EPSILON), -clip, clip).astype(np.float32)


@dataclass
class _Buffers:
    """The rollout, preallocated: ``[n_steps, num_envs, ...]``."""

    obs: torch.Tensor
    actions: torch.Tensor
    log_probs: torch.Tensor
    values: torch.Tensor
    rewards: torch.Tensor
    dones: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor

    @classmethod
    def zeros(cls, n_steps: int, n: int, obs_dim: int, act_dim: int) -> _Buffers:
        z = torch.zeros
        return cls(
            z(n_steps, n, obs_dim), z(n_steps, n, act_dim), z(n_steps, n), z(n_steps, n),
            z(n_steps, n), z(n_steps, n), z(n_steps, n), z(n_steps, n),
        )  # fmt: skip


@dataclass
class EpisodeStats:
    """Raw returns and lengths of the last 100 finished episodes (what ``VecMonitor`` logs)."""

    returns: deque[float] = field(default_factory=lambda: deque(maxlen=100))
    lengths: deque[int] = field(default_factory=lambda: deque(maxlen=100))


class PPO:
    """The learner: ``learn`` alternates ``collect_rollout`` and ``update``.

    Args:
        env: The batch of environments (observations are the policy's inputs).
        config: Hyperparameters.
        features: The feature set ``env``'s observations were made with (``agents.features``),
            kept with the policy so that ``predict`` on raw observations applies it.

    Attributes:
        num_timesteps: Environment steps so far (over all environments).
        iterations: Updates so far.
        timings: Seconds in ``env`` (stepping the batch), ``inference`` (the rollout's forward
            passes and sampling), ``rollout_other`` (normalisation, buffers, GAE, episode
            statistics) and ``update``.
        last_stats: The latest update's losses, KL, clip fraction, explained variance and
            episode statistics.
    """

    def __init__(
        self, env: BatchEnv, config: PPOConfig | None = None, features: str = "raw"
    ) -> None:
        self.env = env
        self.cfg = cfg = config or PPOConfig()
        self.features = features
        n = env.num_envs
        self.obs_dim = int(env.observation_space.shape[0])
        self.act_dim = int(env.action_space.shape[0])
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(cfg.seed)
            self.net = ActorCritic(
                self.obs_dim, self.act_dim, cfg.net_arch, cfg.log_std_init, cfg.ortho_init
            )
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=cfg.learning_rate, eps=1e-5)
        self.generator = torch.Generator().manual_seed(cfg.seed)
        # The rollout's action noise: the same generator as the update's minibatch order, unless
        # the two run at once (overlap), where each thread has its own.
        self._noise = torch.Generator().manual_seed(cfg.seed + 1) if cfg.overlap else self.generator
        self.obs_rms = RunningMeanStd(shape=(self.obs_dim,)) if cfg.norm_obs else None
        self.ret_rms = RunningMeanStd(shape=()) if cfg.norm_reward else None
        self._returns = np.zeros(n)
        self.buf = _Buffers.zeros(cfg.n_steps, n, self.obs_dim, self.act_dim)
        # overlap: the rollout being collected during an update, and the policy collecting it.
        self._spare = (
            _Buffers.zeros(cfg.n_steps, n, self.obs_dim, self.act_dim) if cfg.overlap else None
        )
        self._behaviour: ActorCritic | None = None
        self._threads = 0  # torch's intra-op threads of rollouts and updates (set by learn)
        self._obs: torch.Tensor | None = None  # the normalised observation to act on
        self._ep_return = np.zeros(n)
        self._ep_length = np.zeros(n, dtype=np.int64)
        self.episodes = EpisodeStats()
        self.num_timesteps = 0
        self.iterations = 0
        self.timings = {"env": 0.0, "inference": 0.0, "rollout_other": 0.0, "update": 0.0}
        self.last_stats: dict[str, float] = {}

    # -- normalisation (VecNormalize's arithmetic, training mode) --------------------------------
    def _normalize(self, obs: np.ndarray) -> torch.Tensor:
        if self.obs_rms is not None:
            self.obs_rms.update(obs)
        return torch.from_numpy(normalize_obs(obs, self.obs_rms, self.cfg.clip_obs))

    def _scale_reward(self, reward: np.ndarray, done: np.ndarray) -> np.ndarray:
        if self.ret_rms is None:
            return reward.astype(np.float32)
        self._returns = self._returns * self.cfg.gamma + reward
        self.ret_rms.update(self._returns)
        scaled = np.clip(
            reward / np.sqrt(self.ret_rms.var + EPSILON),
            -self.cfg.clip_reward,
            self.cfg.clip_reward,
        )
        self._returns[done] = 0.0
        return scaled.astype(np.float32)

    # -- rollout --------------------------------------------------------------------------------
    def collect_rollout(self) -> None:
        """Step every environment ``n_steps`` times; fill the buffers, advantages and returns."""
        self._collect(self.net, self.buf)
        self.num_timesteps += self.cfg.n_steps * self.env.num_envs

    def _collect(self, net: ActorCritic, buf: _Buffers) -> None:
        """A rollout into ``buf`` acting with ``net`` (the learner's, or its copy under overlap)."""
        self._torch_threads()
        clock = time.perf_counter
        t_start = clock()
        t_env = t_inf = 0.0
        if self._obs is None:
            obs = self.env.reset()
            t_env += clock() - t_start
            self._obs = self._normalize(obs)
        cfg = self.cfg
        low, high = self.env.action_space.low, self.env.action_space.high
        for t in range(cfg.n_steps):
            t0 = clock()
            with torch.no_grad():
                mean, value = net(self._obs)
                log_std = net.log_std
                noise = torch.randn(mean.shape, generator=self._noise)
                action = mean + torch.exp(log_std) * noise
                log_prob = (-0.5 * noise.square() - log_std).sum(-1) - _LOG_SQRT_2PI * self.act_dim
            t1 = clock()
            obs, reward, done = self.env.step(np.clip(action.numpy(), low, high))
            t2 = clock()
            buf.obs[t] = self._obs
            buf.actions[t] = action
            buf.log_probs[t] = log_prob
            buf.values[t] = value
            buf.rewards[t] = torch.from_numpy(self._scale_reward(reward, done))
            buf.dones[t] = torch.from_numpy(done)
            self._obs = self._normalize(obs)
            self._track_episodes(reward, done)
            t_inf += t1 - t0
            t_env += t2 - t1
        with torch.no_grad():
            t0 = clock()
            last_value = net.value(self._obs)
            t_inf += clock() - t0
            self._gae(last_value, buf)
        self.timings["env"] += t_env
        self.timings["inference"] += t_inf
        self.timings["rollout_other"] += clock() - t_start - t_env - t_inf

    def _track_episodes(self, reward: np.ndarray, done: np.ndarray) -> None:
        self._ep_return += reward
        self._ep_length += 1
        if done.any():
            self.episodes.returns.extend(self._ep_return[done].tolist())
            self.episodes.lengths.extend(self._ep_length[done].tolist())
            self._ep_return[done] = 0.0
            self._ep_length[done] = 0

    def _gae(self, last_value: torch.Tensor, buf: _Buffers | None = None) -> None:
        """Generalised advantage estimates over time, every environment at once."""
        buf = self.buf if buf is None else buf
        gamma, lam = self.cfg.gamma, self.cfg.gae_lambda
        gae = torch.zeros_like(last_value)
        next_value = last_value
        for t in reversed(range(self.cfg.n_steps)):
            live = 1.0 - buf.dones[t]
            delta = buf.rewards[t] + gamma * next_value * live - buf.values[t]
            gae = delta + gamma * lam * live * gae
            buf.advantages[t] = gae
            next_value = buf.values[t]
        torch.add(buf.advantages, buf.values, out=buf.returns)

    def _torch_threads(self) -> int:
        """Torch's intra-op threads in this thread, set to the learner's; the count.

        Those ``learn`` began with (or ``torch_threads``): another library's thread pool may have
        changed them (numba's OpenMP layer, once the cells step on threads).
        """
        want = self._threads or torch.get_num_threads()
        if torch.get_num_threads() != want:
            torch.set_num_threads(want)
        return want

    # -- update ---------------------------------------------------------------------------------
    def update(self) -> dict[str, float]:
        """``n_epochs`` passes of minibatch gradient steps over the rollout; returns statistics."""
        t_start = time.perf_counter()
        threads = self._torch_threads()
        if self.cfg.update_threads > 0:
            torch.set_num_threads(self.cfg.update_threads)
        try:
            stats = self._update()
        finally:
            torch.set_num_threads(threads)
        self.timings["update"] += time.perf_counter() - t_start
        return stats

    def _update(self) -> dict[str, float]:
        cfg, buf, net = self.cfg, self.buf, self.net
        total = cfg.n_steps * self.env.num_envs
        obs = buf.obs.view(total, self.obs_dim)
        actions = buf.actions.view(total, self.act_dim)
        old_log_probs, advantages = buf.log_probs.view(total), buf.advantages.view(total)
        returns = buf.returns.view(total)
        params = list(net.parameters())
        sums = torch.zeros(4)  # policy loss, value loss, clip fraction, approx. KL
        n_minibatches = 0
        stop = False
        for _ in range(cfg.n_epochs):
            order = torch.randperm(total, generator=self.generator)
            for start in range(0, total, cfg.batch_size):
                idx = order[start : start + cfg.batch_size]
                mean, value = net(obs[idx])
                log_std = net.log_std
                log_ratio = gaussian_log_prob(actions[idx], mean, log_std) - old_log_probs[idx]
                ratio = torch.exp(log_ratio)
                adv = advantages[idx]
                if cfg.normalize_advantage and adv.numel() > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                clipped = torch.clamp(ratio, 1.0 - cfg.clip_range, 1.0 + cfg.clip_range)
                policy_loss = -torch.min(adv * ratio, adv * clipped).mean()
                value_loss = torch.nn.functional.mse_loss(returns[idx], value)
                loss = policy_loss + cfg.vf_coef * value_loss
                if cfg.ent_coef != 0.0:
                    entropy = (0.5 + _LOG_SQRT_2PI + log_std).sum()  # the same for every sample
                    loss = loss - cfg.ent_coef * entropy
                with torch.no_grad():
                    approx_kl = ((ratio - 1.0) - log_ratio).mean()
                    clip_fraction = ((ratio - 1.0).abs() > cfg.clip_range).float().mean()
                    sums += torch.stack([policy_loss, value_loss, clip_fraction, approx_kl])
                n_minibatches += 1
                if cfg.target_kl is not None and approx_kl.item() > 1.5 * cfg.target_kl:
                    stop = True
                    break
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
                self.optimizer.step()
            if stop:
                break
        self.iterations += 1
        means = (sums / max(n_minibatches, 1)).tolist()
        var_returns = returns.var().item()
        explained = (
            float("nan")
            if var_returns == 0
            else 1.0 - (returns - buf.values.view(total)).var().item() / var_returns
        )
        names = ("policy_loss", "value_loss", "clip_fraction", "approx_kl")
        stats = dict(zip(names, means, strict=True))
        stats.update(
            explained_variance=explained,
            std=float(torch.exp(net.log_std.detach()).mean()),
            ep_return_mean=_mean(self.episodes.returns),
            ep_length_mean=_mean(self.episodes.lengths),
        )
        self.last_stats = stats
        return stats

    # -- the loop -------------------------------------------------------------------------------
    def learn(
        self, total_timesteps: int, callback: Callable[[PPO], bool | None] | None = None
    ) -> PPO:
        """Train until ``num_timesteps`` reaches ``total_timesteps`` (whole rollouts).

        Args:
            total_timesteps: Environment steps to reach, over all environments (SB3 counts the
                same way).
            callback: Called after every update with the learner; returning ``False`` stops.
        """
        self._threads = self.cfg.torch_threads or self._threads or torch.get_num_threads()
        torch.set_num_threads(self._threads)
        if self.cfg.overlap:
            return self._learn_overlapped(total_timesteps, callback)
        while self.num_timesteps < total_timesteps:
            self.collect_rollout()
            self.update()
            if callback is not None and callback(self) is False:
                break
        return self

    def _learn_overlapped(
        self, total_timesteps: int, callback: Callable[[PPO], bool | None] | None
    ) -> PPO:
        """``learn`` with the next rollout collected on a second thread during each update.

        The rollout collected during update ``k`` acts with a copy of the policy before it; it
        is counted in ``num_timesteps`` when its own update starts, so a callback sees the steps
        that the updates so far have used. A rollout collected while the callback stopped the
        run is dropped.
        """
        rollout = self.cfg.n_steps * self.env.num_envs
        if self._behaviour is None:
            self._behaviour = copy.deepcopy(self.net).requires_grad_(False)
        assert self._spare is not None
        ready = False  # a rollout in self.buf not yet used by an update
        with ThreadPoolExecutor(1, thread_name_prefix="ppo-rollout") as pool:
            while self.num_timesteps < total_timesteps:
                if not ready:
                    self._collect(self.net, self.buf)
                self.num_timesteps += rollout
                pending = None
                if self.num_timesteps < total_timesteps:
                    self._behaviour.load_state_dict(self.net.state_dict())
                    pending = pool.submit(self._collect, self._behaviour, self._spare)
                try:
                    self.update()
                finally:
                    if pending is not None:
                        pending.result()
                if pending is not None:
                    self.buf, self._spare = self._spare, self.buf
                ready = pending is not None
                if callback is not None and callback(self) is False:
                    break
        return self
