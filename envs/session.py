"""A backend-neutral episode of a cell: raw observations in, absolute actions out.

``open_session`` picks the backend's session; both emit the same ``RawStep`` records
(``envs.records``), so the environment, the evaluation and the metrics never depend on which
backend ran.
"""

from __future__ import annotations

from cellgym.scenario import ScenarioSpec
from cellgym.vocab import BACKENDS, check_choice
from envs.records import RawStep, Session

__all__ = ["BACKENDS", "RawStep", "Session", "open_session"]


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
