"""The scenario's trace fields: their validation, the series they select, and buffer regimes.

``ChannelSpec`` (``cellgym/scenario.py``) holds the fields; this module checks them
(``check_channel_trace``, ``check_scenario_traces``: called by the scenario's own validation),
builds the series a backend replays (``channel_series``, ``bottleneck_series``), and turns the
Zeus buffer regimes into packets (``bdp_packets``, ``resolve_buffers``). It reads scenarios by
their attributes and never imports ``cellgym.scenario`` (which imports it).

Seeds: ``channel.trace_seed`` fixes the synthesis (Irish 5G) or generator (synthetic) draw for
every run; ``None`` (default) uses the run's seed, so seeds replicate over channel realisations
too. Mahimahi traces are deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from cellgym.traces.series import MTU_BYTES, CapacitySeries, series_from_rates
from cellgym.traces.sources import (
    IrishParams,
    irish5g_slots,
    read_irish5g,
    read_irish5g_seconds,
    read_mahimahi,
    resolve_trace,
    synthesize_irish5g_head,
)
from cellgym.traces.synthetic import GENERATORS, generate, make_params
from cellgym.vocab import (
    TRACE_GENERATORS,
    TRACE_SOURCES,
    SpecError,
    check_choice,
    check_range,
)

assert tuple(GENERATORS) == TRACE_GENERATORS

#: Round-trip time of the LTE air interface and core (ms) that ``nominal_base_rtt_s`` adds to
#: the server delays: the scenario's 38 ms minimum RTT less its 2 x 15 ms server delay.
AIR_CORE_RTT_MS = 8.0
#: Packets of an "unlimited" buffer (the fast model's ``MAX_RLC_PKTS_TOTAL`` over the UEs).
UNLIMITED_PKTS = 1_000_000
#: Largest finite buffer regime, in BDPs.
MAX_BUFFER_BDP = 1000.0

#: Channel fields that only trace sources read, with their "unset" values.
TRACE_FIELDS: dict[str, Any] = {
    "trace": "",
    "generator": "",
    "params": {},
    "trace_seed": None,
    "trace_offset_s": 0.0,
    "trace_scale": 1.0,
}


def check_channel_trace(channel: Any, where: str) -> None:
    """Validate the trace fields of a ``ChannelSpec`` against its ``source``.

    A file source needs ``trace`` (existence is checked when the series is loaded, so configs
    validate without the shared traces folder); ``synthetic`` needs ``generator``; ``params`` are
    the synthesis (``irish5g``: ``IrishParams``) or generator parameters, by name; the distance
    source takes none of these fields, and trace sources take no random mobility.
    """
    source = channel.source
    if not isinstance(channel.params, Mapping):
        raise SpecError(f"{where}.params={channel.params!r} is not a mapping: give key: value")
    if source not in TRACE_SOURCES:
        for name, unset in TRACE_FIELDS.items():
            value = getattr(channel, name)
            if value != unset:
                raise SpecError(
                    f"{where}.{name}={value!r} does not apply to source={source!r}: it is a "
                    f"field of the trace sources ({', '.join(TRACE_SOURCES)})"
                )
        return
    if channel.mobility != "static":
        raise SpecError(
            f"{where}.mobility={channel.mobility!r} does not apply to source={source!r}: the "
            "trace sets the capacity; choose static"
        )
    if channel.trace_seed is not None:
        check_range(f"{where}.trace_seed", channel.trace_seed, 0, 2**32 - 1)
    check_range(f"{where}.trace_offset_s", channel.trace_offset_s, 0.0, 1e6)
    check_range(f"{where}.trace_scale", channel.trace_scale, 1e-3, 1e4)
    params = dict(channel.params)
    if source == "synthetic":
        if channel.trace:
            raise SpecError(
                f"{where}.trace={channel.trace!r} does not apply to source='synthetic': "
                "choose a generator"
            )
        check_choice(f"{where}.generator", channel.generator, TRACE_GENERATORS)
        make_params(GENERATORS[channel.generator], params, f"{where}.params")
        return
    if channel.generator:
        raise SpecError(
            f"{where}.generator={channel.generator!r} applies to source='synthetic' only"
        )
    if not channel.trace:
        raise SpecError(f"{where}.trace is empty: source={source!r} needs a trace file or name")
    if source == "mahimahi" and params:
        raise SpecError(
            f"{where}.params={params!r} does not apply to source='mahimahi': a Mahimahi trace "
            "is replayed as it is (scale it with trace_scale)"
        )
    if source == "irish5g":
        make_params(IrishParams, params, f"{where}.params")


def check_scenario_traces(spec: Any) -> None:
    """Validate the scenario-level trace fields: ``bottleneck_trace`` and ``buffer_bdp``."""
    if spec.bottleneck_trace and spec.bottleneck_mbps > 0:
        raise SpecError(
            f"scenario.bottleneck_trace={spec.bottleneck_trace!r} with bottleneck_mbps="
            f"{spec.bottleneck_mbps:g}: give one (a trace sets the bottleneck's rate)"
        )
    bdp = spec.buffer_bdp
    if bdp is None:
        return
    if not math.isinf(bdp):
        check_range("scenario.buffer_bdp", bdp, 0.01, MAX_BUFFER_BDP)
    elif bdp < 0:
        raise SpecError("scenario.buffer_bdp=-inf is out of range: allowed [0.01, 1000] or inf")
    if spec.channel.source not in TRACE_SOURCES and not _has_bottleneck(spec):
        raise SpecError(
            f"scenario.buffer_bdp={bdp!r} needs a capacity to measure the BDP by: a trace "
            f"channel source ({', '.join(TRACE_SOURCES)}), bottleneck_trace or bottleneck_mbps"
        )


def _has_bottleneck(spec: Any) -> bool:
    return bool(spec.bottleneck_trace) or spec.bottleneck_mbps > 0


# ------------------------------------------------------------------------------------------------
# The series a scenario selects
# ------------------------------------------------------------------------------------------------


def channel_series(
    channel: Any, slot_s: float, seed: int = 0, where: str = "scenario.channel"
) -> CapacitySeries:
    """The capacity series of a trace channel at the cell's slot (``CellSpec.slot_s``).

    Loads the file (Mahimahi, Irish 5G) or runs the generator, seeded with ``trace_seed`` or,
    when that is ``None``, ``seed`` (the run's); then scales by ``trace_scale`` and starts the
    replay ``trace_offset_s`` in.

    Raises:
        SpecError: The source is not a trace source, or the file is missing (naming the field).
    """
    check_choice(f"{where}.source", channel.source, TRACE_SOURCES)
    s = int(seed if channel.trace_seed is None else channel.trace_seed)
    params = dict(channel.params)
    if channel.source == "mahimahi":
        series = read_mahimahi(_resolve(channel.trace, f"{where}.trace"))
    elif channel.source == "irish5g":
        p = make_params(IrishParams, params, f"{where}.params")
        series = read_irish5g(_resolve(channel.trace, f"{where}.trace"), slot_s, s, p)
    else:
        series = generate(channel.generator, params, slot_s, s, f"{where}.params")
    series = series.at_interval(slot_s).scaled(channel.trace_scale)
    return series.rotated(channel.trace_offset_s) if channel.trace_offset_s else series


def channel_head(
    channel: Any, slot_s: float, seed: int, n_slots: int, where: str = "scenario.channel"
) -> np.ndarray:
    """``channel_series(channel, slot_s, seed).bytes[:n_slots]``: the first slots of the replay.

    The same values; an Irish 5G synthesis computes only the seconds the head (after
    ``trace_offset_s``) covers, so a fast cell replaying 20 s of an hour-long trace resets in
    milliseconds. Other sources, and a head that wraps around the end, build the whole series.
    """
    check_choice(f"{where}.source", channel.source, TRACE_SOURCES)
    n_slots = max(0, int(n_slots))
    if channel.source == "irish5g":
        s = int(seed if channel.trace_seed is None else channel.trace_seed)
        p = make_params(IrishParams, dict(channel.params), f"{where}.params")
        seconds = read_irish5g_seconds(_resolve(channel.trace, f"{where}.trace"))
        total = irish5g_slots(seconds, slot_s)
        k = int(round(channel.trace_offset_s / slot_s)) % total if channel.trace_offset_s else 0
        if k + n_slots <= total:
            head = synthesize_irish5g_head(seconds, slot_s, s, k + n_slots, p)
            series = CapacitySeries(head, slot_s, "irish5g", seconds.name)
            return series.scaled(channel.trace_scale).bytes[k : k + n_slots]
    return channel_series(channel, slot_s, seed, where).bytes[:n_slots]


def _resolve(trace: str, where: str) -> str:
    return str(resolve_trace(trace, where))


def bottleneck_series(spec: Any) -> CapacitySeries | None:
    """The wired bottleneck's capacity, or ``None`` without a bottleneck.

    Its Mahimahi trace, or a constant ``bottleneck_mbps`` (1 ms intervals, 1 s long).
    """
    if spec.bottleneck_trace:
        return read_mahimahi(_resolve(spec.bottleneck_trace, "scenario.bottleneck_trace"))
    if spec.bottleneck_mbps > 0:
        rates = np.full(1000, float(spec.bottleneck_mbps))
        return series_from_rates(rates, 0.001, "array", f"{spec.bottleneck_mbps:g} Mbit/s")
    return None


def bottleneck_ns3_args(spec: Any) -> list[str]:
    """The ns-3 program's trace-driven bottleneck argument: ``--bottleneckTrace=<file>`` or none.

    The program reads the Mahimahi file itself (``cellgym-trace-link.h``); the name is resolved
    here (a path, or a name under the traces folder), so a missing file fails by field name.
    """
    if not spec.bottleneck_trace:
        return []
    path = resolve_trace(spec.bottleneck_trace, "scenario.bottleneck_trace").resolve()
    return [f"--bottleneckTrace={path}"]


# ------------------------------------------------------------------------------------------------
# Buffer regimes (Zeus: 1, 5, 10 BDP and unlimited)
# ------------------------------------------------------------------------------------------------


def nominal_base_rtt_s(spec: Any, flow: int = 0) -> float:
    """The scenario's propagation RTT for a flow, in seconds.

    Server and flow delays both ways plus the air interface and core (``AIR_CORE_RTT_MS``);
    the metrics use the measured minimum RTT instead.
    """
    delay = spec.server_delay_ms + spec.flows[flow].delay_ms
    return (2.0 * delay + AIR_CORE_RTT_MS) / 1000.0


def bdp_packets(
    mean_rate_bps: float, base_rtt_s: float, multiple: float, packet_bytes: int = MTU_BYTES
) -> int:
    """``multiple`` bandwidth-delay products in packets (at least 1; ``inf``: ``UNLIMITED_PKTS``).

    >>> bdp_packets(12e6, 0.040, 5)  # 12 Mbit/s x 40 ms = 60 kB = 40 packets, x 5
    200
    """
    if math.isinf(multiple):
        return UNLIMITED_PKTS
    check_range("buffer_bdp", multiple, 0.0, MAX_BUFFER_BDP)
    pkts = math.ceil(multiple * mean_rate_bps / 8.0 * base_rtt_s / packet_bytes - 1e-9)
    return int(min(UNLIMITED_PKTS, max(1, pkts)))


def resolve_buffers(
    spec: Any,
    series: CapacitySeries | None = None,
    base_rtt_s: float | None = None,
    seed: int = 0,
) -> Any:
    """``spec`` with ``buffer_bdp`` turned into packets, and ``buffer_bdp`` cleared.

    The buffer in front of the capacity gets ``buffer_bdp`` BDPs of its mean rate at the base
    RTT: a wired bottleneck's ``bottleneck_buffer_pkts`` when there is one, else the cell's
    ``rlc_buffer_pkts`` (per UE; "unlimited" is capped so all UEs stay within the fast model's
    total). ``series`` and ``base_rtt_s`` default to the scenario's (``channel_series`` at the
    cell's slot, ``nominal_base_rtt_s`` of flow 0).
    """
    if spec.buffer_bdp is None:
        return spec
    rtt = nominal_base_rtt_s(spec) if base_rtt_s is None else base_rtt_s
    if _has_bottleneck(spec):
        series = series or bottleneck_series(spec)
        assert series is not None
        pkts = bdp_packets(series.mean_rate_bps, rtt, spec.buffer_bdp)
        return spec.replace(bottleneck_buffer_pkts=pkts, buffer_bdp=None)
    series = series or channel_series(spec.channel, spec.cell.slot_s, seed)
    pkts = bdp_packets(series.mean_rate_bps, rtt, spec.buffer_bdp)
    pkts = min(pkts, UNLIMITED_PKTS // spec.num_ues)
    return spec.replace(rlc_buffer_pkts=pkts, buffer_bdp=None)
