"""The base station's MAC, per slot (LTE: the 1 ms TTI): resource blocks to UEs, HARQ, TBs.

Per slot: held packets whose in-order delivery slot has come reach the receivers
(``rlc._release``); HARQ retransmissions due take their RBs first; the scheduler gives the rest to
the backlogged UEs: proportional fair (ns-3's ``PfFfMacScheduler`` gives all RBGs to the best
metric when the UEs' metrics are uniform over RBGs, as in this flat channel: one UE per slot) or
round robin (RBGs split evenly, rotating). A new transport block fails with the first-transmission
BLER (``P_HARQ_BLER``: LTE's ``harq_bler``, NR's BLER target); each failure brings a
retransmission ``P_HARQ_RTT_SLOTS`` later that fails with ``P_HARQ_BLER_RETX``, at most
``P_HARQ_MAX_TX`` transmissions in all. The number of transmissions is drawn with the first one
(the same distribution as drawing each in turn); the retransmissions occupy their slots' RBs and
carry no new data, and the block's packets reach the UE when it is decoded, in order (or are
lost when every transmission failed).
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.codes import SCHEDULER_PF
from envs.fastsim.params import (
    P_HARQ_BLER,
    P_HARQ_BLER_RETX,
    P_HARQ_MAX_TX,
    P_HARQ_RTT_SLOTS,
    P_PF_TAU_TTIS,
    P_RBG_SIZE,
    P_SCHEDULER,
    P_TRACE,
    P_USABLE_RBS,
    P_WIRED_BPMS,
)
from envs.fastsim.rlc import _release, _serve
from envs.fastsim.rng import _rand
from envs.fastsim.state import (
    CS_RR_NEXT,
    HARQ_PROCS,
    HQ_DUE,
    HQ_LEFT,
    HQ_RBS,
    U_HARQ,
    U_HQ,
    U_LAST_MCS,
    U_MCS,
    U_NEW_TTI,
    U_PF_AVG,
    U_RBS_TTI,
    U_RETX_TTI,
    UI_HELD,
    UI_RLC_LEN,
)
from envs.fastsim.trace_capacity import _trace_tb
from envs.fastsim.wired import _wired_mac


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _wants(b, u, ue, ui):
    """The UE has queued data, coverage and no retransmission in this slot."""
    queued = ui[b, u, UI_RLC_LEN] > ui[b, u, UI_HELD]
    return queued and ue[b, u, U_MCS] >= 0 and ue[b, u, U_RBS_TTI] == 0


@njit(cache=True, error_model="numpy", _nrt=False)
def _harq_due(b, u, slot, avail, p, ue):
    """A retransmission of the UE due by ``slot`` takes its RBs (if they are free): RBs taken."""
    rtt = p[P_HARQ_RTT_SLOTS]
    for h in range(HARQ_PROCS):
        c = U_HQ + 3 * h
        if ue[b, u, c + HQ_LEFT] > 0 and ue[b, u, c + HQ_DUE] <= slot:
            rbs = ue[b, u, c + HQ_RBS]
            if rbs > avail:
                return 0.0
            ue[b, u, c + HQ_LEFT] -= 1.0
            ue[b, u, c + HQ_DUE] += rtt
            if ue[b, u, c + HQ_LEFT] <= 0:
                ue[b, u, U_HARQ] -= 1.0
            ue[b, u, U_RBS_TTI] = rbs
            ue[b, u, U_RETX_TTI] = 1.0
            return rbs
    return 0.0


@njit(cache=True, error_model="numpy", _nrt=False)
def _harq_new_tb(b, u, slot, rbs, p, ue, rng):
    """Draw a new TB's transmissions; book its retransmissions. Returns (decode slot, lost)."""
    n_retx = 1
    max_retx = int(p[P_HARQ_MAX_TX]) - 1
    lost = max_retx < 1
    while not lost and _rand(rng, b) < p[P_HARQ_BLER_RETX]:
        n_retx += 1
        lost = n_retx > max_retx
    booked = min(n_retx, max_retx)
    rtt = p[P_HARQ_RTT_SLOTS]
    if booked > 0:
        for h in range(HARQ_PROCS):
            c = U_HQ + 3 * h
            if ue[b, u, c + HQ_LEFT] <= 0:
                ue[b, u, c + HQ_DUE] = slot + rtt
                ue[b, u, c + HQ_RBS] = rbs
                ue[b, u, c + HQ_LEFT] = booked
                ue[b, u, U_HARQ] += 1.0
                break
    return slot + booked * rtt, lost


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _mac(b, t, slot, p, fc, fi, fx, ue, ui, rlc, lost, tbs, trc, cs, rng):
    """Schedule the slot's resource blocks and transmit the transport blocks."""
    if p[P_WIRED_BPMS] > 0:  # a wired last hop (``wired``): no radio
        _wired_mac(b, t, slot, p, fc, fi, fx, ue, ui, rlc, lost)
        return
    nu = ue.shape[1]
    usable = int(p[P_USABLE_RBS])
    bler = p[P_HARQ_BLER]
    tau = p[P_PF_TAU_TTIS]
    avail = usable
    harq = bler > 0  # without first-transmission failures nothing is held or retransmitted
    trace = p[P_TRACE] > 0  # the slot's bytes come from the capacity trace (trace_capacity)
    for u in range(nu):
        ue[b, u, U_NEW_TTI] = 0.0
        ue[b, u, U_RBS_TTI] = 0.0
        if harq:
            ue[b, u, U_RETX_TTI] = 0.0
            if ui[b, u, UI_HELD] > 0:
                _release(b, u, t, slot, p, fc, fi, fx, ui, rlc, lost)
            if ue[b, u, U_HARQ] > 0:
                avail -= int(_harq_due(b, u, slot, avail, p, ue))
    if p[P_SCHEDULER] == SCHEDULER_PF:
        best = -1
        best_metric = -1.0
        for u in range(nu):
            if _wants(b, u, ue, ui):
                rate = tbs[int(ue[b, u, U_MCS]), usable]
                metric = rate / max(ue[b, u, U_PF_AVG], 1e-9)
                if metric > best_metric:
                    best_metric = metric
                    best = u
        if best >= 0 and avail > 0:
            ue[b, best, U_RBS_TTI] = avail
    else:
        n = 0
        for u in range(nu):
            if _wants(b, u, ue, ui):
                n += 1
        if n > 0:
            g = int(p[P_RBG_SIZE])
            nrbg = avail // g
            each = nrbg // n
            rest = nrbg - each * n
            extra = avail - nrbg * g  # a last, smaller RBG (NR); 0 with LTE's whole RBGs
            start = cs[b, CS_RR_NEXT] % nu
            given = 0
            for i in range(nu):
                u = (start + i) % nu
                if _wants(b, u, ue, ui):
                    r = each + (1 if given < rest else 0)
                    ue[b, u, U_RBS_TTI] = r * g + (extra if given == 0 else 0)
                    given += 1
            cs[b, CS_RR_NEXT] = (start + 1) % nu
    for u in range(nu):
        rbs = int(ue[b, u, U_RBS_TTI])
        sent = 0.0
        if rbs > 0 and not (harq and ue[b, u, U_RETX_TTI] > 0):
            mcs = int(ue[b, u, U_MCS])
            tb = _trace_tb(trc, b, slot, rbs, usable) if trace else tbs[mcs, rbs]
            rel = float(slot)
            air_lost = False
            if harq and _rand(rng, b) < bler:
                rel, air_lost = _harq_new_tb(b, u, slot, rbs, p, ue, rng)
            ue[b, u, U_NEW_TTI] = tb
            ue[b, u, U_LAST_MCS] = mcs
            sent = tb
            _serve(b, u, tb, t, slot, rel, air_lost, p, fc, fi, fx, ue, ui, rlc, lost)
        # Floored so that an idle UE's average never decays into (slow) denormal numbers.
        ue[b, u, U_PF_AVG] = max((1.0 - 1.0 / tau) * ue[b, u, U_PF_AVG] + sent / tau, 1e-6)
