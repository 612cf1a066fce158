"""The scenario's path extras: ACK loss on the reverse path and ON/OFF UDP sources.

``ScenarioSpec`` fields (docs/xcp-r.md), on both backends:

- ``ack_loss``: probability in [0, 1) that an ACK is lost between the bottleneck and the server,
  each independently (fast: ``envs/fastsim/ack_loss.py``; ns-3: ``cellgym-ack-loss.h``).
- ``udp_sources`` (0 to 256) ON/OFF UDP sources sharing the wired bottleneck (``bottleneck_mbps``
  or ``bottleneck_trace`` required; fast: ``envs/fastsim/cross_traffic.py``; ns-3:
  ``cellgym-udp-onoff.h``), each of ``udp_rate_mbps`` while on; on from ``udp_start_s`` (s) for
  ``udp_on_s``, then off for ``udp_off_s``, and so on: ``fixed`` periods (all sources switch
  together) or ``exponential`` ones with those means (``udp_periods``).

Also here: the ns-3 backend's refusal of the fast-only controllers and of mixed router kinds.
"""

from __future__ import annotations

from typing import Any

from cellgym.vocab import (
    EXPLICIT_CCAS,
    FAST_ONLY_CCAS,
    UDP_PERIODS,
    SpecError,
    check_choice,
    check_range,
)

#: Longest time a scenario field may name, s (as ``cellgym.scenario.MAX_TIME_S``).
_MAX_TIME_S = 1e6


def check_path_extras(spec: Any) -> None:
    """Raise ``SpecError`` naming ``scenario.<field>`` for an invalid ACK-loss or UDP field."""
    if not 0.0 <= spec.ack_loss < 1.0:
        raise SpecError(f"scenario.ack_loss={spec.ack_loss!r} is out of range: allowed [0, 1)")
    check_range("scenario.udp_sources", spec.udp_sources, 0, 256)
    check_range("scenario.udp_rate_mbps", spec.udp_rate_mbps, 0.0, 100_000.0)
    check_range("scenario.udp_on_s", spec.udp_on_s, 0.001, _MAX_TIME_S)
    check_range("scenario.udp_off_s", spec.udp_off_s, 0.0, _MAX_TIME_S)
    check_choice("scenario.udp_periods", spec.udp_periods, UDP_PERIODS)
    check_range("scenario.udp_start_s", spec.udp_start_s, 0.0, _MAX_TIME_S)
    if spec.udp_sources > 0 and spec.bottleneck_mbps <= 0 and not spec.bottleneck_trace:
        raise SpecError(
            f"scenario.udp_sources={spec.udp_sources} needs a wired bottleneck: allowed 0 "
            "without bottleneck_mbps or bottleneck_trace"
        )


def check_path_extras_ns3(spec: Any) -> None:
    """Raise ``SpecError`` naming the flow's field: a fast-only controller, or mixed routers."""
    for i, f in enumerate(spec.flows):
        if f.cca in FAST_ONLY_CCAS:
            raise SpecError(
                f"scenario.flows[{i}].cca={f.cca!r} does not run on the ns3 backend yet "
                "(fast backend only: docs/explicit-feedback.md)"
            )
        kinds = {g.cca for g in spec.flows if g.cca in EXPLICIT_CCAS}
        if f.cca in kinds and len(kinds) > 1:
            raise SpecError(
                f"scenario.flows[{i}].cca={f.cca!r}: XCP, XCP-r and RCP flows cannot share "
                "the bottleneck (one router kind per scenario): allowed all xcp, all xcpr or "
                "all rcp"
            )


def path_extras_ns3_args(spec: Any) -> list[str]:
    """The scenario program's ACK-loss and UDP arguments (docs/xcp-r.md "ns-3"); none unused."""
    out = [f"--ackLoss={spec.ack_loss!r}"] if spec.ack_loss > 0 else []
    if spec.udp_sources > 0:
        out += [
            f"--udpSources={spec.udp_sources}",
            f"--udpRateMbps={spec.udp_rate_mbps!r}",
            f"--udpOnS={spec.udp_on_s!r}",
            f"--udpOffS={spec.udp_off_s!r}",
            f"--udpPeriods={spec.udp_periods}",
            f"--udpStartS={spec.udp_start_s!r}",
        ]
    return out
