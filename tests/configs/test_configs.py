import os
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec, SpecError
from cellgym.vocab import ALGORITHMS
from configs.schema import TrainConfig, register_configs, to_dict, validate_train

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
register_configs()


def _compose(overrides):
    with initialize_config_dir(config_dir=os.fspath(CONFIGS), version_base="1.3"):
        return compose("evaluate", overrides=["out_dir=/tmp/x", *overrides])


@pytest.mark.parametrize("scenario", sorted(p.stem for p in (CONFIGS / "scenario").glob("*.yaml")))
def test_every_scenario_option_builds(scenario):
    cfg = _compose([f"scenario={scenario}"])
    spec = ScenarioSpec.from_config(cfg.scenario)
    assert spec.name == scenario
    assert spec.to_ns3_args(1)


def test_overrides_reach_the_spec():
    cfg = _compose(
        ["scenario.num_ues=3", "scenario.channel.distances_m=[100,200,300]", "reward.w_delay=2"]
    )
    assert ScenarioSpec.from_config(cfg.scenario).num_ues == 3
    assert RewardSpec(**to_dict(cfg.reward)).w_delay == 2


def test_typo_fails_with_the_field_name():
    with pytest.raises(Exception, match="num_uez"):
        _compose(["scenario.num_uez=3"])


def test_wrong_type_fails_with_the_field_name():
    with pytest.raises(Exception, match="rbs"):
        _compose(["scenario.cell.rbs=many"])


def test_out_of_range_fails_with_the_field_name():
    cfg = _compose(["scenario.cell.rbs=42"])
    with pytest.raises(SpecError, match="scenario.cell.rbs=42"):
        ScenarioSpec.from_config(cfg.scenario)


@pytest.mark.parametrize("agent", sorted(p.stem for p in (CONFIGS / "agent").glob("*.yaml")))
def test_every_agent_option_composes_into_the_train_config(agent):
    with initialize_config_dir(config_dir=os.fspath(CONFIGS), version_base="1.3"):
        cfg = compose("train", overrides=["run_dir=/tmp/x", f"agent={agent}"])
    assert cfg.agent.name == agent
    assert cfg.agent.algo in ALGORITHMS
    assert validate_train(cfg).agent.name == agent
    assert ScenarioSpec.from_config(cfg.scenario).agent_flows == [0]


def test_train_config_rejects_a_wrong_type():
    with initialize_config_dir(config_dir=os.fspath(CONFIGS), version_base="1.3"):
        with pytest.raises(Exception, match="total_timesteps"):
            compose("train", overrides=["run_dir=/tmp/x", "total_timesteps=lots"])


def _train_cfg(overrides):
    with initialize_config_dir(config_dir=os.fspath(CONFIGS), version_base="1.3"):
        return compose("train", overrides=["run_dir=/tmp/x", *overrides])


def _options(group):
    return sorted(p.stem for p in (CONFIGS / group).glob("*.yaml"))


@pytest.mark.parametrize(
    "override",
    [f"{g}={o}" for g in ("backend", "logger", "reward", "experiment") for o in _options(g)],
)
def test_every_train_group_option_composes_and_validates(override):
    typed = validate_train(_train_cfg([override]))
    assert isinstance(typed, TrainConfig)
    group, option = override.split("=")
    if group in ("backend", "logger"):
        assert getattr(typed, group).name == option


def test_default_experiment_is_ppo_on_a_fast_mixture_evaluated_on_ns3_on_held_out_data():
    typed = validate_train(_train_cfg(["experiment=default"]))
    assert (typed.agent.algo, typed.backend.name) == ("PPO", "fast")
    trained = [s.name for s in typed.training_scenarios()]
    assert {"fluctuating", "vs_cubic", "three_ues", "traces/steps"} <= set(trained)
    assert any(s.num_ues > 1 for s in typed.training_scenarios())
    assert typed.mixture.variants == [{"uplink": "periodic"}, {"uplink": "bsr"}]
    assert typed.eval_backend == "ns3"
    assert typed.eval_baselines == ["xrc", "xrc_policy", "cubic", "bbr"]
    # Held out: every final evaluation seed, and some traces.
    assert not set(typed.eval_seeds) & set(typed.eval.seeds)
    final = {s.name for s in typed.final_scenarios()}
    traces = {s.channel.trace for s in typed.training_scenarios() if s.channel.trace}
    held_out = [
        s for s in typed.final_scenarios() if s.channel.trace and s.channel.trace not in traces
    ]
    assert len(held_out) >= 2 and {"fluctuating", "vs_cubic"} <= final


