"""The order in which one TTI's segments enter the eNB's RLC buffer (``rlc._enb_arrivals``).

An unpaced sender's fast retransmission leaves the server at the ACK's instant, before the new
data that ACK releases over the rest of the TTI; a paced sender's new segments of the TTI left at
their pacing instants, spread over it, while ns-3's ``TcpSocketBase`` sends the retransmission
unpaced at the instant of the ACK that triggers it, which the fast model places after them. Over
nine ``fluctuating_bbr`` seeds the retransmission first gave 98 recovery episodes against
ns-3's 70 (70 with it last).
"""

from __future__ import annotations

import numpy as np
import pytest

from cellgym.scenario import load_scenario
from envs.fastsim import FastCellBatch, FastSimParams
from envs.fastsim.rlc import _enb_arrivals
from envs.fastsim.state import (
    I_RTX_HEAD,
    I_RTX_LEN,
    R_RETX,
    R_SEQ,
    UI_RLC_HEAD,
    UI_RLC_LEN,
    X_PACING,
)
from evaluation.rollouts import with_native_agent


def _arrival_order(pacing: float) -> list[tuple[int, int]]:
    """(seq, retransmission) of what enters the RLC in one TTI: 4 new segments, 1 retransmission."""
    spec = with_native_agent(load_scenario("calibration/fluctuating_bbr"), "bbr")
    cells = FastCellBatch(FastSimParams.from_spec(spec), 1)
    cells.reset(np.array([1]))
    s = cells.state
    p, fc, bnp = cells.kernel_args[0], cells.kernel_args[1], cells.kernel_args[5]
    t = 40
    slot = t & (s.dl.shape[2] - 1)
    s.dl[0, 0, slot] = (100, 104, t - 20, 0)  # segments 100-103, none before the retransmission
    s.rtx[0, 0, 0] = (50, t, t - 20)  # segment 50 again, due at t
    s.fi[0, 0, I_RTX_HEAD], s.fi[0, 0, I_RTX_LEN] = 0, 1
    s.fx[0, 0, X_PACING] = pacing
    assert s.ui[0, 0, UI_RLC_LEN] == 0
    _enb_arrivals.py_func(
        0, t, p, fc, s.fi, s.fx, s.ue, s.ui, s.rlc, s.dl, s.rtx, s.lost, bnp, s.bqs, s.bq, s.rng
    )
    head, n = int(s.ui[0, 0, UI_RLC_HEAD]), int(s.ui[0, 0, UI_RLC_LEN])
    q = s.rlc.shape[2]
    return [
        (int(s.rlc[0, 0, (head + i) % q, R_SEQ]), int(s.rlc[0, 0, (head + i) % q, R_RETX]))
        for i in range(n)
    ]


@pytest.mark.parametrize(
    ("pacing", "order"),
    [
        (0.0, [(50, 1), (100, 0), (101, 0), (102, 0), (103, 0)]),
        (1500.0, [(100, 0), (101, 0), (102, 0), (103, 0), (50, 1)]),
    ],
    ids=["unpaced: retransmission first", "paced: retransmission after the new segments"],
)
def test_a_retransmission_enters_the_rlc_at_its_senders_instant(pacing, order):
    assert _arrival_order(pacing) == order
