"""The explicit-feedback router's knobs (XCP, RCP) and their slice of the scalar vector.

``FastSimParams.explicit`` holds a ``RouterKnobs`` (a mapping is accepted too, as from a config);
``router_scalars`` packs them from ``params.P_ROUTER`` on (``RP_*`` offsets), with the router the
scenario's flows need (``codes.ROUTER_*``: on when a flow runs XCP or RCP; one kind per scenario).
docs/explicit-feedback.md gives the equations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from cellgym.vocab import SpecError
from envs.fastsim.codes import (
    RCP_HEADER_BYTES,
    ROUTER_NONE,
    ROUTER_OF_CCA,
    ROUTER_RCP,
    ROUTER_XCP,
    XCP_HEADER_BYTES,
    cca_code,
)
from envs.fastsim.knobs import knobs_from

# -- offsets from ``params.P_ROUTER`` -----------------------------------------------------------
RP_KIND = 0  # codes.ROUTER_*: the bottleneck's router, or none
RP_ALPHA = 1  # the router's alpha (XCP's or RCP's)
RP_BETA = 2  # the router's beta
RP_XCP_SHUFFLE = 3  # XCP: share of the capacity shuffled per control interval
RP_RCP_UPDATE_MS = 4  # RCP: update period T, ms (0: every average RTT d)
RP_HDR_BYTES = 5  # bytes of the congestion header in each data packet (0: none)
RP_LEN = 6

#: Allowed range of each knob, ``(low, high, low open)``.
RANGES: dict[str, tuple[float, float, bool]] = {
    "xcp_alpha": (0.0, 1.0, True),
    "xcp_beta": (0.0, 2.0, False),
    "xcp_shuffle": (0.0, 1.0, False),
    "rcp_alpha": (0.0, 1.0, True),
    "rcp_beta": (0.0, 2.0, False),
    "rcp_update_ms": (0.0, 10000.0, False),
}


@dataclass(frozen=True)
class RouterKnobs:
    """Knobs of the router-assisted controls.

    Attributes:
        xcp_alpha, xcp_beta: XCP's efficiency controller, phi = alpha d S - beta Q (0.4, 0.226,
            as XCP's specification and the evaluation paper).
        xcp_shuffle: XCP's bandwidth shuffling: this share of the capacity is redistributed per
            control interval (0.1).
        rcp_alpha, rcp_beta: RCP's rate update (equation 3 of the evaluation paper): 0.4, 0.226
            as XCP's by default; the paper's flow-completion study uses 0.1, 1.0.
        rcp_update_ms: RCP's update period T in ms (0: every average RTT d, as equation 3).
    """

    xcp_alpha: float = 0.4
    xcp_beta: float = 0.226
    xcp_shuffle: float = 0.1
    rcp_alpha: float = 0.4
    rcp_beta: float = 0.226
    rcp_update_ms: float = 0.0

    def __post_init__(self) -> None:
        for name, (lo, hi, open_low) in RANGES.items():
            v = getattr(self, name)
            if not (lo < v <= hi if open_low else lo <= v <= hi):
                low = "(" if open_low else "["
                raise SpecError(f"fastsim.explicit.{name}={v!r}: allowed {low}{lo:g}, {hi:g}]")


def router_knobs(value: RouterKnobs | Mapping | None) -> RouterKnobs:
    """``value`` as validated knobs (a mapping's keys must be ``RouterKnobs`` fields)."""
    return knobs_from(RouterKnobs, value, "fastsim.explicit")


def check_router(value: RouterKnobs | Mapping | None, spec) -> RouterKnobs:
    """Validated knobs, and the scenario's flows checked for one router kind."""
    router_kind(spec)
    return router_knobs(value)


def router_kind(spec) -> int:
    """``codes.ROUTER_*`` the scenario's flows need; ``SpecError`` when XCP and RCP mix."""
    kinds = [ROUTER_OF_CCA.get(cca_code(f.cca), ROUTER_NONE) for f in spec.flows]
    if ROUTER_XCP in kinds and ROUTER_RCP in kinds:
        i = max(kinds.index(ROUTER_XCP), kinds.index(ROUTER_RCP))
        raise SpecError(
            f"scenario.flows[{i}].cca={spec.flows[i].cca!r}: XCP and RCP flows cannot share the "
            "bottleneck (one router kind per scenario): allowed all xcp or all rcp"
        )
    return max(kinds, default=ROUTER_NONE)


def router_scalars(knobs: RouterKnobs, spec) -> np.ndarray:
    """The ``RP_*`` values of the scenario (from ``params.P_ROUTER`` in the scalar vector)."""
    kind = router_kind(spec)
    out = np.zeros(RP_LEN)
    out[RP_KIND] = kind
    rcp = kind == ROUTER_RCP
    out[RP_ALPHA] = knobs.rcp_alpha if rcp else knobs.xcp_alpha
    out[RP_BETA] = knobs.rcp_beta if rcp else knobs.xcp_beta
    out[RP_XCP_SHUFFLE] = knobs.xcp_shuffle
    out[RP_RCP_UPDATE_MS] = knobs.rcp_update_ms
    out[RP_HDR_BYTES] = {ROUTER_XCP: XCP_HEADER_BYTES, ROUTER_RCP: RCP_HEADER_BYTES}.get(kind, 0)
    return out
