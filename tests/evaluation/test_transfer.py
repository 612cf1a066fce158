"""The transfer check (``python -m evaluation.transfer``): a user's controller on both backends.

Hand-built result tables check the paired gap, the bound and the verdicts; a user's policy class
(written to a file here, as a new user would) runs through the pool on the fast backend; a tiny
run on both backends (``-m ns3``) writes the report with its provenance.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cellgym.metrics import t_quantile
from cellgym.paths import REPO_ROOT
from cellgym.provenance import staleness
from cellgym.reward import RewardSpec
from cellgym.vocab import BACKENDS, SpecError
from envs.contract import OBS, OBS_FIELDS
from evaluation import example_policies, transfer, transfer_report
from evaluation.experiments import inputs, reports
from evaluation.user_policies import is_class_ref, resolve_user_policy

#: A user's own policy file: window mode through BaselinePolicy's ``act``, rate mode with
#: ``predict`` alone.
USER_POLICY = textwrap.dedent(
    """
    import numpy as np
    from baselines.base import BaselinePolicy

    class Grow(BaselinePolicy):
        def act(self, obs):
            return 0.1

    class Hold:
        action_mode = "rate"

        def __init__(self, step_ms):
            self.step_ms = step_ms

        def predict(self, observation, state=None, episode_start=None, deterministic=True):
            return np.array([0.0], dtype=np.float32), state

    class NoPredict:
        pass

    class NeedsMore(Hold):
        def __init__(self, window_bytes):
            pass
    """
)


@pytest.fixture
def user_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_policy.py"
    path.write_text(USER_POLICY)
    return path


def test_seeds_are_ranges_or_lists():
    assert transfer.parse_seeds("201-205") == [201, 202, 203, 204, 205]
    assert transfer.parse_seeds("1,3, 7-8") == [1, 3, 7, 8]
    for bad, match in (("5-3", "runs backwards"), ("1,x", "not a seed"), ("1-2,2", "twice")):
        with pytest.raises(SpecError, match=match):
            transfer.parse_seeds(bad)


def test_controllers_resolve_by_kind_and_fail_by_name(user_file: Path):
    assert is_class_ref("my.module:MyPolicy") and is_class_ref(f"{user_file}:Grow")
    assert not is_class_ref("ppo:runs/x") and not is_class_ref("xrc_policy")
    specs = transfer.resolve_controllers(
        ["xrc", "xrc_policy", f"{user_file}:Grow", f"{user_file}:Hold"]
    )
    assert [(s.label, s.kind, s.action_mode) for s in specs] == [
        ("xrc", "native", None),
        ("xrc_policy", "baseline", None),
        ("Grow", "policy", None),
        ("Hold", "policy", "rate"),
    ]
    assert specs[2].name == f"{user_file.resolve()}:Grow"
    pace = resolve_user_policy("evaluation.example_policies:PaceAtExplicitRate")
    assert (pace.label, pace.action_mode) == ("pace90", "rate")
    for text, match in (
        ("illinois", "does not run on backend='fast'"),
        (f"{user_file}:Missing", "has no class 'Missing'"),
        (f"{user_file}:NoPredict", "has no predict"),
        (f"{user_file}:NeedsMore", r"NeedsMore\(\.\.\.\) failed .*window_bytes"),
        ("no_such_module_here:Policy", "importing 'no_such_module_here' failed"),
        ("nope", "is not a known controller"),
    ):
        with pytest.raises(SpecError, match=match):
            transfer.resolve_controllers([text])


def test_default_rows_are_the_main_jobs_training_and_evaluation_scenarios():
    cells = {c.name: c.sim_time_s for c in transfer.main_job_scenarios()}
    assert list(cells) == [
        "fluctuating",
        "vs_cubic",
        "three_ues",
        "traces/steps",
        "traces/att_lte_driving",
        "traces/irish5g_static",
        "traces/tmobile_lte_short",
        "traces/irish5g_driving",
    ]
    assert cells["traces/att_lte_driving"] == 20.0 and cells["fluctuating"] == 30.0


def _results() -> pd.DataFrame:
    """Two controllers x 3 seeds on both backends; one fast run of ``b`` failed."""
    rows = []
    ns3 = {"a": [0.90, 0.92, 0.94], "b": [0.50, 0.60, 0.70]}
    fast = {"a": [0.91, 0.93, 0.94], "b": [0.80, 0.85, np.nan]}
    for c in ns3:
        for backend, values in zip(BACKENDS, (ns3[c], fast[c]), strict=True):
            for seed, v in zip((1, 2, 3), values, strict=True):
                rows.append(
                    {
                        "scenario": "s",
                        "controller": c,
                        "backend": backend,
                        "seed": seed,
                        "status": "ok" if np.isfinite(v) else "failed",
                        "error": "" if np.isfinite(v) else "boom",
                        "wall_s": 1.0,
                        "mean_reward": v,
                        "utilization": 0.9,
                        "hol_delay_ms_p95": 10.0,
                        "jain_fairness": 1.0,
                    }
                )
    return pd.DataFrame(rows)


def test_the_gap_is_paired_by_seed_and_judged_against_the_bound():
    rows = {r["controller"]: r for r in transfer.transfer_rows(_results())}
    a, b = rows["a"], rows["b"]
    # a: differences -0.01, -0.01, 0.00 -> mean -0.00667, sd 0.005774, half = 4.3027 * sd / sqrt 3.
    assert a["gap"] == pytest.approx(-0.02 / 3)
    assert a["gap_ci"] == pytest.approx(t_quantile(0.95, 2) * 0.005774 / np.sqrt(3), rel=1e-3)
    assert a["bound"] == 0.05  # 5 % of 0.92 is below 0.05
    assert a["verdict"] == transfer.WITHIN and a["n_pairs"] == 3
    # b: the failed fast seed 3 is left out: differences -0.30, -0.25 -> mean -0.275.
    assert (b["n_pairs"], b["n_ns3"], b["n_fast"], b["failed_fast"]) == (2, 3, 2, 1)
    assert b["gap"] == pytest.approx(-0.275) and b["verdict"] == transfer.OUTSIDE_UNSURE
    assert transfer.verdict(0.3, 0.1, 0.05) == transfer.OUTSIDE
    assert transfer.verdict(0.04, 0.02, 0.05) == transfer.WITHIN_UNSURE
    assert transfer.gap_bound(-4.0) == pytest.approx(0.2)


def test_the_report_is_rendered_from_its_numbers(tmp_path: Path):
    results = _results()
    specs = transfer.resolve_controllers(["xrc", "xrc_policy"])
    scenarios = transfer.resolve_scenarios(["fluctuating"], 2.0, 0.0)
    numbers = transfer.make_numbers(results, specs, scenarios, [1, 2, 3], {"wall_s": 3.0})
    numbers = json.loads(json.dumps(numbers))  # as read back from numbers.json
    transfer.write_outputs(numbers, tmp_path)
    assert (tmp_path / "report.md").read_text() == transfer_report.render(numbers)
    assert len(pd.read_csv(tmp_path / "rows.csv")) == 2
    assert len(pd.read_csv(tmp_path / "runs.csv")) == len(results)
    text = transfer_report.terminal_table(numbers)
    assert "-0.275 ± " in text and "OUTSIDE?" in text
    assert "1 of 2 rows have a mean gap within the bound" in text
    assert "boom" in transfer_report.render(numbers)  # the failed run is listed


def test_example_policies_act_on_the_observation():
    obs = np.zeros(len(OBS_FIELDS), dtype=np.float32)
    obs[OBS["fair_rate_mbps"]], obs[OBS["pacing_rate_mbps"]] = 10.0, 10.0
    pace = example_policies.PaceAtExplicitRate()
    action, _ = pace.predict(obs)
    assert action[0] == pytest.approx(np.log(0.9) / np.log(2.0))
    aimd = example_policies.DelayAimd(budget_ms=10.0)
    obs[OBS["cwnd_bytes"]], obs[OBS["rtt_min_ms"]], obs[OBS["rtt_mean_ms"]] = 1e5, 40.0, 45.0
    assert aimd.predict(obs, episode_start=np.array([True]))[0][0] > 0  # queue under budget: grow
    obs[OBS["rtt_mean_ms"]] = 60.0
    assert aimd.predict(obs)[0][0] == pytest.approx(np.log(0.7) / np.log(2.0))  # back off
    assert aimd.predict(obs)[0][0] == 0.0  # once per RTT: hold


def _run_dir(folder: Path) -> Path:
    """A train.py run directory: its config, an untrained PPO's model.zip and vecnormalize.pkl."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from cellgym.scenario import load_scenario
    from envs.lte_cell import LteCellEnv

    (folder / ".hydra").mkdir(parents=True)
    (folder / ".hydra" / "config.yaml").write_text(
        "agent:\n  name: mine\n  algo: PPO\nfeatures: raw\nmax_change: 2.0\naction_mode: cwnd\n"
    )
    venv = DummyVecEnv([lambda: LteCellEnv(scenario=load_scenario("fluctuating"), backend="fast")])
    PPO("MlpPolicy", venv, n_steps=16, batch_size=16, seed=0, device="cpu").save(
        folder / "model.zip"
    )
    VecNormalize(venv).save(str(folder / "vecnormalize.pkl"))
    return folder


