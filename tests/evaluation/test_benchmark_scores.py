"""CellGym Bench's scores by hand: Zeus weights over a task's terms, normalisation, harm, rliable.

Every number below is worked out in the comments from the definitions in
``evaluation/benchmark/scores.py`` (Zeus section 6.6's weights, ``cellgym.zeus.ZEUS_WEIGHTS``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from rliable import metrics as rm

from evaluation.benchmark import aggregate
from evaluation.benchmark.scores import (
    normalised,
    optimum_row,
    score_frame,
    variant_score,
)
from evaluation.benchmark.suite import load_suite

SOLO = ("thpt", "inverse_delay")
VS = ("thpt", "inverse_delay", "inter_fairness")


def test_a_lone_flow_scores_over_its_two_terms_with_the_weights_rescaled():
    # bulk: Thpt 0.75, Delay^-1 0.05 (of 0.80 defined): (0.75 * 0.8 + 0.05 * 1/2) / 0.8
    row = {"thpt": 0.8, "delay_inflation": 2.0}
    assert variant_score(row, SOLO, "bulk") == pytest.approx(0.78125)
    # mixed: Thpt 0.2, Delay^-1 0.2: (0.2 * 0.8 + 0.2 * 0.5) / 0.4 = 0.65
    assert variant_score(row, SOLO, "mixed") == pytest.approx(0.65)
    # realtime with a competitor: Thpt 0.2, Delay^-1 0.4, InterFair 0.3 (of 0.9):
    # (0.2 * 0.8 + 0.4 * 0.5 + 0.3 * 0.9) / 0.9 = 0.63 / 0.9 = 0.7
    row["inter_fairness"] = 0.9
    assert variant_score(row, VS, "realtime") == pytest.approx(0.7)
    # Utilization above 1 counts as 1; an inflation below 1 as 1 (Zeus's normalisation).
    assert variant_score({"thpt": 1.2, "delay_inflation": 0.9}, SOLO, "bulk") == 1.0
    assert math.isnan(variant_score({"thpt": 0.5, "delay_inflation": math.nan}, SOLO, "bulk"))


def test_a_starved_run_scores_no_delay_term_not_an_undefined_one():
    # Nothing came back (no RTT sample) and under 0.1 % of the capacity was delivered: Delay^-1
    # is 0. mixed: (0.2 * 5.4e-5 + 0.2 * 0) / 0.4; bulk: 0.75 * 5.4e-5 / 0.8.
    starved = {"thpt": 5.4e-5, "delay_inflation": math.nan}
    assert variant_score(starved, SOLO, "mixed") == pytest.approx(0.5 * 5.4e-5)
    assert variant_score(starved, SOLO, "bulk") == pytest.approx(0.75 * 5.4e-5 / 0.8)
    assert variant_score({"thpt": 0.0, "delay_inflation": math.nan}, SOLO, "realtime") == 0.0
    # At 0.1 % of the capacity or more, a missing delay stays a missing measurement.
    assert math.isnan(variant_score({"thpt": 1e-3, "delay_inflation": math.nan}, SOLO, "mixed"))
    assert math.isnan(variant_score({"thpt": math.nan, "delay_inflation": math.nan}, SOLO, "bulk"))


def test_the_optimum_scores_one_in_every_variant_and_task():
    for terms in (SOLO, VS, (*SOLO, "intra_fairness")):
        for v in ("realtime", "bulk", "mixed"):
            assert variant_score(optimum_row(), terms, v) == pytest.approx(1.0)


def test_normalisation_by_hand():
    # CUBIC 0.859375 (utilization 0.9, inflation 4 under bulk), the optimum 1:
    # (0.78125 - 0.859375) / (1 - 0.859375) = -0.078125 / 0.140625 = -5/9
    cubic = variant_score({"thpt": 0.9, "delay_inflation": 4.0}, SOLO, "bulk")
    assert cubic == pytest.approx(0.859375)
    assert normalised(0.78125, cubic, 1.0, 0.02) == pytest.approx(-5 / 9)
    # A span under min_span (CUBIC already at 0.99 of the optimum): undefined.
    assert math.isnan(normalised(0.9, 0.99, 1.0, 0.02))
    assert normalised(1.0, 0.5, 1.0, 0.02) == 1.0


def _runs(rows):
    base = {"kind": "native", "group": "cell", "cell": "lte", "channel": "static"}
    base |= {"backend": "fast", "status": "ok", "error": "", "wall_s": 1.0}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_score_frame_normalises_per_task_against_cubics_mean_and_computes_harm():
    suite = load_suite("mini")
    solo, vs = "cell/lte-static", "competition/vs-cubic"
    rows = [
        # CUBIC alone: utilization 0.9 and 0.7, inflation 4 and 2 (bulk: 0.859375, 0.68125;
        # mixed: (0.2 * 0.9 + 0.2 / 4) / 0.4 = 0.575 and (0.14 + 0.1) / 0.4 = 0.6 -> mean 0.5875)
        {"controller": "cubic", "task": solo, "seed": 1, "thpt": 0.9, "delay_inflation": 4.0},
        {"controller": "cubic", "task": solo, "seed": 2, "thpt": 0.7, "delay_inflation": 2.0},
        # X alone: utilization 0.8, inflation 1: mixed (0.16 + 0.2) / 0.4 = 0.9
        {"controller": "x", "task": solo, "seed": 1, "thpt": 0.8, "delay_inflation": 1.0},
        {"controller": "x", "task": solo, "seed": 2, "thpt": 0.8, "delay_inflation": 1.0},
        # Beside CUBIC: the competitor gets 10 Mbit/s beside CUBIC, 6 beside X (harm 40 %),
        # its RTT 50 ms beside CUBIC, 40 beside X (harm -20 %: a gain).
        *(
            {
                "controller": c,
                "task": vs,
                "seed": s,
                "thpt": 1.0,
                "delay_inflation": 2.0,
                "inter_fairness": f,
                "competitor_tput_mbps": t,
                "competitor_rtt_ms": r,
            }
            for c, f, t, r in (("cubic", 1.0, 10.0, 50.0), ("x", 0.8, 6.0, 40.0))
            for s in (1, 2)
        ),  # fmt: skip
    ]
    scored, refs = score_frame(_runs(rows), suite)
    at = refs.set_index(["task", "variant"])
    assert at.loc[(solo, "mixed"), "zero"] == pytest.approx(0.5875)
    assert at.loc[(solo, "mixed"), "one"] == pytest.approx(1.0)
    x = scored[scored["controller"].eq("x")].set_index(["task", "seed"])
    # (0.9 - 0.5875) / (1 - 0.5875) = 0.3125 / 0.4125
    assert x.loc[(solo, 1), "norm_mixed"] == pytest.approx(0.3125 / 0.4125)
    # vs CUBIC, mixed: Thpt 0.2, Delay^-1 0.2, InterFair 0.3 (of 0.7):
    # CUBIC (0.2 + 0.1 + 0.3) / 0.7 = 6/7; X (0.2 + 0.1 + 0.24) / 0.7 = 0.54/0.7
    # -> (0.54/0.7 - 6/7) / (1 - 6/7) = (0.54 - 0.6) / 0.1 = -0.6
    assert x.loc[(vs, 1), "norm_mixed"] == pytest.approx(-0.6)
    assert x.loc[(vs, 2), "harm_tput_pct"] == pytest.approx(40.0)
    assert x.loc[(vs, 2), "harm_rtt_pct"] == pytest.approx(-20.0)
    cubic = scored[scored["controller"].eq("cubic")]
    assert cubic["norm_mixed"].mean() == pytest.approx(0.0)
    assert cubic[cubic["task"].eq(vs)]["harm_tput_pct"].tolist() == [0.0, 0.0]
    assert math.isnan(x.loc[(solo, 1), "harm_tput_pct"])  # no competitor


def test_probability_of_improvement_is_rliables_estimator():
    rng = np.random.default_rng(3)
    for shape in ((2, 5), (3, 4), (5, 1)):
        x, y = rng.normal(size=shape), rng.normal(size=shape)
        x[0, 0] = y[1, 0]  # a tie counts one half
        assert aggregate._p_improve(x, y) == pytest.approx(rm.probability_of_improvement(x, y))
        assert aggregate._p_improve(x, x) == pytest.approx(0.5)


def _two_controllers():
    rows = [
        {"controller": c, "task": f"t{t}", "seed": s, "norm": v + 0.01 * s}
        for c, v in (("a", 0.8), ("b", 0.2))
        for t in range(3)
        for s in range(4)
    ]
    return _runs(rows)


def test_aggregates_intervals_and_profiles():
    df = _two_controllers()
    table = aggregate.aggregate_table(df, "norm", reps=200).set_index("controller")
    # a: 0.8 + 0.01 * {0, 1, 2, 3} on every task: mean 0.815; optimality gap 1 - 0.815.
    assert table.loc["a", "mean"] == pytest.approx(0.815)
    assert table.loc["a", "optimality_gap"] == pytest.approx(0.185)
    assert table.loc["a", "iqm_low"] <= table.loc["a", "iqm"] <= table.loc["a", "iqm_high"]
    assert (table.loc["a", "runs"], table.loc["a", "tasks"]) == (4, 3)
    imp = aggregate.improvement_matrix(df, "norm", reps=200).set_index(["x", "y"])
    assert imp.loc[("a", "b"), "p_improve"] == 1.0 and imp.loc[("b", "a"), "p_improve"] == 0.0
    # a's runs are 0.80, 0.81, 0.82, 0.83 on each task: two of four above 0.815.
    prof = aggregate.performance_profiles(df, "norm", taus=[0.0, 0.5, 0.815, 0.9], reps=200)
    a = prof[prof["controller"].eq("a")]
    assert a["fraction"].tolist() == [1.0, 1.0, 0.5, 0.0]
    assert (a["fraction_low"] <= a["fraction"]).all()
    assert (a["fraction"] <= a["fraction_high"]).all()
