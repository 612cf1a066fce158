"""Readable tables and the report of evaluation results.

``comparison_table`` prints per-run metric dicts (``cellgym.metrics.compute_metrics``). The rest
works on the tidy tables of ``evaluation.pool.evaluate_many``: ``summarize`` (mean and t
confidence interval per controller and scenario, through ``cellgym.metrics.aggregate``, the one
aggregator), ``summary_table`` and ``write_report`` (tables, ``report.md`` and the plots of
``evaluation.plots``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tabulate import tabulate

from cellgym.aggregates import rliable_aggregates
from cellgym.metrics import aggregate
from evaluation.plots import (
    METRIC_LABELS,
    new_figure,
    plot_delay_cdf,
    plot_throughput_delay,
    plot_timeseries,
)


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


# --------------------------------------------------------------------------------------------
# Tidy results (evaluation.pool.evaluate_many): means and confidence intervals, report.
# --------------------------------------------------------------------------------------------

#: Metrics that ``summarize`` averages by default (columns of the results table).
SUMMARY_METRICS: tuple[str, ...] = (
    "utilization",
    "throughput_mbps",
    "cell_throughput_mbps",
    "jain_fairness",
    "hol_delay_ms_p50",
    "hol_delay_ms_p95",
    "hol_delay_ms_p99",
    "queueing_delay_ms_p50",
    "queueing_delay_ms_p95",
    "queueing_delay_ms_p99",
    "hol_budget_compliance",
    "fct_s_p50",
    "fct_s_p95",
    "mean_reward",
)


def summarize(
    df: pd.DataFrame,
    metrics: Sequence[str] | None = None,
    by: Sequence[str] = ("controller", "scenario"),
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per group (controller x scenario), mean and t confidence interval of each metric over seeds.

    ``cellgym.metrics.aggregate`` with this table's defaults: only rows with ``status == "ok"``
    count (when the column exists); NaN values of a metric are left out of that metric (e.g. FCT
    where no short flow completed).

    Args:
        df: The results table (``evaluation.records.RESULT_COLUMNS``), one row per seed.
        metrics: Columns to summarise; default ``SUMMARY_METRICS`` present in ``df``.
        by: Grouping columns, kept in their order of first appearance.
        confidence: Level of the intervals.

    Returns:
        ``cellgym.metrics.aggregate``'s table.
    """
    if metrics is None:
        metrics = [m for m in SUMMARY_METRICS if m in df.columns]
    return aggregate(df, metrics, by, confidence)


def _pm(mean: float, half: float, digits: int) -> str:
    if not np.isfinite(mean):
        return "-"
    if not np.isfinite(half):
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {half:.{digits}f}"


def _digits(metric: str) -> int:
    if metric.startswith(("utilization", "jain", "hol_budget", "mean_reward", "fct")):
        return 3
    if "delay" in metric:
        return 1
    return 2


def summary_table(
    summary: pd.DataFrame, metrics: Sequence[str] | None = None, fmt: str = "simple"
) -> str:
    """``mean ± CI half-width`` per group and metric, as text (``tabulate`` format ``fmt``).

    Metrics with no value in any group (e.g. FCT without short flows) are left out.
    """
    by = [c for c in ("controller", "scenario") if c in summary.columns]
    if metrics is None:
        metrics = [m for m in SUMMARY_METRICS if f"{m}_mean" in summary.columns]
    metrics = [m for m in metrics if summary[f"{m}_mean"].notna().any()]
    rows = []
    for _, r in summary.iterrows():
        cells = [r[c] for c in by] + [r["n"]]
        cells += [_pm(r[f"{m}_mean"], r[f"{m}_ci"], _digits(m)) for m in metrics]
        rows.append(cells)
    headers = [*by, "n", *[METRIC_LABELS.get(m, m) for m in metrics]]
    return tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True)


#: The controller the rliable section compares with, first one present.
REFERENCES: tuple[str, ...] = ("xrc_policy", "xrc")


def rliable_section(results: pd.DataFrame, confidence: float = 0.95) -> tuple[pd.DataFrame, str]:
    """The rliable aggregates of the mean reward per step, as a table and Markdown lines.

    ``cellgym.aggregates.rliable_aggregates`` over every scenario and seed: IQM and mean with
    stratified bootstrap intervals, and each controller's probability of improvement over XRC
    (its policy, else its native sender) when XRC ran.
    """
    ok = results["status"].eq("ok") if "status" in results.columns else True
    scored = results[ok & np.isfinite(pd.to_numeric(results["mean_reward"], errors="coerce"))]
    present = set(scored["controller"])  # one whose runs all failed has no score to compare with
    reference = next((c for c in REFERENCES if c in present), None)
    table = rliable_aggregates(results, "mean_reward", reference, confidence=confidence)
    if table.empty or "iqm" not in table.columns:
        return table, ""
    headers = ["controller", "runs x scenarios", "IQM", "mean"]
    if reference is not None:
        headers.append(f"P(improvement over {reference})")
    rows = []
    for _, r in table.iterrows():
        if not np.isfinite(r.get("iqm", np.nan)):
            continue
        cells = [
            r["controller"],
            f"{r['runs']} x {r['tasks']}",
            f"{r['iqm']:.3f} [{r['iqm_low']:.3f}, {r['iqm_high']:.3f}]",
            f"{r['mean']:.3f} [{r['mean_low']:.3f}, {r['mean_high']:.3f}]",
        ]
        if reference is not None:
            p = r.get("p_improve", np.nan)
            cells.append(
                "-"
                if not np.isfinite(p)
                else f"{p:.2f} [{r['p_improve_low']:.2f}, {r['p_improve_high']:.2f}]"
            )
        rows.append(cells)
    text = "\n".join(
        [
            "## Across scenarios and seeds (rliable)",
            "",
            "Mean reward per step of every run: interquartile mean and mean over runs and "
            f"scenarios with {confidence:.0%} stratified bootstrap intervals, and the probability "
            "that a run of the controller scores above a run of the reference in the same "
            "scenario (`cellgym.aggregates.rliable_aggregates`). Rewards are not normalised across "
            "scenarios.",
            "",
            tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True),
            "",
        ]
    )
    return table, text


