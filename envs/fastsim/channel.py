"""The channel: distance (and random mobility) -> SINR -> CQI -> MCS -> transport block bytes.

LTE: Okumura-Hata SINR through the calibrated CQI thresholds (``params.CQI_SINR_THRESHOLDS_DB``)
to ns-3's MCS. NR: the TR 38.901 SINR of ``channel_nr`` through the lowest SINR of each MCS
(``nr.sinr_thresholds_db``). The transport block of an MCS and RB count (per TTI or slot) comes
from the 3GPP tables (``params.FastSimParams.tbs_table``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from envs.fastsim.channel_nr import _nr_blockage, _nr_place, _nr_sinr_db
from envs.fastsim.codes import MOBILITY_RANDOM
from envs.fastsim.params import (
    P_CELL_NR,
    P_DRAW_MOVES,
    P_MOBILITY,
    P_MOBILITY_PERIOD_MS,
    P_NR_BLOCK_LOSS_DB,
    P_SINR_AT_1KM_DB,
    P_SINR_SLOPE_DB,
    P_TRACE,
)
from envs.fastsim.state import CS_NEXT_MOVE_MS, U_DIST, U_MCS


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _mcs_for_sinr(sinr: float, cqi_tab: np.ndarray) -> float:
    """The highest entry whose SINR threshold ``sinr`` reaches -> its MCS (-1: none)."""
    cqi = 0
    for c in range(1, cqi_tab.shape[1]):
        if sinr >= cqi_tab[0, c]:
            cqi = c
    if cqi == 0:
        return -1.0
    return cqi_tab[1, cqi]


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _mcs_of(distance_m: float, p: np.ndarray, cqi_tab: np.ndarray) -> float:
    """LTE MCS at a distance: Okumura-Hata SINR -> calibrated CQI -> ns-3's MCS (-1: none)."""
    sinr = p[P_SINR_AT_1KM_DB] - p[P_SINR_SLOPE_DB] * math.log10(distance_m / 1000.0)
    return _mcs_for_sinr(sinr, cqi_tab)


@njit(cache=True, error_model="numpy", _nrt=False)
def _place_ue(b, u, d, first, p, cqi_tab, ue, rng):
    """Put UE ``u`` at ``d`` metres; its channel (NR: LOS, shadowing) and MCS follow.

    On a capacity trace the trace is the channel: every UE is in coverage at the top MCS (the
    MCS then only ranks UEs for PF, equally; the bytes come from ``trace_capacity``).
    """
    if p[P_TRACE] > 0:
        ue[b, u, U_DIST] = d
        ue[b, u, U_MCS] = cqi_tab[1, cqi_tab.shape[1] - 1]
    elif p[P_CELL_NR] > 0:
        _nr_place(b, u, d, first, p, ue, rng)
        ue[b, u, U_MCS] = _mcs_for_sinr(_nr_sinr_db(b, u, p, ue), cqi_tab)
    else:
        ue[b, u, U_DIST] = d
        ue[b, u, U_MCS] = _mcs_of(d, p, cqi_tab)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bytes_of(tbs: np.ndarray, mcs: float, rbs: float, num_rbs: int) -> float:
    """Bytes ``rbs`` (fractional) RBs carry at ``mcs`` (the agent's idle-RB share)."""
    if mcs < 0 or rbs <= 0:
        return 0.0
    r = min(rbs, float(num_rbs))
    whole = int(r)
    frac = r - whole
    m = int(mcs)
    nxt = tbs[m, whole + 1] if whole < num_rbs else tbs[m, whole]
    return tbs[m, whole] + frac * (nxt - tbs[m, whole])


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _blockage(b, t, p, cqi_tab, rng, ue):
    """NR in FR2: the blockage process toggles (``channel_nr._nr_blockage``); the MCS follows."""
    if p[P_NR_BLOCK_LOSS_DB] > 0 and _nr_blockage(b, t, p, ue, rng):
        for u in range(ue.shape[1]):
            ue[b, u, U_MCS] = _mcs_for_sinr(_nr_sinr_db(b, u, p, ue), cqi_tab)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _move_ues(b, t, p, cqi_tab, cs, rng, ue, dr):
    """``random`` mobility at time ``t`` (ms, the end of a tick): due moves take place.

    Every period each UE moves to its next distance of the run's draws (``cellgym.draws``, the
    same as ns-3's): UE ``u``'s after move ``k + 1`` is ``dr[b, k * U + u]`` (``P_DRAW_MOVES``
    moves; none after the last); its MCS follows. A move at a step's end is in that step's
    observation, as on ns-3 (its moves come before the step's observation at the same instant).
    """
    if p[P_MOBILITY] == MOBILITY_RANDOM and t >= cs[b, CS_NEXT_MOVE_MS]:
        period = int(p[P_MOBILITY_PERIOD_MS])
        k = cs[b, CS_NEXT_MOVE_MS] // period - 1
        nu = ue.shape[1]
        for u in range(nu if k < int(p[P_DRAW_MOVES]) else 0):
            d = dr[b, k * nu + u]
            if p[P_CELL_NR] > 0:
                _place_ue(b, u, d, False, p, cqi_tab, ue, rng)
            else:
                ue[b, u, U_DIST] = d
                ue[b, u, U_MCS] = _mcs_of(d, p, cqi_tab)
        cs[b, CS_NEXT_MOVE_MS] += period
