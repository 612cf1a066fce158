"""The PettingZoo environment of several learned flows, on both backends."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from cellgym.fields import FLOW_FIELDS, UE_FIELDS
from cellgym.vocab import SpecError
from envs.lte_cell import LteCellEnv
from envs.multi_flow import MultiFlowCellEnv, parallel_env

#: Two agents on two UEs beside a CUBIC flow; the second agent runs from 0.5 s to 1.5 s.
JOIN_LEAVE = {
    "name": "join_leave",
    "num_ues": 2,
    "sim_time_s": 2.0,
    "flows": [
        {"ue": 0, "cca": "agent"},
        {"ue": 1, "cca": "agent", "start_s": 0.5, "stop_s": 1.5},
        {"ue": 1, "cca": "cubic"},
    ],
}
TWO = {
    "name": "two_agents",
    "num_ues": 2,
    "sim_time_s": 1.0,
    "flows": [{"ue": 0, "cca": "agent"}, {"ue": 1, "cca": "agent"}],
}


def _api_test(env: MultiFlowCellEnv) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parallel_api_test(env, num_cycles=1000)
    # PettingZoo warns (rather than fails) when dicts miss live agents or name dead ones.
    assert [str(w.message) for w in caught] == []


def _rollout(env: MultiFlowCellEnv, seed: int, steps: int = 1000) -> list[tuple]:
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=seed)
    out = [(0.0, {a: o.tolist() for a, o in obs.items()}, {})]
    for _ in range(steps):
        if not env.agents:
            break
        acts = {a: rng.uniform(-1, 1, 1) for a in env.agents}
        obs, rew, _, _, info = env.step(acts)
        t = next(iter(info.values()))["t"]
        out.append((t, {a: o.tolist() for a, o in obs.items()}, rew))
    return out


def test_parallel_api_fast_with_agents_joining_and_leaving():
    _api_test(MultiFlowCellEnv(JOIN_LEAVE, backend="fast"))


def test_agents_join_at_start_and_leave_at_stop():
    env = parallel_env(scenario=JOIN_LEAVE, backend="fast")
    obs, _ = env.reset(seed=3)
    assert env.possible_agents == ["flow_0", "flow_1"]
    assert list(obs) == ["flow_0"] and env.agents == ["flow_0"]
    events = {}
    while env.agents:
        obs, _, term, _, info = env.step({a: np.zeros(1) for a in env.agents})
        t = round(next(iter(info.values()))["t"], 3)
        events[t] = (sorted(obs), {a: term[a] for a in term})
    # Flow 1 starts at 0.5 s: it joins (an observation, no reward yet) in the step ending then.
    assert events[0.48][0] == ["flow_0"]
    assert events[0.5][0] == ["flow_0", "flow_1"]
    # It stops at 1.5 s: terminated in that step, absent afterwards, while flow 0 runs on.
    assert events[1.5][1] == {"flow_0": False, "flow_1": True}
    assert events[1.52][0] == ["flow_0"]
    # The episode's end terminates everyone.
    assert events[2.0][1] == {"flow_0": True}
    assert env.agents == []


def test_idle_time_is_skipped_until_an_agent_flow_starts():
    sc = dict(TWO, flows=[{"ue": 0, "cca": "agent", "start_s": 0.3}, {"ue": 1, "cca": "cubic"}])
    env = MultiFlowCellEnv(sc, backend="fast")
    obs, info = env.reset(seed=1)
    assert env.agents == ["flow_0"] and info["flow_0"]["t"] == pytest.approx(0.3)


def test_one_agent_matches_the_single_flow_environment():
    sc = {"name": "one", "sim_time_s": 0.5, "flows": [{"cca": "agent"}, {"cca": "cubic"}]}
    multi = MultiFlowCellEnv(sc, backend="fast", action_mode="rate")
    single = LteCellEnv(sc, backend="fast", action_mode="rate")
    single.fused_step = False
    obs_m, _ = multi.reset(seed=5)
    obs_s, _ = single.reset(seed=5)
    np.testing.assert_array_equal(obs_m["flow_0"], obs_s)
    rng = np.random.default_rng(1)
    while multi.agents:
        a = rng.uniform(-1, 1, 1)
        obs_m, rew_m, term_m, _, _ = multi.step({"flow_0": a})
        obs_s, rew_s, term_s, _, _ = single.step(a)
        np.testing.assert_array_equal(obs_m["flow_0"], obs_s)
        assert rew_m["flow_0"] == rew_s and term_m["flow_0"] == term_s


def test_shared_fairness_adds_the_agents_jain_index():
    plain = MultiFlowCellEnv(TWO, backend="fast")
    shared = MultiFlowCellEnv(TWO, backend="fast", shared_fairness=0.5)
    plain.reset(seed=2)
    shared.reset(seed=2)
    for _ in range(20):
        acts = {"flow_0": np.array([0.3]), "flow_1": np.array([-0.2])}
        _, r_p, _, _, i_p = plain.step(acts)
        _, r_s, _, _, _ = shared.step(acts)
        for a in acts:
            assert r_s[a] == pytest.approx(r_p[a] + 0.5 * i_p[a]["intra_jain"])
    assert i_p["flow_0"]["intra_jain"] < 1.0  # the two agents' shares differ


def test_state_is_the_cells_raw_view():
    env = MultiFlowCellEnv(TWO, backend="fast")
    env.reset(seed=0)
    env.step({a: np.zeros(1) for a in env.agents})
    state = env.state()
    assert env.state_space.shape == state.shape == (2 * len(FLOW_FIELDS) + 2 * len(UE_FIELDS),)
    assert env.state_space.contains(state)


def test_same_seed_same_trajectory_fast():
    a = _rollout(MultiFlowCellEnv(JOIN_LEAVE, backend="fast"), seed=7)
    b = _rollout(MultiFlowCellEnv(JOIN_LEAVE, backend="fast"), seed=7)
    c = _rollout(MultiFlowCellEnv(JOIN_LEAVE, backend="fast"), seed=8)
    assert a == b and a != c


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"shared_fairness": -1.0}, "shared_fairness"),
        ({"shared_fairness": "1"}, "shared_fairness"),
        ({"action_mode": "window"}, "action_mode"),
        ({"scenario": {"flows": [{"cca": "cubic"}]}}, "scenario.flows"),
        ({"scenario": dict(TWO, num_ues="2")}, "num_ues"),
    ],
)
def test_bad_arguments_name_their_field(kwargs, field):
    with pytest.raises((SpecError, ValueError, TypeError), match=field):
        MultiFlowCellEnv(**{"scenario": TWO, "backend": "fast", **kwargs})


def test_actions_for_unknown_or_dead_agents_are_refused():
    env = MultiFlowCellEnv(JOIN_LEAVE, backend="fast")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="flow_1"):
        env.step({"flow_1": np.zeros(1)})  # not started yet
    with pytest.raises(ValueError, match="not finite"):
        env.step({"flow_0": np.array([np.nan])})
    with pytest.raises(ValueError, match="flow_9"):
        env.observation_space("flow_9")


@pytest.mark.ns3
def test_parallel_api_and_determinism_ns3():
    sc = dict(
        JOIN_LEAVE,
        sim_time_s=1.0,
        flows=[
            {"ue": 0, "cca": "agent"},
            {"ue": 1, "cca": "agent", "start_s": 0.3, "stop_s": 0.7},
        ],
    )
    env = MultiFlowCellEnv(sc, backend="ns3")
    try:
        _api_test(env)
        a = _rollout(env, seed=4)
        b = _rollout(env, seed=4)
    finally:
        env.close()
    assert a == b
    joined = [t for t, obs, _ in a if "flow_1" in obs]
    assert min(joined) == pytest.approx(0.3) and max(joined) == pytest.approx(0.7)


@pytest.mark.parametrize("action_mode", ["cwnd", "rate"])
def test_the_batched_fast_vector_equals_the_environment_entry_by_entry(action_mode):
    from envs.fastsim.multi_vector_env import FastMultiAgentVecEnv

    sc = dict(
        JOIN_LEAVE,
        sim_time_s=1.0,
        flows=[
            {"ue": 0, "cca": "agent"},
            {"ue": 1, "cca": "agent", "start_s": 0.2, "stop_s": 0.6},
            {"ue": 1, "cca": "cubic"},
        ],
    )
    kw = {"action_mode": action_mode, "shared_fairness": 0.3}
    venv = FastMultiAgentVecEnv(sc, num_envs=3, **kw)
    venv.seed(11)
    obs = venv.reset()
    envs = [MultiFlowCellEnv(sc, backend="fast", keep_agents=True, **kw) for _ in range(3)]
    ref = [e.reset(seed=11 + b)[0] for b, e in enumerate(envs)]
    names = envs[0].possible_agents
    rng = np.random.default_rng(3)
    for step in range(60):  # past the end of the 50-step episode: the vector resets itself
        for b in range(3):
            for k, name in enumerate(names):
                np.testing.assert_array_equal(obs[2 * b + k], ref[b][name], err_msg=f"{step}")
        actions = rng.uniform(-1, 1, (6, 1)).astype(np.float32)
        obs, rew, done, infos = venv.step(actions)
        for b, env in enumerate(envs):
            acts = {name: actions[2 * b + k] for k, name in enumerate(names)}
            o, r, term, _, _ = env.step(acts)
            for k, name in enumerate(names):
                assert rew[2 * b + k] == pytest.approx(r[name], rel=1e-6, abs=1e-9)
                assert done[2 * b + k] == term[name]
            if term[names[0]]:
                for k, name in enumerate(names):
                    np.testing.assert_array_equal(infos[2 * b + k]["terminal_observation"], o[name])
                o, _ = env.reset()
            ref[b] = o
