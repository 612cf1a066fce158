"""Readable tables, confidence intervals, plots and the report of evaluation results.

``comparison_table`` prints per-run metric dicts (``cellgym.metrics.compute_metrics``). The rest
works on the tidy tables of ``cellgym.evaluation.evaluate_many``: ``summarize`` (mean and t
confidence interval per controller and scenario), ``summary_table``, the plots (each returns a
matplotlib ``Figure``, so notebooks can show it) and ``write_report``.
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
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


# --------------------------------------------------------------------------------------------
# Tidy results (cellgym.evaluation.evaluate_many): means and confidence intervals, plots, report.
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

#: Short headers of the printed and Markdown tables.
METRIC_LABELS: dict[str, str] = {
    "utilization": "util",
    "throughput_mbps": "tput Mbit/s",
    "cell_throughput_mbps": "cell Mbit/s",
    "jain_fairness": "Jain",
    "hol_delay_ms_p50": "HoL p50 ms",
    "hol_delay_ms_p95": "HoL p95 ms",
    "hol_delay_ms_p99": "HoL p99 ms",
    "queueing_delay_ms_p50": "qdelay p50 ms",
    "queueing_delay_ms_p95": "qdelay p95 ms",
    "queueing_delay_ms_p99": "qdelay p99 ms",
    "hol_budget_compliance": "HoL<=budget",
    "fct_s_p50": "FCT p50 s",
    "fct_s_p95": "FCT p95 s",
    "mean_reward": "reward",
}

# Two-sided 97.5 % quantiles of Student's t for 1..30 degrees of freedom (standard tables); used
# only when scipy is missing. Beyond 30, or for another confidence, the normal quantile is used,
# which makes the interval slightly too narrow for few seeds.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t_quantile(confidence: float, dof: int) -> float:
    """The two-sided Student-t quantile ``t_{(1 + confidence) / 2, dof}``.

    Uses ``scipy.stats.t``; without scipy, a table for 95 % and 1..30 degrees of freedom, else
    the normal quantile (documented fallback).

    Raises:
        ValueError: ``confidence`` outside (0, 1) or ``dof < 1``.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence={confidence!r} is out of range: allowed (0, 1)")
    if dof < 1:
        raise ValueError(f"dof={dof!r} is out of range: allowed [1, inf)")
    try:
        from scipy import stats
    except ImportError:  # pragma: no cover - scipy is installed with the dependencies
        if abs(confidence - 0.95) < 1e-12 and dof <= len(_T975):
            return _T975[dof - 1]
        from statistics import NormalDist

        return NormalDist().inv_cdf((1.0 + confidence) / 2.0)
    return float(stats.t.ppf((1.0 + confidence) / 2.0, dof))


