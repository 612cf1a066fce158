"""Capacity traces: one typed way to get the capacity series a cell or a bottleneck replays.

- ``series``: ``CapacitySeries`` (bytes per interval, looped, with provenance and a digest),
  ``capacity_per_window`` and ``replay_error`` (the backends' replay check), the capacity file
  ns-3 reads and a Mahimahi writer;
- ``sources``: Mahimahi files and the Irish 5G dataset's CSVs (seeded per-slot synthesis);
- ``synthetic``: seeded generators (Markov LOS/NLOS blockage, steps, random walk);
- ``spec``: the scenario's trace fields (validation, the series they select, which backends read
  them) and the Zeus buffer regimes (``bdp_packets``, ``resolve_buffers``).

Formats, the synthesis method and its parameters: ``docs/traces.md``.
"""

from __future__ import annotations

from cellgym.traces.series import (
    MTU_BYTES,
    CapacitySeries,
    capacity_per_window,
    read_capacity_file,
    replay_error,
    series_from_rates,
    write_capacity_file,
    write_mahimahi,
)
from cellgym.traces.sources import (
    IrishParams,
    parse_mahimahi,
    read_irish5g,
    read_irish5g_seconds,
    read_mahimahi,
    resolve_trace,
    synthesize_irish5g,
    synthesize_irish5g_head,
)
from cellgym.traces.spec import (
    bdp_packets,
    bottleneck_series,
    channel_head,
    channel_series,
    nominal_base_rtt_s,
    resolve_buffers,
)
from cellgym.traces.synthetic import GENERATORS, generate

__all__ = [
    "GENERATORS",
    "MTU_BYTES",
    "CapacitySeries",
    "IrishParams",
    "bdp_packets",
    "bottleneck_series",
    "capacity_per_window",
    "channel_head",
    "channel_series",
    "generate",
    "nominal_base_rtt_s",
    "parse_mahimahi",
    "read_capacity_file",
    "read_irish5g",
    "read_irish5g_seconds",
    "read_mahimahi",
    "replay_error",
    "resolve_buffers",
    "resolve_trace",
    "series_from_rates",
    "synthesize_irish5g",
    "synthesize_irish5g_head",
    "write_capacity_file",
    "write_mahimahi",
]
