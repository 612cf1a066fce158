"""The Zeus evaluation's tables, figures and report, from ``numbers.json`` alone.

``evaluation.experiments.zeus`` runs the matrix and writes ``numbers.json`` (every run's Zeus
metrics and the provenance); ``write`` turns it into

- ``table2.md`` / ``table2.csv``: the paper's Table 2 per backend and controller: utilization
  (solo, %, mean ± std over traces, buffers and seeds), delay inflation (solo, mean RTT over the
  base RTT), intra-fairness (self run) and inter-fairness (vs CUBIC), Jain's index averaged over
  the short- and long-term windows that fit in a run; ``table2_by_trace.csv`` the same per trace;
- ``table3.md`` / ``table3.csv``: the scenario scores of Table 2's means (``zeus_scores``, the
  weights of section 6.6), as the paper derives its Table 3 from its Table 2;
- ``fig8_harm.png`` and ``harm.csv``: throughput and delay harm to CUBIC per trace at the largest
  buffer (``inf``), with CUBIC's self-harm band shaded (the safe zone below its top);
- ``frontiers.png``: throughput against delay per trace, each controller's solo runs across the
  buffer regimes, with the oracle and the optimum;
- ``fig9_buffer.png`` and ``fig9.csv``: BBR's and CUBIC's throughput and delay sharing the
  bottleneck against the buffer size (with the oracle against CUBIC and the optimum's fair
  share);
- ``report.md``: the tables beside the paper's, the figures, the timing and the provenance.

The optimum's row comes from ``numbers["optimum"]`` (``cellgym.zeus.offline_optimum`` of each
trace): utilization 1, inflation 1, fairness 1, every score 1; against CUBIC it is a fair half of
the capacity at the base RTT.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cellgym import provenance
from cellgym.zeus import ZEUS_SCENARIOS, harm, self_harm_band, within_self_harm, zeus_scores

REFERENCE = "cubic"
OPTIMUM = "optimum"
ORACLE = "oracle"
#: The paper's Table 2 and Table 3 for the CCAs CellGym also runs (NewReno as the paper's Reno).
PAPER_TABLE2: dict[str, dict[str, float]] = {
    "newreno": {"util": 99.7, "delay": 15.6, "intra": 0.88, "inter": 0.81},
    "cubic": {"util": 99.1, "delay": 12.2, "intra": 0.86, "inter": 0.86},
    "bbr": {"util": 95.9, "delay": 4.3, "intra": 0.87, "inter": 0.63},
    "ledbat": {"util": 4.9, "delay": 1.7, "intra": 0.91, "inter": 0.58},
}
PAPER_TABLE3: dict[str, dict[str, float]] = {
    "newreno": {"realtime": 0.575, "bulk": 0.923, "mixed": 0.719},
    "cubic": {"realtime": 0.588, "bulk": 0.919, "mixed": 0.731},
    "bbr": {"realtime": 0.594, "bulk": 0.893, "mixed": 0.688},
    "ledbat": {"realtime": 0.457, "bulk": 0.232, "mixed": 0.574},
}
TABLE2_COLUMNS = (
    "backend",
    "controller",
    "util_pct",
    "util_std",
    "delay_inflation",
    "delay_std",
    "intra_fairness",
    "inter_fairness",
    "throughput_mbps",
    "rtt_ms",
    "runs",
)
TABLE3_COLUMNS = ("backend", "controller", *ZEUS_SCENARIOS)


def _mean(vals: Iterable[float | None]) -> float:
    v = [x for x in vals if x is not None and math.isfinite(x)]
    return float(np.mean(v)) if v else float("nan")


def _std(vals: Iterable[float | None]) -> float:
    v = [x for x in vals if x is not None and math.isfinite(x)]
    return float(np.std(v)) if len(v) > 1 else (0.0 if v else float("nan"))


def fairness(flow: dict[str, Any]) -> float:
    """Jain's index of a run: the mean of its short and long terms (those that fit in it)."""
    return _mean([flow.get("fairness_short"), flow.get("fairness_long")])


