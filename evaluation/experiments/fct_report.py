"""The report of ``fct_paper``: ``fct.png`` and ``report.md`` from ``numbers.json``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cellgym.provenance import markdown_line

LABELS = {"cubic": "TCP (CUBIC, RED)", "xcp": "XCP", "rcp": "RCP"}
COLOURS = {"cubic": "tab:blue", "xcp": "tab:red", "rcp": "tab:green"}


def _figure(numbers: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ctl = numbers["controllers"]
    fig, axes = plt.subplots(1, len(ctl) + 1, figsize=(4.2 * (len(ctl) + 1), 4), sharey=True)
    ref = max(ctl.values(), key=lambda c: len(c["bins"]))["bins"]
    x = np.array([b["len_pkts"] for b in ref])
    for ax in axes:
        ax.plot(x, [b["ps_s"] for b in ref], "k--", lw=1, label="processor sharing")
        ax.plot(x, [b["min_s"] for b in ref], "k:", lw=1, label="minimum FCT")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("flow length [packets]")
        ax.grid(True, which="both", alpha=0.3)
    for ax, (name, c) in zip(axes[1:], ctl.items(), strict=True):
        bx = np.array([b["len_pkts"] for b in c["bins"]])
        mean = np.array([b["fct_mean_s"] for b in c["bins"]])
        lo = mean - np.array([b["fct_p5_s"] for b in c["bins"]])
        hi = np.array([b["fct_p95_s"] for b in c["bins"]]) - mean
        ax.errorbar(bx, mean, yerr=[lo, hi], fmt="o-", ms=3, capsize=2, color=COLOURS[name])
        ax.set_title(f"{LABELS[name]}: mean, 5-95 %")
        axes[0].plot(bx, mean, "o-", ms=3, color=COLOURS[name], label=LABELS[name])
    axes[0].set_title("mean FCT")
    axes[0].set_ylabel("flow completion time [s]")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "fct.png", dpi=110)
    plt.close(fig)


def _closeness(c: dict[str, Any]) -> float:
    """Flow-weighted mean of |log10(FCT / PS)| over the bins: 0 = processor sharing."""
    w = np.array([b["n"] for b in c["bins"]], dtype=float)
    d = np.array([abs(np.log10(b["fct_mean_s"] / b["ps_s"])) for b in c["bins"]])
    return float((w * d).sum() / w.sum())


def _table(numbers: dict[str, Any]) -> list[str]:
    ctl = numbers["controllers"]
    lines = [
        "| | " + " | ".join(LABELS[c] for c in ctl) + " |",
        "|---|" + "---:|" * len(ctl),
    ]

    def row(label: str, fmt: str, key: Any) -> None:
        vals = []
        for c in ctl.values():
            v = key(c) if callable(key) else c.get(key)
            vals.append("-" if v is None else format(v, fmt))
        lines.append(f"| {label} | " + " | ".join(vals) + " |")

    row("flows finished (after the warm-up)", "d", "flows")
    row("flows unfinished at the end", "d", "unfinished")
    row("arrivals that waited for a slot", "d", "waited")
    row("mean FCT [s]", ".3f", "fct_mean_s")
    row("mean FCT, flows of <= 25 packets [s]", ".3f", "short_fct_mean_s")
    row("mean FCT, flows of >= 1000 packets [s]", ".2f", "long_fct_mean_s")
    row("flows of >= 1000 packets", "d", "long_flows")
    row("mean of FCT / PS", ".2f", "fct_over_ps_mean")
    row("distance from PS (mean abs log10, per flow)", ".3f", _closeness)
    row("flows in progress, mean", ".1f", "active_mean")
    row("flows in progress, most", "d", "active_max")
    row("bottleneck queue, mean [packets]", ".1f", "queue_mean_pkts")
    row("bottleneck queue, most [packets]", ".0f", "queue_max_pkts")
    row("drops at the bottleneck", "d", "drops")
    row("utilisation", ".3f", "utilisation")
    row("mean flow size [packets]", ".1f", "mean_size_pkts")
    row("simulated s per wall s", ".1f", "sim_per_wall")
    return lines


def _bins_table(numbers: dict[str, Any]) -> list[str]:
    ctl = numbers["controllers"]
    names = list(ctl)
    head = "| length [pkts] | PS [s] | min [s] | " + " | ".join(
        f"{LABELS[c]} n / mean (p5-p95) [s]" for c in names
    )
    lines = [head + " |", "|---:|---:|---:|" + "---|" * len(names)]
    by = {c: {round(b["lo_pkts"], 3): b for b in ctl[c]["bins"]} for c in names}
    keys = sorted({k for c in names for k in by[c]})
    for k in keys:
        any_b = next(by[c][k] for c in names if k in by[c])
        cells = []
        for c in names:
            b = by[c].get(k)
            cells.append(
                "-"
                if b is None
                else f"{b['n']} / {b['fct_mean_s']:.3f} ({b['fct_p5_s']:.3f}-{b['fct_p95_s']:.3f})"
            )
        lines.append(
            f"| {any_b['lo_pkts']:.0f}-{any_b['hi_pkts']:.0f} | {any_b['ps_s']:.3f} | "
            f"{any_b['min_s']:.3f} | " + " | ".join(cells) + " |"
        )
    return lines


def _findings(numbers: dict[str, Any]) -> list[str]:
    ctl = numbers["controllers"]
    out = []
    if not all(c in ctl for c in ("cubic", "xcp", "rcp")):
        return ["(the three controllers are needed for the comparison)"]
    close = {c: _closeness(ctl[c]) for c in ctl}
    nearest = min(close, key=close.get)
    out.append(
        f"- **RCP closest to processor sharing** (paper). Ours: the nearest is "
        f"{LABELS[nearest]} (distance {close[nearest]:.3f}; "
        + ", ".join(f"{LABELS[c]} {v:.3f}" for c, v in close.items())
        + "). "
        + ("Agrees." if nearest == "rcp" else "Differs.")
    )
    x, t = ctl["xcp"], ctl["cubic"]
    worse = x["fct_mean_s"] > t["fct_mean_s"]
    out.append(
        "- **XCP worse than TCP at this load** (paper). "
        f"Ours: mean FCT XCP {x['fct_mean_s']:.3f} s, "
        f"TCP {t['fct_mean_s']:.3f} s; flows of <= 25 packets XCP {x['short_fct_mean_s']:.3f} s, "
        f"TCP {t['short_fct_mean_s']:.3f} s. "
        + ("Agrees" if worse else "Differs")
        + " on the mean."
    )
    lt, lr, lx = t["long_fct_mean_s"], ctl["rcp"]["long_fct_mean_s"], x["long_fct_mean_s"]
    if None not in (lt, lr, lx):
        faster = lt < lr and lt < lx
        out.append(
            f"- **TCP faster only for very long flows** (paper). Ours, flows of >= 1000 packets: "
            f"TCP {lt:.2f} s, RCP {lr:.2f} s, XCP {lx:.2f} s ({t['long_flows']} / "
            f"{ctl['rcp']['long_flows']} / {x['long_flows']} flows). "
            + ("Agrees." if faster else "Differs.")
        )
    return out


def write(numbers: dict[str, Any], out: Path) -> None:
    """Write ``fct.png`` and ``report.md``."""
    out = Path(out)
    _figure(numbers, out)
    s = numbers["setup"]
    ctl = numbers["controllers"]
    long_n = {c: v["long_flows"] for c, v in ctl.items()}
    scale = s["paper_sim_s"] - s["paper_warmup_s"]
    ours = s["sim_time_s"] - s["warmup_s"]
    text = [
        "# XCP/RCP evaluation paper, section 5.1: flow completion times (fast backend)",
        "",
        "Generated by `python -m evaluation.experiments.fct_paper` (`fct_report`); "
        "see `docs/xcp-rcp-fct/README.md` for the model and the choices.",
        "",
        f"A {s['rate_mbps']:g} Mbit/s dumbbell, RTT {s['rtt_ms']:g} ms for every flow; flows "
        f"arrive every {s['iat_ms']} ms on average (exponential), sizes from a truncated Pareto "
        f"distribution (shape {s['shape']}, mean {s['mean_pkts']:g} packets, cut-off "
        f"{s['cutoff_pkts']:.0f}; lower bound {s['pareto_low_pkts']:.2f} packets): offered load "
        f"{s['offered_load']:.3f}. TCP = CUBIC over RED (limit 1000, thresholds "
        f"{s['red']['red_min_th_pkts']:g} / {s['red']['red_max_th_pkts']:g}, max_p "
        f"{s['red']['red_max_p']}); XCP (alpha 0.4, beta 0.226) and RCP (alpha "
        f"{s['rcp']['rcp_alpha']}, beta {s['rcp']['rcp_beta']}) over an unlimited queue. "
        f"{s['sim_time_s']:g} simulated seconds per controller (seed {s['seed']}, "
        f"{s['slots']} flow slots), flows arriving in the first {s['warmup_s']:g} s left out; "
        f"the paper: {s['paper_sim_s']:g} s, the first {s['paper_warmup_s']:g} s left out.",
        "",
        "![FCT against flow length](fct.png)",
        "",
        "## The paper's findings beside ours",
        "",
        *_findings(numbers),
        "",
        "## Totals",
        "",
        *_table(numbers),
        "",
        "## Per length bin (5 per decade)",
        "",
        *_bins_table(numbers),
        "",
        "## Confidence with the shortened run",
        "",
        f"The paper averaged {scale:g} s of flows; we average {ours:g} s, {ours / scale:.2f} of it,"
        f" so every bin holds about {ours / scale:.2f} of the paper's flows and its standard "
        f"error is about {np.sqrt(scale / ours):.1f}x the paper's. With shape 1.2 the tail is "
        "thin in samples: the flows of 1000 packets or more number "
        + ", ".join(f"{n} ({LABELS[c]})" for c, n in long_n.items())
        + ", and the bins above 10,000 packets hold a handful or none, so the long-flow "
        "comparison rests on few flows (each bin's standard error is in `numbers.json`, "
        "`fct_se_s`). One seed: the three controllers see the same arrivals and sizes (the "
        "stream's generator depends on the seed only), which makes their comparison paired. "
        "The heavy tail also moves the realised load: the mean size of the finished flows is "
        "in the totals; a run's load is not the nominal 0.9 until far longer runs. Flows still "
        "running at the end are not counted (they are longer than average, so long-flow means "
        "lean low).",
        "",
        markdown_line(numbers["provenance"]),
        "",
    ]
    (out / "report.md").write_text("\n".join(text))