@pytest.mark.parametrize(
    ("preset", "weights"),
    [
        # Zeus, section 6: RT = 0.4 Delay + 0.3 Inter + 0.2 Thpt + 0.1 Intra;
        # Bulk = 0.75 Thpt + 0.05 Delay + 0.15 Intra + 0.05 Inter;
        # Mixed = 0.2 Thpt + 0.2 Delay + 0.3 Intra + 0.3 Inter. One Jain term: Intra + Inter.
        ("realtime", (0.2, 0.4, 0.4)),
        ("bulk", (0.75, 0.05, 0.2)),
        ("mixed", (0.2, 0.2, 0.6)),
    ],
)
def test_reward_presets_carry_the_zeus_weights(preset, weights):
    r = validate_train(_train_cfg([f"reward={preset}"])).reward
    assert (r.w_utilization, r.w_delay, r.w_fairness) == pytest.approx(weights)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("backend.n_env=3", "n_env"),
        ("logger.projekt=x", "projekt"),
        ("eval.frequency=10", "frequency"),
        ("agent.net_arc=[8]", "net_arc"),
        ("totl_timesteps=10", "totl_timesteps"),
        ("backend.n_envs=two", "n_envs"),
        ("progress_bar=maybe", "progress_bar"),
    ],
)
def test_train_typo_or_wrong_type_fails_at_composition_naming_the_field(override, message):
    with pytest.raises(Exception, match=message):
        _train_cfg([override])


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("backend.n_envs=0", r"backend.n_envs=0 is out of range: allowed \[1, inf[\])]"),
        ("backend.name=gpu", "backend.name='gpu' is not allowed: choose one of ns3, fast"),
        ("logger.name=mlflow", "logger.name='mlflow' is not allowed"),
        ("logger.mode=sometimes", "logger.mode='sometimes' is not allowed"),
        ("agent.algo=DQN", "agent.algo='DQN' is not allowed"),
        ("agent.net_arch=[0]", r"agent.net_arch\[0\]=0 is out of range"),
        ("eval.freq=-5", r"eval.freq=-5 is out of range: allowed \[0, inf[\])]"),
        ("eval.backend=gpu", "eval.backend='gpu' is not allowed"),
        ("total_timesteps=0", r"total_timesteps=0 is out of range: allowed \[1, inf[\])]"),
        ("max_change=1", r"max_change=1.0 is out of range: allowed \(1, 100\]"),
        ("features=pixels", "features='pixels' is not allowed"),
        ("eval_backend=gpu", "eval_backend='gpu' is not allowed"),
        ("final_model=first", "final_model='first' is not allowed"),
        ("timeout_s=0", r"timeout_s=0.0 is out of range: allowed \(0, inf\)"),
        ("seed=-1", r"seed=-1 is out of range"),
        ("eval_seeds=[]", "eval_seeds is empty"),
        ("reward.w_delay=-1", r"reward.w_delay=-1.0 is out of range: allowed \[0, inf\)"),
        ("scenario.cell.rbs=42", "scenario.cell.rbs=42 is not allowed"),
        ("eval_seeds=[-1]", r"eval_seeds\[0\]=-1 is out of range: allowed \[0, 4294967295\]"),
        ("eval.seeds=[1,-2]", r"eval.seeds\[1\]=-2 is out of range"),
        ("+scenario.foo=1", "scenario.foo is not an option of scenario: allowed ack_loss, active"),
        ("+agent.n_stepz=8", "agent.n_stepz is not an option of agent: allowed algo"),
        ("+scenario.cell.numerlogy=1", "scenario.cell.numerlogy is not an option"),
        ("+scenario.flows.0.colour=1", r"scenario.flows\[0\].colour is not an option"),
    ],
)
def test_train_out_of_range_value_fails_at_start_naming_the_field(override, message, tmp_path):
    from workflows.train import train

    run_dir = tmp_path / "run"
    cfg = _train_cfg([override, f"run_dir={run_dir}"])
    with pytest.raises(SpecError, match=message):  # the one error type (a ValueError)
        train(cfg)
    assert not run_dir.exists()  # nothing started
