"""A wired last hop (``cell.type: wired``): each UE's RLC queue served at the wire's rate.

The dumbbell's access link to a receiver: no radio, no HARQ, no RLC/MAC headers, a fixed delay
(the server links' delays; the air interface's delays are 0 and ACKs leave every ms). Each ms
the link sends ``P_WIRED_BPMS`` bytes of its UE's queue (``cell.wired_mbps``; unlimited: the whole
queue), byte-wise as the MAC's transport blocks do, so a packet split over two ms leaves in the
second; the packets reach the receiver in that ms.
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.params import P_WIRED_BPMS
from envs.fastsim.rlc import _serve
from envs.fastsim.state import U_LAST_MCS, U_NEW_TTI, U_RBS_TTI, U_RLC_BYTES, UI_RLC_LEN


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _wired_mac(b, t, slot, p, fc, fi, fx, ue, ui, rlc, lost):
    """Every UE's link sends up to ``P_WIRED_BPMS`` bytes of its queue in this ms."""
    rate = p[P_WIRED_BPMS]
    for u in range(ue.shape[1]):
        ue[b, u, U_NEW_TTI] = 0.0
        ue[b, u, U_RBS_TTI] = 0.0
        if ui[b, u, UI_RLC_LEN] > 0:
            before = ue[b, u, U_RLC_BYTES]
            _serve(b, u, rate, t, slot, float(slot), False, p, fc, fi, fx, ue, ui, rlc, lost)
            ue[b, u, U_NEW_TTI] = before - ue[b, u, U_RLC_BYTES]  # the bytes it sent
            ue[b, u, U_LAST_MCS] = 0.0
