"""The cell section of a scenario (``ScenarioSpec.cell``): radio access technology and bandwidth.

Its own module so that ``cellgym.scenario`` stays one screenful per section; ``cellgym.scenario``
re-exports ``CellSpec``.
"""

from __future__ import annotations

from dataclasses import dataclass

from cellgym.vocab import (
    CELL_TYPES,
    LTE_BANDWIDTHS_RBS,
    NR_BANDWIDTHS_MHZ,
    NR_FREQUENCY_RANGES_GHZ,
    NR_LOS_CONDITIONS,
    NR_MCS_TABLES,
    NR_MIN_FREQUENCY_GHZ,
    NR_NUMEROLOGIES,
    NR_PROPAGATION_SCENARIOS,
    NR_SCHEDULERS,
    SpecError,
    check_choice,
    check_field_types,
    check_range,
    nr_frequency_range,
)
from cellgym.workload import cell_field_owner

__all__ = ["NS3_PROGRAMS", "CellSpec"]

#: The ns-3 scenario program of each cell type.
NS3_PROGRAMS: dict[str, str] = {"lte": "cellgym-lte", "nr": "cellgym-lte"}


@dataclass
class CellSpec:
    """The cell: which radio access technology and how much bandwidth.

    Attributes:
        type: Cell type: ``lte`` (one eNB of ns-3's LTE module; fast model: LTE's 1 ms TTI and
            3GPP TBS tables) or ``nr`` (one gNB of 5G-LENA; fast model: slots of the numerology,
            TS 38.214 MCS and TBS, TR 38.901 path loss).
        rbs: LTE only: bandwidth in resource blocks (25, 50, 75, 100 = 5, 10, 15, 20 MHz).
        numerology: NR only: mu, subcarrier spacing 15 * 2**mu kHz, slots of 1 / 2**mu ms
            (0-2 in FR1, 2-3 in FR2).
        bandwidth_mhz: NR only: channel bandwidth in MHz (FR1 up to 100, FR2 up to 400; the range
            depends on the numerology, TS 38.101).
        frequency_ghz: NR only: carrier frequency in GHz (FR1 0.41-7.125, FR2 24.25-52.6).
        propagation: NR only: TR 38.901 scenario, ``umi`` (street canyon), ``uma`` or ``rma``.
        los: NR only: TR 38.901 line of sight: ``probabilistic`` (its distance-dependent
            probability, re-drawn as the UE moves), or always ``los`` / ``nlos``.
        scheduler: NR only: ``pf`` (proportional fair) or ``rr`` (round robin), OFDMA.
        mcs_table: NR only: TS 38.214 MCS table, ``64qam`` or ``256qam``.
        wired_mbps: Wired only (``type: wired``, a dumbbell's last hop: no radio, no HARQ, a fixed
            delay): the link's rate in Mbit/s; 0 = unlimited.
    """

    type: str = "lte"
    rbs: int = 50
    numerology: int = 1
    bandwidth_mhz: float = 20.0
    frequency_ghz: float = 3.5
    propagation: str = "umi"
    los: str = "los"
    scheduler: str = "pf"
    mcs_table: str = "64qam"
    wired_mbps: float = 0.0

    #: Fields that only one cell type reads (setting them for the other type is an error).
    LTE_FIELDS = ("rbs",)
    NR_FIELDS = (
        "numerology",
        "bandwidth_mhz",
        "frequency_ghz",
        "propagation",
        "los",
        "scheduler",
        "mcs_table",
    )
    WIRED_FIELDS = ("wired_mbps",)

    def __post_init__(self) -> None:
        """Validate every field."""
        self.validate("scenario.cell")

    def validate(self, where: str) -> None:
        """Raise ``SpecError`` naming ``where.<field>`` for the first invalid field."""
        check_field_types(self, where)
        check_choice(f"{where}.type", self.type, CELL_TYPES)
        defaults = CellSpec.__dataclass_fields__
        foreign = {
            "lte": self.NR_FIELDS + self.WIRED_FIELDS,
            "nr": self.LTE_FIELDS + self.WIRED_FIELDS,
            "wired": self.LTE_FIELDS + self.NR_FIELDS,
        }[self.type]
        for name in foreign:
            if getattr(self, name) != defaults[name].default:
                other = cell_field_owner(name, self)
                raise SpecError(
                    f"{where}.{name}={getattr(self, name)!r} does not apply to an "
                    f"{self.type.upper()} cell: it is an {other} field"
                )
        check_choice(f"{where}.rbs", self.rbs, LTE_BANDWIDTHS_RBS)
        check_choice(f"{where}.numerology", self.numerology, NR_NUMEROLOGIES)
        check_choice(f"{where}.propagation", self.propagation, NR_PROPAGATION_SCENARIOS)
        check_choice(f"{where}.los", self.los, NR_LOS_CONDITIONS)
        check_choice(f"{where}.scheduler", self.scheduler, NR_SCHEDULERS)
        check_choice(f"{where}.mcs_table", self.mcs_table, NR_MCS_TABLES)
        fr = nr_frequency_range(self.frequency_ghz)
        if fr is None:
            ranges = " or ".join(
                f"{lo:g}-{hi:g} ({n})" for n, (lo, hi) in NR_FREQUENCY_RANGES_GHZ.items()
            )
            raise SpecError(
                f"{where}.frequency_ghz={self.frequency_ghz!r} is outside NR's frequency "
                f"ranges: {ranges} GHz"
            )
        if self.frequency_ghz < NR_MIN_FREQUENCY_GHZ:
            raise SpecError(
                f"{where}.frequency_ghz={self.frequency_ghz!r} is below "
                f"{NR_MIN_FREQUENCY_GHZ:g} GHz, where TR 38.901's channel models start: allowed "
                f"[{NR_MIN_FREQUENCY_GHZ:g}, 7.125] (FR1) or [24.25, 52.6] (FR2)"
            )
        allowed = NR_BANDWIDTHS_MHZ.get((fr, self.numerology))
        if allowed is None:
            mus = ", ".join(str(mu) for f, mu in NR_BANDWIDTHS_MHZ if f == fr)
            raise SpecError(
                f"{where}.numerology={self.numerology} is not used in {fr} "
                f"(frequency_ghz={self.frequency_ghz:g}): choose one of {mus}"
            )
        check_range(f"{where}.bandwidth_mhz", self.bandwidth_mhz, *allowed)
        check_range(f"{where}.wired_mbps", self.wired_mbps, 0.0, 100_000.0)

    @property
    def ns3_program(self) -> str:
        """The ns-3 scenario program (``ns3-scenarios/examples/``) that builds this cell type."""
        if self.type not in NS3_PROGRAMS:
            raise SpecError(
                f"scenario.cell.type={self.type!r} does not run on the ns3 backend yet "
                "(fast backend only: docs/xcp-rcp-fct/README.md)"
            )
        return NS3_PROGRAMS[self.type]

    @property
    def slot_s(self) -> float:
        """The scheduling interval: LTE's 1 ms TTI, or the NR slot of the numerology."""
        return 1e-3 / 2**self.numerology if self.type == "nr" else 1e-3

    def ns3_args(self) -> list[str]:
        """This section's arguments of the scenario program."""
        if self.type == "lte":
            return [f"--rbs={self.rbs}"]
        return [
            "--cellType=nr",
            f"--numerology={self.numerology}",
            f"--bandwidthMhz={self.bandwidth_mhz:g}",
            f"--frequencyGhz={self.frequency_ghz:g}",
            f"--propagation={self.propagation}",
            f"--los={self.los}",
            f"--scheduler={self.scheduler}",
            f"--mcsTable={self.mcs_table}",
        ]
