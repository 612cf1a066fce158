"""Training on a mixture of scenarios and fast-model variants (``mixture``, the main job).

The main job's ns-3 evaluation in miniature is in ``test_train_ns3.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from agents.factory import make_base_vec_env
from agents.mixture import ConcatVecEnv, mixture_batches, model_variants
from cellgym.paths import traces_dir
from cellgym.vocab import SpecError
from configs.schema import compose_train, validate_train
from envs.fastsim.vector_env import make_fast_vec_env
from workflows.train import train

# Two scenarios of 1 s (50 steps), two cells each, both uplink models: 8 cells.
SMALL_MIXTURE = [
    "experiment=default",
    "mixture.scenarios=[{scenario:fluctuating,n_envs:2,overrides:{sim_time_s:1.0}},"
    "{scenario:vs_cubic,n_envs:2,overrides:{sim_time_s:1.0}}]",
    "agent.net_arch=[8]",
    "agent.kwargs.n_steps=32",
    "agent.kwargs.batch_size=64",
    "agent.kwargs.n_epochs=1",
]


def _compose(overrides: list[str]):
    return compose_train(["run_dir=/tmp/x", *overrides])


def test_mixture_trains_a_few_hundred_steps_and_is_evaluated_per_scenario(tmp_path):
    cfg = _compose(
        [
            *SMALL_MIXTURE,
            f"run_dir={tmp_path}",
            "total_timesteps=512",
            "eval.freq=256",
            "eval.seeds=[7]",
            "eval_backend=fast",
            "eval_seeds=[8]",
            "eval_scenarios=[{scenario:fluctuating,overrides:{sim_time_s:1.0}},"
            "{scenario:three_ues,overrides:{sim_time_s:1.0}}]",
            "eval_baselines=[xrc_policy,xrc]",
            "eval_jobs=1",
            "progress_bar=false",
        ]
    )
    out = train(cfg)
    assert out["timesteps"] >= 512
    # The periodic evaluation ran on both training scenarios: one row per evaluation and
    # controller, over 2 scenarios x 1 seed.
    history = pd.read_csv(tmp_path / "eval_history.csv")
    assert set(history["controller"]) == {"ppo", "xrc_policy"}
    assert (history["n_seeds"] == 2).all()
    results = pd.read_parquet(tmp_path / "evaluation" / "results.parquet")
    assert sorted(set(zip(results["controller"], results["scenario"], strict=True))) == sorted(
        (c, s) for c in ("ppo", "xrc_policy", "xrc") for s in ("fluctuating", "three_ues")
    )
    assert (results["status"] == "ok").all() and results["mean_reward"].notna().all()
    comparison = (tmp_path / "evaluation" / "comparison.txt").read_text()
    assert "three_ues" in comparison and "P(improvement over xrc_policy)" in comparison
    assert (tmp_path / "evaluation" / "aggregate.csv").is_file()


def test_mixture_cells_are_the_batches_of_each_scenario_and_uplink_side_by_side():
    typed = validate_train(_compose(SMALL_MIXTURE))
    batches = mixture_batches(typed)
    assert [(s.name, k["uplink"], n) for s, k, n in batches] == [
        ("fluctuating", "periodic", 2),
        ("fluctuating", "bsr", 2),
        ("vs_cubic", "periodic", 2),
        ("vs_cubic", "bsr", 2),
    ]
    venv = make_base_vec_env(typed, seed=40)
    assert venv.num_envs == 8
    concat = venv.venv.venv  # FeatureVecEnv -> VecMonitor -> ConcatVecEnv
    assert isinstance(concat, ConcatVecEnv)
    obs = concat.reset()
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, size=(300, 8, 1)).astype(np.float32)
    rewards = []
    for a in actions:  # 300 steps: several episodes of 50 steps, reset inside the step
        obs, reward, done, infos = concat.step(a)
        rewards.append(reward)
    assert np.isfinite(np.array(rewards)).all()
    # Batch k holds cells 2k, 2k+1, seeded 40 + 2k + i: the same trajectory as that batch alone.
    from envs.fastsim.params import FastSimParams

    spec, knobs, _ = batches[3]
    alone = make_fast_vec_env(
        spec, 2, seed=46, sb3=True, params=FastSimParams.from_spec(spec, **knobs)
    )
    alone.reset()
    for a in actions:
        obs_alone, reward_alone, _, _ = alone.step(a[6:8])
    np.testing.assert_array_equal(obs_alone, obs[6:8])
    # The uplink model changes the trajectory: the two variants of one scenario differ.
    assert not np.array_equal(np.array(rewards)[:, 4:6], np.array(rewards)[:, 6:8])


@pytest.mark.skipif(not traces_dir().is_dir(), reason=f"no shared traces at {traces_dir()}")
def test_main_job_mixture_builds_and_steps():
    typed = validate_train(_compose(["experiment=default"]))
    venv = make_base_vec_env(typed, seed=1)
    n = sum(e.n_envs for e in typed.mixture.scenarios) * len(model_variants(typed.mixture.variants))
    assert venv.num_envs == n
    venv.reset()
    for _ in range(200):
        obs, reward, _, _ = venv.step(np.zeros((n, 1), dtype=np.float32))
    assert obs.shape == (n, venv.observation_space.shape[0]) and np.isfinite(reward).all()
    venv.close()


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ("mixture.scenarios=[{scenario:nope}]", r"mixture.scenarios\[0\].scenario='nope'"),
        ("mixture.scenarios=[{scenario:vs_cubic,n_envs:0}]", r"mixture.scenarios\[0\].n_envs"),
        (
            "mixture.scenarios=[{scenario:vs_cubic,overrides:{sim_time_s:-1}}]",
            r"mixture.scenarios\[0\].overrides: .*sim_time_s",
        ),
        ("mixture.scenarios=[{scenario:multi_agent2}]", r"mixture.scenarios\[0\].*agent flows"),
        ("eval_scenarios=[{scenario:nope}]", r"eval_scenarios\[0\].scenario='nope'"),
        ("eval.scenarios=[{scenario:vs_cubic,overrides:{num_uez:2}}]", r"eval.scenarios\[0\]"),
        ("backend=ns3", "mixture.scenarios needs backend=fast"),
        ("mixture.scenarios=[]", "mixture.variants needs mixture.scenarios"),
    ],
)
def test_bad_mixture_values_fail_naming_the_field(override, field):
    with pytest.raises(SpecError, match=field):
        validate_train(_compose([*SMALL_MIXTURE, override]))


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ("mixture.variants=[{uplnk:bsr}]", r"mixture.variants\[0\].uplnk is not a fast-model"),
        ("mixture.variants=[{},{uplink:sideways}]", r"mixture.variants\[1\] \(uplink='sideways'\)"),
        ("mixture.variants=[{harq_bler:2.0}]", r"variants\[0\].*fastsim.harq_bler=2.0"),
    ],
)
def test_bad_fast_model_variants_fail_before_training(override, field, tmp_path):
    cfg = _compose([*SMALL_MIXTURE, override, f"run_dir={tmp_path / 'run'}"])
    with pytest.raises(SpecError, match=field):
        train(cfg)
    assert not (tmp_path / "run").exists()


def test_a_typo_in_a_mixture_entry_is_a_hydra_error_naming_the_key():
    with pytest.raises(Exception, match="n_env"):
        _compose([*SMALL_MIXTURE, "mixture.scenarios=[{scenario:vs_cubic,n_env:2}]"])
