"""What every backend's session is and emits: ``RawStep`` records and the ``Session`` protocol.

Both backends produce the same ``RawStep`` records (docs/scenario-contract.md names the columns), so
the environment, the evaluation and the metrics never depend on which backend ran. The backends
import this module; ``envs.session.open_session`` imports the backends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

__all__ = ["RawStep", "Session"]


@dataclass
class RawStep:
    """One step of a cell, as the scenario emits it.

    Attributes:
        t: Simulated time at the end of the step, in seconds.
        flows: ``[F, len(FLOW_FIELDS)]`` per-flow values (counters over the step).
        ues: ``[U, len(UE_FIELDS)]`` per-UE values.
        done: The episode ended (simulated time reached ``sim_time_s``).
    """

    t: float
    flows: np.ndarray
    ues: np.ndarray
    done: bool


class Session(Protocol):
    """One episode of one cell on some backend."""

    def start(self) -> RawStep:
        """Start the episode and return the initial observation (t = 0)."""
        ...

    def step(self, actions: np.ndarray) -> RawStep:
        """Apply ``[A, 2]`` actions (cwnd bytes, pacing Mbit/s per agent flow); advance a step."""
        ...

    def close(self) -> None:
        """End the episode and release its resources; idempotent."""
        ...
