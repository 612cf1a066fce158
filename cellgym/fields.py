"""Column names of the scenario program's raw observation (see docs/scenario-contract.md).

The C++ scenario emits two matrices per step: ``flows`` (one row per flow) and ``ues`` (one row per
UE). These tuples name their columns in order; the first observation's ``info``
carries the names the program was built with, and the bridge checks that they match.
"""

from __future__ import annotations

FLOW_FIELDS: tuple[str, ...] = (
    "fb_rate_mbps",
    "fb_hol_ms",
    "rtt_last_ms",
    "rtt_min_ms",
    "rtt_mean_ms",
    "rtt_samples",
    "cwnd_bytes",
    "ssthresh_bytes",
    "bytes_in_flight",
    "acked_bytes",
    "rx_bytes",
    "loss_events",
    "retx_segments",
    "pacing_rate_mbps",
    "active",
    "enb_rate_mbps",
    "sent_bytes",
    "fct_s",
)

UE_FIELDS: tuple[str, ...] = (
    "capacity_mbps",
    "tx_mbps",
    "hol_ms",
    "hol_max_ms",
    "rlc_bytes",
    "rlc_drops",
    "distance_m",
)

FLOW = {name: i for i, name in enumerate(FLOW_FIELDS)}
UE = {name: i for i, name in enumerate(UE_FIELDS)}

#: Size of one TCP segment's payload in the scenarios (bytes).
SEGMENT_BYTES = 1448