def mean_ci(
    values: Sequence[float] | np.ndarray | pd.Series, confidence: float = 0.95
) -> tuple[float, float, int]:
    """Mean and the half-width of its t confidence interval over the finite values.

    ``half = t_{(1+c)/2, n-1} * s / sqrt(n)`` with ``s`` the sample standard deviation (ddof 1).

    Returns:
        ``(mean, half_width, n)``; the half-width is NaN for fewer than two values, the mean NaN
        for none.
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    n = int(v.size)
    if n == 0:
        return float("nan"), float("nan"), 0
    mean = float(v.mean())
    if n < 2:
        return mean, float("nan"), n
    half = t_quantile(confidence, n - 1) * float(v.std(ddof=1)) / math.sqrt(n)
    return mean, half, n


def summarize(
    df: pd.DataFrame,
    metrics: Sequence[str] | None = None,
    by: Sequence[str] = ("controller", "scenario"),
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per group (controller x scenario), mean and t confidence interval of each metric over seeds.

    Only rows with ``status == "ok"`` count (when the column exists); NaN values of a metric are
    left out of that metric (e.g. FCT where no short flow completed).

    Args:
        df: The results table (``cellgym.evaluation.RESULT_COLUMNS``), one row per seed.
        metrics: Columns to summarise; default ``SUMMARY_METRICS`` present in ``df``.
        by: Grouping columns, kept in their order of first appearance.
        confidence: Level of the intervals.

    Returns:
        One row per group: the ``by`` columns, ``n`` (successful runs), ``failed`` (failed runs),
        then per metric ``<m>_mean``, ``<m>_ci`` (half-width), ``<m>_low``, ``<m>_high`` and
        ``<m>_n`` (values used).
    """
    by = list(by)
    if metrics is None:
        metrics = [m for m in SUMMARY_METRICS if m in df.columns]
    missing = [c for c in [*by, *metrics] if c not in df.columns]
    if missing:
        raise ValueError(
            f"summarize: columns {missing} are not in the table: have {list(df.columns)}"
        )
    ok = df["status"].eq("ok") if "status" in df.columns else pd.Series(True, index=df.index)
    groups = df[by].drop_duplicates()
    rows = []
    for _, key in groups.iterrows():
        mask = np.logical_and.reduce([df[c].eq(key[c]).to_numpy() for c in by])
        good = df[mask & ok.to_numpy()]
        row: dict[str, Any] = {c: key[c] for c in by}
        row["n"] = len(good)
        row["failed"] = int(mask.sum() - len(good))
        for m in metrics:
            mean, half, n = mean_ci(pd.to_numeric(good[m], errors="coerce"), confidence)
            row[f"{m}_mean"] = mean
            row[f"{m}_ci"] = half
            row[f"{m}_low"] = mean - half
            row[f"{m}_high"] = mean + half
            row[f"{m}_n"] = n
        rows.append(row)
    return pd.DataFrame(rows)


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


def _colors(labels: Sequence[str]) -> dict[str, Any]:
    """One colour per controller, stable in the order given (``tab10``, then ``tab20``)."""
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if len(labels) <= 10 else "tab20"]
    return {c: cmap(i % cmap.N) for i, c in enumerate(labels)}


@functools.cache
def _figure_class() -> type:
    """A matplotlib ``Figure`` that Jupyter shows as PNG without pyplot (``_repr_png_``)."""
    from matplotlib.figure import Figure

    class ReportFigure(Figure):
        """A figure made without pyplot: no GUI, freed when unreferenced, shown by Jupyter."""

        def _repr_png_(self) -> bytes:
            buf = io.BytesIO()
            self.savefig(buf, format="png", dpi=100)
            return buf.getvalue()

    return ReportFigure


