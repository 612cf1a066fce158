"""The XRC reproduction's report: ``report.md`` from ``numbers.json``.

``evaluation.experiments.xrc_paper`` runs the simulations and writes ``numbers.json``; this module
only formats it, beside the paper's claims (``../shared/papers/``, XRC, section IV) and what the
project finds where it differs. ``xrc_paper --render`` rewrites the report without simulating, and
``tests/evaluation/test_provenance.py`` checks the committed report equals ``report(numbers)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cellgym.provenance import markdown_line


def _f(x: Any, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "-"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def report(numbers: dict[str, Any]) -> str:
    """The Markdown report: our numbers beside the paper's."""
    meta, prov = numbers["meta"], numbers["provenance"]
    lines = [
        "# XRC paper experiments, reproduced on CellGym's ns-3 cell",
        "",
        f"Command: `.venv/bin/{prov['command']}` ({meta['wall_s'] / 60:.1f} min wall time on a "
        f"2-core machine, {meta['simulations']} simulations). Scenarios: "
        "`configs/scenario/xrc_fig*.yaml`. Set-up: 50 RBs, RLC buffer 128 packets, minimum RTT "
        "about 38 ms, budget 10 ms; XRC is CellGym's native per-ACK sender (`ns3::TcpXrc`).",
        "",
        "## Fig. 1: one UE, capacity swinging between about 7 and 34 Mbit/s",
        "",
        "Paper: at p90 the TCPs' HoL delay is near 400 ms, XRC's an order of magnitude lower; "
        "XRC within its 10 ms budget about 80% of the time.",
        "",
        "| cca | utilization | HoL p50 ms | HoL p90 ms | HoL within budget |",
        "|---|---|---|---|---|",
    ]
    for cca, m in numbers.get("fig1", {}).items():
        lines.append(
            f"| {cca} | {_f(m['utilization'], 3)} | {_f(m['hol_p50_ms'], 1)} | "
            f"{_f(m['hol_p90_ms'], 1)} | {_f(m['hol_budget_compliance'], 3)} |"
        )
    lines += [
        "",
        "## Fig. 3: XRC with a second flow joining at 5 s in congestion avoidance",
        "",
        "| pair | Jain after the join |",
        "|---|---|",
    ]
    for lab, m in numbers.get("fig3", {}).items():
        lines.append(f"| {lab} | {_f(m['jain_after_join'], 3)} |")
    lines += [
        "",
        "## Fig. 4: four flows, minimum RTTs up to 30 ms apart, joining and leaving every 10 s",
        "",
        "Paper: Jain 99.5% XRC, 85.71% CUBIC, 86.74% NewReno; XRC's HoL within budget 99%.",
        "",
        "| cca | Jain | HoL within budget |",
        "|---|---|---|",
    ]
    for lab, m in numbers.get("fig4", {}).items():
        lines.append(f"| {lab} | {_f(m['jain'], 4)} | {_f(m['hol_budget_compliance'], 3)} |")
    lines += [
        "",
        "## Fig. 5: a capacity-seeking flow against a second one joining at 5 s",
        "",
        "Paper: Jain 99.7% for XRC vs CUBIC; median queueing delay 3x lower than CUBIC vs CUBIC; "
        "p50 and p90 HoL more than 50% lower with XRC.",
        "",
        "| first vs second | Jain | queueing p50 ms | HoL p50 ms | HoL p90 ms | HoL <= budget |",
        "|---|---|---|---|---|---|",
    ]
    for lab, m in numbers.get("fig5", {}).items():
        lines.append(
            f"| {lab} | {_f(m['jain'], 3)} | {_f(m['queueing_p50_ms'], 1)} | "
            f"{_f(m['hol_p50_ms'], 1)} | {_f(m['hol_p90_ms'], 1)} | "
            f"{_f(m['hol_budget_compliance'], 3)} |"
        )
    lines += [
        "",
        "## Fig. 6: bulk download against a CUBIC video flow (2 s at 17 Mbit/s every 10 s)",
        "",
        "Paper: with XRC the end-to-end queueing delay stays below 10 ms 99% of the time.",
        "",
        "| bulk cca | queueing <= 10 ms | chunk delivery mean s | chunk delivery max s |",
        "|---|---|---|---|",
    ]
    for lab, m in numbers.get("fig6", {}).items():
        lines.append(
            f"| {lab} | {_f(m['queueing_within_budget'], 3)} | "
            f"{_f(m['chunk_delivery_mean_s'])} | {_f(m['chunk_delivery_max_s'])} |"
        )
    lines += [
        "",
        "## Fig. 7: a capacity-seeking flow against short NewReno flows (10 KB-2 MB, one per 5 s)",
        "",
        "Paper: p50 and p90 FCT halved with XRC; max FCT 3x lower than CUBIC, 1.4x lower than "
        "Illinois.",
        "",
        "| capacity seeker | FCT p50 s | FCT p90 s | FCT max s | completed | HoL p90 ms |",
        "|---|---|---|---|---|---|",
    ]
    for lab, m in numbers.get("fig7", {}).items():
        lines.append(
            f"| {lab} | {_f(m['fct_p50_s'], 3)} | {_f(m['fct_p90_s'], 3)} | "
            f"{_f(m['fct_max_s'], 3)} | {m['completed']} | {_f(m['hol_p90_ms'], 1)} |"
        )
    lines += ["", "## Figures", ""]
    lines += [f"![{name}]({name})" for name in meta["images"]]
    lines += ["", markdown_line(prov)]
    return "\n".join(lines) + "\n"
