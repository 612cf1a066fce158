"""XRC's base-station agent: per UE capacity and HoL, per flow the explicit rate C_i.

Per UE, the capacity of a slot (LTE: the 1 ms TTI) = bytes of new transport blocks + the UE's
share of idle RBs at its last MCS, summed over ``xrc_window_ttis`` slots (``_agent_slot``); a
flow's C_i = UE capacity / its active flows (active: a packet in the last ``active_timeout_ms``),
the window's bytes over its length in time; HoL = the age of the RLC head packet (the first not
yet transmitted) at the end of every slot (``_agent_hol``): the slot's end minus the start of the
slot it arrived in, in ms at the slots' resolution (NR: 1 / 2**numerology ms), as ns-3's agent
takes the head's exact age; the step keeps the latest and the largest.
Both are stored by time (``fbr``) and stamped on the ACK as it passes the eNB, so the sender
(``senders/xrc.py``) sees them after the uplink core delay, as ns-3's agent tag.
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.channel import _bytes_of
from envs.fastsim.params import (
    FC_UE,
    P_ACTIVE_TIMEOUT_MS,
    P_NUM_RBS,
    P_SLOTS_PER_MS,
    P_TRACE,
    P_UL_LEAD_MS,
    P_USABLE_RBS,
    P_WINDOW_TTIS,
)
from envs.fastsim.state import (
    I_LAST_ARR_MS,
    R_ARR,
    U_CAP_SUM,
    U_HOL,
    U_LAST_MCS,
    U_NEW_TTI,
    U_O_CAP,
    U_O_HOLMAX,
    U_O_TTIS,
    U_O_TX,
    U_RBS_TTI,
    UI_HELD,
    UI_RLC_HEAD,
    UI_RLC_LEN,
)
from envs.fastsim.trace_capacity import _trace_share


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _ue_active(b, u, t, p, fc, fi):
    """The UE has a flow the agent counts as active."""
    for f in range(fi.shape[1]):
        if int(fc[f, FC_UE]) == u:
            last = fi[b, f, I_LAST_ARR_MS]
            if last >= 0 and t - last < p[P_ACTIVE_TIMEOUT_MS]:
                return True
    return False


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _flow_rate_mbps(b, f, t, p, fc, fi, ue):
    """The agent's C_i = C / active flows of the UE (the flow itself counted)."""
    u = int(fc[f, FC_UE])
    n = 0
    self_active = False
    for g in range(fi.shape[1]):
        if int(fc[g, FC_UE]) == u:
            last = fi[b, g, I_LAST_ARR_MS]
            if last >= 0 and t - last < p[P_ACTIVE_TIMEOUT_MS]:
                n += 1
                if g == f:
                    self_active = True
    if not self_active:
        n += 1
    cap_mbps = ue[b, u, U_CAP_SUM] * 8.0 / p[P_WINDOW_TTIS] / 1000.0 * p[P_SLOTS_PER_MS]
    return cap_mbps / n


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _agent_slot(b, t, slot, p, fc, fi, ue, capr, tbs, trc):
    """The XRC agent closes a slot: each UE's capacity into the window ring."""
    nu = ue.shape[1]
    usable = p[P_USABLE_RBS]
    w = capr.shape[2]
    used = 0.0
    eligible = 0
    for u in range(nu):
        used += ue[b, u, U_RBS_TTI]
        if _ue_active(b, u, t, p, fc, fi):
            eligible += 1
    idle = 0.0 if used >= usable else usable - used
    pos = slot % w
    for u in range(nu):
        act = _ue_active(b, u, t, p, fc, fi)
        sharers = eligible + (0 if act else 1)
        if p[P_TRACE] > 0:  # the idle RBs' share of the trace's bytes (trace_capacity)
            spare = _trace_share(trc, b, slot, idle / sharers, usable)
        else:
            spare = _bytes_of(tbs, ue[b, u, U_LAST_MCS], idle / sharers, int(p[P_NUM_RBS]))
        cap = ue[b, u, U_NEW_TTI] + spare
        ue[b, u, U_CAP_SUM] += cap - capr[b, u, pos]
        capr[b, u, pos] = cap
        ue[b, u, U_O_CAP] += cap
        ue[b, u, U_O_TX] += ue[b, u, U_NEW_TTI]


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _agent_hol(b, slot, p, ue, ui, rlc):
    """The XRC agent's HoL at the end of ``slot``: the age of each UE's RLC head packet, ms.

    The head arrived at the start of slot ``R_ARR``, so at the end of ``slot`` it is
    ``slot + 1 - R_ARR`` slots old, and the cell's uplink lead older (``P_UL_LEAD_MS``: an
    ACK-clocked packet reached the base station that long before the slot). A packet leaves
    as the slot sending its last byte begins, so the largest age a head reaches at a slot's
    end is its sojourn in the RLC.
    """
    q = rlc.shape[2]
    spm = p[P_SLOTS_PER_MS]
    for u in range(ue.shape[1]):
        if ui[b, u, UI_RLC_LEN] > ui[b, u, UI_HELD]:
            h = ui[b, u, UI_RLC_HEAD] + ui[b, u, UI_HELD]
            if h >= q:
                h -= q
            hol = (slot + 1 - rlc[b, u, h, R_ARR]) / spm + p[P_UL_LEAD_MS]
        else:
            hol = 0.0
        ue[b, u, U_HOL] = hol
        ue[b, u, U_O_HOLMAX] = max(ue[b, u, U_O_HOLMAX], hol)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _agent_end_tti(b, t, p, fc, fi, ue, fbr):
    """The XRC agent closes the 1 ms tick: feedback values (rate, the latest HoL) by time."""
    for u in range(ue.shape[1]):
        ue[b, u, U_O_TTIS] += 1.0
    ring = fbr.shape[2]
    slot = t & (ring - 1)
    # ns-3's agent stamps an ACK as the eNB receives it, the uplink lead before the TTI's end:
    # the head is then the lead younger than at the end (the lead is measured from there).
    lead = p[P_UL_LEAD_MS]
    for f in range(fi.shape[1]):
        fbr[b, f, slot, 0] = _flow_rate_mbps(b, f, t, p, fc, fi, ue)
        hol = ue[b, int(fc[f, FC_UE]), U_HOL]
        fbr[b, f, slot, 1] = hol - lead if hol > lead else 0.0


# ============================================================================================
# One step of one cell
# ============================================================================================
