"""Aggregates across scenarios and seeds, as rliable (Agarwal et al., 2021) recommends.

``cellgym.metrics`` aggregates over the seeds of one scenario (mean and t interval); this module
aggregates over every run of every scenario: the interquartile mean and the mean with stratified
bootstrap intervals, and the probability of improvement of one controller over another, with
rliable's estimators (``rliable.metrics``). The evaluation report (``evaluation.report``) and the
training-curves notebook use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from cellgym.metrics import CONFIDENCE, check_confidence
from cellgym.vocab import SpecError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["rliable_aggregates", "score_matrices"]


def score_matrices(
    df: pd.DataFrame, metric: str, by: str = "controller", task: str = "scenario"
) -> dict[str, np.ndarray]:
    """Per ``by`` group, the ``[runs, tasks]`` matrix of ``metric`` that rliable works on.

    Tasks are the ``task`` values every group has; runs are the seeds every group has in every
    task (successful runs only, ``status == "ok"`` when the column exists, finite values), so each
    matrix has the same shape and row ``i`` is the same seed everywhere.
    """
    import pandas as pd

    for c in (metric, by, task, "seed"):
        if c not in df.columns:
            raise SpecError(f"column {c!r} is not in the table: have {list(df.columns)}")
    ok = df["status"].eq("ok") if "status" in df.columns else pd.Series(True, index=df.index)
    good = df[ok & np.isfinite(pd.to_numeric(df[metric], errors="coerce"))]
    groups = list(dict.fromkeys(good[by]))
    tasks = [t for t in dict.fromkeys(good[task]) if all(
        ((good[by] == g) & (good[task] == t)).any() for g in groups)]  # fmt: skip
    seeds = sorted(
        set.intersection(
            *[set(good[(good[by] == g) & (good[task] == t)]["seed"]) for g in groups for t in tasks]
        )
    ) if groups and tasks else []  # fmt: skip
    out = {}
    for g in groups:
        sub = good[good[by] == g].set_index([task, "seed"])[metric].astype(float)
        out[str(g)] = np.array([[sub.loc[(t, s)] for t in tasks] for s in seeds]).reshape(
            len(seeds), len(tasks)
        )
    return out


def _stratified_resample(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Runs drawn with replacement within each task (column): the stratified bootstrap."""
    idx = rng.integers(0, x.shape[0], size=x.shape)
    return np.take_along_axis(x, idx, axis=0)


def rliable_aggregates(
    df: pd.DataFrame,
    metric: str = "mean_reward",
    reference: str | None = None,
    reps: int = 1000,
    confidence: float = CONFIDENCE,
    seed: int = 0,
) -> pd.DataFrame:
    """Aggregates across scenarios and seeds, as rliable (Agarwal et al., 2021) recommends.

    Per controller: the interquartile mean (IQM) and the mean of ``metric`` over every run of
    every scenario, each with a stratified bootstrap confidence interval (runs resampled with
    replacement within each scenario, ``reps`` times, percentile interval), and, against
    ``reference``, the probability of improvement ``P(X > Y)`` (Mann-Whitney per scenario,
    averaged over scenarios) with its interval. The estimators are rliable's
    (``rliable.metrics``); the bootstrap is done here, seeded (rliable's own bootstrap
    module depends on a version of ``arch`` that does not import beside pandas 3).

    Args:
        df: One row per run (``controller``, ``scenario``, ``seed``, ``metric``).
        metric: The score column (e.g. ``mean_reward``); not normalised across scenarios.
        reference: The controller others are compared with (e.g. ``xrc_policy``); ``None``: no
            probability of improvement.
        reps: Bootstrap repetitions.
        confidence: Level of the intervals.
        seed: Seed of the bootstrap.

    Returns:
        One row per controller: ``controller``, ``runs``, ``tasks``, ``iqm``, ``iqm_low``,
        ``iqm_high``, ``mean``, ``mean_low``, ``mean_high`` and, with a reference other than the
        row's controller, ``p_improve``, ``p_improve_low``, ``p_improve_high``.
    """
    import pandas as pd
    from rliable import metrics as rm

    check_confidence(confidence)
    scores = score_matrices(df, metric)
    if reference is not None and reference not in scores:
        raise SpecError(f"reference={reference!r} has no runs: choose one of {sorted(scores)}")
    rng = np.random.default_rng(seed)
    lo_q, hi_q = 50 * (1 - confidence), 50 * (1 + confidence)
    rows = []
    for name, x in scores.items():
        row: dict[str, Any] = {"controller": name, "runs": x.shape[0], "tasks": x.shape[1]}
        if x.size == 0:
            rows.append(row)
            continue
        boots = [_stratified_resample(x, rng) for _ in range(reps)]
        for key, fn in (("iqm", rm.aggregate_iqm), ("mean", rm.aggregate_mean)):
            dist = np.array([fn(b) for b in boots])
            row[key] = float(fn(x))
            row[f"{key}_low"], row[f"{key}_high"] = np.percentile(dist, [lo_q, hi_q]).tolist()
        if reference is not None and name != reference:
            y = scores[reference]
            dist = np.array(
                [rm.probability_of_improvement(b, _stratified_resample(y, rng)) for b in boots]
            )
            row["p_improve"] = float(rm.probability_of_improvement(x, y))
            row["p_improve_low"], row["p_improve_high"] = np.percentile(dist, [lo_q, hi_q]).tolist()
        rows.append(row)
    return pd.DataFrame(rows)
