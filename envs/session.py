"""A backend-neutral episode of a cell: raw observations in, absolute actions out.

Both backends produce the same ``RawStep`` records (docs/scenario-contract.md names the columns), so
the environment, the evaluation and the metrics never depend on which backend ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from cellgym.scenario import ScenarioSpec
from cellgym.vocab import BACKENDS, check_choice

__all__ = ["BACKENDS", "RawStep", "Session", "open_session"]


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


def open_session(
    spec: ScenarioSpec, seed: int, backend: str = "ns3", timeout_s: float = 60.0
) -> Session:
    """Create (not start) an episode of ``spec`` on ``backend`` with ns-3 ``RngRun`` ``seed``."""
    if backend == "ns3":
        from envs.ns3_session import Ns3Session

        return Ns3Session(spec, seed, timeout_s=timeout_s)
    if backend == "fast":
        from envs.fastsim.session import FastSession

        return FastSession(spec, seed)
    check_choice("backend", backend, BACKENDS)
    raise AssertionError(f"backend {backend!r} is in BACKENDS but has no session")