def _new_figure(nrows: int = 1, ncols: int = 1, size: tuple[float, float] = (6.0, 4.5)) -> Any:
    fig = _figure_class()(figsize=(size[0] * ncols, size[1] * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def _only_scenario(df: pd.DataFrame, scenario: str | None, what: str) -> tuple[pd.DataFrame, str]:
    names = list(dict.fromkeys(df["scenario"])) if "scenario" in df.columns else []
    if scenario is None:
        if len(names) > 1:
            raise ValueError(
                f"{what}: the table holds scenarios {names}: pass scenario=<one of them>"
            )
        return df, names[0] if names else ""
    if scenario not in names:
        raise ValueError(
            f"{what}: scenario={scenario!r} is not in the table: choose one of {names}"
        )
    return df[df["scenario"] == scenario], scenario


def plot_throughput_delay(
    df: pd.DataFrame,
    ax: Any = None,
    scenario: str | None = None,
    delay: str = "queueing_delay_ms_p95",
    throughput: str = "throughput_mbps",
    confidence: float = 0.95,
) -> Any:
    """Throughput against delay per controller, as in the Zeus paper: the better corner top right.

    Each controller is a point at its mean over seeds with t confidence intervals as error bars
    on both axes; the seeds are small faint points. The delay axis is inverted.

    Args:
        df: The results table (one scenario, or pick one with ``scenario``).
        ax: Axes to draw on; default a new figure.
        scenario: The scenario to draw when the table holds several.
        delay: The delay column (x).
        throughput: The throughput column (y).
        confidence: Level of the intervals.

    Returns:
        The matplotlib ``Figure``.
    """
    df, name = _only_scenario(df, scenario, "plot_throughput_delay")
    if ax is None:
        fig, axes = _new_figure()
        ax = axes[0, 0]
    fig = ax.figure
    ok = df[df["status"].eq("ok")] if "status" in df.columns else df
    labels = list(dict.fromkeys(df["controller"]))
    colors = _colors(labels)
    for c in labels:
        runs = ok[ok["controller"] == c]
        x = pd.to_numeric(runs[delay], errors="coerce")
        y = pd.to_numeric(runs[throughput], errors="coerce")
        if not (np.isfinite(x).any() and np.isfinite(y).any()):
            continue
        ax.scatter(x, y, s=12, color=colors[c], alpha=0.35, linewidths=0)
        mx, hx, _ = mean_ci(x, confidence)
        my, hy, _ = mean_ci(y, confidence)
        ax.errorbar(
            mx,
            my,
            xerr=None if not np.isfinite(hx) else hx,
            yerr=None if not np.isfinite(hy) else hy,
            fmt="o",
            ms=7,
            capsize=3,
            color=colors[c],
            label=c,
        )
    if not ax.xaxis_inverted():
        ax.invert_xaxis()
    ax.set_xlabel(f"{METRIC_LABELS.get(delay, delay)} (better →)")
    ax.set_ylabel(f"{METRIC_LABELS.get(throughput, throughput)} (better ↑)")
    ax.set_title(
        f"{name}: mean ± {confidence:.0%} CI over seeds" if name else "throughput vs delay"
    )
    ax.grid(True, alpha=0.3)
    if labels:
        ax.legend(fontsize="small")
    return fig


#: Delay columns of the time series that ``plot_delay_cdf`` can draw, with their axis labels.
DELAY_SERIES: dict[str, str] = {
    "hol_ms": "RLC head-of-line delay (ms)",
    "queueing_delay_ms": "queueing delay, mean - min RTT (ms)",
}


def delay_samples(timeseries: pd.DataFrame, delay: str = "hol_ms") -> pd.DataFrame:
    """Per-step delay samples of each run, as ``cellgym.metrics`` counts them.

    ``hol_ms``: one sample per step and UE that has an active flow; ``queueing_delay_ms``: one
    per step and active flow with RTT samples.

    Returns:
        Columns ``controller, scenario, seed, value``.
    """
    if delay not in DELAY_SERIES:
        raise ValueError(f"delay={delay!r} is unknown: choose one of {', '.join(DELAY_SERIES)}")
    ts = timeseries[timeseries["active"].astype(bool)]
    if delay == "hol_ms":
        ts = ts.drop_duplicates(["controller", "scenario", "seed", "t", "ue"])
    out = ts[["controller", "scenario", "seed", delay]].rename(columns={delay: "value"})
    return out[np.isfinite(out["value"].to_numpy(dtype=float))]


def plot_delay_cdf(
    timeseries: pd.DataFrame,
    delay: str = "hol_ms",
    ax: Any = None,
    scenario: str | None = None,
    budget_ms: float | None = None,
) -> Any:
    """Empirical CDF of a per-step delay per controller, all seeds pooled.

    Args:
        timeseries: The per-step table of ``evaluate_many``.
        delay: ``hol_ms`` or ``queueing_delay_ms`` (``DELAY_SERIES``).
        ax: Axes to draw on; default a new figure.
        scenario: The scenario to draw when the table holds several.
        budget_ms: Draw the delay budget as a vertical line.

    Returns:
        The matplotlib ``Figure``.
    """
    ts, name = _only_scenario(timeseries, scenario, "plot_delay_cdf")
    if ax is None:
        fig, axes = _new_figure()
        ax = axes[0, 0]
    fig = ax.figure
    samples = delay_samples(ts, delay)
    labels = list(dict.fromkeys(ts["controller"]))
    colors = _colors(labels)
    for c in labels:
        v = np.sort(samples.loc[samples["controller"] == c, "value"].to_numpy(dtype=float))
        if v.size == 0:
            continue
        ax.step(v, np.arange(1, v.size + 1) / v.size, where="post", color=colors[c], label=c)
    if budget_ms is not None:
        ax.axvline(budget_ms, color="0.4", ls="--", lw=1, label=f"budget {budget_ms:g} ms")
    ax.set_xlabel(DELAY_SERIES[delay])
    ax.set_ylabel("CDF")
    ax.set_ylim(0.0, 1.02)
    ax.set_title(f"{name}: {delay} over all steps and seeds" if name else delay)
    ax.grid(True, alpha=0.3)
    if labels:
        ax.legend(fontsize="small", loc="lower right")
    return fig


#: Quantities ``plot_timeseries`` draws by default, with their axis labels.
TIMESERIES_QUANTITIES: dict[str, str] = {
    "throughput_mbps": "throughput (Mbit/s)",
    "cwnd_bytes": "cwnd (kB)",
    "hol_ms": "HoL delay (ms)",
}


def plot_timeseries(
    timeseries: pd.DataFrame,
    scenario: str | None = None,
    seed: int | None = None,
    quantities: Sequence[str] = tuple(TIMESERIES_QUANTITIES),
    axes: Sequence[Any] | None = None,
    smooth_s: float = 0.2,
) -> Any:
    """Per-step throughput, cwnd and HoL delay of the agent flow under each controller, one seed.

    The throughput panel also shows the agent UE's available capacity (first controller's run)
    as a grey line; throughput is a moving average over ``smooth_s`` (per-step deliveries of
    20 ms are bursty).

    Args:
        timeseries: The per-step table of ``evaluate_many``.
        scenario: The scenario to draw when the table holds several.
        seed: The seed to draw; default the smallest.
        quantities: Columns of the table, one panel each.
        axes: One axes per quantity; default a new figure.
        smooth_s: Window of the throughput's moving average, in seconds (0: none).

    Returns:
        The matplotlib ``Figure``.
    """
    ts, name = _only_scenario(timeseries, scenario, "plot_timeseries")
    if seed is None:
        seed = int(ts["seed"].min()) if len(ts) else 0
    ts = ts[(ts["seed"] == seed) & ts["agent"].astype(bool)]
    if axes is None:
        fig, grid = _new_figure(len(quantities), 1, size=(9.0, 2.4))
        axes = list(grid[:, 0])
    fig = axes[0].figure
    labels = list(dict.fromkeys(timeseries["controller"]))
    colors = _colors(labels)
    for ax, q in zip(axes, quantities, strict=True):
        scale = 1e-3 if q == "cwnd_bytes" else 1.0
        if q == "throughput_mbps" and len(ts):
            first = ts[ts["controller"] == ts["controller"].iloc[0]]
            first = first.groupby("t", as_index=False)["capacity_mbps"].first()
            ax.plot(first["t"], first["capacity_mbps"], color="0.6", lw=1, label="UE capacity")
        for c in labels:
            run = ts[ts["controller"] == c]
            if run.empty:
                continue
            if q == "throughput_mbps":
                series = run.groupby("t", as_index=False)[q].sum()
                step = float(np.median(np.diff(series["t"]))) if len(series) > 1 else 0.0
                if smooth_s > 0 and step > 0:
                    window = max(1, round(smooth_s / step))
                    series[q] = series[q].rolling(window, min_periods=1).mean()
            else:
                series = run.groupby("t", as_index=False)[q].mean()
            ax.plot(series["t"], series[q] * scale, color=colors[c], lw=1, label=c)
        ax.set_ylabel(TIMESERIES_QUANTITIES.get(q, q))
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time (s)")
    axes[0].set_title(f"{name}, seed {seed}: agent flow" if name else f"seed {seed}")
    axes[0].legend(fontsize="small", ncols=min(4, len(labels) + 1), loc="upper right")
    return fig


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
    ``summary.csv`` (``summarize``), ``report.md`` (the summary as mean ± CI, failures, plots) and
    per scenario the PNGs ``throughput_delay_<scenario>.png``, ``delay_cdf_<scenario>.png`` (HoL
    and queueing delay) and ``timeseries_<scenario>.png`` (first seed).

    Args:
        results: The results table (``cellgym.evaluation.RESULT_COLUMNS``).
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
            fig, axes = _new_figure(1, 2)
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
