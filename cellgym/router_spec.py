"""The scenario's explicit-feedback router section (XCP, RCP): ``ScenarioSpec.router``.

Both backends read it: ns-3 as program arguments (``--xcpAlpha=...``, the router in
``ns3-scenarios/model/cellgym-explicit-router.cc``), the fast backend as the default of
``FastSimParams.explicit`` (``envs/fastsim/router_params.RouterKnobs``). docs/explicit-feedback.md
gives the equations and where each knob acts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from cellgym.vocab import check_above, check_field_types, check_range


@dataclass
class RouterSpec:
    """Knobs of the router at the scenario's bottleneck (used only by XCP or RCP flows).

    Attributes:
        xcp_alpha: XCP's efficiency controller, phi = alpha d S - beta Q: alpha in (0, 1] (0.4).
        xcp_beta: Its beta, in [0, 2] (0.226).
        xcp_shuffle: Share of the capacity XCP shuffles per control interval, [0, 1] (0.1).
        rcp_alpha: RCP's rate update (the evaluation paper's equation 3): alpha in (0, 1] (0.4;
            the paper's flow-completion study uses 0.1).
        rcp_beta: Its beta, in [0, 2] (0.226; the study uses 1.0).
        rcp_update_ms: RCP's update period in ms, [0, 10000] (0: every average RTT).
    """

    xcp_alpha: float = 0.4
    xcp_beta: float = 0.226
    xcp_shuffle: float = 0.1
    rcp_alpha: float = 0.4
    rcp_beta: float = 0.226
    rcp_update_ms: float = 0.0

    def validate(self, where: str = "scenario.router") -> None:
        """Raise ``SpecError`` naming ``<where>.<field>`` and its range for a bad knob."""
        check_field_types(self, where)
        check_above(f"{where}.xcp_alpha", self.xcp_alpha, 0.0, 1.0)
        check_range(f"{where}.xcp_beta", self.xcp_beta, 0.0, 2.0)
        check_range(f"{where}.xcp_shuffle", self.xcp_shuffle, 0.0, 1.0)
        check_above(f"{where}.rcp_alpha", self.rcp_alpha, 0.0, 1.0)
        check_range(f"{where}.rcp_beta", self.rcp_beta, 0.0, 2.0)
        check_range(f"{where}.rcp_update_ms", self.rcp_update_ms, 0.0, 10_000.0)

    def knobs(self) -> dict[str, float]:
        """The knobs by name (the fast backend's ``RouterKnobs`` fields)."""
        return asdict(self)

    def ns3_args(self) -> list[str]:
        """The scenario program's arguments."""
        return [
            f"--xcpAlpha={self.xcp_alpha:g}",
            f"--xcpBeta={self.xcp_beta:g}",
            f"--xcpShuffle={self.xcp_shuffle:g}",
            f"--rcpAlpha={self.rcp_alpha:g}",
            f"--rcpBeta={self.rcp_beta:g}",
            f"--rcpUpdateMs={self.rcp_update_ms:g}",
        ]
