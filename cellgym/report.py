"""Readable tables of evaluation results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tabulate import tabulate


def _fmt(x: Any, digits: int = 2) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def comparison_table(results: Sequence[dict[str, Any]]) -> str:
    """One row per (controller, seed): cell metrics; then one row per flow of each run."""
    cell_rows = []
    flow_rows = []
    for m in results:
        cell_rows.append(
            [
                m["controller"],
                m["seed"],
                _fmt(m["utilization"], 3),
                _fmt(m["jain_fairness"], 3),
                _fmt(m["hol_delay_ms"]["p50"], 1),
                _fmt(m["hol_delay_ms"]["p90"], 1),
                _fmt(m["queueing_delay_ms"]["p50"], 1),
                _fmt(m["queueing_delay_ms"]["p90"], 1),
                _fmt(m["hol_budget_compliance"], 3),
                _fmt(m["mean_reward"], 3),
            ]
        )
        for f in m["flows"]:
            flow_rows.append(
                [
                    m["controller"],
                    m["seed"],
                    f["flow"],
                    f["cca"],
                    f["traffic"],
                    _fmt(f["throughput_mbps"]),
                    _fmt(f["rtt_ms"]["p50"], 1),
                    _fmt(f["rtt_ms"]["p90"], 1),
                    f["loss_events"],
                    f["retx_segments"],
                    _fmt(f["fct_s"], 3),
                ]
            )
    cell = tabulate(
        cell_rows,
        headers=[
            "controller",
            "seed",
            "util",
            "jain",
            "HoL p50 ms",
            "HoL p90 ms",
            "qdelay p50 ms",
            "qdelay p90 ms",
            "HoL<=budget",
            "reward",
        ],
    )
    flows = tabulate(
        flow_rows,
        headers=[
            "controller",
            "seed",
            "flow",
            "cca",
            "traffic",
            "Mbit/s",
            "RTT p50 ms",
            "RTT p90 ms",
            "losses",
            "retx",
            "FCT s",
        ],
    )
    return f"{cell}\n\n{flows}"
