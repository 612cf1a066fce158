"""PBE-CC's physical-layer monitor at the UE: its own and the cell's allocations, per slot.

A UE that decodes every downlink control message of its cell sees, per slot (LTE: the 1 ms
TTI; NR: a slot of the numerology), the resource blocks the scheduler gave to each UE. Here it
reads the MAC's allocations of the slot (``U_RBS_TTI`` of every UE; a HARQ retransmission, which
the control message marks as such, occupies its RBs but adds no capacity) exactly as it would
decode them. Over the last ``window_slots`` slots (``_pbe_slot``) it keeps, per UE, the RBs of
its new transport blocks, those of its retransmissions, and the PDCP bytes all usable RBs
would carry at the UE's MCS (its CQI; a trace cell: the slot's trace bytes), less the blocks'
MAC/RLC headers. At the end of each 1 ms tick
(``_pbe_end_tti``) the UE derives the rate it may use:

- ``n``: the active UEs (scheduled within ``active_ms``), the UE itself always counted;
- ``own``, ``idle``: its new blocks' RBs and the RBs nobody used (retransmissions count as
  used), per slot, averaged over the window;
- ``base = own + idle / n`` (its share of the idle capacity);
- below the fair share ``fair = usable / n``, it may also claim what the other active UEs hold
  above theirs (the scheduler gives it back when it asks):
  ``share = min(fair, base + sum_j max(0, own_j + idle / n - fair))``; else ``share = base``;
- the rate: ``share / usable`` of the full-cell bytes at its MCS, per ms, split among its active
  flows, in segment payload (``seg / PDU`` of the PDCP PDU bytes).

The receiver stamps that rate on its ACKs (``fbr[..., FB_PBE]`` by time), so the sender
(``senders/pbecc.py``) reads it one uplink delay (air + core + server link) later. The monitor
runs only when a flow runs PBE-CC (``PB_ON``); docs/pbe-cc.md gives the choices.
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.params import (
    FC_UE,
    P_ACTIVE_TIMEOUT_MS,
    P_PBE,
    P_PDU_BYTES,
    P_SDU_OVERHEAD_BYTES,
    P_SEG_BYTES,
    P_SLOTS_PER_MS,
    P_TB_OVERHEAD_BYTES,
    P_TRACE,
    P_USABLE_RBS,
)
from envs.fastsim.pbe_params import (
    PB_ACTIVE_SLOTS,
    PB_WINDOW,
    UM_FULL0,
    UM_FULLSUM,
    UM_LAST,
    UM_RATE,
    UM_RB0,
    UM_RBSUM,
    UM_RETX0,
    UM_RETXSUM,
)
from envs.fastsim.state import FB_PBE, I_LAST_ARR_MS, U_MCS, U_PB0, U_RBS_TTI, U_RETX_TTI
from envs.fastsim.trace_capacity import _trace_share


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _pbe_slot(b, slot, p, ue, tbs, trc):
    """The UEs decode the slot's allocations: each UE's RBs and full-cell bytes into its rings."""
    w = int(p[P_PBE + PB_WINDOW])
    pos = slot % w
    usable = p[P_USABLE_RBS]
    trace = p[P_TRACE] > 0
    pdu = p[P_PDU_BYTES]
    for u in range(ue.shape[1]):
        rbs = ue[b, u, U_RBS_TTI]
        if rbs > 0:
            ue[b, u, U_PB0 + UM_LAST] = slot + 1
        # A retransmission (the same HARQ process, no new data indicator) occupies the RBs but
        # carries nothing new: used, not the UE's capacity.
        retx = rbs if ue[b, u, U_RETX_TTI] > 0 else 0.0
        c = U_PB0 + UM_RB0 + pos
        ue[b, u, U_PB0 + UM_RBSUM] += rbs - retx - ue[b, u, c]
        ue[b, u, c] = rbs - retx
        c = U_PB0 + UM_RETX0 + pos
        ue[b, u, U_PB0 + UM_RETXSUM] += retx - ue[b, u, c]
        ue[b, u, c] = retx
        if trace:
            full = _trace_share(trc, b, slot, usable, usable)
        else:
            mcs = ue[b, u, U_MCS]
            full = tbs[int(mcs), int(usable)] if mcs >= 0 else 0.0
        # What the block carries of PDCP PDUs: less its MAC/RLC header and each PDU's RLC header.
        full = max(0.0, full - p[P_TB_OVERHEAD_BYTES]) * pdu / (pdu + p[P_SDU_OVERHEAD_BYTES])
        c = U_PB0 + UM_FULL0 + pos
        ue[b, u, U_PB0 + UM_FULLSUM] += full - ue[b, u, c]
        ue[b, u, c] = full


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _pbe_share(own, idle, fair, n, others_over):
    """The UE's share of RBs per slot: its idle share, raised toward the fair share."""
    base = own + idle / n
    if base >= fair:
        return base
    return min(fair, base + others_over)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _pbe_end_tti(b, t, p, fc, fi, ue, fbr):
    """Each UE's rate estimate of the tick, stamped for its flows' ACKs (``FB_PBE``)."""
    nu = ue.shape[1]
    w = p[P_PBE + PB_WINDOW]
    spm = p[P_SLOTS_PER_MS]
    usable = p[P_USABLE_RBS]
    last_slot = (t + 1) * spm - 1
    window = p[P_PBE + PB_ACTIVE_SLOTS]
    n_act = 0
    used = 0.0
    for j in range(nu):
        used += ue[b, j, U_PB0 + UM_RBSUM] + ue[b, j, U_PB0 + UM_RETXSUM]
        last = ue[b, j, U_PB0 + UM_LAST]
        if last > 0 and last_slot - (last - 1) < window:
            n_act += 1
    used /= w
    idle = max(0.0, usable - used)
    for u in range(nu):
        last = ue[b, u, U_PB0 + UM_LAST]
        me_active = last > 0 and last_slot - (last - 1) < window
        n = n_act + (0 if me_active else 1)
        fair = usable / n
        over = 0.0
        for j in range(nu):
            lj = ue[b, j, U_PB0 + UM_LAST]
            if j != u and lj > 0 and last_slot - (lj - 1) < window:
                over += max(0.0, ue[b, j, U_PB0 + UM_RBSUM] / w + idle / n - fair)
        share = _pbe_share(ue[b, u, U_PB0 + UM_RBSUM] / w, idle, fair, n, over)
        ue[b, u, U_PB0 + UM_RATE] = share / usable * ue[b, u, U_PB0 + UM_FULLSUM] / w * spm
    ring = fbr.shape[2]
    payload = p[P_SEG_BYTES] / p[P_PDU_BYTES]
    for f in range(fi.shape[1]):
        u = int(fc[f, FC_UE])
        fbr[b, f, t & (ring - 1), FB_PBE] = (
            ue[b, u, U_PB0 + UM_RATE] * payload / _ue_flows(b, f, t, p, fc, fi)
        )


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _ue_flows(b, f, t, p, fc, fi):
    """The UE's active flows (a packet within ``active_timeout_ms``), flow ``f`` counted."""
    u = int(fc[f, FC_UE])
    n = 1
    for g in range(fi.shape[1]):
        if g != f and int(fc[g, FC_UE]) == u:
            last = fi[b, g, I_LAST_ARR_MS]
            if last >= 0 and t - last < p[P_ACTIVE_TIMEOUT_MS]:
                n += 1
    return n
