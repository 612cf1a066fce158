"""Every environment argument is checked before any simulator starts, naming the argument."""

from __future__ import annotations

import pytest

from cellgym.vocab import SpecError
from envs.fastsim.vector_env import make_fast_vec_env
from envs.lte_cell import LteCellEnv

BAD = [
    ({"max_change": "2"}, "max_change='2' is a str"),
    ({"max_change": True}, "max_change=True is a bool"),
    ({"max_change": 1.0}, r"max_change=1.0 is out of range: allowed \(1, 100\]"),
    ({"action_mode": 1}, "action_mode=1 is a int"),
    ({"action_mode": "pace"}, "action_mode='pace' is not allowed: choose one of cwnd, rate"),
    ({"scenario": {"flows": [{"cca": "cubic"}]}}, "0 flows with cca='agent'"),
    ({"scenario": 7}, "scenario=7 is a int"),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD)
@pytest.mark.parametrize("backend", ["ns3", "fast"])
def test_single_env_names_the_argument(backend, kwargs, message):
    with pytest.raises(SpecError, match=message):
        LteCellEnv(backend=backend, **kwargs)


@pytest.mark.parametrize(("kwargs", "message"), BAD)
def test_vector_env_names_the_argument(kwargs, message):
    scenario = kwargs.pop("scenario", {"flows": [{"cca": "agent"}]})
    with pytest.raises(SpecError, match=message):
        make_fast_vec_env(scenario, num_envs=2, **kwargs)


def test_timeout_and_backend_are_checked():
    with pytest.raises(SpecError, match="timeout_s='5' is a str"):
        LteCellEnv(backend="fast", timeout_s="5")
    with pytest.raises(SpecError, match="backend='gpu' is not allowed: choose one of ns3, fast"):
        LteCellEnv(backend="gpu")


@pytest.mark.parametrize(
    ("reward", "message"),
    [
        ({"w_util": 1}, r"reward has unknown field\(s\) \['w_util'\]"),
        ({"w_delay": "1"}, "reward.w_delay='1' is a str"),
        ({"w_delay": -1}, r"reward.w_delay=-1 is out of range: allowed \[0, inf\)"),
        ({"delay_budget_ms": 0}, r"reward.delay_budget_ms=0 is out of range: allowed \(0, inf\)"),
        (5, "reward=5 is a int"),
    ],
)
def test_reward_fields_are_named(reward, message):
    with pytest.raises(SpecError, match=message):
        LteCellEnv(backend="fast", reward=reward)
    with pytest.raises(SpecError, match=message):
        make_fast_vec_env({"flows": [{"cca": "agent"}]}, num_envs=2, reward=reward)


@pytest.mark.parametrize(
    ("scenario", "message"),
    [
        (
            {"flows": [{"cca": "agent"}, {"cca": "vegas"}]},
            r"scenario.flows\[1\].cca='vegas' is not modelled by the fast backend",
        ),
    ],
)
def test_what_the_fast_model_lacks_fails_at_construction(scenario, message):
    """Not at the first reset(): the environment is never built around a scenario it cannot run."""
    with pytest.raises(SpecError, match=message):
        LteCellEnv(backend="fast", scenario=scenario)
    if "channel" not in scenario:
        LteCellEnv(backend="ns3", scenario=scenario).close()


@pytest.mark.parametrize("backend", ["ns3", "fast"])
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, r"scenario.bottleneck_trace='.*missing.up' is not a file"),
        ("", r"has no delivery opportunity"),
        ("0\n7\nseven\n", r"bad.up:3: 'seven' is not a timestamp"),
    ],
)
def test_trace_files_are_read_at_construction_on_both_backends(tmp_path, backend, content, message):
    # ns-3 read a bottleneck trace only at reset() (a SimulatorError there), the twin at
    # construction: both read every trace file before any simulator starts.
    path = tmp_path / ("missing.up" if content is None else "bad.up")
    if content is not None:
        path.write_text(content)
    scenario = {"flows": [{"cca": "agent"}], "bottleneck_trace": str(path)}
    with pytest.raises(SpecError, match=message):
        LteCellEnv(backend=backend, scenario=scenario)
    channel = {"source": "mahimahi", "trace": str(path)}
    if content is None:
        message = r"scenario.channel.trace='.*missing.up' is not a file"
    with pytest.raises(SpecError, match=message):
        LteCellEnv(backend=backend, scenario={"flows": [{"cca": "agent"}], "channel": channel})