def buffer_value(buf: str) -> float:
    """A buffer label as a number of BDPs."""
    return float(buf)


def _ok_runs(numbers: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in numbers["runs"] if "error" not in r]


def _index(numbers: dict[str, Any]) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {
        (r["backend"], r["trace"], r["buffer"], r["seed"], r["kind"], r["controller"]): r
        for r in _ok_runs(numbers)
    }


def cells(numbers: dict[str, Any], backend: str) -> list[tuple[str, str, int]]:
    """The (trace, buffer, seed) cells of a backend's Table 2 (its main buffers only)."""
    m = numbers["matrix"][backend]
    return [(t, b, s) for t in m["traces"] for b in m["buffers"] for s in m["seeds"]]


def cell_metrics(
    numbers: dict[str, Any], backend: str, controller: str, cell: tuple[str, str, int]
) -> dict[str, float | None]:
    """Table 2's four metrics (and throughput, RTT) of a controller in one cell."""
    idx = _index(numbers)
    trace, buf, seed = cell
    if controller == OPTIMUM:
        opt = numbers["optimum"][backend].get(f"{trace}|{seed}")
        if opt is None:
            return {}
        return {
            "util": 100.0 * opt["utilization"],
            "delay": opt["delay_inflation"],
            "intra": opt["intra_fairness"],
            "inter": opt["inter_fairness"],
            "throughput_mbps": opt["throughput_mbps"],
            "rtt_ms": opt["rtt_ms"],
        }
    out: dict[str, float | None] = {}
    solo = idx.get((backend, trace, buf, seed, "solo", controller))
    if solo is not None:
        f = solo["flows"][0]
        u = f["utilization"]
        out.update(
            util=None if u is None else 100.0 * u,
            delay=f["delay_inflation"],
            throughput_mbps=f["throughput_mbps"],
            rtt_ms=f["rtt_ms"],
        )
    own = idx.get((backend, trace, buf, seed, "self", controller))
    if own is not None:
        out["intra"] = fairness(own["flows"][0])
    vs_kind = "self" if controller == REFERENCE else "vs"
    vs = idx.get((backend, trace, buf, seed, vs_kind, controller))
    if vs is not None:
        out["inter"] = fairness(vs["flows"][1])
    return out


def table2(numbers: dict[str, Any], by_trace: bool = False) -> list[dict[str, Any]]:
    """Table 2's rows: per backend and controller (and trace), over buffers and seeds."""
    rows = []
    for backend, m in numbers["matrix"].items():
        groups = [(t,) for t in m["traces"]] if by_trace else [tuple(m["traces"])]
        for traces in groups:
            for c in m["controllers"]:
                ms = [
                    cell_metrics(numbers, backend, c, cell)
                    for cell in cells(numbers, backend)
                    if cell[0] in traces
                ]
                row: dict[str, Any] = {"backend": backend, "controller": c}
                if by_trace:
                    row = {"backend": backend, "trace": traces[0], "controller": c}
                row.update(
                    util_pct=_mean(x.get("util") for x in ms),
                    util_std=_std(x.get("util") for x in ms),
                    delay_inflation=_mean(x.get("delay") for x in ms),
                    delay_std=_std(x.get("delay") for x in ms),
                    intra_fairness=_mean(x.get("intra") for x in ms),
                    inter_fairness=_mean(x.get("inter") for x in ms),
                    throughput_mbps=_mean(x.get("throughput_mbps") for x in ms),
                    rtt_ms=_mean(x.get("rtt_ms") for x in ms),
                    runs=sum(1 for x in ms if x.get("util") is not None),
                )
                rows.append(row)
    return rows


