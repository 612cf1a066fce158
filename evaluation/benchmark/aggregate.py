"""Aggregates of normalised scores over tasks and seeds, as rliable recommends.

Agarwal et al., "Deep Reinforcement Learning at the Edge of the Statistical Precipice" (NeurIPS
2021). The runs form one ``[seeds, tasks]`` matrix per controller
(``cellgym.aggregates.score_matrices``: the tasks and seeds every controller has); intervals are
stratified bootstrap percentile intervals (seeds resampled with replacement within each task,
``reps`` times, seeded):

- ``aggregate_table``: per controller, the interquartile mean and the mean
  (``cellgym.aggregates.rliable_aggregates``), the median and the optimality gap
  (``rliable.metrics``: ``1 - mean(min(score, 1))``), each with its interval;
- ``improvement_matrix``: for every ordered pair, the probability of improvement ``P(X > Y)``
  (Mann-Whitney's statistic per task, averaged over tasks: ``rliable.metrics``'s estimator,
  vectorised over the bootstrap here; a test checks it equals rliable's);
- ``performance_profiles``: per controller and threshold ``tau``, the fraction of runs scoring
  above ``tau`` (averaged over tasks), with its interval band.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from cellgym.aggregates import _stratified_resample, rliable_aggregates, score_matrices
from cellgym.metrics import CONFIDENCE, check_confidence

#: Bootstrap repetitions of the intervals.
REPS = 2000


def matrices(frame: pd.DataFrame, metric: str) -> dict[str, np.ndarray]:
    """The ``[seeds, tasks]`` matrix of ``metric`` per controller (the same tasks and seeds)."""
    return score_matrices(frame, metric, by="controller", task="task")


def _interval(dist: np.ndarray, confidence: float) -> list[float]:
    lo, hi = 50 * (1 - confidence), 50 * (1 + confidence)
    return np.percentile(dist, [lo, hi]).tolist()


def aggregate_table(
    frame: pd.DataFrame,
    metric: str,
    reps: int = REPS,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> pd.DataFrame:
    """Per controller: IQM, mean, median and optimality gap of ``metric`` with their intervals.

    Returns:
        Columns ``controller``, ``runs``, ``tasks`` and, for each of ``iqm``, ``mean``,
        ``median``, ``optimality_gap``, the value and its ``_low`` and ``_high`` ends.
    """
    from rliable import metrics as rm

    check_confidence(confidence)
    table = rliable_aggregates(
        frame.rename(columns={"task": "scenario"}), metric, None, reps, confidence, seed
    )
    scores = matrices(frame, metric)
    rng = np.random.default_rng(seed + 1)
    extra = []
    for name, x in scores.items():
        row: dict[str, Any] = {"controller": name}
        if x.size:
            boots = [_stratified_resample(x, rng) for _ in range(reps)]
            for key, fn in (
                ("median", rm.aggregate_median),
                ("optimality_gap", rm.aggregate_optimality_gap),
            ):
                row[key] = float(fn(x))
                row[f"{key}_low"], row[f"{key}_high"] = _interval(
                    np.array([fn(b) for b in boots]), confidence
                )
        extra.append(row)
    return table.merge(pd.DataFrame(extra), on="controller", how="left")


def _p_improve(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``P(X > Y)`` per leading batch: ``x[..., n, T]``, ``y[..., m, T]`` -> mean over tasks.

    Per task the Mann-Whitney statistic over ``n * m`` pairs (ties count one half).
    """
    gt = (x[..., :, None, :] > y[..., None, :, :]).mean(axis=(-3, -2))
    eq = (x[..., :, None, :] == y[..., None, :, :]).mean(axis=(-3, -2))
    return (gt + 0.5 * eq).mean(axis=-1)


def improvement_matrix(
    frame: pd.DataFrame,
    metric: str,
    reps: int = REPS,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> pd.DataFrame:
    """``P(X > Y)`` for every ordered pair of controllers, with its bootstrap interval.

    Returns:
        Columns ``x``, ``y``, ``p_improve``, ``p_improve_low``, ``p_improve_high``.
    """
    check_confidence(confidence)
    scores = matrices(frame, metric)
    rng = np.random.default_rng(seed + 2)
    boots = {}
    for name, x in scores.items():
        if x.size:
            idx = rng.integers(0, x.shape[0], size=(reps, *x.shape))
            boots[name] = np.take_along_axis(np.broadcast_to(x, idx.shape), idx, axis=1)
    rows = []
    for a, x in scores.items():
        for b, y in scores.items():
            if a == b or not x.size or not y.size:
                continue
            lo, hi = _interval(_p_improve(boots[a], boots[b]), confidence)
            rows.append(
                {
                    "x": a,
                    "y": b,
                    "p_improve": float(_p_improve(x, y)),
                    "p_improve_low": lo,
                    "p_improve_high": hi,
                }
            )
    return pd.DataFrame(rows, columns=["x", "y", "p_improve", "p_improve_low", "p_improve_high"])


def profile_taus(frame: pd.DataFrame, metric: str, n: int = 101) -> np.ndarray:
    """Thresholds spanning the scores (from below the lowest to above the highest, and 0, 1)."""
    v = pd.to_numeric(frame[metric], errors="coerce").to_numpy(dtype=float)
    v = v[np.isfinite(v)]
    lo = min(0.0, float(v.min())) if v.size else 0.0
    hi = max(1.0, float(v.max())) if v.size else 1.0
    pad = 0.02 * (hi - lo)
    return np.linspace(lo - pad, hi + pad, n)


def performance_profiles(
    frame: pd.DataFrame,
    metric: str,
    taus: Sequence[float] | None = None,
    reps: int = REPS,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> pd.DataFrame:
    """The run-score distribution of each controller: the fraction of runs above each ``tau``.

    Returns:
        Columns ``controller``, ``tau``, ``fraction``, ``fraction_low``, ``fraction_high``.
    """
    check_confidence(confidence)
    t = np.asarray(profile_taus(frame, metric) if taus is None else taus, dtype=float)
    scores = matrices(frame, metric)
    rng = np.random.default_rng(seed + 3)
    rows = []
    for name, x in scores.items():
        if not x.size:
            continue
        point = (x[None, :, :] > t[:, None, None]).mean(axis=(1, 2))
        idx = rng.integers(0, x.shape[0], size=(reps, *x.shape))
        boot = np.take_along_axis(np.broadcast_to(x, idx.shape), idx, axis=1)
        dist = (boot[:, None, :, :] > t[None, :, None, None]).mean(axis=(2, 3))
        lo, hi = np.percentile(dist, [50 * (1 - confidence), 50 * (1 + confidence)], axis=0)
        for k, tau in enumerate(t):
            rows.append(
                {
                    "controller": name,
                    "tau": float(tau),
                    "fraction": float(point[k]),
                    "fraction_low": float(lo[k]),
                    "fraction_high": float(hi[k]),
                }
            )
    return pd.DataFrame(rows, columns=["controller", "tau", "fraction", "fraction_low",
                                       "fraction_high"])  # fmt: skip
