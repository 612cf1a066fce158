"""One typed specification of a cell scenario, rendered into the ns-3 program's command line.

A scenario is defined once, here, and every backend reads it: the ns-3 backend renders it into
``cellgym-lte`` arguments (``ScenarioSpec.to_ns3_args``); the fast backend reads the same fields.
The dataclasses double as Hydra structured configs (``configs/schema.py``), so a typo or an
out-of-range value in a config fails at start with the field's name.

>>> spec = ScenarioSpec(flows=[FlowSpec(cca="cubic"), FlowSpec(cca="agent")])
>>> spec.agent_flows
[1]
>>> "--flows=ue=0,cca=cubic,traffic=bulk,start=0;ue=0,cca=agent,traffic=bulk,start=0" in (
...     spec.to_ns3_args(seed=3))
True
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cellgym.vocab import (
    CCAS,
    LTE_BANDWIDTHS_RBS,
    MOBILITY_MODES,
    NATIVE_CCAS,
    NS3_TCPS,
    TRAFFIC_TYPES,
    SpecError,
    check_choice,
    check_range,
)

__all__ = [
    "CCAS",
    "MOBILITY_MODES",
    "NATIVE_CCAS",
    "NS3_TCPS",
    "TRAFFIC_TYPES",
    "FlowSpec",
    "ScenarioSpec",
    "SpecError",
]

BANDWIDTHS_RBS = LTE_BANDWIDTHS_RBS


def _check_range(name: str, value: float, low: float, high: float = math.inf) -> None:
    check_range(name, value, low, high)


def _check_choice(name: str, value: Any, allowed: tuple[Any, ...]) -> None:
    check_choice(name, value, allowed)


@dataclass
class FlowSpec:
    """One TCP download from its own server to a UE.

    Attributes:
        ue: Index of the receiving UE, in ``[0, num_ues)``.
        cca: Congestion control: one of ``NS3_TCPS``, ``xrc`` (the native XRC sender) or
            ``agent`` (the Python policy's flow).
        traffic: ``bulk`` (backlogged), ``video`` (ON/OFF at ``video_rate_mbps``) or ``short``
            (``size_bytes`` then close).
        start_s: Start time in seconds. The program starts flows no earlier than 0.1 s (the
            UE's attach) and adds a seeded random offset of 0-100 ms, so that seeds give
            independent replications of otherwise deterministic scenarios.
        stop_s: Stop time in seconds; ``None`` runs to the end of the simulation.
        delay_ms: Extra one-way delay on this flow's server link, in ms.
        size_bytes: Transfer size of a ``short`` flow, in bytes.
        video_rate_mbps: Sending rate of a ``video`` flow while ON, in Mbit/s.
        video_on_s: ON time per period of a ``video`` flow, in seconds.
        video_period_s: Period of a ``video`` flow, in seconds.
        ssthresh_segments: Initial slow-start threshold in segments; 0 keeps ns-3's default.
    """

    ue: int = 0
    cca: str = "cubic"
    traffic: str = "bulk"
    start_s: float = 0.0
    stop_s: float | None = None
    delay_ms: float = 0.0
    size_bytes: int = 0
    video_rate_mbps: float = 17.0
    video_on_s: float = 2.0
    video_period_s: float = 10.0
    ssthresh_segments: int = 0

    def __post_init__(self) -> None:
        """Validate every field."""
        self.validate("flow")

    def validate(self, where: str) -> None:
        """Raise ``SpecError`` naming ``where.<field>`` for the first invalid field."""
        _check_range(f"{where}.ue", self.ue, 0)
        _check_choice(f"{where}.cca", self.cca, CCAS)
        _check_choice(f"{where}.traffic", self.traffic, TRAFFIC_TYPES)
        _check_range(f"{where}.start_s", self.start_s, 0.0)
        if self.stop_s is not None:
            _check_range(f"{where}.stop_s", self.stop_s, self.start_s)
        _check_range(f"{where}.delay_ms", self.delay_ms, 0.0, 10_000.0)
        if self.traffic == "short":
            _check_range(f"{where}.size_bytes", self.size_bytes, 1, 1e12)
        _check_range(f"{where}.video_rate_mbps", self.video_rate_mbps, 0.001, 10_000.0)
        _check_range(f"{where}.video_on_s", self.video_on_s, 0.0, self.video_period_s)
        _check_range(f"{where}.video_period_s", self.video_period_s, 0.001)
        _check_range(f"{where}.ssthresh_segments", self.ssthresh_segments, 0, 1e9)

    def to_token(self) -> str:
        """Render as one ``--flows`` item (see docs/scenario-contract.md)."""
        parts = [f"ue={self.ue}", f"cca={self.cca}", f"traffic={self.traffic}"]
        parts.append(f"start={self.start_s:g}")
        if self.stop_s is not None:
            parts.append(f"stop={self.stop_s:g}")
        if self.delay_ms:
            parts.append(f"delay_ms={self.delay_ms:g}")
        if self.traffic == "short":
            parts.append(f"size_bytes={self.size_bytes}")
        if self.traffic == "video":
            parts.append(f"video_rate_mbps={self.video_rate_mbps:g}")
            parts.append(f"video_on_s={self.video_on_s:g}")
            parts.append(f"video_period_s={self.video_period_s:g}")
        if self.ssthresh_segments:
            parts.append(f"ssthresh_segments={self.ssthresh_segments}")
        return ",".join(parts)


def _default_flows() -> list[FlowSpec]:
    return [FlowSpec(cca="agent")]


@dataclass
class ScenarioSpec:
    """An LTE cell: one eNB, EPC, UEs, and TCP downloads from remote servers.

    Defaults follow the XRC paper's set-up: 10 MHz (50 RBs), RLC buffer of 128 MTU-sized packets,
    a 38 ms minimum RTT (about 8 ms on the air interface, 15 ms each way between server and core).

    Attributes:
        name: A label for reports.
        sim_time_s: Simulated duration of an episode, in seconds.
        step_ms: Environment step interval, in ms.
        rbs: Bandwidth in resource blocks (25, 50, 75, 100 = 5, 10, 15, 20 MHz).
        num_ues: Number of UEs.
        distances_m: Initial UE distances from the eNB in metres (one value applies to all UEs).
        mobility: ``static``, or ``random`` (the XRC paper's random distance changes).
        mobility_period_s: Period of random distance changes, in seconds.
        min_distance_m: Lower end of random distances (about 34 Mbit/s at 50 RBs).
        max_distance_m: Upper end of random distances (about 7 Mbit/s at 50 RBs).
        rlc_buffer_pkts: RLC transmit buffer per UE, in 1500-byte packets.
        server_delay_ms: One-way delay between each server and the core, in ms.
        bottleneck_mbps: Rate of an optional wired bottleneck before the core; 0 = none.
        bottleneck_buffer_pkts: Drop-tail buffer of that bottleneck, in packets.
        active_timeout_ms: XRC agent: a flow is active while its packets arrive less than
            this apart, in ms.
        xrc_window_ttis: XRC agent: capacity averaging window, in TTIs.
        flows: The flows.
    """

    name: str = "lte_default"
    sim_time_s: float = 10.0
    step_ms: float = 20.0
    rbs: int = 50
    num_ues: int = 1
    distances_m: list[float] = field(default_factory=lambda: [100.0])
    mobility: str = "static"
    mobility_period_s: float = 2.0
    min_distance_m: float = 100.0
    max_distance_m: float = 380.0
    rlc_buffer_pkts: int = 128
    server_delay_ms: float = 15.0
    bottleneck_mbps: float = 0.0
    bottleneck_buffer_pkts: int = 100
    active_timeout_ms: float = 200.0
    xrc_window_ttis: int = 40
    flows: list[FlowSpec] = field(default_factory=_default_flows)

    def __post_init__(self) -> None:
        """Convert nested mappings to ``FlowSpec`` and validate every field."""
        self.flows = [f if isinstance(f, FlowSpec) else FlowSpec(**dict(f)) for f in self.flows]
        self.distances_m = [float(d) for d in self.distances_m]
        self.validate()

    def validate(self) -> None:
        """Raise ``SpecError`` naming ``scenario.<field>`` for the first invalid field."""
        _check_range("scenario.sim_time_s", self.sim_time_s, 0.001, 1e6)
        _check_range("scenario.step_ms", self.step_ms, 1.0, 10_000.0)
        if self.step_ms != int(self.step_ms):
            raise SpecError(
                f"scenario.step_ms={self.step_ms!r} must be a whole number of ms (TTIs)"
            )
        _check_choice("scenario.rbs", self.rbs, BANDWIDTHS_RBS)
        _check_range("scenario.num_ues", self.num_ues, 1, 256)
        if len(self.distances_m) not in (1, self.num_ues):
            raise SpecError(
                f"scenario.distances_m has {len(self.distances_m)} values: "
                f"give 1 or num_ues={self.num_ues}"
            )
        for i, d in enumerate(self.distances_m):
            _check_range(f"scenario.distances_m[{i}]", d, 1.0, 600.0)
        _check_choice("scenario.mobility", self.mobility, MOBILITY_MODES)
        _check_range("scenario.mobility_period_s", self.mobility_period_s, 0.01)
        _check_range("scenario.min_distance_m", self.min_distance_m, 1.0, 600.0)
        _check_range("scenario.max_distance_m", self.max_distance_m, self.min_distance_m, 600.0)
        _check_range("scenario.rlc_buffer_pkts", self.rlc_buffer_pkts, 1, 1_000_000)
        _check_range("scenario.server_delay_ms", self.server_delay_ms, 0.0, 10_000.0)
        _check_range("scenario.bottleneck_mbps", self.bottleneck_mbps, 0.0, 100_000.0)
        _check_range("scenario.bottleneck_buffer_pkts", self.bottleneck_buffer_pkts, 1, 1_000_000)
        _check_range("scenario.active_timeout_ms", self.active_timeout_ms, 1.0, 100_000.0)
        _check_range("scenario.xrc_window_ttis", self.xrc_window_ttis, 1, 10_000)
        if not self.flows:
            raise SpecError("scenario.flows is empty: give at least one flow")
        for i, flow in enumerate(self.flows):
            flow.validate(f"scenario.flows[{i}]")
            if flow.ue >= self.num_ues:
                raise SpecError(
                    f"scenario.flows[{i}].ue={flow.ue} is out of range: "
                    f"allowed [0, {self.num_ues - 1}] (num_ues={self.num_ues})"
                )

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | ScenarioSpec) -> ScenarioSpec:
        """Build from a mapping (a Hydra/OmegaConf node or a dict); unknown keys are errors."""
        if isinstance(cfg, ScenarioSpec):
            return cfg
        try:
            from omegaconf import DictConfig, OmegaConf

            if isinstance(cfg, DictConfig):
                cfg = OmegaConf.to_container(cfg, resolve=True)  # type: ignore[assignment]
        except ImportError:  # pragma: no cover - omegaconf is a dependency
            pass
        data = dict(cfg)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise SpecError(f"scenario has unknown field(s) {unknown}: allowed {sorted(known)}")
        flows = []
        flow_known = {f.name for f in dataclasses.fields(FlowSpec)}
        for i, f in enumerate(data.get("flows", [])):
            f = dict(f)
            bad = sorted(set(f) - flow_known)
            if bad:
                raise SpecError(
                    f"scenario.flows[{i}] has unknown field(s) {bad}: allowed {sorted(flow_known)}"
                )
            try:
                flows.append(FlowSpec(**f))
            except SpecError as exc:
                raise SpecError(str(exc).replace("flow.", f"scenario.flows[{i}].", 1)) from None
        if "flows" in data:
            data["flows"] = flows
        return cls(**data)

    @property
    def agent_flows(self) -> list[int]:
        """Indices of the flows the Python policy drives (``cca == "agent"``), in order."""
        return [i for i, f in enumerate(self.flows) if f.cca == "agent"]

    @property
    def num_steps(self) -> int:
        """Environment steps in one episode (observations after the initial one)."""
        return int(math.ceil(self.sim_time_s * 1000.0 / self.step_ms - 1e-9))

    def ue_distances(self) -> list[float]:
        """Initial distance of every UE, in metres."""
        if len(self.distances_m) == 1:
            return self.distances_m * self.num_ues
        return list(self.distances_m)

    def to_ns3_args(self, seed: int) -> list[str]:
        """Render the ``cellgym-lte`` command-line arguments (without the program and port).

        Args:
            seed: ns-3 ``RngRun`` (>= 1).
        """
        _check_range("seed", seed, 1, 2**31 - 1)
        return [
            f"--simSeed={seed}",
            f"--simTime={self.sim_time_s:g}",
            f"--stepMs={int(self.step_ms)}",
            f"--rbs={self.rbs}",
            f"--numUes={self.num_ues}",
            "--distances=" + ",".join(f"{d:g}" for d in self.distances_m),
            f"--mobility={self.mobility}",
            f"--mobilityPeriodS={self.mobility_period_s:g}",
            f"--minDistance={self.min_distance_m:g}",
            f"--maxDistance={self.max_distance_m:g}",
            f"--rlcBufferPkts={self.rlc_buffer_pkts}",
            f"--serverDelayMs={self.server_delay_ms:g}",
            f"--bottleneckMbps={self.bottleneck_mbps:g}",
            f"--bottleneckBufferPkts={self.bottleneck_buffer_pkts}",
            f"--activeTimeoutMs={self.active_timeout_ms:g}",
            f"--xrcWindowTtis={self.xrc_window_ttis}",
            "--flows=" + ";".join(f.to_token() for f in self.flows),
        ]
