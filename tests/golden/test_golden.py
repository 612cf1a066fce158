"""Behaviour frozen by golden outputs (tests/golden): trajectories and tables, bit for bit."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.golden.cases import CASES, run_case
from tests.golden.tables import (
    calibration_runs,
    evaluation_table,
    fast_calibration_metrics,
)

DATA = Path(__file__).resolve().parent / "data"


def _marks(case):
    return [pytest.mark.ns3] if case.backend == "ns3" else []


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name, marks=_marks(c)) for c in CASES])
def test_trajectory_is_golden(case):
    path = DATA / f"{case.name}.npz"
    assert path.exists(), f"no golden record {path.name}: run python -m tests.golden.record"
    want = np.load(path)
    got = run_case(case)
    assert sorted(got) == sorted(want.files)
    for key in want.files:
        np.testing.assert_array_equal(got[key], want[key], err_msg=f"{case.name}: {key}")


def test_evaluation_table_is_golden():
    want = pd.read_csv(DATA / "evaluation.csv")
    got = evaluation_table()
    assert list(got.columns) == list(want.columns)
    got = pd.read_csv(pd.io.common.StringIO(got.to_csv(index=False, float_format="%.17g")))
    pd.testing.assert_frame_equal(got, want, check_exact=True)


def _same(a, b) -> bool:
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b


def test_fast_calibration_runs_are_golden():
    runs = calibration_runs()
    assert len(runs) >= 40
    import json

    from tests.golden.tables import CALIBRATION_JSON

    sim_time_s = json.loads(CALIBRATION_JSON.read_text())["meta"]["sim_time_s"]
    for run in runs:
        got = fast_calibration_metrics(run["scenario"], run["seed"], sim_time_s)
        for key, value in got.items():
            assert _same(value, run[key]), (run["scenario"], run["seed"], key, value, run[key])
