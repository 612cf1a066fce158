"""The eNB's MAC: the TTI's resource blocks to the UEs, HARQ, transport blocks.

Proportional fair (ns-3's ``PfFfMacScheduler`` gives all RBGs to the best metric when the UEs'
metrics are uniform over RBGs, as in this flat channel: one UE per TTI) or round robin. A new
transport block fails with ``harq_bler`` and its retransmission takes the UE's next allocation.
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.codes import SCHEDULER_PF
from envs.fastsim.params import P_HARQ_BLER, P_PF_TAU_TTIS, P_RBG_SIZE, P_SCHEDULER, P_USABLE_RBS
from envs.fastsim.rlc import _serve
from envs.fastsim.rng import _rand
from envs.fastsim.state import (
    CS_RR_NEXT,
    U_HARQ,
    U_LAST_MCS,
    U_MCS,
    U_NEW_TTI,
    U_PF_AVG,
    U_RBS_TTI,
    UI_RLC_LEN,
)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _mac(b, t, p, fc, fi, fx, ue, ui, rlc, lost, tbs, cs, rng):
    """Schedule the TTI's resource blocks and transmit the transport blocks."""
    nu = ue.shape[1]
    usable = int(p[P_USABLE_RBS])
    bler = p[P_HARQ_BLER]
    tau = p[P_PF_TAU_TTIS]
    for u in range(nu):
        ue[b, u, U_NEW_TTI] = 0.0
        ue[b, u, U_RBS_TTI] = 0.0
    if p[P_SCHEDULER] == SCHEDULER_PF:
        best = -1
        best_metric = -1.0
        for u in range(nu):
            if ui[b, u, UI_RLC_LEN] > 0 and ue[b, u, U_MCS] >= 0:
                rate = tbs[int(ue[b, u, U_MCS]), usable]
                metric = rate / max(ue[b, u, U_PF_AVG], 1e-9)
                if metric > best_metric:
                    best_metric = metric
                    best = u
        if best >= 0:
            ue[b, best, U_RBS_TTI] = usable
    else:
        n = 0
        for u in range(nu):
            if ui[b, u, UI_RLC_LEN] > 0 and ue[b, u, U_MCS] >= 0:
                n += 1
        if n > 0:
            g = int(p[P_RBG_SIZE])
            nrbg = usable // g
            each = nrbg // n
            rest = nrbg - each * n
            start = cs[b, CS_RR_NEXT] % nu
            given = 0
            for i in range(nu):
                u = (start + i) % nu
                if ui[b, u, UI_RLC_LEN] > 0 and ue[b, u, U_MCS] >= 0:
                    r = each + (1 if given < rest else 0)
                    given += 1
                    ue[b, u, U_RBS_TTI] = r * g
            cs[b, CS_RR_NEXT] = (start + 1) % nu
    for u in range(nu):
        rbs = int(ue[b, u, U_RBS_TTI])
        sent = 0.0
        if rbs > 0:
            mcs = int(ue[b, u, U_MCS])
            tb = tbs[mcs, rbs]
            if ue[b, u, U_HARQ] > 0:
                ue[b, u, U_HARQ] = 0.0  # this allocation carries a HARQ retransmission
            else:
                if bler > 0 and _rand(rng, b) < bler:
                    ue[b, u, U_HARQ] = 1.0
                ue[b, u, U_NEW_TTI] = tb
                ue[b, u, U_LAST_MCS] = mcs
                sent = tb
                _serve(b, u, tb, t, p, fc, fi, fx, ue, ui, rlc, lost)
        # Floored so that an idle UE's average never decays into (slow) denormal numbers.
        ue[b, u, U_PF_AVG] = max((1.0 - 1.0 / tau) * ue[b, u, U_PF_AVG] + sent / tau, 1e-6)
