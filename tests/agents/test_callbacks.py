"""The periodic evaluation gets its evaluate function injected (agents never imports evaluation)."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from agents.callbacks import EVAL_COLUMNS, PeriodicEvalCallback, history_row
from cellgym.metrics import aggregate


def _results(controller: str, rewards: list[float], status: str = "ok") -> pd.DataFrame:
    n = len(rewards)
    rows = {c: np.linspace(0.1, 0.9, n) for c in EVAL_COLUMNS if c not in ("timesteps",)}
    rows.update(
        controller=[controller] * n,
        seed=list(range(1, n + 1)),
        status=[status] * n,
        error=[""] * n,
        mean_reward=rewards,
    )
    return pd.DataFrame(rows)


def test_history_row_is_the_aggregators_mean_over_seeds():
    res = _results("ppo", [1.0, 2.0, 4.0])
    row = history_row(res)
    agg = aggregate(res, ["mean_reward", "utilization"], by=["controller"]).iloc[0]
    assert row["n_seeds"] == 3
    assert row["reward_mean"] == agg["mean_reward_mean"] == pytest.approx(7 / 3)
    assert row["reward_std"] == pytest.approx(np.std([1.0, 2.0, 4.0]))
    assert row["utilization"] == agg["utilization_mean"]
    assert set(row) | {"timesteps", "controller", "wall_time_s"} == set(EVAL_COLUMNS)
    with pytest.raises(RuntimeError, match="evaluation of ppo on seed 1 failed"):
        history_row(_results("ppo", [1.0], status="failed"))


class _Model:
    num_timesteps = 0

    def __init__(self):
        self.logger = _Logger()

    def get_vec_normalize_env(self):
        return None

    def save(self, path):
        open(path, "w").close()


class _Logger:
    def __init__(self):
        self.records = {}

    def record(self, key, value, exclude=None):
        self.records[key] = value

    def dump(self, step):
        pass


def test_periodic_evaluation_calls_the_injected_function(tmp_path):
    calls = []

    def evaluate(controller, policy):
        calls.append((controller, policy is not None))
        return _results(controller, [0.5, 0.7] if controller == "mine" else [0.4, 0.4])

    cb = PeriodicEvalCallback(evaluate, "mine", ["xrc_policy"], freq=10, run_dir=tmp_path)
    cb.model, cb.num_timesteps = _Model(), 10
    rows = cb.evaluate()
    cb.num_timesteps = 20
    cb.evaluate()
    # The policy every time, the deterministic baseline once.
    assert calls == [("mine", True), ("xrc_policy", False), ("mine", True)]
    assert rows["mine"]["reward_mean"] == pytest.approx(0.6)
    assert rows["mine"]["reward_mean"] - rows["xrc_policy"]["reward_mean"] == pytest.approx(0.2)
    with (tmp_path / "eval_history.csv").open() as f:
        history = list(csv.DictReader(f))
    assert [(r["timesteps"], r["controller"]) for r in history] == [
        ("10", "mine"),
        ("10", "xrc_policy"),
        ("20", "mine"),
        ("20", "xrc_policy"),
    ]
    assert (tmp_path / "best_model.zip").is_file() and cb.best_reward == pytest.approx(0.6)
    assert cb.model.logger.records["eval/mine/reward_mean"] == pytest.approx(0.6)
