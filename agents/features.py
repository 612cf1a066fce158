"""Observation features a policy computes from ``LteCellEnv``'s raw observation.

``features=raw`` gives the policy the 11 raw values (normalised by ``VecNormalize``).
``features=derived`` appends quantities that XRC's rules are written in (XRC paper, section
III.B), so that a small network does not have to learn divisions of raw values spanning orders of
magnitude:

| idx | name | meaning |
|-----|------|---------|
| 11 | log2_cwnd_over_twnd | ``log2(cwnd / (C_i * RTT_min))``: window vs. the fair-share BDP |
| 12 | log2_delivery_over_fair | ``log2(delivery rate / C_i)`` |
| 13 | queueing_delay_ms | ``max(0, RTT_mean - RTT_min)``: the end-to-end queueing delay |
| 14 | has_feedback | 1 once the fair share and the minimum RTT are known |
| 15 | loss | 1 when the step saw a loss event |

The transform is part of the policy: ``FeatureVecEnv`` applies it during training and
``agents.factory.NormalizedPolicy`` before ``predict`` in evaluation, so evaluation still drives
the unmodified environment through ``evaluation.rollouts.run_policy``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnvWrapper

from cellgym.vocab import FEATURE_SETS, check_choice
from envs.contract import OBS

DERIVED_FIELDS: tuple[str, ...] = (
    "log2_cwnd_over_twnd",
    "log2_delivery_over_fair",
    "queueing_delay_ms",
    "has_feedback",
    "loss",
)
_CLIP = 8.0  # log2 ratios beyond +-8 (a factor of 256) carry no more information


def transform(obs: np.ndarray, features: str) -> np.ndarray:
    """The policy's input for raw observations ``[..., 11]``."""
    obs = np.asarray(obs, dtype=np.float32)
    if features == "raw":
        return obs
    if features != "derived":
        check_choice("features", features, FEATURE_SETS)
    rate = obs[..., OBS["fair_rate_mbps"]].astype(np.float64)
    rtt_min = obs[..., OBS["rtt_min_ms"]].astype(np.float64)
    rtt_mean = obs[..., OBS["rtt_mean_ms"]].astype(np.float64)
    cwnd = obs[..., OBS["cwnd_bytes"]].astype(np.float64)
    delivery = obs[..., OBS["delivery_rate_mbps"]].astype(np.float64)
    known = (rate > 0) & (rtt_min > 0)
    twnd = np.where(known, rate * 1e6 / 8 * rtt_min / 1000.0, 1.0)
    ratio = np.where(known & (cwnd > 0), np.log2(np.maximum(cwnd, 1.0) / twnd), 0.0)
    fair = np.where(rate > 0, np.log2(np.maximum(delivery, 1e-3) / np.maximum(rate, 1e-3)), 0.0)
    qdelay = np.where((rtt_min > 0) & (rtt_mean > 0), np.maximum(0.0, rtt_mean - rtt_min), 0.0)
    extra = np.stack(
        [
            np.clip(ratio, -_CLIP, _CLIP),
            np.clip(fair, -_CLIP, _CLIP),
            qdelay,
            known.astype(np.float64),
            (obs[..., OBS["loss_events"]] > 0).astype(np.float64),
        ],
        axis=-1,
    )
    return np.concatenate([obs, extra.astype(np.float32)], axis=-1)


def feature_space(raw: spaces.Box, features: str) -> spaces.Box:
    """The observation space of ``transform(..., features)``."""
    if features == "raw":
        return raw
    n = raw.shape[0] + len(DERIVED_FIELDS)
    low = np.concatenate([raw.low, [-_CLIP, -_CLIP, 0.0, 0.0, 0.0]]).astype(np.float32)
    high = np.concatenate([raw.high, [_CLIP, _CLIP, 1e5, 1.0, 1.0]]).astype(np.float32)
    return spaces.Box(low=low, high=high, shape=(n,), dtype=np.float32)


class FeatureVecEnv(VecEnvWrapper):
    """Apply ``transform`` to every observation (``terminal_observation`` included).

    Args:
        venv: Environments with ``LteCellEnv``'s raw observation.
        features: One of ``FEATURE_SETS``.
    """

    def __init__(self, venv: Any, features: str) -> None:
        self.features = features
        super().__init__(venv, observation_space=feature_space(venv.observation_space, features))

    def reset(self) -> np.ndarray:
        """Reset and transform."""
        return transform(self.venv.reset(), self.features)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Step and transform (also each finished episode's last observation)."""
        obs, reward, done, infos = self.venv.step_wait()
        for info in infos:
            if "terminal_observation" in info:
                info["terminal_observation"] = transform(
                    info["terminal_observation"], self.features
                )
        return transform(obs, self.features), reward, done, infos
