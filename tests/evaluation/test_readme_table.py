"""The README's result table is rendered from a run's evaluation files (evaluation.readme_table)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cellgym.paths import REPO_ROOT
from cellgym.provenance import record
from evaluation import readme_table
from evaluation.experiments.inputs import MAIN_JOB
from evaluation.resolve import resolve_checkpoint


def _run(tmp_path):
    """A run folder as the main job leaves it: two controllers, two scenarios, its config."""
    run = tmp_path / "run"
    (run / "evaluation").mkdir(parents=True)
    (run / ".hydra").mkdir()
    (run / ".hydra" / "config.yaml").write_text(
        "agent:\n  algo: PPO\n  name: ppo\n"
        "mixture:\n  scenarios:\n    - {scenario: fluctuating, n_envs: 2}\n"
    )
    (run / "model.zip").write_bytes(b"a trained model")
    (run / "vecnormalize.pkl").write_bytes(b"its statistics")
    pd.DataFrame(
        {
            "controller": ["ppo:runs/x", "ppo:runs/x", "xrc_policy", "xrc_policy"],
            "scenario": ["fluctuating", "traces/t", "fluctuating", "traces/t"],
            "mean_reward_mean": [1.0304, 0.2801, 1.0416, 0.26],
            "mean_reward_ci": [0.1749, 0.0044, 0.1391, 0.013],
        }
    ).to_csv(run / "evaluation" / "summary.csv", index=False)
    pd.DataFrame(
        {
            "controller": ["ppo:runs/x", "xrc_policy"],
            "runs": [3, 3],
            "tasks": [2, 2],
            "mean": [0.6552, 0.6508],
            "mean_low": [0.5, 0.49],
            "mean_high": [0.8, 0.81],
            "iqm": [0.66, 0.65],
            "iqm_low": [0.6, 0.6],
            "iqm_high": [0.7, 0.7],
            "p_improve": [0.0, float("nan")],
            "p_improve_low": [0.0, float("nan")],
            "p_improve_high": [0.0, float("nan")],
        }
    ).to_csv(run / "evaluation" / "aggregate.csv", index=False)
    (run / "seed.txt").write_text("1\n")
    # What ``workflows.train`` records when training begins: this tree's code.
    prov = record("python train.py", ["experiment=default"], MAIN_JOB, REPO_ROOT)
    (run / "provenance.json").write_text(json.dumps(prov))
    pd.DataFrame(
        {
            "time/time_elapsed": [8, 210, float("nan")],
            "time/total_timesteps": [4608, 603648, float("nan")],
        }
    ).to_csv(run / "progress.csv", index=False)
    (run / "train.log").write_text(
        "[2026-11-28 00:55:05,100][workflows.train][INFO] - seed 1, run directory x\n"
        "[2026-11-28 01:03:59,298][workflows.train][INFO] - final evaluation in 300.8 s\n"
        "[2026-11-28 01:04:26,100][workflows.train][INFO] - done\n"
    )
    return run


def test_the_timing_paragraph_comes_from_the_runs_own_files(tmp_path):
    run = _run(tmp_path)
    text = readme_table.timing(run)
    assert text == (
        "Measured by that run (seed 1, its `train.log` from first to last line): 9 min 21 s of "
        "wall time, 210 s of training (603,648 steps, about 2,875 steps/s, the periodic "
        "evaluations included), then the ns-3 evaluation (301 s) with its report and plots."
    )
    readme = tmp_path / "README.md"
    readme.write_text(
        f"a\n{readme_table.TIMING_BEGIN}\nold\n{readme_table.TIMING_END}\n"
        f"{readme_table.BEGIN}\nold\n{readme_table.END}\n"
    )
    numbers = tmp_path / "numbers.json"
    assert readme_table.main([str(run), "--readme", str(readme), "--numbers", str(numbers)]) == 0
    assert text in readme.read_text() and "old" not in readme.read_text()


def test_the_table_is_rendered_from_the_runs_files(tmp_path):
    run = _run(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{readme_table.BEGIN}\nold\n{readme_table.END}\nafter\n")
    numbers = tmp_path / "numbers.json"
    assert readme_table.main([str(run), "--readme", str(readme), "--numbers", str(numbers)]) == 0
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("after\n") and "old" not in text
    table = text[text.index(readme_table.BEGIN) : text.index(readme_table.END)].splitlines()
    assert table[1] == "| scenario | PPO | XRC policy |"
    assert table[3] == "| `fluctuating` | 1.030 ± 0.175 | 1.042 ± 0.139 |"
    # Not in the training mixture: held out.
    assert table[4] == "| `traces/t` (held out) | 0.280 ± 0.004 | 0.260 ± 0.013 |"
    assert (
        table[5]
        == "| all 6 runs: mean [95 % bootstrap] | 0.655 [0.500, 0.800] | 0.651 [0.490, 0.810] |"
    )
    # A point interval prints its value alone; the reference has no P(improvement) of its own.
    assert table[7] == "| P(run > XRC policy's run) | 0.00 | – |"
    assert f"python -m evaluation.readme_table {run}" in text
    # The run's provenance goes with the table: in the README and in the numbers.
    data = json.loads(numbers.read_text())
    prov = data["provenance"]
    assert prov["commit"] == json.loads((run / "provenance.json").read_text())["commit"]
    assert prov["args"] == ["experiment=default"]
    assert prov["command"] == f"make run, then python -m evaluation.readme_table {run}"
    assert f"inputs digest `{prov['inputs_digest'][:16]}`" in text
    assert [r["mean_reward_mean"] for r in data["summary"]] == [1.0304, 0.2801, 1.0416, 0.26]
    # The policy goes with them, as a run directory that loads anywhere, its files recorded.
    policy = tmp_path / "policy"
    assert data["policy"] == readme_table.policy_digests(run) == readme_table.policy_digests(policy)
    spec = resolve_checkpoint(policy)
    assert (spec.label, spec.algo, spec.name) == ("ppo", "PPO", str(policy / "model.zip"))
    assert spec.vecnormalize == str(policy / "vecnormalize.pkl")


def test_a_run_made_from_other_code_or_without_provenance_is_refused(tmp_path, capsys):
    run = _run(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(f"{readme_table.BEGIN}\nold\n{readme_table.END}\n")
    numbers = tmp_path / "numbers.json"
    argv = [str(run), "--readme", str(readme), "--numbers", str(numbers)]
    prov = json.loads((run / "provenance.json").read_text())
    prov["inputs"]["envs/fastsim/rlc.py"] = "0" * 64  # trained with another twin
    prov["inputs_digest"] = "x"
    (run / "provenance.json").write_text(json.dumps(prov))
    assert readme_table.main(argv) == 2
    err = capsys.readouterr().err
    assert "made from other code than this tree's (changed: envs/fastsim/rlc.py)" in err
    (run / "provenance.json").unlink()
    assert readme_table.main(argv) == 2
    assert "has no provenance.json" in capsys.readouterr().err
    assert "old" in readme.read_text() and not numbers.exists()
    assert not (tmp_path / "policy").exists()


def test_a_run_without_its_files_or_a_readme_without_markers_is_refused(tmp_path, capsys):
    assert readme_table.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert (
        "has no summary.csv, aggregate.csv, model.zip, vecnormalize.pkl, .hydra/config.yaml" in err
    )
    with pytest.raises(ValueError, match="no <!-- main-job-results:begin -->"):
        readme_table.rewrite("no markers here", "x")


def test_the_readme_holds_one_generated_block():
    text = (REPO_ROOT / "README.md").read_text()
    assert text.count(readme_table.BEGIN) == 1 and text.count(readme_table.END) == 1
    block = text[text.index(readme_table.BEGIN) : text.index(readme_table.END)]
    assert "| scenario | PPO | XRC (native) | XRC policy | CUBIC | BBR |" in block
    assert "Generated by `python -m evaluation.readme_table runs/main/ppo/" in block
    # Its provenance line is the committed numbers' (their staleness: test_provenance.py).
    prov = json.loads(readme_table.NUMBERS.read_text())["provenance"]
    assert readme_table.markdown_line(prov) in block
    assert text.count(readme_table.TIMING_BEGIN) == 1 and text.count(readme_table.TIMING_END) == 1
    timing = text[text.index(readme_table.TIMING_BEGIN) : text.index(readme_table.TIMING_END)]
    assert "Measured by that run (seed " in timing and "steps/s" in timing


def test_the_committed_policy_is_the_main_jobs():
    """``docs/main-job/policy`` holds the files its numbers record, and loads as a checkpoint."""
    recorded = json.loads(readme_table.NUMBERS.read_text())["policy"]
    assert readme_table.policy_digests(readme_table.POLICY) == recorded
    spec = resolve_checkpoint(readme_table.POLICY)
    assert spec.kind == "trained" and spec.vecnormalize is not None