def test_user_classes_and_a_checkpoint_run_in_the_pool_on_fast(user_file: Path, tmp_path: Path):
    from evaluation.pool import execute_job
    from evaluation.user_policies import make_user_policy

    run = _run_dir(tmp_path / "run")
    specs = transfer.resolve_controllers([f"{user_file}:Grow", f"{user_file}:Hold", str(run)])
    assert specs[2].kind == "trained" and specs[2].label == "mine"
    scenarios = transfer.resolve_scenarios(["fluctuating"], 1.0, 0.0)
    jobs = transfer.make_jobs(specs, scenarios, [1, 2], RewardSpec())
    jobs = [j for j in jobs if j.backend == "fast"]
    # The user classes in worker processes; the checkpoint here (no torch import in the workers).
    pooled = transfer.run_jobs([j for j in jobs if j.controller.kind == "policy"], 2, False)
    local = transfer.run_jobs([j for j in jobs if j.controller.kind == "trained"][:1], 1, False)
    results = pd.concat([pooled, local])
    assert results["status"].eq("ok").all(), results["error"].tolist()
    assert set(results["controller"]) == {"Grow", "Hold", "mine"}
    assert results["mean_reward"].notna().all()
    hold = next(j for j in jobs if j.controller.label == "Hold")
    policy = make_user_policy(hold.controller, hold)
    assert policy.step_ms == hold.scenario.step_ms
    ts = execute_job(hold, policy).timeseries
    assert (ts.loc[ts["agent"], "pacing_rate_mbps"].iloc[1:] > 0).all()  # rate mode: paced


