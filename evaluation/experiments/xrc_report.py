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
    ]
    lines += _fig1_section(numbers)
    lines += _fig3_section(numbers)
    lines += _fig4_section(numbers)
    lines += _fig5_section(numbers)
    lines += _fig6_section(numbers)
    lines += _fig7_section(numbers)
    lines += internet_section(numbers.get("internet", {}))
    lines += differences(numbers)
    lines += ["", "## Figures", ""]
    lines += [f"![{name}]({name})" for name in meta["images"]]
    lines += ["", markdown_line(prov)]
    return "\n".join(lines) + "\n"


def _fig1_row(label: str, m: dict[str, Any]) -> str:
    """A row of Fig. 1's tables: utilization and the HoL delay of one run."""
    return (
        f"| {label} | {_f(m['utilization'], 3)} | {_f(m['hol_p50_ms'], 1)} | "
        f"{_f(m['hol_p90_ms'], 1)} | {_f(m['hol_budget_compliance'], 3)} |"
    )


def _fig1_section(numbers: dict[str, Any]) -> list[str]:
    """Fig. 1, one UE on a swinging capacity: LTE's table, then NR's when it ran."""
    lines = [
        "## Fig. 1: one UE, capacity swinging between about 7 and 34 Mbit/s",
        "",
        "Paper: at p90 the TCPs' HoL delay is near 400 ms, XRC's an order of magnitude lower; "
        "XRC within its 10 ms budget about 80% of the time.",
        "",
        "| cca | utilization | HoL p50 ms | HoL p90 ms | HoL within budget |",
        "|---|---|---|---|---|",
    ]
    lines += [_fig1_row(cca, m) for cca, m in numbers.get("fig1", {}).items()]
    if numbers.get("fig1_nr"):
        lines += [
            "",
            "### Fig. 1 on NR (FR1 and FR2)",
            "",
            "FR1: 20 MHz, numerology 1, 3.5 GHz, UMi without line of sight, the UE at 50-300 m "
            "(`xrc_fig1_nr_fr1.yaml`); FR2: 28 GHz, 50 MHz, numerology 3, UMi in line of sight "
            "at 50-250 m with blockage (`xrc_fig1_nr_fr2.yaml`); 512-packet RLC buffers, "
            f"{_nr_runs(numbers)}.",
            "",
            "| cell, cca | utilization | HoL p50 ms | HoL p90 ms | HoL within budget |",
            "|---|---|---|---|---|",
        ]
        lines += [_fig1_row(cca, m) for cca, m in numbers["fig1_nr"].items()]
    return lines


def _fig3_section(numbers: dict[str, Any]) -> list[str]:
    """Fig. 3, a second flow joining XRC: Jain's index after the join."""
    lines = [
        "",
        "## Fig. 3: XRC with a second flow joining at 5 s in congestion avoidance",
        "",
        "| pair | Jain after the join |",
        "|---|---|",
    ]
    for lab, m in numbers.get("fig3", {}).items():
        lines.append(f"| {lab} | {_f(m['jain_after_join'], 3)} |")
    return lines


