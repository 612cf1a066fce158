"""bench/soak.py's entry-point trials: the counts by hand, and one trial in a short form."""

from __future__ import annotations

import importlib.util
import signal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def soak():
    spec = importlib.util.spec_from_file_location("cellgym_bench_soak", ROOT / "bench" / "soak.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(path: Path, header: str, rows: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([header, *rows]) + "\n")


def test_lost_and_duplicated_steps_of_an_evaluation_by_hand(soak, tmp_path):
    # vs_cubic cut to 2 s: 100 steps of 20 ms per run; 2 controllers x seeds 1, 2.
    expected = 100
    assert soak.load_scenario(soak.EVAL_SCENARIO, sim_time_s=2.0).num_steps == expected
    results = tmp_path / "eval" / "results.csv"
    header = "controller,seed,status,steps"
    _write(results, header, ["xrc_policy,1,ok,100", "xrc_policy,2,ok,100",
                             "explicit_rate,1,ok,100", "explicit_rate,2,ok,100"])  # fmt: skip
    assert soak.lost_and_duplicated_steps("evaluate", tmp_path) == (0, 0)
    # explicit_rate seed 2 missing (100 lost), xrc_policy seed 1 twice (100 doubled), seed 2
    # cut at 60 steps (40 lost).
    _write(results, header, ["xrc_policy,1,ok,100", "xrc_policy,1,ok,100",
                             "xrc_policy,2,ok,60", "explicit_rate,1,ok,100"])  # fmt: skip
    assert soak.lost_and_duplicated_steps("evaluate", tmp_path) == (140, 100)
    # A failed run loses all its steps.
    _write(results, header, ["xrc_policy,1,ok,100", "xrc_policy,2,failed,0",
                             "explicit_rate,1,ok,100", "explicit_rate,2,ok,100"])  # fmt: skip
    assert soak.lost_and_duplicated_steps("evaluate", tmp_path) == (100, 0)


def test_lost_and_duplicated_steps_of_a_training_by_hand(soak, tmp_path):
    # 8192 steps in rollouts of 4 envs x 256 = 1024: 8 PPO updates, each logged once.
    progress = tmp_path / "run" / "progress.csv"
    header = "time/iterations,time/total_timesteps"
    _write(progress, header, [f"{k},{1024 * k}" for k in range(1, 9)])
    assert soak.lost_and_duplicated_steps("train", tmp_path) == (0, 0)
    # Resumed at 3072 with updates 3 and 4 logged again, and update 8 never done: 1 rollout
    # lost, 2 doubled. Rows without an iteration (evaluation rows) do not count.
    rows = [f"{k},{1024 * k}" for k in (1, 2, 3, 4, 3, 4, 5, 6, 7)] + [",7168"]
    _write(progress, header, rows)
    assert soak.lost_and_duplicated_steps("train", tmp_path) == (1024, 2048)


@pytest.mark.slow
def test_a_killed_evaluation_leaves_nothing_behind_and_loses_nothing(soak, monkeypatch):
    # The short form: one seed, one controller, 1 s; SIGTERM 5 s after the start.
    monkeypatch.setattr(soak, "EVAL_SEEDS", (1,))
    monkeypatch.setattr(soak, "EVAL_CONTROLLERS", ("xrc_policy",))
    monkeypatch.setattr(soak, "EVAL_SIM_TIME_S", 1.0)
    trial = soak.kill_trial("evaluate", signal.SIGTERM, 5.0)
    assert trial["rerun_rc"] == 0, trial["rerun_error"]
    assert (trial["n_orphans"], trial["lost_steps"], trial["duplicated_steps"]) == (0, 0, 0)
    assert trial["leaked"] == [] and not trial["hang"]