def scores_of(row: dict[str, Any]) -> dict[str, float]:
    """Table 3's scores of one Table 2 row (NaN where a metric is missing)."""
    vals = (row["util_pct"], row["delay_inflation"], row["intra_fairness"], row["inter_fairness"])
    if not all(math.isfinite(v) for v in vals) or vals[1] <= 0:
        return dict.fromkeys(ZEUS_SCENARIOS, float("nan"))
    return zeus_scores(vals[0] / 100.0, vals[1], vals[2], vals[3])


def table3(t2: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Table 3's rows: the scenario scores of Table 2's means."""
    return [{"backend": r["backend"], "controller": r["controller"], **scores_of(r)} for r in t2]


# -- harm and the self-harm band ------------------------------------------------------------------
def harm_buffer(numbers: dict[str, Any], backend: str) -> str:
    """Fig. 8's buffer: ``inf`` when it ran, else the largest."""
    return max(numbers["matrix"][backend]["buffers"], key=buffer_value)


def _harm_controllers(m: dict[str, Any]) -> list[str]:
    """The controllers of Fig. 8: CUBIC (its self-harm) first, then those under test."""
    return [REFERENCE, *[c for c in m["controllers"] if c != REFERENCE]]


def harm_rows(numbers: dict[str, Any]) -> list[dict[str, Any]]:
    """Harm to CUBIC per backend, trace, buffer, controller and seed (CUBIC: both its flows)."""
    idx = _index(numbers)
    rows = []
    for backend, m in numbers["matrix"].items():
        for trace, buf, seed in cells(numbers, backend):
            ref = idx.get((backend, trace, buf, seed, "solo", REFERENCE))
            if ref is None:
                continue
            x_t, x_d = ref["flows"][0]["throughput_mbps"], ref["flows"][0]["rtt_ms"]
            comps: list[tuple[str, dict[str, Any]]] = []
            for c in _harm_controllers(m):
                if c == OPTIMUM:
                    opt = numbers["optimum"][backend].get(f"{trace}|{seed}")
                    if opt is not None:
                        share = {
                            "throughput_mbps": opt["throughput_mbps"] / 2,
                            "rtt_ms": opt["rtt_ms"],
                        }
                        comps.append((c, share))
                    continue
                run = idx.get((backend, trace, buf, seed, "self" if c == REFERENCE else "vs", c))
                if run is None:
                    continue
                comps.append((c, run["flows"][0]))
                if c == REFERENCE:
                    comps.append((c, run["flows"][1]))
            for c, y in comps:
                rows.append(
                    {
                        "backend": backend,
                        "trace": trace,
                        "buffer": buf,
                        "seed": seed,
                        "controller": c,
                        "throughput_harm": harm(x_t, y["throughput_mbps"], True)
                        if x_t is not None and y["throughput_mbps"] is not None
                        else float("nan"),
                        "delay_harm": harm(x_d, y["rtt_ms"], False)
                        if x_d is not None and y["rtt_ms"] is not None
                        else float("nan"),
                    }
                )
    return rows


def harm_summary(numbers: dict[str, Any]) -> dict[str, Any]:
    """Per backend and trace at Fig. 8's buffer: each controller's mean harm and the band."""
    rows = harm_rows(numbers)
    out: dict[str, Any] = {}
    for backend, m in numbers["matrix"].items():
        buf = harm_buffer(numbers, backend)
        for trace in m["traces"]:
            sel = [
                r for r in rows if (r["backend"], r["trace"], r["buffer"]) == (backend, trace, buf)
            ]
            ref = [r for r in sel if r["controller"] == REFERENCE]
            bands = {}
            for metric in ("throughput_harm", "delay_harm"):
                vals = [r[metric] for r in ref if math.isfinite(r[metric])]
                bands[metric] = list(self_harm_band(vals)) if vals else None
            ctl = {}
            for c in _harm_controllers(m):
                mine = [r for r in sel if r["controller"] == c]
                entry: dict[str, Any] = {}
                for metric in ("throughput_harm", "delay_harm"):
                    v = _mean(r[metric] for r in mine)
                    band = bands[metric]
                    entry[metric] = v
                    entry[f"{metric}_safe"] = (
                        within_self_harm(v, tuple(band)) if band and math.isfinite(v) else None
                    )
                ctl[c] = entry
            out[f"{backend}|{trace}"] = {"buffer": buf, "band": bands, "controllers": ctl}
    return out


# -- Fig. 9 ---------------------------------------------------------------------------------------
def fig9_rows(numbers: dict[str, Any]) -> list[dict[str, Any]]:
    """BBR (and the oracle) against CUBIC: each flow's throughput, share and RTT per buffer."""
    rows = []
    for r in _ok_runs(numbers):
        if r["kind"] != "vs" or r["controller"] not in ("bbr", ORACLE):
            continue
        cub, other = r["flows"][0], r["flows"][1]
        total = (cub["throughput_mbps"] or 0.0) + (other["throughput_mbps"] or 0.0)
        rows.append(
            {
                "backend": r["backend"],
                "trace": r["trace"],
                "controller": r["controller"],
                "buffer": r["buffer"],
                "seed": r["seed"],
                "controller_mbps": other["throughput_mbps"],
                "cubic_mbps": cub["throughput_mbps"],
                "controller_share": other["throughput_mbps"] / total if total else float("nan"),
                "controller_rtt_ms": other["rtt_ms"],
                "cubic_rtt_ms": cub["rtt_ms"],
            }
        )
    return rows


# -- writing --------------------------------------------------------------------------------------
def _fmt(v: Any, digits: int = 3) -> str:
    if isinstance(v, float):
        return "–" if not math.isfinite(v) else f"{v:.{digits}f}"
    return str(v)


def _write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    if not rows:
        path.write_text("")
        return
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


def table2_markdown(t2: Sequence[dict[str, Any]]) -> str:
    """Table 2 as markdown, with the paper's values beside where it has the CCA."""
    lines = [
        "| backend | controller | Util. (%) | Delay (x base RTT) | Intra-fairness | "
        "Inter-fairness | paper (util, delay, intra, inter) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in t2:
        p = PAPER_TABLE2.get(r["controller"])
        paper = f"{p['util']}, {p['delay']}x, {p['intra']}, {p['inter']}" if p else ""
        lines.append(
            f"| {r['backend']} | {r['controller']} | {_fmt(r['util_pct'], 1)} ± "
            f"{_fmt(r['util_std'], 1)} | {_fmt(r['delay_inflation'], 2)}x ± "
            f"{_fmt(r['delay_std'], 2)} | {_fmt(r['intra_fairness'], 2)} | "
            f"{_fmt(r['inter_fairness'], 2)} | {paper} |"
        )
    return "\n".join(lines)


def table3_markdown(t3: Sequence[dict[str, Any]]) -> str:
    """Table 3 as markdown, with the paper's scores beside."""
    lines = [
        "| backend | controller | Real-Time | Large Object Transfer | Mixed Traffic | "
        "paper (RT, bulk, mixed) |",
        "|---|---|---|---|---|---|",
    ]
    for r in t3:
        p = PAPER_TABLE3.get(r["controller"])
        paper = f"{p['realtime']}, {p['bulk']}, {p['mixed']}" if p else ""
        lines.append(
            f"| {r['backend']} | {r['controller']} | {_fmt(r['realtime'])} | {_fmt(r['bulk'])} | "
            f"{_fmt(r['mixed'])} | {paper} |"
        )
    return "\n".join(lines)


def harm_markdown(hs: dict[str, Any]) -> str:
    """Fig. 8's numbers: mean harm per controller with the band, per backend and trace."""
    lines = [
        "| backend | trace | buffer | controller | throughput harm (%) | delay harm (%) | "
        "safe (thpt, delay) |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, entry in hs.items():
        backend, trace = key.split("|")
        band = entry["band"]
        for c, e in entry["controllers"].items():
            safe = ", ".join(
                "–" if e[f"{m}_safe"] is None else ("yes" if e[f"{m}_safe"] else "no")
                for m in ("throughput_harm", "delay_harm")
            )
            lines.append(
                f"| {backend} | {trace} | {entry['buffer']} | {c} | "
                f"{_fmt(e['throughput_harm'], 1)} | {_fmt(e['delay_harm'], 1)} | {safe} |"
            )
        tb, db = band["throughput_harm"], band["delay_harm"]
        lines.append(
            f"| {backend} | {trace} | {entry['buffer']} | *CUBIC self-harm band* | "
            f"{_fmt(tb[0], 1) if tb else '–'} to {_fmt(tb[1], 1) if tb else '–'} | "
            f"{_fmt(db[0], 1) if db else '–'} to {_fmt(db[1], 1) if db else '–'} | |"
        )
    return "\n".join(lines)


def _figure(rows: int, cols: int, size: tuple[float, float]) -> tuple[Any, np.ndarray]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    axes = np.array(fig.subplots(rows, cols, squeeze=False))
    return fig, axes


def _colors(names: Sequence[str]) -> dict[str, Any]:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return {n: cmap(i % 10) for i, n in enumerate(names)}


def plot_harm(numbers: dict[str, Any], hs: dict[str, Any], path: Path) -> None:
    """Fig. 8: throughput and delay harm to CUBIC per controller, the self-harm band shaded."""
    keys = list(hs)
    fig, axes = _figure(len(keys), 2, (11, 3.2 * len(keys)))
    for row, key in zip(axes, keys, strict=True):
        entry = hs[key]
        names = list(entry["controllers"])
        for ax, metric, label in (
            (row[0], "throughput_harm", "throughput harm to CUBIC (%)"),
            (row[1], "delay_harm", "delay harm to CUBIC (%)"),
        ):
            vals = [entry["controllers"][c][metric] for c in names]
            band = entry["band"][metric]
            if band:
                ax.axhspan(min(band[0], 0.0) - 100, band[1], color="tab:green", alpha=0.15)
                ax.axhspan(band[0], band[1], color="tab:green", alpha=0.35, label="CUBIC self-harm")
                ax.axhspan(band[1], 200, color="tab:red", alpha=0.08)
            colors = ["tab:orange" if c in (ORACLE, OPTIMUM) else "tab:blue" for c in names]
            ax.bar(range(len(names)), [v if math.isfinite(v) else 0 for v in vals], color=colors)
            ax.set_xticks(range(len(names)), names, rotation=30, fontsize=8)
            finite = [v for v in vals if math.isfinite(v)] + (list(band) if band else [])
            lo, hi = (min(finite), max(finite)) if finite else (-1.0, 1.0)
            pad = 0.1 * (hi - lo or 1.0)
            ax.set_ylim(lo - pad, hi + pad)
            ax.set(ylabel=label, title=f"{key.replace('|', ': ')} ({entry['buffer']} BDP)")
            ax.axhline(0, color="0.3", lw=0.5)
            if band:
                ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def plot_frontiers(numbers: dict[str, Any], path: Path) -> None:
    """Throughput against delay per trace: each controller's solo runs across buffer regimes."""
    panels = [(b, t) for b, m in numbers["matrix"].items() for t in m["traces"]]
    fig, axes = _figure(len(panels), 1, (7, 4 * len(panels)))
    for ax, (backend, trace) in zip(axes[:, 0], panels, strict=True):
        m = numbers["matrix"][backend]
        colors = _colors(m["controllers"])
        for c in m["controllers"]:
            xs, ys = [], []
            for buf in m["buffers"]:
                ms = [cell_metrics(numbers, backend, c, (trace, buf, s)) for s in m["seeds"]]
                xs.append(_mean(x.get("rtt_ms") for x in ms))
                ys.append(_mean(x.get("throughput_mbps") for x in ms))
            if c == OPTIMUM:
                ax.plot(xs[:1], ys[:1], "*", ms=14, color="k", label="optimum")
                continue
            style = "s--" if c == ORACLE else "o-"
            ax.plot(xs, ys, style, color=colors[c], label=c)
            for x, y, buf in zip(xs, ys, m["buffers"], strict=True):
                if math.isfinite(x) and math.isfinite(y):
                    ax.annotate(buf, (x, y), fontsize=6, xytext=(2, 2), textcoords="offset points")
        ax.set(
            xlabel="mean RTT (ms)",
            ylabel="throughput (Mbit/s)",
            title=f"{backend}: {trace} (labels: buffer in BDP)",
        )
        ax.set_xscale("log")
        ax.invert_xaxis()
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def plot_fig9(numbers: dict[str, Any], rows: Sequence[dict[str, Any]], path: Path) -> None:
    """Fig. 9: BBR's and CUBIC's throughput and delay sharing the bottleneck, against buffer."""
    panels = sorted({(r["backend"], r["trace"]) for r in rows})
    if not panels:
        fig, axes = _figure(1, 1, (6, 2))
        axes[0, 0].text(0.5, 0.5, "no BBR-vs-CUBIC runs", ha="center")
        fig.savefig(path, dpi=100)
        return
    fig, axes = _figure(len(panels), 2, (11, 3.4 * len(panels)))
    for row, (backend, trace) in zip(axes, panels, strict=True):
        sel = [r for r in rows if (r["backend"], r["trace"]) == (backend, trace)]
        finite_bufs = [
            buffer_value(r["buffer"]) for r in sel if math.isfinite(buffer_value(r["buffer"]))
        ]
        inf_x = 1.5 * max(finite_bufs) if finite_bufs else 1.0
        for ctl, ls in (("bbr", "-"), (ORACLE, ":")):
            mine = [r for r in sel if r["controller"] == ctl]
            bufs = sorted({r["buffer"] for r in mine}, key=buffer_value)
            xs = [buffer_value(b) if math.isfinite(buffer_value(b)) else inf_x for b in bufs]
            for col, (key_c, key_cub, unit) in enumerate(
                (
                    ("controller_mbps", "cubic_mbps", "Mbit/s"),
                    ("controller_rtt_ms", "cubic_rtt_ms", "ms"),
                )
            ):
                yc = [_mean(r[key_c] for r in mine if r["buffer"] == b) for b in bufs]
                yq = [_mean(r[key_cub] for r in mine if r["buffer"] == b) for b in bufs]
                ax = row[col]
                ax.plot(
                    xs, yc, "o" + ls, color="tab:blue" if ctl == "bbr" else "tab:orange", label=ctl
                )
                ax.plot(xs, yq, "^" + ls, color="tab:red", label=f"CUBIC (vs {ctl})")
                ax.set(xlabel="buffer (BDP; rightmost: inf)", ylabel=unit)
        opt = [
            v["throughput_mbps"] / 2
            for k, v in numbers["optimum"].get(backend, {}).items()
            if k.startswith(f"{trace}|")
        ]
        if opt:
            row[0].axhline(
                float(np.mean(opt)), color="k", ls="--", lw=0.8, label="optimum: fair half"
            )
        row[0].set_title(f"{backend}: {trace}: throughput")
        row[1].set_title(f"{backend}: {trace}: mean RTT")
        for ax in row:
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def analyse(numbers: dict[str, Any]) -> dict[str, Any]:
    """Every table of the report, from the runs."""
    t2 = table2(numbers)
    return {
        "table2": t2,
        "table2_by_trace": table2(numbers, by_trace=True),
        "table3": table3(t2),
        "harm_rows": harm_rows(numbers),
        "harm": harm_summary(numbers),
        "fig9": fig9_rows(numbers),
    }


def report(numbers: dict[str, Any], tables: dict[str, Any]) -> str:
    """The report's markdown."""
    prov = numbers["provenance"]
    lines = [
        "# The Zeus evaluation on CellGym",
        "",
        provenance.markdown_line(prov),
        "",
        'Asim, Subramanian and Zaki, "The Quest for the Best: Evaluating Congestion Control in '
        '5G": Tables 2 and 3, Fig. 8 (harm to CUBIC), throughput-delay frontiers and Fig. 9 '
        "(BBR against CUBIC by buffer size), on CellGym's controllers. Method: docs/zeus.md; "
        "generator: `evaluation/experiments/zeus.py`.",
        "",
        "## Matrix and timing",
        "",
        "| backend | controllers | traces | buffers (BDP) | Fig. 9 buffers | seeds | s each | "
        "simulations | failed | wall (s) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for b, m in numbers["matrix"].items():
        t = numbers["meta"]["timings"][b]
        lines.append(
            f"| {b} | {', '.join(m['controllers'])} | {', '.join(m['traces'])} | "
            f"{', '.join(m['buffers'])} | {', '.join(m['fig9_buffers']) or '–'} | "
            f"{len(m['seeds'])} | {m['duration_s']:g} | {t['simulations']} | {t['failed']} | "
            f"{t['wall_s']:.1f} |"
        )
    lines += [
        "",
        "Each cell runs a controller alone (utilization, delay), twice (intra-fairness) and beside "
        "CUBIC (inter-fairness, harm); CUBIC alone and CUBIC against CUBIC give the harm "
        "baseline and the self-harm band. The oracle paces every agent flow at the base "
        "station's advertised rate one one-way delay late; the optimum is computed from each "
        "trace. Delay inflation is the mean RTT over the scenario's propagation RTT; fairness is "
        "Jain's index over rolling windows of k x RTT, the mean of the short-term (k = 1-20) and "
        "long-term (k = 50-3000, those that fit in a run) averages.",
        "",
        "## Table 2",
        "",
        table2_markdown(tables["table2"]),
        "",
        "Mean ± std over traces, buffer regimes and seeds (`table2.csv`; per trace: "
        "`table2_by_trace.csv`). Paper: the mean over its traces.",
        "",
        "## Table 3",
        "",
        table3_markdown(tables["table3"]),
        "",
        "The scores of Table 2's means with section 6.6's weights (`cellgym.zeus.ZEUS_WEIGHTS`; "
        "the paper's real-time column follows from its Table 2 with the Thpt and InterFair "
        "weights swapped, docs/zeus.md).",
        "",
        "## Fig. 8: harm to CUBIC",
        "",
        "![harm](fig8_harm.png)",
        "",
        harm_markdown(tables["harm"]),
        "",
        "## Throughput-delay frontiers",
        "",
        "![frontiers](frontiers.png)",
        "",
        "## Fig. 9: BBR against CUBIC by buffer size",
        "",
        "![fig9](fig9_buffer.png)",
        "",
        "Per-run values: `fig9.csv`.",
        "",
    ]
    return "\n".join(lines)


def write(numbers: dict[str, Any], out: Path) -> dict[str, Any]:
    """Write the tables, figures, ``numbers.json`` and ``report.md`` under ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tables = analyse(numbers)
    _write_csv(out / "table2.csv", tables["table2"])
    _write_csv(out / "table2_by_trace.csv", tables["table2_by_trace"])
    _write_csv(out / "table3.csv", tables["table3"])
    _write_csv(out / "harm.csv", tables["harm_rows"])
    _write_csv(out / "fig9.csv", tables["fig9"])
    (out / "table2.md").write_text(table2_markdown(tables["table2"]) + "\n")
    (out / "table3.md").write_text(table3_markdown(tables["table3"]) + "\n")
    plot_harm(numbers, tables["harm"], out / "fig8_harm.png")
    plot_frontiers(numbers, out / "frontiers.png")
    plot_fig9(numbers, tables["fig9"], out / "fig9_buffer.png")
    (out / "numbers.json").write_text(json.dumps(numbers, indent=1, default=_json_default))
    (out / "report.md").write_text(report(numbers, tables))
    return tables


def _json_default(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(f"{type(v).__name__} is not JSON serialisable")
