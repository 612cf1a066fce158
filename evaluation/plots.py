"""Plots of evaluation results; each returns a matplotlib ``Figure`` (notebooks show it).

``plot_throughput_delay`` (the Zeus paper's throughput against delay, mean and confidence interval
over seeds from ``cellgym.metrics.mean_ci``), ``plot_delay_cdf`` (the per-step delay samples of
``cellgym.metrics.step_delay_samples``) and ``plot_timeseries`` work on the tidy tables of
``evaluation.pool.evaluate_many``. Figures are made without pyplot (no GUI, freed when
unreferenced).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from cellgym.metrics import mean_ci, step_delay_samples

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

#: Delay columns of the time series that ``plot_delay_cdf`` can draw, with their axis labels.
DELAY_SERIES: dict[str, str] = {
    "hol_ms": "RLC head-of-line delay (ms)",
    "queueing_delay_ms": "queueing delay, mean - min RTT (ms)",
}

#: The columns that identify a run in the tidy tables.
RUN_KEYS: tuple[str, ...] = ("controller", "scenario", "seed")


def delay_samples(timeseries: pd.DataFrame, delay: str = "hol_ms") -> pd.DataFrame:
    """Per-step delay samples of each run, as ``cellgym.metrics`` counts them.

    ``hol_ms``: one sample per step and UE that has an active flow; ``queueing_delay_ms``: one
    per step and active flow with RTT samples.

    Returns:
        Columns ``controller, scenario, seed, value``.
    """
    return step_delay_samples(timeseries, delay, RUN_KEYS)


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


def new_figure(nrows: int = 1, ncols: int = 1, size: tuple[float, float] = (6.0, 4.5)) -> Any:
    """A figure without pyplot and its ``[nrows, ncols]`` axes; ``size`` is per panel (inches)."""
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
        fig, axes = new_figure()
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
        fig, axes = new_figure()
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
        fig, grid = new_figure(len(quantities), 1, size=(9.0, 2.4))
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