def _fig4_section(numbers: dict[str, Any]) -> list[str]:
    """Fig. 4, four flows of different RTTs: fairness and XRC's HoL delay."""
    lines = [
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
    return lines


def _fig5_row(label: str, m: dict[str, Any]) -> str:
    """A row of Fig. 5's tables: fairness, queueing and HoL delay of one pair."""
    return (
        f"| {label} | {_f(m['jain'], 3)} | {_f(m['queueing_p50_ms'], 1)} | "
        f"{_f(m['hol_p50_ms'], 1)} | {_f(m['hol_p90_ms'], 1)} | "
        f"{_f(m['hol_budget_compliance'], 3)} |"
    )


def _fig5_section(numbers: dict[str, Any]) -> list[str]:
    """Fig. 5, a capacity seeker against a joining flow: LTE's table, then NR's when it ran."""
    lines = [
        "",
        "## Fig. 5: a capacity-seeking flow against a second one joining at 5 s",
        "",
        "Paper: Jain 99.7% for XRC vs CUBIC; median queueing delay 3x lower than CUBIC vs CUBIC; "
        "p50 and p90 HoL more than 50% lower with XRC.",
        "",
        "| first vs second | Jain | queueing p50 ms | HoL p50 ms | HoL p90 ms | HoL <= budget |",
        "|---|---|---|---|---|---|",
    ]
    lines += [_fig5_row(lab, m) for lab, m in numbers.get("fig5", {}).items()]
    if numbers.get("fig5_nr"):
        lines += [
            "",
            "### Fig. 5 on NR (FR1 and FR2)",
            "",
            "FR1: 20 MHz, numerology 1, 3.5 GHz, the UE at 100 m in UMi line of sight "
            "(`xrc_fig5_nr_fr1.yaml`); FR2: 28 GHz, 50 MHz, numerology 3, 150 m in line of "
            "sight with blockage (`xrc_fig5_nr_fr2.yaml`); 512-packet RLC buffers, "
            f"{_nr_runs(numbers)}.",
            "",
            "| cell, first vs second | Jain | queueing p50 ms | HoL p50 ms | HoL p90 ms | "
            "HoL <= budget |",
            "|---|---|---|---|---|---|",
        ]
        lines += [_fig5_row(lab, m) for lab, m in numbers["fig5_nr"].items()]
    return lines


def _fig6_section(numbers: dict[str, Any]) -> list[str]:
    """Fig. 6, bulk download beside a video flow: queueing and the chunks' delivery."""
    lines = [
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
    return lines


def _fig7_section(numbers: dict[str, Any]) -> list[str]:
    """Fig. 7, a capacity seeker against short flows: their completion times."""
    lines = [
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
    return lines


def internet_section(rows: dict[str, Any]) -> list[str]:
    """XRC's Internet-bottleneck mode against standard TCPs (not a figure of the paper)."""
    if not rows:
        return []
    out = [
        "",
        "## Internet bottleneck: a 10 Mbit/s wired bottleneck below the cell's rate",
        "",
        "Not a figure of the paper; its design: when the queue builds in the Internet (end-to-end "
        "delay over budget while the base station's HoL delay is within it), XRC falls back to "
        "standard TCP. Scenario `configs/scenario/xrc_internet_bottleneck.yaml` (100-packet "
        "drop-tail buffer), one run each, after 2 s. Queueing: RTT - minimum RTT (both queues); "
        "HoL: the RLC queue alone; twnd = explicit rate x minimum RTT, XRC's window in its "
        "explicit-rate modes; above twnd: share of steps with the window over 1.1 x twnd; "
        "as NewReno: share of steps with the window within a segment of the NewReno run's (same "
        "seed).",
        "",
        "| cca | Mbit/s | queueing p50 ms | queueing p90 ms | HoL p50 ms | HoL p90 ms | "
        "explicit rate Mbit/s | cwnd kB | twnd kB | above twnd | loss events | as NewReno |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for cca, m in rows.items():
        out.append(
            f"| {cca} | {_f(m['throughput_mbps'])} | {_f(m['queueing_p50_ms'], 1)} | "
            f"{_f(m['queueing_p90_ms'], 1)} | {_f(m['hol_p50_ms'], 1)} | "
            f"{_f(m['hol_p90_ms'], 1)} | {_f(m['explicit_rate_mbps'], 1)} | "
            f"{_f(m['cwnd_mean_kb'], 1)} | {_f(m['twnd_mean_kb'], 1)} | "
            f"{_f(m['above_twnd'], 3)} | {m['loss_events']} | "
            f"{_f(m.get('same_window_as_newreno'), 3)} |"
        )
    x, nr = rows.get("xrc"), rows.get("newreno")
    if x and nr:
        same = x.get("same_window_as_newreno") or 0.0
        verdict = (
            f"XRC ran as standard TCP: its window was NewReno's in {_pct(same)} of the steps "
            f"(above its explicit-rate window twnd in {_pct(x['above_twnd'] or 0.0)})"
            if same >= 0.9
            else f"XRC's window was NewReno's in only {_pct(same)} of the steps: it did not "
            "behave as standard TCP"
        )
        where = (
            "in the Internet"
            if x["queueing_p50_ms"] > 2 * max(x["hol_p50_ms"], 1.0)
            else "in the cell"
        )
        out += [
            "",
            f"- {verdict}. It carried {x['throughput_mbps']:.2f} Mbit/s against NewReno's "
            f"{nr['throughput_mbps']:.2f}; its queue is {where} (queueing p50 "
            f"{x['queueing_p50_ms']:.1f} ms, HoL p50 {x['hol_p50_ms']:.1f} ms).",
        ]
    return out


def _nr_runs(numbers: dict[str, Any]) -> str:
    """How long and how many seeds the NR variants ran (``meta.nr_sim_time_s``)."""
    meta = numbers["meta"]
    t = meta.get("nr_sim_time_s", {})
    seeds = meta["seeds"]
    return (
        f"{_f(t.get('fig1_nr'), 0)} s (Fig. 1) and {_f(t.get('fig5_nr'), 0)} s (Fig. 5) per run, "
        f"{seeds} seed{'s' if seeds != 1 else ''}, means over seeds"
    )


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def differences(numbers: dict[str, Any]) -> list[str]:
    """The section "Where CellGym differs from the paper", each claim computed from ``numbers``."""
    meta = numbers["meta"]
    out = [
        "",
        "## Where CellGym differs from the paper",
        "",
        "Each point is computed from the tables above; `README.md` explains the causes.",
        "",
    ]
    fig1 = numbers.get("fig1", {})
    tcps1 = [m["hol_p90_ms"] for c, m in fig1.items() if c != "xrc"]
    if tcps1 and "xrc" in fig1:
        out.append(
            f"- Fig. 1: the paper's TCPs reach about 400 ms HoL delay at p90; here "
            f"{min(tcps1):.0f}-{max(tcps1):.0f} ms (a 128-packet RLC buffer holds about 200 ms "
            f"at the 7 Mbit/s floor). XRC's p90 is {fig1['xrc']['hol_p90_ms']:.1f} ms and it is "
            f"within budget {_pct(fig1['xrc']['hol_budget_compliance'])} of the time (paper: "
            "about 80%)."
        )
    fig4 = numbers.get("fig4", {})
    tcps4 = {c: m["jain"] for c, m in fig4.items() if c != "xrc"}
    if {"cubic", "newreno", "illinois"} <= tcps4.keys():
        order = " < ".join(f"{c} {_pct(j)}" for c, j in sorted(tcps4.items(), key=lambda x: x[1]))
        fairest = max(tcps4, key=tcps4.__getitem__)
        nr_vs_cubic = "below" if tcps4["newreno"] < tcps4["cubic"] else "above"
        xrc = f"; XRC {_pct(fig4['xrc']['jain'])} (paper 99.5%)" if "xrc" in fig4 else ""
        out.append(
            "- Fig. 4: the paper has NewReno slightly fairer than CUBIC (86.74% against 85.71%) "
            f"and Illinois stuck in an unfair state. Here NewReno is {nr_vs_cubic} CUBIC and "
            f"{fairest} is the fairest TCP ({order}){xrc}."
        )
    fig5 = numbers.get("fig5", {})
    reductions = []
    for second in ("cubic", "newreno", "illinois", "veno"):
        x, c = fig5.get(f"xrc vs {second}"), fig5.get(f"cubic vs {second}")
        if x and c and c["hol_p90_ms"] and c["hol_p50_ms"]:
            p50 = 1 - x["hol_p50_ms"] / c["hol_p50_ms"]
            p90 = 1 - x["hol_p90_ms"] / c["hol_p90_ms"]
            reductions.append((second, p50, p90))
    if reductions:
        pairs = "; ".join(f"vs {s}: p50 -{_pct(a)}, p90 -{_pct(b)}" for s, a, b in reductions)
        p90_met = [s for s, _, b in reductions if b > 0.5]
        out.append(
            "- Fig. 5: the paper reduces the HoL delay by more than 50% at p50 and p90 in every "
            f"pair (XRC first against CUBIC first). Here: {pairs}; the p90 reduction exceeds 50% "
            f"in {len(p90_met)} of {len(reductions)} pairs"
            + (f" ({', '.join(p90_met)})." if p90_met else ".")
        )
    within = {k[7:]: m["hol_budget_compliance"] for k, m in fig5.items() if k.startswith("xrc ")}
    if within:
        shares = ", ".join(f"vs {k} {_pct(v)}" for k, v in within.items())
        out.append(
            "- Fig. 5: with XRC the paper keeps the HoL delay within the 10 ms budget almost 70% "
            f"of the time; here {shares} (mean {_pct(float(np.mean(list(within.values()))))})."
        )
    out.append(
        "- Jain's index: the paper does not say over which interval it computes it. Here Fig. 4's "
        "is the mean over consecutive 1 s windows in which at least two flows are active "
        "(`cellgym.metrics`, `jain_fairness`), which also penalises short-term oscillations, and "
        "Figs. 3 and 5's is the index of the flows' bytes over the steps after 6 s in which both "
        "are active (`overlap_jain`)."
    )
    single = [f for f in ("fig3", "fig4", "fig6", "fig7") if numbers.get(f)]
    multi = [f for f in ("fig1", "fig5") if numbers.get(f)]
    seeds = meta.get("seeds", 1)
    if single:
        out.append(
            f"- Seeds: {', '.join(single)} are single runs (seed 1) of one scenario each"
            + (f"; {', '.join(multi)} average {seeds} seeds" if multi else "")
            + ". The paper does not give its number of runs."
        )
    return out