def test_invalid_arguments_stop_before_any_simulation(capsys):
    for argv, match in (
        (["--controllers", "illinois"], "does not run on backend='fast'"),
        (["--seeds", "3-1"], "runs backwards"),
        (["--scenarios", "nowhere"], "scenario='nowhere' is unknown"),
        (["--jobs", "0"], "--jobs=0 is out of range"),
    ):
        with pytest.raises(SystemExit) as exc:
            transfer.main(argv)
        assert exc.value.code == 2
        assert match in capsys.readouterr().err


def test_the_report_is_registered_with_its_inputs():
    report = reports.by_name("docs/transfer")
    assert report.optional and report.module == "evaluation.transfer"
    assert report.inputs == inputs.TRANSFER
    assert "evaluation/example_policies.py" in inputs.TRANSFER
    assert "evaluation/transfer_report.py" not in inputs.TRANSFER  # --render rewrites it


@pytest.mark.ns3
def test_tiny_run_on_both_backends_writes_the_report(tmp_path: Path, capsys, user_file: Path):
    argv = [
        "--controllers",
        f"xrc_policy,evaluation.example_policies:PaceAtExplicitRate,{user_file}:Grow",
        "--scenarios",
        "fluctuating",
        "--seeds",
        "201-202",
        "--sim-time-s",
        "1",
        "--jobs",
        "2",
        "--quiet",
        "--out",
        str(tmp_path),
        "--cache",
        str(tmp_path / "cache"),
    ]
    assert transfer.main(argv) == 0
    printed = capsys.readouterr().out
    numbers = json.loads((tmp_path / "numbers.json").read_text())
    assert [r["controller"] for r in numbers["rows"]] == ["xrc_policy", "pace90", "Grow"]
    for r in numbers["rows"]:
        assert (r["n_ns3"], r["n_fast"], r["n_pairs"]) == (2, 2, 2)
        assert np.isfinite(r["gap"]) and r["verdict"] is not None
        assert f"{r['gap']:+.3f}" in printed
    assert {r["backend"] for r in numbers["runs"]} == set(BACKENDS)
    prov = numbers["provenance"]
    assert prov["args"] == argv and staleness(prov, REPO_ROOT, inputs.TRANSFER) == ""
    assert (tmp_path / "report.md").read_text() == transfer_report.render(numbers)
    assert transfer.main(["--out", str(tmp_path), "--render"]) == 0


def test_a_second_call_takes_its_runs_from_the_cache_and_a_change_reruns_one_backend(
    tmp_path: Path, monkeypatch
):
    from evaluation.benchmark import cache as run_cache

    specs = transfer.resolve_controllers(["cubic"])
    scenarios = transfer.resolve_scenarios(["fluctuating"], 0.5, 0.0)
    jobs = transfer.make_jobs(specs, scenarios, [201], RewardSpec())
    kept = run_cache.RunCache(tmp_path)
    first = transfer.run_jobs(jobs, 1, False, cache=kept)
    assert first.attrs["cached_runs"] == 0 and first["status"].eq("ok").all()
    again = transfer.run_jobs(jobs, 1, False, cache=kept)
    assert again.attrs["cached_runs"] == len(jobs)
    pd.testing.assert_frame_equal(first, again, check_dtype=False)
    # The fast model's code changed: its run is made again, ns-3's is kept.
    digest = run_cache.code_digest
    monkeypatch.setattr(
        run_cache, "code_digest", lambda b: digest(b) + ("changed" if b == "fast" else "")
    )
    ran = []
    real = transfer.execute_user_job
    monkeypatch.setattr(transfer, "execute_user_job", lambda j: ran.append(j.backend) or real(j))
    third = transfer.run_jobs(jobs, 1, False, cache=kept)
    assert ran == ["fast"] and third.attrs["cached_runs"] == 1
