"""Scores of the runs: Zeus application-class scores, normalised per task, and harm.

From the cached raw rows (``evaluation.benchmark.metrics``), never cached themselves:

- ``score_<variant>`` per run: the Zeus paper's score (``cellgym.zeus``: ``normalized_metrics``
  and ``ZEUS_WEIGHTS[variant]``) over the terms the task defines (``Task.terms``), the weights
  of the others dropped and the rest rescaled to sum to 1:
  ``sum(w_k * m_k for k in terms) / sum(w_k for k in terms)``;
- ``norm_<variant>`` per run: ``(score - zero) / (one - zero)`` with ``zero`` the mean score of
  the suite's ``normalise.zero`` controller on the same task, split and backend, and ``one``
  the optimum's score (1: every term of ``cellgym.zeus.offline_optimum`` is 1) or a reference
  controller's mean; undefined (NaN) when ``|one - zero| < normalise.min_span``;
- ``harm_tput_pct``, ``harm_rtt_pct`` on a task with a competitor: Ware et al.'s harm
  (``cellgym.zeus.harm``) to the competitor flow, with the competitor's throughput (RTT) beside
  the ``zero`` controller on the same seed as its undisturbed value: the zero controller's own
  harm is 0, a positive harm takes more from the competitor than it does.

Worked example (``tests/evaluation/test_benchmark_scores.py``): a lone-flow task, variant
``bulk`` (Thpt 0.75, Delay^-1 0.05): utilization 0.8 and inflation 2 score
``(0.75 * 0.8 + 0.05 / 2) / 0.8 = 0.78125``; CUBIC's 0.9 and 4 score ``0.859375``; normalised,
``(0.78125 - 0.859375) / (1 - 0.859375) = -0.5556``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache

import numpy as np
import pandas as pd

from cellgym.zeus import ZEUS_WEIGHTS, harm, normalized_metrics, offline_optimum
from evaluation.benchmark.suite import OPTIMUM, Suite

#: The raw row's columns of the four score terms' inputs.
_INPUTS = ("thpt", "delay_inflation", "intra_fairness", "inter_fairness")
#: Below this Thpt (a fraction of the capacity), a run with no RTT sample starved.
STARVED_THPT = 1e-3


def term_values(row: Mapping[str, float]) -> dict[str, float]:
    """The four score terms of a run in [0, 1] (``cellgym.zeus.normalized_metrics``).

    A missing input (NaN) gives a NaN term, with one exception: a run whose agent flows took no
    RTT sample in the measured interval (no delay inflation) and delivered under
    ``STARVED_THPT`` of the capacity starved: no packet came back, so its Delay^-1 is 0, not
    undefined (ns-3: an explicit-rate sender that starts in an FR2 blockage waits at a rate of 0).
    An undefined term drops the run out of the aggregates, and with it that seed of every task.
    """
    thpt, inflation, intra, inter = (float(row.get(k, math.nan)) for k in _INPUTS)
    if not (math.isfinite(inflation) and inflation > 0):
        inflation = math.nan
    m = normalized_metrics(
        0.0 if math.isnan(thpt) else thpt, 1.0 if math.isnan(inflation) else inflation, intra, inter
    )
    if math.isnan(thpt):
        m["thpt"] = math.nan
    if math.isnan(inflation):
        starved = math.isfinite(thpt) and thpt < STARVED_THPT
        m["inverse_delay"] = 0.0 if starved else math.nan
    return m


def variant_score(row: Mapping[str, float], terms: Sequence[str], variant: str) -> float:
    """The Zeus score ``variant`` of one run over ``terms`` (weights rescaled; module docstring)."""
    weights = ZEUS_WEIGHTS[variant]
    m = term_values(row)
    total = sum(weights[k] for k in terms)
    return float(sum(weights[k] * m[k] for k in terms) / total)


@cache
def optimum_row() -> dict[str, float]:
    """The optimum's score inputs: ``cellgym.zeus.offline_optimum``'s (trace-independent) terms."""
    from cellgym.traces import series_from_rates

    opt = offline_optimum(series_from_rates(np.ones(1000), 0.001, "array", "1 Mbit/s"), 1.0)
    return {
        "thpt": opt["utilization"],
        "delay_inflation": opt["delay_inflation"],
        "intra_fairness": opt["intra_fairness"],
        "inter_fairness": opt["inter_fairness"],
    }


def add_scores(frame: pd.DataFrame, suite: Suite) -> pd.DataFrame:
    """``frame`` with ``score_<variant>`` for every variant of the suite (NaN for failed runs)."""
    out = frame.copy()
    terms = {t.name: t.terms for t in suite.tasks}
    for v in suite.variants:
        out[f"score_{v}"] = [
            variant_score(r, terms[r["task"]], v) if r["status"] == "ok" else math.nan
            for r in out.to_dict("records")
        ]
    return out


def references(frame: pd.DataFrame, suite: Suite) -> pd.DataFrame:
    """Per task and variant, the ``zero`` and ``one`` points (means over their ok runs)."""
    ok = frame[frame["status"].eq("ok")]
    rows = []
    for task in dict.fromkeys(frame["task"]):
        for v in suite.variants:
            row = {"task": task, "variant": v}
            for end, name in (("zero", suite.zero), ("one", suite.one)):
                if name == OPTIMUM:
                    terms = suite.task(task).terms
                    row[end] = variant_score(optimum_row(), terms, v)
                    continue
                vals = ok[ok["task"].eq(task) & ok["controller"].eq(name)][f"score_{v}"]
                row[end] = float(vals.mean()) if len(vals) else math.nan
            rows.append(row)
    return pd.DataFrame(rows, columns=["task", "variant", "zero", "one"])


def normalised(score: float, zero: float, one: float, min_span: float) -> float:
    """``(score - zero) / (one - zero)``; NaN when the span is under ``min_span`` or unknown."""
    span = one - zero
    if not (math.isfinite(span) and abs(span) >= min_span and math.isfinite(score)):
        return math.nan
    return float((score - zero) / span)


def add_normalised(frame: pd.DataFrame, suite: Suite) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``frame`` with ``norm_<variant>`` columns, and the reference points used."""
    refs = references(frame, suite)
    at = refs.set_index(["task", "variant"])
    out = frame.copy()
    for v in suite.variants:
        out[f"norm_{v}"] = [
            normalised(
                r[f"score_{v}"], at.loc[(r["task"], v), "zero"], at.loc[(r["task"], v), "one"],
                suite.min_span,
            )
            for r in out.to_dict("records")
        ]  # fmt: skip
    return out, refs


def add_harm(frame: pd.DataFrame, suite: Suite) -> pd.DataFrame:
    """``frame`` with ``harm_tput_pct`` and ``harm_rtt_pct`` (NaN without a competitor)."""
    out = frame.copy()
    ok = frame[frame["status"].eq("ok") & frame["controller"].eq(suite.zero)]
    base = ok.set_index(["task", "seed"])[["competitor_tput_mbps", "competitor_rtt_ms"]]
    tput, rtt = [], []
    for r in out.to_dict("records"):
        key = (r["task"], r["seed"])
        if r["status"] != "ok" or key not in base.index:
            tput.append(math.nan)
            rtt.append(math.nan)
            continue
        x = base.loc[key]
        tput.append(harm(float(x["competitor_tput_mbps"]), r["competitor_tput_mbps"], True))
        rtt.append(harm(float(x["competitor_rtt_ms"]), r["competitor_rtt_ms"], False))
    out["harm_tput_pct"] = tput
    out["harm_rtt_pct"] = rtt
    return out


def score_frame(frame: pd.DataFrame, suite: Suite) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Scores, normalised scores and harm of every run; and the reference points."""
    scored = add_scores(frame, suite)
    scored, refs = add_normalised(scored, suite)
    return add_harm(scored, suite), refs
