"""``fast_params``: the twin's model knobs set where users build environments and evaluations."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

import envs  # noqa: F401  (registers CellGym/*)
from cellgym.vocab import SpecError
from envs.fast_params import check_fast_params, fast_param_names, fast_sim_params
from envs.fastsim.params import FastSimParams
from envs.lte_cell import LteCellEnv
from envs.multi_flow import MultiFlowCellEnv

SHORT = {"name": "short", "sim_time_s": 0.4, "flows": [{"cca": "agent"}]}
TWO = {
    "name": "two",
    "num_ues": 2,
    "sim_time_s": 0.4,
    "flows": [{"ue": 0, "cca": "agent"}, {"ue": 1, "cca": "agent"}],
}


def _rtts(env: gym.Env, steps: int = 15) -> list[float]:
    env.reset(seed=3)
    out = []
    for _ in range(steps):
        obs, *_ = env.step(np.array([0.0], dtype=np.float32))
        out.append(float(obs[2]))  # rtt_last_ms
    return out


def test_gym_make_fast_params_changes_the_sessions_model():
    """``gym.make(..., fast_params={"uplink": "periodic"})`` reaches the running cell.

    Before, ``LteCellEnv`` had no such keyword (``gym.make`` raised TypeError) and the session
    always ran the defaults (on LTE ``uplink="bsr"``, ``air_ul_ms=4``).
    """
    env = gym.make(
        "CellGym/LteSingleFlow-v0",
        scenario=SHORT,
        backend="fast",
        fast_params={"uplink": "periodic"},
    )
    plain = gym.make("CellGym/LteSingleFlow-v0", scenario=SHORT, backend="fast")
    try:
        assert env.unwrapped.fast_params == {"uplink": "periodic"}
        periodic = _rtts(env)
        params = env.unwrapped._session.params
        assert params.uplink == "periodic" and params.air_ul_ms == 7  # its calibrated delay
        assert plain.unwrapped._session is None
        bsr = _rtts(plain)
        assert plain.unwrapped._session.params.uplink == "bsr"
        assert bsr != periodic, "another uplink model should give other RTT samples"
    finally:
        env.close()
        plain.close()


def test_multi_flow_env_takes_fast_params():
    env = MultiFlowCellEnv(TWO, backend="fast", fast_params={"uplink": "bsr", "ul_grant_ms": 5})
    try:
        env.reset(seed=1)
        params = env._session.params
        assert (params.uplink, params.ul_grant_ms) == ("bsr", 5)
    finally:
        env.close()


def test_the_vector_env_takes_the_same_overrides_as_params():
    from envs.fastsim.vector_env import make_fast_vec_env

    params = fast_sim_params(SHORT, {"uplink": "bsr"})
    venv = make_fast_vec_env(SHORT, num_envs=2, seed=0, params=params)
    try:
        assert venv.params.uplink == "bsr"
    finally:
        venv.close()


@pytest.mark.parametrize(
    ("fast_params", "match"),
    [
        ({"upllink": "bsr"}, r"fast_params\.upllink is not a FastSimParams field: .*uplink"),
        ({"uplink": "grant"}, r"fast_params\.uplink='grant' .*periodic, bsr"),
        ({"uplink": 1}, r"fast_params\.uplink=1 .*give a string"),
        ({"ul_grant_ms": 100}, r"fast_params\.ul_grant_ms=100 .*allowed \[0, 62\]"),
        ({"harq_bler": 1.0}, r"fast_params\.harq_bler=1\.0 .*allowed \[0, 1\)"),
        ({"min_rto_ms": 0}, r"fast_params\.min_rto_ms=0 .*allowed \[1, inf\)"),
        ({"nr_dmrs_re": 7}, r"fast_params\.nr_dmrs_re=7 .*6, 12, 18, 24, 36, 48"),
        ({"hystart_delay": 1}, r"fast_params\.hystart_delay=1 .*true or false"),
        ({"cqi_thresholds_db": [1.0, 2.0]}, r"fast_params\.cqi_thresholds_db has 2 values"),
        ({"enb_power_dbm": float("nan")}, r"fast_params\.enb_power_dbm=nan"),
        (["uplink"], r"fast_params=\['uplink'\] is a list: give a mapping"),
    ],
)
def test_a_bad_field_or_value_fails_at_construction_naming_it(fast_params, match):
    with pytest.raises(SpecError, match=match):
        gym.make("CellGym/LteSingleFlow-v0", backend="fast", fast_params=fast_params)
    with pytest.raises(SpecError, match=match):
        MultiFlowCellEnv(TWO, backend="fast", fast_params=fast_params)


def test_the_ns3_backend_refuses_fast_params_at_construction():
    with pytest.raises(SpecError, match=r"fast_params=\{'uplink': 'bsr'\}: the ns3 backend"):
        LteCellEnv(SHORT, backend="ns3", fast_params={"uplink": "bsr"})
    with pytest.raises(SpecError, match="ns3 backend cannot honour"):
        MultiFlowCellEnv(TWO, backend="ns3", fast_params={"air_dl_ms": 2})
    # Nothing to honour: an empty mapping is no override on either backend.
    assert LteCellEnv(SHORT, backend="ns3", fast_params={}).fast_params == {}


def test_every_field_but_the_scenario_is_an_override_and_the_defaults_pass_their_checks():
    names = [f.name for f in dataclasses.fields(FastSimParams) if f.name != "spec"]
    assert list(fast_param_names()) == names
    defaults = FastSimParams.from_spec(SHORT)
    for name in names:
        value = getattr(defaults, name)
        if name in ("explicit", "pbe"):
            value = None
        assert check_fast_params({name: value}, "fast") == {name: value}


def test_evaluate_many_passes_fast_params_to_every_job_and_refuses_them_on_ns3():
    from evaluation import evaluate_many

    with pytest.raises(SpecError, match="ns3 backend cannot honour"):
        evaluate_many(["cubic"], [SHORT], [1], backend="ns3", fast_params={"uplink": "bsr"})
    with pytest.raises(SpecError, match=r"fast_params\.uplnk is not a FastSimParams field"):
        evaluate_many(["cubic"], [SHORT], [1], backend="fast", fast_params={"uplnk": "bsr"})
    calibrated, _, _ = evaluate_many(["cubic"], [SHORT], [1], backend="fast")
    assert calibrated["fast_params"].tolist() == [""]
    runs = {}
    for uplink in ("periodic", "bsr"):
        results, _, ts = evaluate_many(
            ["cubic", "explicit_rate"], [SHORT], [1], backend="fast", fast_params={"uplink": uplink}
        )
        assert (results["status"] == "ok").all(), results["error"].tolist()
        # The results table names the model each row ran (before: no column for it).
        assert (results["fast_params"] == f"uplink={uplink}").all()
        runs[uplink] = ts.groupby("controller")["rtt_ms"].mean()
    # Native (cubic) and policy (explicit_rate) jobs alike ran the other uplink model.
    assert (runs["periodic"] != runs["bsr"]).all()


def test_the_multi_agent_vector_env_takes_params():
    """``FastMultiAgentVecEnv(params=...)`` runs the given model (before: no such keyword)."""
    from envs.fastsim.multi_vector_env import FastMultiAgentVecEnv

    rtts = {}
    for uplink in ("periodic", "bsr"):
        venv = FastMultiAgentVecEnv(TWO, 2, params=fast_sim_params(TWO, {"uplink": uplink}))
        try:
            assert venv.params.uplink == uplink
            venv.seed(3)
            venv.reset()
            seen = []
            for _ in range(15):
                obs, *_ = venv.step(np.zeros((4, 1), dtype=np.float32))
                seen.append(obs[:, 2].copy())  # rtt_last_ms of every agent
            rtts[uplink] = np.array(seen)
        finally:
            venv.close()
    assert not np.array_equal(rtts["periodic"], rtts["bsr"])
    with pytest.raises(SpecError, match="params=.* is a dict: give FastSimParams"):
        FastMultiAgentVecEnv(TWO, 2, params={"uplink": "bsr"})


def _model(venv):
    """The ``FastSimParams`` under SB3 wrappers (each wrapper holds the next as ``venv``)."""
    while not hasattr(venv, "params"):
        venv = venv.venv
    return venv.params


def test_train_config_backend_fast_params_reaches_every_training_cell():
    """``+backend.fast_params.uplink=bsr``: the single-scenario, mixture and multi-agent vectors.

    Before, ``train.py`` had no way to set the twin's knobs outside a mixture's variants.
    """
    from agents.factory import make_base_vec_env
    from configs.schema import compose_train
    from workflows.train import validate

    common = [
        "run_dir=/tmp/x",
        "backend=fast",
        "backend.n_envs=2",
        "+backend.fast_params.uplink=bsr",
    ]
    single = validate(compose_train([*common, "scenario=single_flow"]))
    venv = make_base_vec_env(single, seed=0)
    try:
        assert _model(venv).uplink == "bsr"
    finally:
        venv.close()
    multi = validate(compose_train([*common, "scenario=multi_agent2"]))
    venv = make_base_vec_env(multi, seed=0)
    try:
        assert _model(venv).uplink == "bsr"
    finally:
        venv.close()
    from agents.mixture import mixture_batches

    # A mixture's variants apply on top of backend.fast_params (the default one sets the uplink).
    mixed = validate(
        compose_train([*common, "experiment=default", "+backend.fast_params.min_rto_ms=250"])
    )
    knobs = [k for _, k, _ in mixture_batches(mixed)]
    assert knobs and all(k["min_rto_ms"] == 250 for k in knobs)
    assert {k["uplink"] for k in knobs} == {"periodic", "bsr"}


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        (["backend=fast", "+backend.fast_params.uplnk=bsr"], r"backend\.fast_params\.uplnk is not"),
        (["backend=fast", "+backend.fast_params.harq_bler=1.0"], r"harq_bler=1\.0 .*\[0, 1\)"),
        (["backend=ns3", "+backend.fast_params.uplink=bsr"], r"backend\.fast_params=.*ns3 backend"),
    ],
)
def test_train_config_refuses_bad_backend_fast_params_naming_them(overrides, match):
    from configs.schema import compose_train
    from workflows.train import validate

    with pytest.raises(SpecError, match=match):
        validate(compose_train(["run_dir=/tmp/x", *overrides]))


def _evaluate_py(tmp_path, *overrides: str):
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [sys.executable, str(repo / "evaluate.py"), *overrides, f"hydra.run.dir={tmp_path / 'h'}"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=repo,
    )


def test_evaluate_py_takes_backend_fast_params_and_records_them(tmp_path):
    """``evaluate.py backend=fast +backend.fast_params.uplink=bsr`` (before: no such option)."""
    import pandas as pd

    out = tmp_path / "eval"
    proc = _evaluate_py(
        tmp_path,
        "backend=fast",
        "+backend.fast_params.uplink=bsr",
        "controllers=[cubic]",
        "scenarios=[single_flow]",
        "sim_time_s=0.4",
        "jobs=1",
        f"out_dir={out}",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = pd.read_parquet(out / "results.parquet")
    assert (results["status"] == "ok").all(), results["error"].tolist()
    assert "fast model: {'uplink': 'bsr'}" in (out / "report.md").read_text()


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["backend=fast", "+backend.fast_params.uplnk=bsr"], "backend.fast_params.uplnk is not"),
        (["backend=ns3", "+backend.fast_params.uplink=bsr"], "the ns3 backend cannot honour"),
    ],
)
def test_evaluate_py_refuses_bad_backend_fast_params_in_one_line(tmp_path, overrides, message):
    proc = _evaluate_py(tmp_path, *overrides, "controllers=[cubic]")
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evaluate.py: invalid config: backend.")
    assert message in lines[0]
