"""The MAC per slot (``envs/fastsim/mac.py``): HARQ processes, retransmissions, the slot length."""

from __future__ import annotations

import numpy as np
import pytest

from cellgym.fields import FLOW, UE
from cellgym.scenario import ScenarioSpec
from envs.fastsim import FastCellBatch, FastSimParams
from envs.fastsim.mac import _harq_due, _harq_new_tb
from envs.fastsim.params import P_HARQ_BLER_RETX, P_HARQ_MAX_TX, P_HARQ_RTT_SLOTS, P_LEN
from envs.fastsim.state import U_HARQ, U_LEN, U_RBS_TTI, U_RETX_TTI


def harq_params(rtt: int, max_tx: int, bler_retx: float) -> np.ndarray:
    p = np.zeros(P_LEN)
    p[P_HARQ_RTT_SLOTS] = rtt
    p[P_HARQ_MAX_TX] = max_tx
    p[P_HARQ_BLER_RETX] = bler_retx
    return p


def test_a_failed_block_is_retransmitted_one_harq_rtt_later():
    p = harq_params(rtt=4, max_tx=4, bler_retx=0.0)
    ue = np.zeros((1, 1, U_LEN))
    rng = np.array([7], dtype=np.uint64)
    rel, lost = _harq_new_tb(0, 0, 100, 30.0, p, ue, rng)
    assert (rel, lost) == (104, False)  # decoded with the first retransmission
    assert ue[0, 0, U_HARQ] == 1
    assert _harq_due(0, 0, 103, 51.0, p, ue) == 0.0  # not yet due
    assert _harq_due(0, 0, 104, 20.0, p, ue) == 0.0  # due, but its 30 RBs are not free
    assert _harq_due(0, 0, 104, 51.0, p, ue) == 30.0
    assert ue[0, 0, U_RBS_TTI] == 30 and ue[0, 0, U_RETX_TTI] == 1
    assert ue[0, 0, U_HARQ] == 0  # the process is free again
    assert _harq_due(0, 0, 108, 51.0, p, ue) == 0.0


def test_a_block_failing_every_transmission_is_lost():
    p = harq_params(rtt=3, max_tx=4, bler_retx=1.0 - 1e-12)
    ue = np.zeros((1, 1, U_LEN))
    rng = np.array([7], dtype=np.uint64)
    rel, lost = _harq_new_tb(0, 0, 10, 12.0, p, ue, rng)
    assert lost and rel == 10 + 3 * 3  # three retransmissions, then given up
    taken = [_harq_due(0, 0, s, 51.0, p, ue) for s in range(10, 23)]
    assert [s for s, r in zip(range(10, 23), taken, strict=True) if r] == [13, 16, 19]
    p1 = harq_params(rtt=3, max_tx=1, bler_retx=0.0)
    rel, lost = _harq_new_tb(0, 0, 10, 12.0, p1, np.zeros((1, 1, U_LEN)), rng)
    assert lost and rel == 10  # no HARQ: the block is lost at once


def nr_run(seconds: float = 1.0, cca: str = "agent", seed: int = 1, cell=None, **knobs):
    """A lone UE at 50 m in LOS: per step capacity, tx, RTT, losses (agent: a 1 MB window)."""
    knobs.setdefault("nr_shadowing", False)
    spec = ScenarioSpec.from_config(
        {
            "sim_time_s": seconds,
            "rlc_buffer_pkts": 2000,
            "cell": {"type": "nr", "los": "los", **(cell or {})},
            "channel": {"distances_m": [50.0]},
            "flows": [{"cca": cca}],
        }
    )
    params = FastSimParams.from_spec(spec, **knobs)
    batch = FastCellBatch(params, 1)
    batch.reset(np.array([seed]))
    rows = []
    while not batch.done[0]:
        batch.step(np.array([[1e6, 0.0]]) if cca == "agent" else None)
        f, u = batch.flows[0, 0], batch.ues[0, 0]
        rows.append((u[UE["capacity_mbps"]], u[UE["tx_mbps"]], f[FLOW["rtt_mean_ms"]],
                     f[FLOW["retx_segments"]], u[UE["rlc_drops"]]))  # fmt: skip
    return params, np.array(rows)


def test_slot_length_sets_the_transport_blocks_per_ms():
    for mu in (0, 1, 2):
        params, rows = nr_run(0.5, cell={"numerology": mu}, nr_bler_target=0.0)
        tb = params.tbs_table()[-1, params.num_prbs]  # top MCS at 50 m
        assert rows[-1, 0] == pytest.approx(tb * 8 * 2**mu / 1000.0, rel=1e-9)


def test_harq_retransmissions_take_slots_and_delay():
    _, clean = nr_run(nr_bler_target=0.0)
    _, harq = nr_run(nr_bler_target=0.3, nr_harq_rtt_slots=8)
    c0, c1 = clean[20:, 0].mean(), harq[20:, 0].mean()
    # Each failure takes one more slot (retransmissions fail with 0.01): 1 / 1.3 of the slots
    # carry new data.
    assert c1 / c0 == pytest.approx(1 / 1.3, abs=0.04)
    assert harq[20:, 2].mean() > clean[20:, 2].mean() + 1.0  # decoding waits 4 ms
    assert harq[:, 3].sum() == 0  # every block decoded: no TCP loss


def test_blocks_lost_after_the_last_transmission_reach_tcp_as_losses():
    _, rows = nr_run(cca="cubic", nr_bler_target=0.05, harq_max_tx=1)
    assert rows[:, 3].sum() > 0  # retransmitted segments
    assert rows[:, 4].sum() == 0  # none dropped at the RLC buffer
