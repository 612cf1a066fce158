"""Golden tables: a short ``evaluate_many`` table and the fast side of the calibration table.

The evaluation table runs four controllers (two policies, two native senders) on two scenarios and
two seeds on the fast backend; ``tests/golden/data/evaluation.csv`` holds its numeric columns.
The calibration check reruns the fast side of every static calibration scenario (native, or with
its agent flow driven as in the table) with the seeds of the committed
``docs/calibration/calibration.json`` and requires the same metrics, run by run; the rows with
random mobility are left to the full table, regenerated with
``python -m evaluation.experiments.calibrate`` (ns-3 included).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
CALIBRATION_JSON = ROOT / "docs" / "calibration" / "calibration.json"
EVAL_CONTROLLERS = ["xrc_policy", "explicit_rate", "cubic", "xrc"]
EVAL_SCENARIOS = ["vs_cubic", "fluctuating"]
EVAL_SEEDS = [1, 2]
#: Columns that depend on the machine or the run, not on the model.
VOLATILE = ("wall_s",)


def evaluation_table() -> pd.DataFrame:
    """The short evaluation table, numeric columns only, in a stable row order."""
    from evaluation.pool import evaluate_many

    res = evaluate_many(
        EVAL_CONTROLLERS, EVAL_SCENARIOS, EVAL_SEEDS, backend="fast", jobs=1, sim_time_s=4.0
    ).results
    keys = ["controller", "scenario", "seed"]
    num = [c for c in res.columns if c not in VOLATILE and pd.api.types.is_numeric_dtype(res[c])]
    cols = keys + [c for c in num if c not in keys]
    return res[cols].sort_values(keys).reset_index(drop=True)


def calibration_runs() -> list[dict]:
    """The committed calibration's fast runs of its static scenarios (native and driven rows)."""
    from cellgym.scenario import load_scenario

    data = json.loads(CALIBRATION_JSON.read_text())
    static = {
        name
        for name in {r["scenario"] for r in data["runs"]}
        if load_scenario(f"calibration/{name}").channel.mobility == "static"
    }
    return [r for r in data["runs"] if r["backend"] == "fast" and r["scenario"] in static]


def fast_calibration_metrics(scenario: str, seed: int, sim_time_s: float) -> dict:
    """Rerun one calibration scenario on the fast backend; its per-run metrics."""
    from cellgym.scenario import load_scenario
    from evaluation.experiments import calibrate
    from evaluation.experiments.calibration_drivers import DRIVERS, drive

    spec = load_scenario(f"calibration/{scenario}", sim_time_s=sim_time_s)
    if scenario in DRIVERS:
        return calibrate.run_metrics(drive(spec, DRIVERS[scenario], seed, "fast"))
    return calibrate.run_metrics(calibrate.run_fast(spec, seed))
