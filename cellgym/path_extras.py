"""The scenario's path extras (fast backend only): ACK loss on the reverse path, ON/OFF UDP.

``ScenarioSpec`` fields (docs/xcp-r.md):

- ``ack_loss``: probability in [0, 1) that an ACK is lost between the bottleneck and the server,
  each independently (``envs/fastsim/ack_loss.py``).
- ``udp_sources`` (0 to 256) ON/OFF UDP sources sharing the wired bottleneck (``bottleneck_mbps``
  or ``bottleneck_trace`` required; ``envs/fastsim/cross_traffic.py``), each of
  ``udp_rate_mbps`` while on; on from ``udp_start_s`` (s) for ``udp_on_s``, then off for
  ``udp_off_s``, and so on: ``fixed`` periods (all sources switch together) or ``exponential``
  ones with those means (``udp_periods``).

The ns-3 backend refuses them by field until it has them.
"""

from __future__ import annotations

from typing import Any

from cellgym.vocab import FAST_ONLY_CCAS, UDP_PERIODS, SpecError, check_choice, check_range

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
    """Raise ``SpecError`` naming the field of a path extra or fast-only controller it uses."""
    if spec.ack_loss > 0:
        raise SpecError(
            f"scenario.ack_loss={spec.ack_loss!r} does not run on the ns3 backend yet: "
            "allowed 0 (fast backend only)"
        )
    if spec.udp_sources > 0:
        raise SpecError(
            f"scenario.udp_sources={spec.udp_sources} does not run on the ns3 backend yet: "
            "allowed 0 (fast backend only)"
        )
    for i, f in enumerate(spec.flows):
        if f.cca in FAST_ONLY_CCAS:
            raise SpecError(
                f"scenario.flows[{i}].cca={f.cca!r} does not run on the ns3 backend yet "
                "(fast backend only: docs/explicit-feedback.md)"
            )
