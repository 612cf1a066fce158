"""Evaluation of many controllers: confidence intervals, summaries, plots, evaluate.py end to end.

The numbers in the CI tests are worked by hand in the comments (t quantiles from the standard
Student-t table).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cellgym.metrics import mean_ci, t_quantile
from cellgym.scenario import load_scenario
from cellgym.vocab import SpecError
from evaluation.plots import plot_delay_cdf, plot_throughput_delay, plot_timeseries
from evaluation.pool import evaluate_many
from evaluation.records import FLOW_COLUMNS, RESULT_COLUMNS, TIMESERIES_COLUMNS
from evaluation.report import summarize, summary_table, write_report
from evaluation.resolve import resolve_checkpoint, resolve_controller

REPO = Path(__file__).resolve().parents[2]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------------------------------
# Confidence intervals and summaries on hand-built frames
# ---------------------------------------------------------------------------------------------


def test_t_quantile_matches_the_table():
    # Two-sided 95 %: t_{0.975, 1} = 12.7062, t_{0.975, 2} = 4.3027, t_{0.975, 10} = 2.2281.
    assert t_quantile(0.95, 1) == pytest.approx(12.7062, abs=1e-4)
    assert t_quantile(0.95, 2) == pytest.approx(4.3027, abs=1e-4)
    assert t_quantile(0.95, 10) == pytest.approx(2.2281, abs=1e-4)
    # 90 %, 4 degrees of freedom: t_{0.95, 4} = 2.1318.
    assert t_quantile(0.90, 4) == pytest.approx(2.1318, abs=1e-4)


def test_t_quantile_fallback_without_scipy(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)  # ``from scipy import stats`` fails
    assert t_quantile(0.95, 2) == 4.303  # the table
    assert t_quantile(0.95, 100) == pytest.approx(1.95996, abs=1e-5)  # normal quantile


def test_t_quantile_rejects_bad_arguments():
    with pytest.raises(ValueError, match=r"confidence=1\.5 is out of range: allowed \(0, 1\)"):
        t_quantile(1.5, 3)
    with pytest.raises(ValueError, match=r"dof=0 is out of range"):
        t_quantile(0.95, 0)


def test_mean_ci_by_hand():
    # [1, 2, 3]: mean 2, sample sd 1, half-width = 4.302653 * 1 / sqrt(3) = 2.484138.
    mean, half, n = mean_ci([1.0, 2.0, 3.0])
    assert (mean, n) == (2.0, 3)
    assert half == pytest.approx(2.484138, abs=1e-6)
    # NaN is left out; one value has no interval; none has no mean.
    mean, half, n = mean_ci([5.0, np.nan])
    assert (mean, n) == (5.0, 1) and math.isnan(half)
    mean, half, n = mean_ci([])
    assert n == 0 and math.isnan(mean) and math.isnan(half)


def _hand_results() -> pd.DataFrame:
    rows = [
        # controller a: utilization 0.5, 0.7, 0.9 -> mean 0.7, sd 0.2,
        #   half-width = 4.302653 * 0.2 / sqrt(3) = 0.496828.
        ("a", "s1", 1, "ok", 0.5, 10.0, 20.0, np.nan),
        ("a", "s1", 2, "ok", 0.7, 11.0, 30.0, np.nan),
        ("a", "s1", 3, "ok", 0.9, 12.0, 40.0, np.nan),
        # controller b: throughput 10, 14 (seed 3 failed) -> mean 12, sd 2.828427,
        #   half-width = 12.706205 * 2.828427 / sqrt(2) = 25.412409.
        ("b", "s1", 1, "ok", 0.4, 10.0, 5.0, 1.5),
        ("b", "s1", 2, "ok", 0.6, 14.0, 7.0, np.nan),
        ("b", "s1", 3, "failed", np.nan, np.nan, np.nan, np.nan),
    ]
    df = pd.DataFrame(
        rows,
        columns=[
            "controller",
            "scenario",
            "seed",
            "status",
            "utilization",
            "throughput_mbps",
            "queueing_delay_ms_p95",
            "fct_s_p50",
        ],
    )
    df["error"] = np.where(df["status"] == "ok", "", "RuntimeError: boom")
    return df


def test_summarize_means_and_intervals_by_hand():
    s = summarize(_hand_results()).set_index("controller")
    assert list(s.index) == ["a", "b"]
    assert s.loc["a", "n"] == 3 and s.loc["a", "failed"] == 0
    assert s.loc["b", "n"] == 2 and s.loc["b", "failed"] == 1
    assert s.loc["a", "utilization_mean"] == pytest.approx(0.7)
    assert s.loc["a", "utilization_ci"] == pytest.approx(0.496828, abs=1e-6)
    assert s.loc["a", "utilization_low"] == pytest.approx(0.7 - 0.496828, abs=1e-6)
    assert s.loc["a", "utilization_high"] == pytest.approx(0.7 + 0.496828, abs=1e-6)
    assert s.loc["b", "throughput_mbps_mean"] == pytest.approx(12.0)
    assert s.loc["b", "throughput_mbps_ci"] == pytest.approx(25.412409, abs=1e-6)
    # queueing p95 of a: 20, 30, 40 -> mean 30, sd 10, half = 4.302653 * 10 / sqrt(3) = 24.841377.
    assert s.loc["a", "queueing_delay_ms_p95_ci"] == pytest.approx(24.841377, abs=1e-6)
    # FCT: no value for a; one for b (mean, no interval).
    assert s.loc["a", "fct_s_p50_n"] == 0 and math.isnan(s.loc["a", "fct_s_p50_mean"])
    assert s.loc["b", "fct_s_p50_mean"] == 1.5 and math.isnan(s.loc["b", "fct_s_p50_ci"])


def test_summarize_at_another_confidence():
    # 90 %, a's utilization: t_{0.95, 2} = 2.919986; half = 2.919986 * 0.2 / sqrt(3) = 0.337171.
    s = summarize(_hand_results(), metrics=["utilization"], confidence=0.90)
    assert s.loc[0, "utilization_ci"] == pytest.approx(0.337171, abs=1e-6)


def test_summarize_names_a_missing_column():
    with pytest.raises(ValueError, match="not_a_metric"):
        summarize(_hand_results(), metrics=["not_a_metric"])


def test_summary_table_shows_mean_and_interval():
    text = summary_table(summarize(_hand_results()))
    assert "0.700 ± 0.497" in text  # a's utilization
    assert "12.00 ± 25.41" in text  # b's throughput
    assert "FCT p50 s" in text  # b has an FCT
    assert "cell Mbit/s" not in text  # column absent from the frame


# ---------------------------------------------------------------------------------------------
# Plots and the report on hand-built frames
# ---------------------------------------------------------------------------------------------


def _hand_timeseries() -> pd.DataFrame:
    rows = []
    for controller, level in (("a", 5.0), ("b", 20.0)):
        for seed in (1, 2):
            for k in range(1, 11):
                t = k * 0.02
                for flow, agent in ((0, False), (1, True)):
                    rows.append(
                        {
                            "controller": controller,
                            "scenario": "s1",
                            "seed": seed,
                            "t": t,
                            "flow": flow,
                            "cca": "agent" if agent else "cubic",
                            "agent": agent,
                            "ue": 0,
                            "active": True,
                            "throughput_mbps": 10.0 + k,
                            "cwnd_bytes": 1e4 * k,
                            "pacing_rate_mbps": 0.0,
                            "rtt_ms": 40.0 + level,
                            "queueing_delay_ms": level + k,
                            "hol_ms": level + 0.5 * k,
                            "capacity_mbps": 30.0,
                            "reward": 0.5,
                        }
                    )
    return pd.DataFrame(rows, columns=list(TIMESERIES_COLUMNS))


def test_plot_functions_return_figures():
    fig = plot_throughput_delay(_hand_results())
    assert fig._repr_png_().startswith(PNG_MAGIC)  # Jupyter shows it without pyplot
    ax = fig.axes[0]
    assert ax.xaxis_inverted()  # Zeus style: lower delay to the right
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]
    fig = plot_delay_cdf(_hand_timeseries(), "queueing_delay_ms", budget_ms=10)
    lines = fig.axes[0].get_lines()
    # Controller a's 20 samples per flow and seed (2 flows x 2 seeds x 10 steps = 40) end at 1.
    assert lines[0].get_ydata()[-1] == pytest.approx(1.0)
    assert len(lines[0].get_xdata()) == 40
    fig = plot_delay_cdf(_hand_timeseries(), "hol_ms")
    # HoL counts one sample per step and UE: 2 seeds x 10 steps.
    assert len(fig.axes[0].get_lines()[0].get_xdata()) == 20
    fig = plot_timeseries(_hand_timeseries())
    assert len(fig.axes) == 3
    assert "seed 1" in fig.axes[0].get_title()


def test_plots_name_the_scenario_when_several():
    df = pd.concat([_hand_results(), _hand_results().assign(scenario="s2")])
    with pytest.raises(ValueError, match=r"scenario=<one of them>"):
        plot_throughput_delay(df)
    fig = plot_throughput_delay(df, scenario="s2")
    assert "s2" in fig.axes[0].get_title()
    with pytest.raises(ValueError, match="delay='rtt'"):
        plot_delay_cdf(_hand_timeseries(), "rtt")


def test_write_report_writes_tables_and_png_plots(tmp_path):
    paths = write_report(
        _hand_results(), tmp_path, timeseries=_hand_timeseries(), budget_ms=10.0, notes="hello"
    )
    for key in ("throughput_delay:s1", "delay_cdf:s1", "timeseries:s1"):
        data = paths[key].read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000, key
    assert pd.read_parquet(paths["results"]).shape == (6, 9)
    summary = pd.read_csv(paths["summary"])
    assert list(summary["controller"]) == ["a", "b"]
    assert summary.loc[0, "utilization_mean"] == pytest.approx(0.7)
    report = paths["report"].read_text()
    assert "hello" in report and "0.700 ± 0.497" in report
    assert "- `b` / `s1` / seed 3: RuntimeError: boom" in report
    assert "![Throughput vs p95 queueing delay](throughput_delay_s1.png)" in report
    assert "timeseries" in paths and "flows" not in paths


# ---------------------------------------------------------------------------------------------
# Controllers: names, checkpoints, errors at start
# ---------------------------------------------------------------------------------------------


def test_unknown_controller_names_the_field_and_the_choices():
    with pytest.raises(ValueError) as err:
        resolve_controller("cubicc", "controllers[1]")
    msg = str(err.value)
    assert "controllers[1]='cubicc'" in msg
    for choice in ("cubic", "xrc", "xrc_policy", "explicit_rate", "ppo"):
        assert choice in msg


def test_controller_kinds():
    assert resolve_controller("cubic").kind == "native"
    assert resolve_controller("xrc").kind == "native"
    assert resolve_controller("xrc_policy").kind == "baseline"
    assert resolve_controller("mine", policies={"mine": object()}).kind == "policy"


def test_checkpoint_without_config_needs_the_algorithm(tmp_path):
    (tmp_path / "model.zip").write_bytes(b"x")
    with pytest.raises(ValueError, match="<algo>:<path>"):
        resolve_controller(str(tmp_path / "model.zip"))
    spec = resolve_controller(f"sac:{tmp_path}")
    assert (spec.kind, spec.algo, spec.label) == ("trained", "SAC", "sac")
    with pytest.raises(FileNotFoundError, match="no trained model"):
        resolve_checkpoint(tmp_path / "missing")


def test_evaluate_many_rejects_bad_arguments_before_running():
    with pytest.raises(ValueError, match="controllers\\[1\\]='nope'"):
        evaluate_many(["cubic", "nope"], ["vs_cubic"], [1], backend="fast")
    with pytest.raises(SpecError, match="scenario='nowhere' is unknown: choose one of .*vs_cubic"):
        evaluate_many(["cubic"], ["nowhere"], [1], backend="fast")
    with pytest.raises(ValueError, match="jobs=0 is out of range"):
        evaluate_many(["cubic"], ["vs_cubic"], [1], backend="fast", jobs=0)
    with pytest.raises(ValueError, match="backend='ns2'"):
        evaluate_many(["cubic"], ["vs_cubic"], [1], backend="ns2")


def test_controllers_resolve_through_the_registry_and_its_backends():
    # Every registry entry resolves to its kind; a policy entry is a baseline of the tables.
    from cellgym import controllers

    for name, entry in controllers.CONTROLLERS.items():
        spec = resolve_controller(name)
        assert spec.kind == ("native" if entry.kind == "native" else "baseline"), name
        for backend in entry.backends:
            assert resolve_controller(name, backend=backend).name == name
    # A native sender the fast model does not have: named with the field and the choices.
    with pytest.raises(SpecError) as err:
        resolve_controller("illinois", "controllers[2]", backend="fast")
    msg = str(err.value)
    assert "controllers[2]='illinois' does not run on backend='fast'" in msg
    for choice in controllers.names(backend="fast"):
        assert choice in msg
    assert resolve_controller("illinois", backend="ns3").kind == "native"
    # evaluate_many checks it before any simulation, with the list index.
    unsupported = r"controllers\[1\]='illinois' does not run on backend='fast'"
    with pytest.raises(SpecError, match=unsupported):
        evaluate_many(["cubic", "illinois"], ["vs_cubic"], [1], backend="fast")
    # An unknown name on a backend lists that backend's controllers only.
    with pytest.raises(SpecError) as err:
        resolve_controller("quic", "controllers[0]", backend="fast")
    msg = str(err.value)
    assert "controllers[0]='quic' is not a known controller" in msg and "backend='fast'" in msg
    assert "illinois" not in msg and "cubic" in msg and "xrc_policy" in msg


def test_evaluation_errors_are_spec_errors():
    # One error type for argument mistakes (a ValueError, so older callers still catch them).
    for call in (
        lambda: evaluate_many(["cubic"], ["vs_cubic"], [1], backend="ns2"),
        lambda: evaluate_many(["cubic"], ["vs_cubic"], [1], backend="fast", jobs=0),
        lambda: evaluate_many([], ["vs_cubic"], [1], backend="fast"),
        lambda: resolve_controller("nope"),
        lambda: t_quantile(1.5, 3),
        lambda: summarize(_hand_results(), metrics=["nope"]),
    ):
        with pytest.raises(SpecError):
            call()


def _save_checkpoint(folder: Path, name: str, broken: bool = False) -> Path:
    """A run directory as train.py leaves it: .hydra/config.yaml, model.zip, vecnormalize.pkl."""
    folder.mkdir(parents=True)
    (folder / ".hydra").mkdir()
    (folder / ".hydra" / "config.yaml").write_text(
        f"agent:\n  name: {name}\n  algo: PPO\nfeatures: raw\nmax_change: 2.0\naction_mode: cwnd\n"
    )
    if broken:
        (folder / "model.zip").write_bytes(b"this is not a zip file")
        return folder
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    from envs.lte_cell import LteCellEnv

    env = LteCellEnv(scenario=load_scenario("vs_cubic"), backend="fast")
    venv = DummyVecEnv([lambda: env])
    PPO("MlpPolicy", venv, n_steps=16, batch_size=16, seed=0, device="cpu").save(
        folder / "model.zip"
    )
    VecNormalize(venv).save(str(folder / "vecnormalize.pkl"))
    return folder


class HalfRate:
    """An in-process policy: always the neutral action (keeps the window)."""

    def predict(self, obs, state=None, episode_start=None, deterministic=True):
        return np.zeros((1,), dtype=np.float32), state


def _save_crashing_checkpoint(folder: Path) -> Path:
    """A model.zip whose loading ends its process (as a segfault would): os._exit(3)."""
    import base64
    import json
    import pickle
    import zipfile

    class Crash:
        def __reduce__(self):
            return (os._exit, (3,))

    folder.mkdir(parents=True)
    blob = base64.b64encode(pickle.dumps(Crash())).decode()
    data = {"policy_class": {":type:": "<class 'type'>", ":serialized:": blob}}
    with zipfile.ZipFile(folder / "model.zip", "w") as z:
        z.writestr("data", json.dumps(data))
    return folder


def test_a_dying_worker_fails_only_its_own_job(tmp_path):
    crash = _save_crashing_checkpoint(tmp_path / "crash")
    results, _, _ = evaluate_many(
        [f"ppo:{crash}", "cubic"], ["vs_cubic"], [1], backend="fast", jobs=2, sim_time_s=0.5
    )
    by = results.set_index("controller")
    assert by.loc["cubic", "status"] == "ok"
    assert by.loc["ppo", "status"] == "failed"
    assert "worker process died" in by.loc["ppo", "error"]


def test_a_policy_object_takes_the_same_path_as_the_named_baseline():
    from baselines import make_policy

    xrc = make_policy("xrc_policy", max_change=2.0, step_ms=20.0, budget_ms=10.0)
    results, flows, _ = evaluate_many(
        ["xrc_policy"], ["vs_cubic"], [3], backend="fast", policies={"mine": xrc}, sim_time_s=1.0
    )
    assert list(results["kind"]) == ["baseline", "policy"]
    metrics = [c for c in RESULT_COLUMNS if c not in ("controller", "kind", "wall_s")]
    a, b = results[metrics].iloc[0], results[metrics].iloc[1]
    pd.testing.assert_series_equal(a, b, check_names=False)
    assert a["mean_reward"] == b["mean_reward"] and np.isfinite(a["mean_reward"])


def test_evaluate_many_in_parallel_with_checkpoints_and_a_failing_job(tmp_path):
    good = _save_checkpoint(tmp_path / "run_good", "tiny_ppo")
    bad = _save_checkpoint(tmp_path / "run_bad", "broken_ppo", broken=True)
    results, flows, ts = evaluate_many(
        ["xrc_policy", str(good), f"ppo:{bad}", "cubic"],
        ["vs_cubic"],
        [1, 2],
        backend="fast",
        jobs=2,
        policies={"hold": HalfRate()},
        sim_time_s=1.0,
    )
    assert list(results.columns) == list(RESULT_COLUMNS)
    assert list(flows.columns) == list(FLOW_COLUMNS)
    assert list(ts.columns) == list(TIMESERIES_COLUMNS)
    # One row per controller and seed, in the order given (in-process policies last).
    labels = ["xrc_policy", "tiny_ppo", "broken_ppo", "cubic", "hold"]
    assert list(results["controller"]) == [c for c in labels for _ in (1, 2)]
    assert list(results["seed"]) == [1, 2] * 5
    assert (results.loc[results["controller"] != "broken_ppo", "status"] == "ok").all()
    failed = results[results["status"] == "failed"]
    assert list(failed["controller"]) == ["broken_ppo", "broken_ppo"]
    assert failed["error"].str.len().gt(0).all() and failed["utilization"].isna().all()
    ok = results[results["status"] == "ok"]
    assert ok["utilization"].between(0, 1).all()
    assert ok["throughput_mbps"].gt(0).all()
    assert ok["mean_reward"].notna().all()  # native cubic too: the same reward, post hoc
    assert (ok["kind"].tolist()) == ["baseline"] * 2 + ["trained"] * 2 + ["native"] * 2 + [
        "policy"
    ] * 2
    # Two flows per finished run; 50 steps x 2 flows of time series per finished run.
    assert len(flows) == 2 * len(ok) and flows["agent"].sum() == len(ok)
    assert len(ts) == 50 * 2 * len(ok)


# ---------------------------------------------------------------------------------------------
# evaluate.py end to end
# ---------------------------------------------------------------------------------------------


def _evaluate_py(*overrides: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    return subprocess.run(
        [sys.executable, str(REPO / "evaluate.py"), *overrides],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=env,
    )


def test_evaluate_py_fast_end_to_end(tmp_path):
    out = tmp_path / "eval"
    broken = _save_checkpoint(tmp_path / "run_bad", "broken", broken=True)
    proc = _evaluate_py(
        f"controllers=[xrc_policy,cubic,{broken}]",
        "scenarios=[vs_cubic,fluctuating]",
        "seeds=[1,2]",
        "backend=fast",
        "sim_time_s=1",
        "jobs=1",
        f"out_dir={out}",
    )
    # The broken checkpoint fails at run time (not a zip file): exit 1, the rest reported.
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "FAILED broken / vs_cubic / seed 1: ValueError" in proc.stdout
    results = pd.read_parquet(out / "results.parquet")
    assert list(results.columns) == list(RESULT_COLUMNS)
    assert len(results) == 3 * 2 * 2
    assert set(results["scenario"]) == {"vs_cubic", "fluctuating"}
    assert list(results["status"]) == ["ok"] * 8 + ["failed"] * 4
    assert len(pd.read_csv(out / "results.csv")) == 12
    assert len(pd.read_parquet(out / "flows.parquet")) == 2 * 2 * 2 + 1 * 2 * 2
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary["n"]) == [2, 2, 2, 2, 0, 0] and list(summary["failed"][-2:]) == [2, 2]
    for scenario in ("vs_cubic", "fluctuating"):
        for kind in ("throughput_delay", "delay_cdf", "timeseries"):
            png = out / f"{kind}_{scenario}.png"
            assert png.read_bytes().startswith(PNG_MAGIC)
            assert f"plot: {png}" in proc.stdout
    report = (out / "report.md").read_text()
    assert "xrc_policy" in report and "## Failed runs" in report
    assert "mean ± 95 % confidence interval" in proc.stdout
    assert "xrc_policy" in (out / "comparison.txt").read_text()


def test_evaluate_py_invalid_config_fails_at_start(tmp_path):
    out = tmp_path / "eval"
    proc = _evaluate_py("controllers=[cubic,nope]", "backend=fast", f"out_dir={out}")
    assert proc.returncode == 2
    assert "controllers[1]='nope' is not a known controller" in proc.stderr
    assert "xrc_policy" in proc.stderr
    assert not (out / "results.parquet").exists()
    proc = _evaluate_py("jobs=0", "backend=fast", f"out_dir={out}")
    assert proc.returncode == 2 and "jobs=0 is out of range: allowed [1, inf)" in proc.stderr
    proc = _evaluate_py("seeds=[1,-1]", "backend=fast", f"out_dir={out}")
    assert proc.returncode == 2 and "seeds[1]=-1 is out of range" in proc.stderr
    proc = _evaluate_py("+scenario.foo=1", "backend=fast", f"out_dir={out}")
    assert proc.returncode == 2 and "scenario.foo is not an option of scenario" in proc.stderr


@pytest.mark.ns3
def test_evaluate_py_on_ns3(tmp_path):
    out = tmp_path / "eval"
    proc = _evaluate_py(
        "controllers=[xrc_policy]",
        "scenario=single_flow",
        "seeds=[1]",
        "sim_time_s=2",
        "jobs=1",
        f"out_dir={out}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = pd.read_parquet(out / "results.parquet")
    assert len(results) == 1 and results.loc[0, "status"] == "ok"
    assert results.loc[0, "backend"] == "ns3"
    assert results.loc[0, "duration_s"] == pytest.approx(2.0)
    assert 0 < results.loc[0, "utilization"] <= 1
    assert (out / "throughput_delay_single_flow.png").read_bytes().startswith(PNG_MAGIC)


def test_rliable_aggregates_against_hand_worked_numbers():
    from cellgym.aggregates import rliable_aggregates, score_matrices

    rows = []
    # Two scenarios x four seeds; "a" beats "ref" in every run of s1 and in none of s2.
    for seed in range(4):
        rows += [
            {"controller": "a", "scenario": "s1", "seed": seed, "mean_reward": 2.0 + seed},
            {"controller": "a", "scenario": "s2", "seed": seed, "mean_reward": 0.0},
            {"controller": "ref", "scenario": "s1", "seed": seed, "mean_reward": 1.0},
            {"controller": "ref", "scenario": "s2", "seed": seed, "mean_reward": 1.0 + seed},
        ]
    rows.append({"controller": "a", "scenario": "s3", "seed": 0, "mean_reward": 9.0})
    df = pd.DataFrame(rows)
    m = score_matrices(df, "mean_reward")
    # s3 is left out: "ref" has no run there; rows are seeds 0-3, columns s1, s2.
    np.testing.assert_array_equal(m["a"], [[2, 0], [3, 0], [4, 0], [5, 0]])
    table = rliable_aggregates(df, reference="ref", reps=500).set_index("controller")
    # IQM of a's 8 scores {0,0,0,0,2,3,4,5}: the middle half {0,0,2,3} -> 1.25.
    assert table.loc["a", "iqm"] == pytest.approx(1.25)
    assert table.loc["a", "mean"] == pytest.approx(14 / 8)
    assert table.loc["a", "iqm_low"] <= 1.25 <= table.loc["a", "iqm_high"]
    # P(a > ref): 1 in s1, 0 in s2 -> 0.5 (rliable averages the per-scenario probabilities).
    assert table.loc["a", "p_improve"] == pytest.approx(0.5)
    assert np.isnan(table.loc["ref", "p_improve"])
    again = rliable_aggregates(df, reference="ref", reps=500).set_index("controller")
    assert table.loc["a", "iqm_low"] == again.loc["a", "iqm_low"]  # seeded bootstrap
    with pytest.raises(ValueError, match="reference='xrc'"):
        rliable_aggregates(df, reference="xrc")


def test_the_report_carries_rliable_aggregates(tmp_path):
    df = _hand_results()
    df["mean_reward"] = np.arange(len(df), dtype=float)
    paths = write_report(df, tmp_path)
    assert "## Across scenarios and seeds (rliable)" in paths["report"].read_text()
    agg = pd.read_csv(paths["aggregate"])
    assert set(agg["controller"]) <= set(df["controller"])
