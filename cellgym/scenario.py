"""One typed specification of a cell scenario, read by every backend.

A scenario is defined once, here: the cell (``cell``: its type and bandwidth), the channel
(``channel``: where each UE's radio conditions come from), the UEs and the flows. The ns-3 backend
renders it into ``cellgym-lte`` arguments (``ScenarioSpec.to_ns3_args``); the fast backend reads
the same fields. The dataclasses double as Hydra structured configs (``configs/schema.py``), so a
typo or an out-of-range value in a config fails at start with the field's name.
``load_scenario`` is the one way to get a scenario by config name, YAML path or mapping.

>>> spec = ScenarioSpec(flows=[FlowSpec(cca="cubic"), FlowSpec(cca="agent")])
>>> spec.agent_flows
[1]
>>> "--flows=ue=0,cca=cubic,traffic=bulk,start=0;ue=0,cca=agent,traffic=bulk,start=0" in (
...     spec.to_ns3_args(seed=3))
True
>>> load_scenario("fluctuating").channel.mobility
'random'
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cellgym.cell_spec import CellSpec
from cellgym.controllers import TEST_ONLY_NATIVE
from cellgym.path_extras import check_path_extras, check_path_extras_ns3, path_extras_ns3_args
from cellgym.paths import SCENARIO_CONFIGS
from cellgym.router_spec import RouterSpec
from cellgym.traces.spec import (
    bottleneck_ns3_args,
    check_channel_trace,
    check_scenario_traces,
    resolve_buffers,
)
from cellgym.vocab import (
    CCAS,
    CHANNEL_SOURCES,
    MOBILITY_MODES,
    TRACE_SOURCES,
    TRAFFIC_TYPES,
    SpecError,
    check_choice,
    check_field_types,
    check_keys,
    check_range,
)
from cellgym.workload import (
    check_ns3_workload,
    check_pareto_flow,
    check_red,
    pareto_tokens,
    red_ns3_args,
)

__all__ = [
    "CellSpec",
    "ChannelSpec",
    "FlowSpec",
    "ScenarioSpec",
    "SpecError",
    "load_scenario",
    "scenario_names",
]


#: Longest time of a scenario (``sim_time_s``, flow start/stop, periods), in seconds: the
#: scenario program's limit.
MAX_TIME_S = 1e6
#: Slowest wired bottleneck other than none (Mbit/s): ns-3 keeps whole bit/s.
MIN_BOTTLENECK_MBPS = 0.001
#: Most flows in one scenario (each has its own server in ns-3 and its own rings in the fast
#: model, up to a few MB with the longest delays).
MAX_FLOWS = 256
#: Most packets of all UEs' RLC buffers together (``num_ues * rlc_buffer_pkts``): the fast model
#: keeps a slot per packet (40 B) per cell.
MAX_RLC_PKTS_TOTAL = 1_000_000


def _build(cls: type, data: Any, where: str) -> Any:
    """``cls(**data)`` for a mapping, with unknown keys reported under ``where``."""
    if isinstance(data, cls):
        return data
    data = dict(data)
    check_keys(where, data, {f.name for f in dataclasses.fields(cls)})
    return cls(**data)


@dataclass
class ChannelSpec:
    """Where each UE's radio conditions come from.

    Attributes:
        source: ``distance``: each UE's distance from the base station sets its SINR through a
            path-loss model (ns-3: Okumura-Hata in the LTE module; fast model: its fit); or a
            capacity trace replayed for every UE (``docs/traces.md``): ``mahimahi`` (a
            Mahimahi file), ``irish5g`` (an Irish 5G dataset CSV, per-slot synthesis) or
            ``synthetic`` (a seeded generator).
        distances_m: Initial UE distances from the base station in metres (one value applies to
            all UEs).
        mobility: ``static``, or ``random`` (the XRC paper's random distance changes).
        mobility_period_s: Period of random distance changes, in seconds (0.01 to 1e6).
        min_distance_m: Lower end of random distances (about 34 Mbit/s at 50 RBs).
        max_distance_m: Upper end of random distances (about 7 Mbit/s at 50 RBs).
        trace: Trace sources with a file: its path, or its name under the shared traces
            folder (``mahimahi/ATT-LTE-driving.down``).
        generator: ``synthetic`` only: ``markov_blockage``, ``steps`` or ``random_walk``.
        params: The Irish 5G synthesis's or the generator's parameters by name (defaults in
            ``cellgym.traces``); unknown keys are errors.
        trace_seed: Seed of the synthesis or generator; ``None`` uses the run's seed.
        trace_offset_s: Start the replay this far into the trace, in seconds.
        trace_scale: Multiply the trace's capacity (0.001 to 1e4).
    """

    source: str = "distance"
    distances_m: list[float] = field(default_factory=lambda: [100.0])
    mobility: str = "static"
    mobility_period_s: float = 2.0
    min_distance_m: float = 100.0
    max_distance_m: float = 380.0
    trace: str = ""
    generator: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    trace_seed: int | None = None
    trace_offset_s: float = 0.0
    trace_scale: float = 1.0

    def __post_init__(self) -> None:
        """Validate every field."""
        check_field_types(self, "scenario.channel")
        self.distances_m = [float(d) for d in self.distances_m]
        self.validate("scenario.channel")

    def ns3_args(self) -> list[str]:
        """This section's arguments of the scenario program."""
        return [
            "--distances=" + ",".join(f"{d:g}" for d in self.distances_m),
            f"--mobility={self.mobility}",
            f"--mobilityPeriodS={self.mobility_period_s:g}",
            f"--minDistance={self.min_distance_m:g}",
            f"--maxDistance={self.max_distance_m:g}",
            # A trace source: the program then requires the episode's --capacityTrace file
            # (written per seed by the session, envs/ns3_capacity.py).
            *([f"--channelSource={self.source}"] if self.source in TRACE_SOURCES else []),
        ]

    def validate(self, where: str, num_ues: int | None = None) -> None:
        """Raise ``SpecError`` naming ``where.<field>`` for the first invalid field."""
        check_field_types(self, where)
        check_choice(f"{where}.source", self.source, CHANNEL_SOURCES)
        if num_ues is not None and len(self.distances_m) not in (1, num_ues):
            raise SpecError(
                f"{where}.distances_m has {len(self.distances_m)} values: "
                f"give 1 or num_ues={num_ues}"
            )
        if not self.distances_m:
            raise SpecError(f"{where}.distances_m is empty: give 1 or num_ues values")
        for i, d in enumerate(self.distances_m):
            check_range(f"{where}.distances_m[{i}]", d, 1.0, 600.0)
        check_choice(f"{where}.mobility", self.mobility, MOBILITY_MODES)
        check_range(f"{where}.mobility_period_s", self.mobility_period_s, 0.01, MAX_TIME_S)
        check_range(f"{where}.min_distance_m", self.min_distance_m, 1.0, 600.0)
        check_range(f"{where}.max_distance_m", self.max_distance_m, self.min_distance_m, 600.0)
        check_channel_trace(self, where)


@dataclass
class FlowSpec:
    """One TCP download from its own server to a UE.

    Attributes:
        ue: Index of the receiving UE, in ``[0, num_ues)``.
        cca: Congestion control: one of ``NS3_TCPS``, ``xrc`` (the native XRC sender) or
            ``agent`` (the Python policy's flow).
        traffic: ``bulk`` (backlogged), ``video`` (ON/OFF at ``video_rate_mbps``) or ``short``
            (``size_bytes`` then close).
        start_s: Start time in seconds (at most 1e6). The program starts flows no earlier than
            0.1 s (the UE's attach) and adds a seeded random offset of 0-100 ms, so that seeds
            give independent replications of otherwise deterministic scenarios.
        stop_s: Stop time in seconds (``start_s`` to 1e6); ``None`` runs to the end of the
            simulation.
        delay_ms: Extra one-way delay on this flow's server link, in ms.
        size_bytes: Transfer size of a ``short`` flow, in bytes.
        video_rate_mbps: Sending rate of a ``video`` flow while ON, in Mbit/s.
        video_on_s: ON time per period of a ``video`` flow, in seconds.
        video_period_s: Period of a ``video`` flow, in seconds (0.001 to 1e6).
        ssthresh_segments: Initial slow-start threshold in segments (at most 1e6); 0 keeps
            ns-3's default.
        pareto_shape: ``pareto`` traffic (a stream of finite flows, ``cellgym.workload``): shape
            of the truncated Pareto flow sizes (1.01 to 10).
        pareto_mean_pkts: ``pareto``: mean flow size in 1500-byte packets (1 to 1e6).
        pareto_cutoff_pkts: ``pareto``: largest flow size in packets (above the mean, to 1e7).
        pareto_iat_ms: ``pareto``: mean of the exponential inter-arrival times of the stream,
            in ms (0.01 to 1e6). Flows with ``traffic: pareto`` and the same ue, cca, delay and
            ``pareto_*`` values are the slots of one stream.
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
    pareto_shape: float = 1.2
    pareto_mean_pkts: float = 25.0
    pareto_cutoff_pkts: float = 40_000.0
    pareto_iat_ms: float = 3.33

    def __post_init__(self) -> None:
        """Validate every field."""
        self.validate("flow")

    def validate(self, where: str) -> None:
        """Raise ``SpecError`` naming ``where.<field>`` for the first invalid field."""
        check_field_types(self, where)
        check_range(f"{where}.ue", self.ue, 0)
        if self.cca not in TEST_ONLY_NATIVE:  # a test-only sender is accepted, not offered
            check_choice(f"{where}.cca", self.cca, CCAS)
        check_choice(f"{where}.traffic", self.traffic, TRAFFIC_TYPES)
        check_range(f"{where}.start_s", self.start_s, 0.0, MAX_TIME_S)
        if self.stop_s is not None:
            check_range(f"{where}.stop_s", self.stop_s, self.start_s, MAX_TIME_S)
        check_range(f"{where}.delay_ms", self.delay_ms, 0.0, 10_000.0)
        if self.traffic == "short":
            check_range(f"{where}.size_bytes", self.size_bytes, 1, 1e12)
        check_range(f"{where}.video_rate_mbps", self.video_rate_mbps, 0.001, 10_000.0)
        check_range(f"{where}.video_period_s", self.video_period_s, 0.001, MAX_TIME_S)
        check_range(f"{where}.video_on_s", self.video_on_s, 0.0, self.video_period_s)
        check_range(f"{where}.ssthresh_segments", self.ssthresh_segments, 0, 1_000_000)
        check_pareto_flow(self, where)

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
        if self.traffic == "pareto":
            parts.extend(pareto_tokens(self))
        return ",".join(parts)


#: Fields that moved from the top level into a section, for a helpful error on old configs.
_MOVED: dict[str, str] = {
    "rbs": "cell",
    "distances_m": "channel",
    "mobility": "channel",
    "mobility_period_s": "channel",
    "min_distance_m": "channel",
    "max_distance_m": "channel",
}


def _default_flows() -> list[FlowSpec]:
    return [FlowSpec(cca="agent")]


@dataclass
class ScenarioSpec:
    """A cell scenario: one base station, its core network, UEs, and TCP downloads from servers.

    Defaults follow the XRC paper's set-up: an LTE cell of 10 MHz (50 RBs), RLC buffer of 128
    MTU-sized packets, a 38 ms minimum RTT (about 8 ms on the air interface, 15 ms each way between
    server and core), one static UE at 100 m.

    Attributes:
        name: A label for reports.
        sim_time_s: Simulated duration of an episode, in seconds (0.001 to 1e6).
        step_ms: Environment step interval, in ms.
        cell: The cell (``CellSpec``: type and bandwidth).
        channel: The UEs' radio conditions (``ChannelSpec``: source, distances, mobility).
        num_ues: Number of UEs (1 to 256).
        rlc_buffer_pkts: RLC transmit buffer per UE, in 1500-byte packets; all UEs' together
            at most ``MAX_RLC_PKTS_TOTAL`` (1e6).
        server_delay_ms: One-way delay between each server and the core, in ms.
        bottleneck_mbps: Rate of an optional wired bottleneck before the core; 0 = none.
        bottleneck_buffer_pkts: Buffer of that bottleneck, in packets (RED's limit).
        bottleneck_queue: The bottleneck's queue: ``droptail`` or ``red`` (both backends; RED's
            thresholds, maximum probability and EWMA weight below, ns-3 RedQueueDisc's defaults,
            gentle).
        red_min_th_pkts: RED's minimum threshold of the average queue, packets.
        red_max_th_pkts: RED's maximum threshold, packets (above the minimum).
        red_max_p: RED's drop probability at the maximum threshold (ns-3: 1 / LInterm).
        red_weight: RED's EWMA weight of the average queue (ns-3: QW).
        bottleneck_trace: A Mahimahi trace that sets the bottleneck's rate instead (path or
            name under the traces folder; not with ``bottleneck_mbps``).
        buffer_bdp: Zeus buffer regime: the buffer in front of the capacity (the bottleneck's,
            else each UE's RLC buffer) in bandwidth-delay products of the trace's mean rate and
            the base RTT (1, 5, 10 or ``inf``, unlimited; ``cellgym.traces.resolve_buffers``);
            ``None`` keeps the packet counts.
        active_timeout_ms: XRC agent: a flow is active while its packets arrive less than
            this apart, in ms.
        xrc_window_ttis: XRC agent: capacity averaging window, in TTIs.
        router: The explicit-feedback router's knobs (``RouterSpec``: XCP's and RCP's alpha,
            beta, shuffling, update period), read by both backends.
        ack_loss, udp_*: ACK loss on the reverse path and ON/OFF UDP sources at the wired
            bottleneck (``cellgym.path_extras``).
        flows: The flows (1 to ``MAX_FLOWS``, 256).
    """

    name: str = "lte_default"
    sim_time_s: float = 10.0
    step_ms: float = 20.0
    cell: CellSpec = field(default_factory=CellSpec)
    channel: ChannelSpec = field(default_factory=ChannelSpec)
    num_ues: int = 1
    rlc_buffer_pkts: int = 128
    server_delay_ms: float = 15.0
    bottleneck_mbps: float = 0.0
    bottleneck_buffer_pkts: int = 100
    bottleneck_trace: str = ""
    bottleneck_queue: str = "droptail"
    red_min_th_pkts: float = 5.0
    red_max_th_pkts: float = 15.0
    red_max_p: float = 0.02
    red_weight: float = 0.002
    buffer_bdp: float | None = None
    active_timeout_ms: float = 200.0
    xrc_window_ttis: int = 40
    ack_loss: float = 0.0
    udp_sources: int = 0
    udp_rate_mbps: float = 10.0
    udp_on_s: float = 1.0
    udp_off_s: float = 1.0
    udp_periods: str = "fixed"
    udp_start_s: float = 0.0
    flows: list[FlowSpec] = field(default_factory=_default_flows)
    router: RouterSpec = field(default_factory=RouterSpec)

    def __post_init__(self) -> None:
        """Convert nested mappings to their sections and ``FlowSpec`` and validate every field."""
        for name, value in (("cell", self.cell), ("channel", self.channel)):
            if not isinstance(value, Mapping | CellSpec | ChannelSpec):
                raise SpecError(f"scenario.{name}={value!r} is not a mapping: give its fields")
        if not isinstance(self.flows, list | tuple):
            raise SpecError(f"scenario.flows={self.flows!r} is not a list: give a list of flows")
        for i, f in enumerate(self.flows):
            if not isinstance(f, Mapping | FlowSpec):
                raise SpecError(f"scenario.flows[{i}]={f!r} is not a mapping: give its fields")
        self.cell = _build(CellSpec, self.cell, "scenario.cell")
        self.channel = _build(ChannelSpec, self.channel, "scenario.channel")
        if not isinstance(self.router, Mapping | RouterSpec):
            raise SpecError(f"scenario.router={self.router!r} is not a mapping: give its fields")
        self.router = _build(RouterSpec, self.router, "scenario.router")
        self.flows = [f if isinstance(f, FlowSpec) else FlowSpec(**dict(f)) for f in self.flows]
        self.validate()

    def validate(self) -> None:
        """Raise ``SpecError`` naming ``scenario.<field>`` for the first invalid field."""
        check_field_types(self, "scenario")
        check_range("scenario.sim_time_s", self.sim_time_s, 0.001, MAX_TIME_S)
        check_range("scenario.step_ms", self.step_ms, 1.0, 10_000.0)
        if self.step_ms != int(self.step_ms):
            raise SpecError(
                f"scenario.step_ms={self.step_ms!r} must be a whole number of ms (TTIs)"
            )
        check_range("scenario.num_ues", self.num_ues, 1, 256)
        self.cell.validate("scenario.cell")
        self.channel.validate("scenario.channel", self.num_ues)
        check_range("scenario.rlc_buffer_pkts", self.rlc_buffer_pkts, 1, 1_000_000)
        if self.num_ues * self.rlc_buffer_pkts > MAX_RLC_PKTS_TOTAL:
            raise SpecError(
                f"scenario.rlc_buffer_pkts={self.rlc_buffer_pkts} with num_ues={self.num_ues} is "
                f"out of range: allowed num_ues * rlc_buffer_pkts <= {MAX_RLC_PKTS_TOTAL}"
            )
        check_range("scenario.server_delay_ms", self.server_delay_ms, 0.0, 10_000.0)
        if self.bottleneck_mbps != 0:
            # ns-3 rounds a DataRate to whole bit/s (below 1 bit/s: zero, a division by zero);
            # below 1 kbit/s a 1500-byte packet takes over 12 s: 0 (no bottleneck) or a real rate.
            if not MIN_BOTTLENECK_MBPS <= self.bottleneck_mbps <= 100_000.0:
                raise SpecError(
                    f"scenario.bottleneck_mbps={self.bottleneck_mbps!r} is out of range: allowed "
                    f"0 (no bottleneck) or [{MIN_BOTTLENECK_MBPS:g}, 100000]"
                )
        check_range("scenario.bottleneck_buffer_pkts", self.bottleneck_buffer_pkts, 1, 1_000_000)
        check_scenario_traces(self)
        check_red(self)
        check_range("scenario.active_timeout_ms", self.active_timeout_ms, 1.0, 100_000.0)
        check_range("scenario.xrc_window_ttis", self.xrc_window_ttis, 1, 10_000)
        self.router.validate("scenario.router")
        check_path_extras(self)
        if not self.flows:
            raise SpecError("scenario.flows is empty: give at least one flow")
        if len(self.flows) > MAX_FLOWS:
            raise SpecError(
                f"scenario.flows has {len(self.flows)} flows: allowed at most {MAX_FLOWS}"
            )
        for i, flow in enumerate(self.flows):
            flow.validate(f"scenario.flows[{i}]")
            if flow.ue >= self.num_ues:
                raise SpecError(
                    f"scenario.flows[{i}].ue={flow.ue} is out of range: "
                    f"allowed [0, {self.num_ues - 1}] (num_ues={self.num_ues})"
                )

    @classmethod
    def from_config(cls, cfg: Mapping[str, Any] | ScenarioSpec | str | Path) -> ScenarioSpec:
        """Build from a mapping (a Hydra/OmegaConf node or a dict); unknown keys are errors.

        A string or path is a scenario config name or file (``load_scenario``).
        """
        if isinstance(cfg, ScenarioSpec):
            return cfg
        if isinstance(cfg, str | Path):
            return load_scenario(cfg)
        try:
            from omegaconf import DictConfig, OmegaConf

            if isinstance(cfg, DictConfig):
                cfg = OmegaConf.to_container(cfg, resolve=True)  # type: ignore[assignment]
        except ImportError:  # pragma: no cover - omegaconf is a dependency
            pass
        if not isinstance(cfg, Mapping):
            raise SpecError(
                f"scenario={cfg!r} is a {type(cfg).__name__}: give a mapping of its fields, a "
                "ScenarioSpec or a config name"
            )
        data = dict(cfg)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known, key=repr)
        moved = [k for k in unknown if k in _MOVED]
        if moved:
            raise SpecError(
                "; ".join(f"scenario.{k} is now scenario.{_MOVED[k]}.{k}" for k in moved)
            )
        check_keys("scenario", data, known)
        flows = []
        flow_known = {f.name for f in dataclasses.fields(FlowSpec)}
        raw_flows = data.get("flows", [])
        if not isinstance(raw_flows, list | tuple):
            raise SpecError(f"scenario.flows={raw_flows!r} is not a list: give a list of flows")
        for i, f in enumerate(raw_flows):
            if not isinstance(f, Mapping | FlowSpec):
                raise SpecError(f"scenario.flows[{i}]={f!r} is not a mapping: give its fields")
            if isinstance(f, FlowSpec):
                flows.append(f)
                continue
            f = dict(f)
            check_keys(f"scenario.flows[{i}]", f, flow_known)
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
        distances = self.channel.distances_m
        if len(distances) == 1:
            return distances * self.num_ues
        return list(distances)

    def replace(self, **changes: Any) -> ScenarioSpec:
        """A validated copy with top-level fields and/or section fields changed.

        ``spec.replace(sim_time_s=5, channel={"mobility": "static"})`` changes ``sim_time_s``
        and the channel's ``mobility``, keeping the rest.
        """
        for section in ("cell", "channel", "router"):
            value = changes.get(section)
            if isinstance(value, Mapping):
                changes[section] = dataclasses.replace(getattr(self, section), **value)
        return dataclasses.replace(self, **changes)

    def check_ns3(self) -> None:
        """Raise ``SpecError`` naming the field of what the ns-3 backend does not run."""
        check_ns3_workload(self)
        check_path_extras_ns3(self)

    def to_ns3_args(self, seed: int) -> list[str]:
        """Render the scenario program's arguments (without the program and port).

        The program is ``self.cell.ns3_program``; the cell and channel sections render their
        own arguments.

        Args:
            seed: ns-3 ``RngRun`` (>= 1).
        """
        check_range("seed", seed, 1, 2**31 - 1)
        self.check_ns3()
        if self.buffer_bdp is not None:  # Zeus buffer regime -> packets
            return resolve_buffers(self, seed=seed).to_ns3_args(seed)
        return [
            f"--simSeed={seed}",
            f"--simTime={self.sim_time_s:g}",
            f"--stepMs={int(self.step_ms)}",
            *self.cell.ns3_args(),
            f"--numUes={self.num_ues}",
            *self.channel.ns3_args(),
            f"--rlcBufferPkts={self.rlc_buffer_pkts}",
            f"--serverDelayMs={self.server_delay_ms:g}",
            f"--bottleneckMbps={self.bottleneck_mbps:g}",
            f"--bottleneckBufferPkts={self.bottleneck_buffer_pkts}",
            *bottleneck_ns3_args(self),
            *red_ns3_args(self),
            f"--activeTimeoutMs={self.active_timeout_ms:g}",
            f"--xrcWindowTtis={self.xrc_window_ttis}",
            *self.router.ns3_args(),
            *path_extras_ns3_args(self),
            "--flows=" + ";".join(f.to_token() for f in self.flows),
        ]


def scenario_names() -> list[str]:
    """Names of the scenario configs (``configs/scenario/**/<name>.yaml``, without suffix)."""
    return sorted(
        p.relative_to(SCENARIO_CONFIGS).with_suffix("").as_posix()
        for p in SCENARIO_CONFIGS.rglob("*.yaml")
    )


def load_scenario(
    name: str | Path | Mapping[str, Any] | ScenarioSpec, **overrides: Any
) -> ScenarioSpec:
    """A scenario by config name, YAML path, mapping or spec, with optional field overrides.

    Args:
        name: A config name (``configs/scenario/<name>.yaml``, subfolders allowed, e.g.
            ``calibration/static_cubic``), a path to a YAML file, a mapping or a spec.
        **overrides: Fields to change (``ScenarioSpec.replace``), e.g. ``sim_time_s=5``.

    Raises:
        SpecError: An unknown name (listing the known ones) or an invalid field.
    """
    if isinstance(name, ScenarioSpec):
        spec = name
    elif isinstance(name, Mapping):
        spec = ScenarioSpec.from_config(name)
    else:
        from omegaconf import OmegaConf

        path = Path(name)
        if path.suffix not in (".yaml", ".yml"):
            path = SCENARIO_CONFIGS / f"{name}.yaml"
        if not path.is_file():
            raise SpecError(
                f"scenario={str(name)!r} is unknown: choose one of {', '.join(scenario_names())}"
            )
        data = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
        if not isinstance(data, dict):
            raise SpecError(f"scenario file {path} does not hold a mapping")
        data.pop("defaults", None)
        spec = ScenarioSpec.from_config(data)
    return spec.replace(**overrides) if overrides else spec
