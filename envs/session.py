"""A backend-neutral episode of a cell: raw observations in, absolute actions out.

``open_session`` picks the backend's session; both emit the same ``RawStep`` records
(``envs.records``), so the environment, the evaluation and the metrics never depend on which
backend ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cellgym.scenario import ScenarioSpec
from cellgym.traces import bottleneck_series, channel_series
from cellgym.vocab import BACKENDS, TRACE_SOURCES, check_choice
from envs.fast_params import check_fast_params, fast_sim_params
from envs.records import RawStep, Session

__all__ = ["BACKENDS", "RawStep", "Session", "check_backend_supports", "open_session"]


def check_backend_supports(
    spec: ScenarioSpec, backend: str, fast_params: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Raise ``SpecError`` naming the field if ``backend`` cannot run ``spec`` (with overrides).

    Environments call it at construction, so a scenario the fast model does not cover (a TCP it
    has no model of, an NR cell before its model exists) fails there, not at the first
    ``reset()``. The ns-3 backend refuses only the controllers the fast backend alone has, and
    any ``fast_params`` (``envs.fast_params``). Returns the checked ``fast_params`` as a dict.
    """
    check_choice("backend", backend, BACKENDS)
    overrides = check_fast_params(fast_params, backend)
    if backend == "fast":
        fast_sim_params(spec, overrides)
    else:
        spec.check_ns3()
    # The trace files either simulator would read at reset, read now, the same on both: a
    # missing, empty or malformed one is a SpecError naming the field or the file and line.
    bottleneck_series(spec)
    if spec.channel.source in TRACE_SOURCES:
        channel_series(spec.channel, spec.cell.slot_s)
    return overrides


def open_session(
    spec: ScenarioSpec,
    seed: int,
    backend: str = "ns3",
    timeout_s: float = 60.0,
    fast_params: Mapping[str, Any] | None = None,
) -> Session:
    """Create (not start) an episode of ``spec`` on ``backend`` with ns-3 ``RngRun`` ``seed``.

    ``fast_params`` overrides ``FastSimParams`` fields of the fast backend's model
    (``envs.fast_params``); the ns-3 backend refuses it with a ``SpecError``.
    """
    check_choice("backend", backend, BACKENDS)
    overrides = check_fast_params(fast_params, backend)
    if backend == "fast":
        from envs.fastsim.session import FastSession

        params = fast_sim_params(spec, overrides) if overrides else None
        return FastSession(spec, seed, params)
    from envs.ns3_session import Ns3Session

    return Ns3Session(spec, seed, timeout_s=timeout_s)
