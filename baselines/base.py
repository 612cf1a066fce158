"""The policy interface shared by hand-designed controllers and learned ones.

A controller implements Stable-Baselines3's ``predict(observation, state, episode_start,
deterministic) -> (action, state)``, so one evaluation loop serves baselines and trained models.
Baselines read raw (not normalised) observations of ``LteCellEnv`` (``envs.contract.OBS_FIELDS``).
"""

from __future__ import annotations

from typing import Any

import numpy as np


class BaselinePolicy:
    """Base class: vectorised ``predict`` over a batch (or a single observation)."""

    #: Name used in configs and reports.
    name: str = "baseline"

    def act(self, obs: np.ndarray) -> float:
        """Return the action in [-1, 1] for one raw observation."""
        raise NotImplementedError

    def reset(self) -> None:
        """Forget any per-episode state."""

    def predict(
        self,
        observation: np.ndarray,
        state: tuple[np.ndarray, ...] | None = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, tuple[np.ndarray, ...] | None]:
        """SB3-compatible prediction for one observation ``[n]`` or a batch ``[B, n]``."""
        obs = np.asarray(observation, dtype=np.float64)
        if episode_start is not None and np.any(episode_start):
            self.reset()
        if obs.ndim == 1:
            return np.array([self.act(obs)], dtype=np.float32), state
        actions = np.array([[self.act(o)] for o in obs], dtype=np.float32)
        return actions, state

    def __repr__(self) -> str:
        params: dict[str, Any] = {k: v for k, v in vars(self).items() if not k.startswith("_")}
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in params.items())})"
