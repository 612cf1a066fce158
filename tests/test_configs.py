import os
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec, SpecError
from configs.schema import register_configs, to_dict

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
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
    cfg = _compose(["scenario.num_ues=3", "scenario.distances_m=[100,200,300]", "reward.w_delay=2"])
    assert ScenarioSpec.from_config(cfg.scenario).num_ues == 3
    assert RewardSpec(**to_dict(cfg.reward)).w_delay == 2


def test_typo_fails_with_the_field_name():
    with pytest.raises(Exception, match="num_uez"):
        _compose(["scenario.num_uez=3"])


def test_wrong_type_fails_with_the_field_name():
    with pytest.raises(Exception, match="rbs"):
        _compose(["scenario.rbs=many"])


def test_out_of_range_fails_with_the_field_name():
    cfg = _compose(["scenario.rbs=42"])
    with pytest.raises(SpecError, match="scenario.rbs=42"):
        ScenarioSpec.from_config(cfg.scenario)


@pytest.mark.parametrize("agent", sorted(p.stem for p in (CONFIGS / "agent").glob("*.yaml")))
def test_every_agent_option_composes_into_the_train_config(agent):
    with initialize_config_dir(config_dir=os.fspath(CONFIGS), version_base="1.3"):
        cfg = compose("train", overrides=["run_dir=/tmp/x", f"agent={agent}"])
    assert cfg.agent.name == agent
    assert cfg.agent.algo in ("PPO", "A2C", "SAC", "TD3")
    assert ScenarioSpec.from_config(cfg.scenario).agent_flows == [0]


def test_train_config_rejects_a_wrong_type():
    with initialize_config_dir(config_dir=os.fspath(CONFIGS), version_base="1.3"):
        with pytest.raises(Exception, match="total_timesteps"):
            compose("train", overrides=["run_dir=/tmp/x", "total_timesteps=lots"])