def _slug(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in str(text))


def write_report(
    results: pd.DataFrame,
    out_dir: str | Path,
    flows: pd.DataFrame | None = None,
    timeseries: pd.DataFrame | None = None,
    confidence: float = 0.95,
    title: str = "CellGym evaluation",
    budget_ms: float | None = None,
    notes: str = "",
) -> dict[str, Path]:
    """Write the tables, the summary, the plots and ``report.md`` of an evaluation.

    Files: ``results.parquet`` + ``results.csv`` (one row per controller, scenario and seed),
    ``flows.parquet`` (per flow, when given), ``timeseries.parquet`` (per step, when given),
    ``summary.csv`` (``summarize``), ``aggregate.csv`` (``rliable_section``: IQM, mean and
    probability of improvement over XRC across scenarios and seeds), ``report.md`` (the summary
    as mean ± CI, failures, plots) and per scenario the PNGs ``throughput_delay_<scenario>.png``,
    ``delay_cdf_<scenario>.png`` (HoL and queueing delay) and ``timeseries_<scenario>.png``
    (first seed).

    Args:
        results: The results table (``evaluation.records.RESULT_COLUMNS``).
        out_dir: The folder (created).
        flows: The per-flow table, or ``None``.
        timeseries: The per-step table, or ``None`` (no CDF or time-series plots then).
        confidence: Level of the intervals.
        title: The report's heading.
        budget_ms: The delay budget, drawn on the CDFs (default: ``delay_budget_ms`` of the
            results).
        notes: Markdown put under the heading (e.g. the command and the backend).

    Returns:
        The written paths by key: ``results``, ``results_csv``, ``flows``, ``timeseries``,
        ``summary``, ``report`` and ``throughput_delay:<scenario>``, ``delay_cdf:<scenario>``,
        ``timeseries:<scenario>`` for the plots.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    results.to_parquet(out / "results.parquet", index=False)
    paths["results"] = out / "results.parquet"
    results.to_csv(out / "results.csv", index=False)
    paths["results_csv"] = out / "results.csv"
    if flows is not None:
        flows.to_parquet(out / "flows.parquet", index=False)
        paths["flows"] = out / "flows.parquet"
    if timeseries is not None and len(timeseries):
        timeseries.to_parquet(out / "timeseries.parquet", index=False)
        paths["timeseries"] = out / "timeseries.parquet"
    summary = summarize(results, confidence=confidence)
    summary.to_csv(out / "summary.csv", index=False)
    paths["summary"] = out / "summary.csv"
    if budget_ms is None and "delay_budget_ms" in results.columns:
        budgets = pd.to_numeric(results["delay_budget_ms"], errors="coerce").dropna()
        budget_ms = float(budgets.iloc[0]) if len(budgets) else None

    ok = results["status"].eq("ok") if "status" in results.columns else results.index >= 0
    lines = [f"# {title}", ""]
    if notes:
        lines += [notes, ""]
    lines += [
        f"{int(ok.sum())} of {len(results)} runs finished. Mean ± half-width of the "
        f"{confidence:.0%} t confidence interval over seeds.",
        "",
        summary_table(summary, fmt="github"),
        "",
    ]
    if "mean_reward" in results.columns:
        agg, text = rliable_section(results, confidence)
        if text:
            agg.to_csv(out / "aggregate.csv", index=False)
            paths["aggregate"] = out / "aggregate.csv"
            lines += [text]
    failed = results[~ok]
    if len(failed):
        lines += ["## Failed runs", ""]
        for _, r in failed.iterrows():
            lines.append(
                f"- `{r['controller']}` / `{r['scenario']}` / seed {r['seed']}: {r['error']}"
            )
        lines.append("")
    for name in dict.fromkeys(results["scenario"]):
        slug = _slug(name)
        lines += [f"## {name}", ""]
        figs: list[tuple[str, str, Any]] = []
        sub = results[results["scenario"] == name]
        if sub["status"].eq("ok").any() if "status" in sub.columns else len(sub):
            figs.append(
                (
                    "throughput_delay",
                    "Throughput vs p95 queueing delay",
                    plot_throughput_delay(sub, confidence=confidence),
                )
            )
        ts = (
            timeseries[timeseries["scenario"] == name]
            if timeseries is not None and len(timeseries)
            else None
        )
        if ts is not None and len(ts):
            fig, axes = new_figure(1, 2)
            plot_delay_cdf(ts, "hol_ms", ax=axes[0, 0], budget_ms=budget_ms)
            plot_delay_cdf(ts, "queueing_delay_ms", ax=axes[0, 1], budget_ms=budget_ms)
            figs.append(("delay_cdf", "Delay CDFs (HoL, queueing)", fig))
            figs.append(
                ("timeseries", "Time series of the agent flow (first seed)", plot_timeseries(ts))
            )
        for key, caption, fig in figs:
            path = out / f"{key}_{slug}.png"
            fig.savefig(path, dpi=120)
            paths[f"{key}:{name}"] = path
            lines += [f"![{caption}]({path.name})", ""]
    (out / "report.md").write_text("\n".join(lines))
    paths["report"] = out / "report.md"
    return paths
