"""A backend-neutral episode of a cell: raw observations in, absolute actions out.

``open_session`` picks the backend's session; both emit the same ``RawStep`` records
(``envs.records``), so the environment, the evaluation and the metrics never depend on which
backend ran.
"""

from __future__ import annotations

from cellgym.scenario import ScenarioSpec
from cellgym.traces import bottleneck_series, channel_series
from cellgym.vocab import BACKENDS, TRACE_SOURCES, check_choice
from envs.records import RawStep, Session

__all__ = ["BACKENDS", "RawStep", "Session", "check_backend_supports", "open_session"]


def check_backend_supports(spec: ScenarioSpec, backend: str) -> None:
    """Raise ``SpecError`` naming the field if ``backend`` cannot run ``spec``.

    Environments call it at construction, so a scenario the fast model does not cover (a TCP it
    has no model of, an NR cell before its model exists) fails there, not at the first
    ``reset()``. The ns-3 backend refuses only the controllers the fast backend alone has.
    """
    check_choice("backend", backend, BACKENDS)
    if backend == "fast":
        from envs.fastsim.params import FastSimParams

        FastSimParams.from_spec(spec)
    else:
        spec.check_ns3()
    # The trace files either simulator would read at reset, read now, the same on both: a
    # missing, empty or malformed one is a SpecError naming the field or the file and line.
    bottleneck_series(spec)
    if spec.channel.source in TRACE_SOURCES:
        channel_series(spec.channel, spec.cell.slot_s)


def open_session(
    spec: ScenarioSpec, seed: int, backend: str = "ns3", timeout_s: float = 60.0
) -> Session:
    """Create (not start) an episode of ``spec`` on ``backend`` with ns-3 ``RngRun`` ``seed``."""
    check_choice("backend", backend, BACKENDS)
    if backend == "fast":
        from envs.fastsim.session import FastSession

        return FastSession(spec, seed)
    from envs.ns3_session import Ns3Session

    return Ns3Session(spec, seed, timeout_s=timeout_s)
