"""The Zeus reward presets: validated like the others, computed by the env (fast backend, short)."""

from __future__ import annotations

import numpy as np
import pytest
from omegaconf import OmegaConf

from cellgym.fields import FLOW, FLOW_FIELDS, UE, UE_FIELDS
from cellgym.paths import CONFIGS
from cellgym.reward import RewardSpec, fairness_groups, reward_terms, reward_terms_batch
from cellgym.vocab import SpecError
from envs.fastsim.vector_env import make_fast_vec_env
from envs.lte_cell import LteCellEnv

SCENARIO = {"sim_time_s": 0.6, "flows": [{"cca": "cubic"}, {"cca": "agent"}]}


def _preset(name: str) -> RewardSpec:
    data = OmegaConf.to_container(OmegaConf.load(CONFIGS / "reward" / f"{name}.yaml"))
    assert isinstance(data, dict)
    data.pop("defaults", None)
    return RewardSpec.from_config(data)


@pytest.mark.parametrize(
    ("preset", "weights"),
    [
        # (Thpt, Delay^-1, IntraFair, InterFair), section 6.6.
        ("zeus_realtime", (0.2, 0.4, 0.1, 0.3)),
        ("zeus_bulk", (0.75, 0.05, 0.15, 0.05)),
        ("zeus_mixed", (0.2, 0.2, 0.3, 0.3)),
    ],
)
def test_zeus_presets_carry_the_papers_four_weights(preset, weights):
    r = _preset(preset)
    assert r.form == "zeus" and (r.w_delay, r.w_fairness) == (0.0, 0.0)
    got = (r.w_utilization, r.w_inverse_delay, r.w_intra_fairness, r.w_inter_fairness)
    assert got == pytest.approx(weights)


def test_reward_spec_names_weights_of_the_other_form():
    with pytest.raises(SpecError, match=r"reward.w_delay=0.5 does not apply to form='zeus'"):
        RewardSpec(form="zeus", w_fairness=0.0)
    with pytest.raises(SpecError, match=r"reward.w_inter_fairness=0.3 does not apply to form="):
        RewardSpec(w_inter_fairness=0.3)
    with pytest.raises(SpecError, match=r"reward.form='score' is not allowed"):
        RewardSpec(form="score")


def test_zeus_terms_of_a_hand_made_step():
    # Flows cubic, agent (controlled), agent: 1000, 1000, 3000 bytes in 20 ms, all active.
    flows = np.zeros((3, len(FLOW_FIELDS)))
    flows[:, FLOW["active"]] = 1
    flows[:, FLOW["rx_bytes"]] = [1000, 1000, 3000]
    flows[1, FLOW["rtt_mean_ms"]], flows[1, FLOW["rtt_min_ms"]] = 50.0, 40.0
    flows[1, FLOW["rtt_samples"]] = 2
    ues = np.zeros((1, len(UE_FIELDS)))
    ues[0, UE["capacity_mbps"]] = 4.0  # 10,000 bytes in 20 ms; 5000 delivered -> 0.5
    ues[0, UE["hol_ms"]] = 5.0
    groups = fairness_groups(["cubic", "agent", "agent"], 1)  # [CUBIC, SAME, SAME]
    spec = _preset("zeus_mixed")
    t = reward_terms(flows, ues, np.zeros(3, int), 1, 0.02, spec, groups)
    # delay = max(HoL 5, 50 - 40) = 10 ms -> Delay^-1 = 40 / 50 = 0.8; intra over the agents
    # [1000, 3000] = 16e6 / (2 * 10e6) = 0.8; inter over agent and CUBIC [1000, 1000] = 1.
    assert (t["utilization"], t["inverse_delay"]) == pytest.approx((0.5, 0.8))
    assert (t["intra_jain"], t["inter_jain"]) == pytest.approx((0.8, 1.0))
    # 0.2 * 0.5 + 0.2 * 0.8 + 0.3 * 0.8 + 0.3 * 1.0 = 0.8
    assert t["reward"] == pytest.approx(0.8)
    batch = reward_terms_batch(flows[None], ues[None], np.zeros(3, int), 1, 0.02, spec, groups)
    assert {k: float(v[0]) for k, v in batch.items()} == pytest.approx(t)
    with pytest.raises(SpecError, match="needs each flow's fairness group"):
        reward_terms(flows, ues, np.zeros(3, int), 1, 0.02, spec)


def test_the_fast_env_computes_the_zeus_reward_on_both_paths():
    spec = _preset("zeus_realtime")
    runs = []
    for fused in (True, False):
        env = LteCellEnv(scenario=SCENARIO, reward=spec, backend="fast")
        env.fused_step = fused
        env.reset(seed=2)
        rows = []
        for _ in range(20):
            _, reward, terminated, _, info = env.step(np.array([0.5]))
            rows.append([reward, *(info[k] for k in ("inverse_delay", "intra_jain", "inter_jain"))])
            w = (0.2 * info["utilization"], 0.4 * info["inverse_delay"])
            expected = w[0] + w[1] + 0.1 * info["intra_jain"] + 0.3 * info["inter_jain"]
            assert reward == pytest.approx(expected, abs=1e-12)
            if terminated:
                break
        env.close()
        runs.append(np.array(rows))
    assert np.array_equal(runs[0], runs[1])  # compiled step == Python reference path
    assert runs[0][:, 3].min() < 1.0  # the CUBIC flow makes inter-fairness informative


def test_the_fast_vector_env_computes_the_zeus_reward():
    spec = _preset("zeus_bulk")
    venv = make_fast_vec_env(SCENARIO, num_envs=2, seed=1, reward=spec, include_raw=True)
    venv.reset(seed=1)
    groups = fairness_groups(["cubic", "agent"], 1)
    for _ in range(10):
        _, reward, _, _, info = venv.step(np.zeros((2, 1)))
    for i in range(2):
        single = reward_terms(info["flows"][i], info["ues"][i], venv.flow_ue, 1, 0.02, spec, groups)
        assert reward[i] == pytest.approx(single["reward"], abs=1e-12)
        assert info["inter_jain"][i] == pytest.approx(single["inter_jain"], abs=1e-12)
