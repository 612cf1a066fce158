"""The Zeus paper's metrics, scores and offline optimum, on arrays.

From Asim, Subramanian and Zaki, "The Quest for the Best: Evaluating Congestion Control in 5G".
``cellgym.metrics`` re-exports them and applies them to an episode's records (``zeus_summary``).

Definitions (docs/zeus.md):

- utilization: bytes delivered over the bytes the trace could carry in the same span
  (``trace_utilization``), clipped to [0, 1] in the scores;
- delay inflation: mean RTT over the base (propagation) RTT (``delay_inflation``; Table 2's
  "Delay 12.2x");
- fairness: Jain's index over rolling windows of ``k x RTT`` (``rolling_jain``): short term
  ``k = 1, 2, 5, 10, 20``, long term ``k = 50, 100, 500, 1000, 3000`` (``zeus_fairness``);
  intra (a controller against itself) and inter (against CUBIC) are one function on two runs;
- harm after Ware et al.: ``(x - y) / x * 100`` for "more is better" metrics (throughput),
  ``(y - x) / x * 100`` for "less is better" (delay), with ``x`` CUBIC's solo value and ``y`` its
  value beside the competitor (``harm``); CUBIC against CUBIC gives the self-harm band
  (``self_harm_band``) that separates acceptable from harmful competitors;
- scores: ``Score = sum(w_m * m)`` over Thpt (utilization), Delay^-1 (1 / inflation),
  IntraFair and InterFair with the paper's weights (``ZEUS_WEIGHTS``, ``zeus_score``).

>>> round(zeus_score("bulk", thpt=0.991, delay_inflation=12.2, intra=0.86, inter=0.86), 3)
0.919
>>> harm(10.0, 5.0, more_is_better=True)  # CUBIC's throughput halves: 50 % harm
50.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from cellgym.traces.series import CapacitySeries
from cellgym.vocab import SpecError, check_above, check_choice

#: Multiples of the RTT of the short- and long-term fairness windows (section 6.3).
SHORT_TERM_KS: tuple[int, ...] = (1, 2, 5, 10, 20)
LONG_TERM_KS: tuple[int, ...] = (50, 100, 500, 1000, 3000)
#: The four normalised metrics of a score, in the paper's order.
SCORE_METRICS: tuple[str, ...] = ("inverse_delay", "inter_fairness", "thpt", "intra_fairness")
#: The scenario scores' weights as section 6.6 writes them.
ZEUS_WEIGHTS: dict[str, dict[str, float]] = {
    "realtime": {"inverse_delay": 0.4, "inter_fairness": 0.3, "thpt": 0.2, "intra_fairness": 0.1},
    "bulk": {"inverse_delay": 0.05, "inter_fairness": 0.05, "thpt": 0.75, "intra_fairness": 0.15},
    "mixed": {"inverse_delay": 0.2, "inter_fairness": 0.3, "thpt": 0.2, "intra_fairness": 0.3},
}
#: Table 3's real-time column follows from Table 2 with Thpt and InterFair's weights swapped
#: (0.3 Thpt, 0.2 InterFair; ``tests/cellgym/test_zeus.py``): kept to reproduce the table.
PAPER_TABLE3_REALTIME_WEIGHTS: dict[str, float] = {
    "inverse_delay": 0.4,
    "inter_fairness": 0.2,
    "thpt": 0.3,
    "intra_fairness": 0.1,
}
#: Scenario names of ``ZEUS_WEIGHTS``.
ZEUS_SCENARIOS: tuple[str, ...] = tuple(ZEUS_WEIGHTS)


# ------------------------------------------------------------------------------------------------
# Utilization and delay
# ------------------------------------------------------------------------------------------------


def trace_capacity_bytes(series: CapacitySeries, start_s: float, end_s: float) -> float:
    """Bytes the trace can carry from ``start_s`` to ``end_s`` (replay starting at t = 0)."""
    edges = series.cumulative_bytes(np.array([start_s, end_s], dtype=np.float64))
    return float(edges[1] - edges[0])


def trace_utilization(delivered_bytes: float, capacity_bytes: float) -> float | None:
    """Delivered over deliverable bytes (``None`` without capacity); not clipped."""
    return float(delivered_bytes / capacity_bytes) if capacity_bytes > 0 else None


def delay_inflation(
    rtt_ms: np.ndarray, base_rtt_ms: float, weights: np.ndarray | None = None
) -> float:
    """Mean RTT over the base RTT (NaN without finite samples).

    Args:
        rtt_ms: RTT samples (e.g. each step's mean RTT), in ms.
        base_rtt_ms: The propagation RTT, in ms (> 0).
        weights: Optional weights of the samples (e.g. the RTT samples in each step).
    """
    check_above("base_rtt_ms", base_rtt_ms, 0.0)
    r = np.asarray(rtt_ms, dtype=np.float64)
    w = np.ones_like(r) if weights is None else np.asarray(weights, dtype=np.float64)
    keep = np.isfinite(r) & (w > 0)
    if not keep.any():
        return float("nan")
    return float(np.average(r[keep], weights=w[keep]) / base_rtt_ms)


# ------------------------------------------------------------------------------------------------
# Fairness over rolling windows of k x RTT
# ------------------------------------------------------------------------------------------------


def jain_rows(x: np.ndarray) -> np.ndarray:
    """Jain's index of each row of ``[W, F]`` non-negative values; 1.0 for an all-zero row.

    Row by row this is ``cellgym.metrics.jain_index``.
    """
    x = np.asarray(x, dtype=np.float64)
    total = x.sum(axis=1)
    squares = np.square(x).sum(axis=1)
    n = x.shape[1]
    return np.where(squares > 0, total**2 / np.maximum(n * squares, 1e-300), 1.0)


def rolling_jain(
    rx_bytes: np.ndarray, active: np.ndarray, step_s: float, window_s: float
) -> np.ndarray:
    """Jain's index of the flows' bytes in every window of ``window_s``, rolled step by step.

    A window spans ``max(1, round(window_s / step_s))`` consecutive steps and counts when every
    flow is active throughout it; windows longer than the run give none.

    Args:
        rx_bytes: ``[T, F]`` bytes each flow received in each step (the compared flows only).
        active: ``[T, F]`` the flow was active in the step.
        step_s: Step length, in seconds.
        window_s: Window length, in seconds (``k x RTT``).

    Returns:
        The index of each counted window (possibly empty).
    """
    rx = np.asarray(rx_bytes, dtype=np.float64)
    act = np.asarray(active, dtype=bool)
    if rx.ndim != 2 or rx.shape != act.shape or rx.shape[1] < 2:
        raise SpecError(f"rolling_jain needs [T, F>=2] bytes and activity: got {rx.shape}")
    w = max(1, int(round(window_s / step_s)))
    t = rx.shape[0]
    if w > t:
        return np.zeros(0)
    zero = np.zeros((1, rx.shape[1]))
    cum = np.concatenate([zero, np.cumsum(rx, axis=0)])
    cum_act = np.concatenate([zero, np.cumsum(act, axis=0)])
    sums = cum[w:] - cum[:-w]
    full = np.all(cum_act[w:] - cum_act[:-w] == w, axis=1)
    return jain_rows(sums[full])


def zeus_fairness(
    rx_bytes: np.ndarray,
    active: np.ndarray,
    step_s: float,
    rtt_s: float,
    ks: Sequence[int] = SHORT_TERM_KS + LONG_TERM_KS,
) -> dict[str, object]:
    """Short- and long-term fairness of two (or more) flows, as in section 6.3.

    For each ``k`` the mean of ``rolling_jain`` over windows of ``k * rtt_s``; ``short`` and
    ``long`` average those means over the ``k`` of each term that have a window (NaN when none:
    a run shorter than ``k x RTT``).

    Returns:
        ``{"by_k": {k: mean or NaN}, "short": float, "long": float}``.
    """
    check_above("rtt_s", rtt_s, 0.0)
    by_k: dict[int, float] = {}
    for k in ks:
        j = rolling_jain(rx_bytes, active, step_s, k * rtt_s)
        by_k[int(k)] = float(j.mean()) if j.size else float("nan")

    def term(group: tuple[int, ...]) -> float:
        vals = [by_k[k] for k in group if k in by_k and math.isfinite(by_k[k])]
        return float(np.mean(vals)) if vals else float("nan")

    return {"by_k": by_k, "short": term(SHORT_TERM_KS), "long": term(LONG_TERM_KS)}


# ------------------------------------------------------------------------------------------------
# Harm (Ware et al.) and the self-harm band
# ------------------------------------------------------------------------------------------------


def harm(solo: float, with_competitor: float, more_is_better: bool) -> float:
    """Harm in percent of a competitor to a flow whose solo value is ``solo``.

    ``(x - y) / x * 100`` when more is better (throughput), ``(y - x) / x * 100`` when less is
    better (delay); negative harm is a gain (e.g. lower delay). NaN when ``x`` is 0.
    """
    if solo == 0 or not math.isfinite(solo):
        return float("nan")
    diff = solo - with_competitor if more_is_better else with_competitor - solo
    return float(diff / solo * 100.0)


def self_harm_band(self_harms: Sequence[float]) -> tuple[float, float]:
    """The reference band: the range of CUBIC's harm to CUBIC over runs (min, max).

    The paper shades this band (20 runs per trace) as the "safe zone": a competitor whose harm
    stays at or below its top does no more harm than CUBIC does to itself.
    """
    v = np.asarray(self_harms, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        raise SpecError("self_harm_band needs at least one finite CUBIC-vs-CUBIC harm value")
    return float(v.min()), float(v.max())


def within_self_harm(value: float, band: tuple[float, float]) -> bool:
    """True when a harm value is at most the top of CUBIC's self-harm band (the safe zone)."""
    return bool(value <= band[1])


# ------------------------------------------------------------------------------------------------
# Scores
# ------------------------------------------------------------------------------------------------


def normalized_metrics(
    thpt: float, delay_inflation: float, intra: float, inter: float
) -> dict[str, float]:
    """The four score inputs, normalised to [0, 1] as Table 2 -> Table 3 implies.

    Thpt: utilization as a fraction, clipped to [0, 1]. Delay^-1: ``1 / inflation`` (inflation
    below 1, a measurement artefact, counts as 1). IntraFair, InterFair: Jain's index as it is
    (two flows: [0.5, 1]).
    """
    if not delay_inflation > 0:
        raise SpecError(f"delay_inflation={delay_inflation!r} is out of range: allowed (0, inf)")
    return {
        "inverse_delay": 1.0 / max(1.0, float(delay_inflation)),
        "inter_fairness": float(inter),
        "thpt": min(1.0, max(0.0, float(thpt))),
        "intra_fairness": float(intra),
    }


def zeus_score(
    scenario: str,
    thpt: float,
    delay_inflation: float,
    intra: float,
    inter: float,
    weights: dict[str, float] | None = None,
) -> float:
    """``Score_scenario`` of section 6.6 (``ZEUS_WEIGHTS[scenario]``, or explicit ``weights``)."""
    if weights is None:
        check_choice("scenario", scenario, ZEUS_SCENARIOS)
        weights = ZEUS_WEIGHTS[scenario]
    m = normalized_metrics(thpt, delay_inflation, intra, inter)
    return float(sum(weights[k] * m[k] for k in SCORE_METRICS))


def zeus_scores(
    thpt: float, delay_inflation: float, intra: float, inter: float
) -> dict[str, float]:
    """All three scenario scores: ``{"realtime": ..., "bulk": ..., "mixed": ...}``."""
    return {s: zeus_score(s, thpt, delay_inflation, intra, inter) for s in ZEUS_SCENARIOS}


# ------------------------------------------------------------------------------------------------
# The offline optimum
# ------------------------------------------------------------------------------------------------


def offline_optimum(
    series: CapacitySeries,
    base_rtt_ms: float,
    duration_s: float | None = None,
    start_s: float = 0.0,
) -> dict[str, float]:
    """The optimal reference of section 3.2: the capacity fully used at the base RTT.

    With complete knowledge of the channel ahead, a sender delivers every byte the trace offers
    without queueing: utilization 1, RTT = base RTT (inflation 1), perfectly fair shares.

    Returns:
        ``throughput_mbps`` (the trace's mean over the span), ``delivered_bytes``,
        ``utilization``, ``rtt_ms``, ``delay_inflation``, ``intra_fairness``,
        ``inter_fairness`` and the three scores (``score_realtime``, ...).
    """
    check_above("base_rtt_ms", base_rtt_ms, 0.0)
    span = series.duration_s - start_s if duration_s is None else duration_s
    check_above("duration_s", span, 0.0)
    cap = trace_capacity_bytes(series, start_s, start_s + span)
    out = {
        "throughput_mbps": cap * 8e-6 / span,
        "delivered_bytes": cap,
        "utilization": 1.0,
        "rtt_ms": float(base_rtt_ms),
        "delay_inflation": 1.0,
        "intra_fairness": 1.0,
        "inter_fairness": 1.0,
    }
    for name, value in zeus_scores(1.0, 1.0, 1.0, 1.0).items():
        out[f"score_{name}"] = value
    return out
