"""The NR channel: TR 38.901 path loss, LOS state, shadowing and FR2 blockage -> SINR.

Per UE: the 2D distance, a LOS state (``probabilistic``: drawn from TR 38.901 Table 7.4.2-1's
probability at every move; or fixed), a log-normal shadow fading whose standard normal value
follows the UE (Gudmundson: correlation exp(-|moved| / d_corr), TR 38.901 Table 7.5-6's
decorrelation distances) and, in FR2 when ``nr_block_loss_db > 0``, a two-state Markov blockage
(exponential sojourns, means ``nr_blocked_mean_ms`` / ``nr_clear_mean_ms``) that adds its loss.
SINR = transmit power + beamforming gain - path loss - shadowing - blockage - noise over the
carrier (one cell: no interference, as the LTE model). These run only when the channel changes
(reset, moves, blockage transitions), never per slot.
"""

from __future__ import annotations

import math

from numba import njit

from envs.fastsim.codes import LOS_ALWAYS, LOS_PROBABILISTIC, PROP_UMA, PROP_UMI
from envs.fastsim.params import (
    P_NR_BLOCK_LOSS_DB,
    P_NR_BLOCKED_MS,
    P_NR_CLEAR_MS,
    P_NR_DCORR_LOS,
    P_NR_DCORR_NLOS,
    P_NR_FC_GHZ,
    P_NR_H_BS,
    P_NR_H_UT,
    P_NR_LINK_DB,
    P_NR_LOS_MODE,
    P_NR_NLOS_LOSS_DB,
    P_NR_SCENARIO,
    P_NR_SF_LOS,
    P_NR_SF_NLOS,
)
from envs.fastsim.rng import _rand
from envs.fastsim.state import U_BLOCK_NEXT_MS, U_BLOCKED, U_DIST, U_LOS, U_SHADOW_Z

#: Speed of light, m/s.
C_LIGHT = 3.0e8
#: RMa's average building height and street width (TR 38.901 Table 7.4.1-1 defaults), m.
RMA_H_M = 5.0
RMA_W_M = 20.0


@njit(cache=True, error_model="numpy", _nrt=False)
def pathloss_db(d2d, los, scen, fc_ghz, h_bs, h_ut):
    """TR 38.901 Table 7.4.1-1 path loss (dB) at ``d2d`` metres (clamped to >= 10 m)."""
    d2d = max(d2d, 10.0)
    dh = h_bs - h_ut
    d3d = math.sqrt(d2d * d2d + dh * dh)
    lf = 20.0 * math.log10(fc_ghz)
    if scen == PROP_UMI or scen == PROP_UMA:
        dbp = 4.0 * (h_bs - 1.0) * (h_ut - 1.0) * fc_ghz * 1e9 / C_LIGHT  # effective heights
        if scen == PROP_UMI:
            a, k = 32.4, 9.5
        else:
            a, k = 28.0, 9.0
        if d2d <= dbp:
            pl_los = a + (21.0 if scen == PROP_UMI else 22.0) * math.log10(d3d) + lf
        else:
            pl_los = a + 40.0 * math.log10(d3d) + lf - k * math.log10(dbp * dbp + dh * dh)
        if los:
            return pl_los
        if scen == PROP_UMI:
            pl_n = 35.3 * math.log10(d3d) + 22.4 + 21.3 * math.log10(fc_ghz) - 0.3 * (h_ut - 1.5)
        else:
            pl_n = 13.54 + 39.08 * math.log10(d3d) + lf - 0.6 * (h_ut - 1.5)
        return max(pl_los, pl_n)
    # RMa
    h = RMA_H_M
    dbp = 2.0 * math.pi * h_bs * h_ut * fc_ghz * 1e9 / C_LIGHT
    c1 = min(0.03 * h**1.72, 10.0)
    c2 = min(0.044 * h**1.72, 14.77)
    c3 = 0.002 * math.log10(h)
    dd = d3d if d2d <= dbp else dbp  # PL1 up to the breakpoint, PL2 = PL1(d_BP) + 40 log10
    pl_los = 20.0 * math.log10(40.0 * math.pi * dd * fc_ghz / 3.0) + c1 * math.log10(dd) - c2
    pl_los += c3 * dd
    if d2d > dbp:
        pl_los += 40.0 * math.log10(d3d / dbp)
    if los:
        return pl_los
    pl_n = (
        161.04
        - 7.1 * math.log10(RMA_W_M)
        + 7.5 * math.log10(h)
        - (24.37 - 3.7 * (h / h_bs) ** 2) * math.log10(h_bs)
        + (43.42 - 3.1 * math.log10(h_bs)) * (math.log10(d3d) - 3.0)
        + lf
        - (3.2 * math.log10(11.75 * h_ut) ** 2 - 4.97)
    )
    return max(pl_los, pl_n)


@njit(cache=True, error_model="numpy", _nrt=False)
def los_probability(d2d, scen, h_ut):
    """TR 38.901 Table 7.4.2-1: probability of line of sight at ``d2d`` metres (outdoor UE)."""
    if scen == PROP_UMI:
        if d2d <= 18.0:
            return 1.0
        return 18.0 / d2d + math.exp(-d2d / 36.0) * (1.0 - 18.0 / d2d)
    if scen == PROP_UMA:
        if d2d <= 18.0:
            return 1.0
        c = 0.0 if h_ut <= 13.0 else ((h_ut - 13.0) / 10.0) ** 1.5
        base = 18.0 / d2d + math.exp(-d2d / 63.0) * (1.0 - 18.0 / d2d)
        return base * (1.0 + c * 1.25 * (d2d / 100.0) ** 3 * math.exp(-d2d / 150.0))
    if d2d <= 10.0:
        return 1.0
    return math.exp(-(d2d - 10.0) / 1000.0)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _gauss(rng, b):
    """A standard normal draw (Box-Muller on two uniforms of the cell's generator)."""
    u1 = 1.0 - _rand(rng, b)
    u2 = _rand(rng, b)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


@njit(cache=True, error_model="numpy", _nrt=False)
def _nr_sinr_db(b, u, p, ue):
    """The UE's SINR (dB) from its distance, LOS state, shadowing and blockage."""
    los = ue[b, u, U_LOS] > 0
    pl = pathloss_db(
        ue[b, u, U_DIST], los, int(p[P_NR_SCENARIO]), p[P_NR_FC_GHZ], p[P_NR_H_BS], p[P_NR_H_UT]
    )
    sigma = p[P_NR_SF_LOS] if los else p[P_NR_SF_NLOS]
    block = p[P_NR_BLOCK_LOSS_DB] if ue[b, u, U_BLOCKED] > 0 else 0.0
    nlos = 0.0 if los else p[P_NR_NLOS_LOSS_DB]
    return p[P_NR_LINK_DB] - pl - sigma * ue[b, u, U_SHADOW_Z] - block - nlos


@njit(cache=True, error_model="numpy", _nrt=False)
def _nr_place(b, u, d, first, p, ue, rng):
    """The UE moves to ``d`` metres: LOS state and correlated shadowing follow (draws)."""
    old = ue[b, u, U_DIST]
    old_los = ue[b, u, U_LOS]
    ue[b, u, U_DIST] = d
    mode = int(p[P_NR_LOS_MODE])
    if mode == LOS_PROBABILISTIC:
        pr = los_probability(d, int(p[P_NR_SCENARIO]), p[P_NR_H_UT])
        los = 1.0 if _rand(rng, b) < pr else 0.0
    else:
        los = 1.0 if mode == LOS_ALWAYS else 0.0
    ue[b, u, U_LOS] = los
    if p[P_NR_SF_LOS] > 0 or p[P_NR_SF_NLOS] > 0:
        z = _gauss(rng, b)
        if first or los != old_los:
            ue[b, u, U_SHADOW_Z] = z
        else:
            dc = p[P_NR_DCORR_LOS] if los > 0 else p[P_NR_DCORR_NLOS]
            rho = math.exp(-abs(d - old) / dc)
            ue[b, u, U_SHADOW_Z] = rho * ue[b, u, U_SHADOW_Z] + math.sqrt(1.0 - rho * rho) * z
    if first:
        ue[b, u, U_BLOCKED] = 0.0
        if p[P_NR_BLOCK_LOSS_DB] > 0:
            ue[b, u, U_BLOCK_NEXT_MS] = -p[P_NR_CLEAR_MS] * math.log(1.0 - _rand(rng, b))


@njit(cache=True, error_model="numpy", _nrt=False)
def _nr_blockage(b, t, p, ue, rng):
    """FR2 blockage: toggle the UEs whose sojourn ended at ``t``; True when any changed."""
    changed = False
    for u in range(ue.shape[1]):
        while t >= ue[b, u, U_BLOCK_NEXT_MS]:
            blocked = ue[b, u, U_BLOCKED] <= 0
            ue[b, u, U_BLOCKED] = 1.0 if blocked else 0.0
            mean = p[P_NR_BLOCKED_MS] if blocked else p[P_NR_CLEAR_MS]
            ue[b, u, U_BLOCK_NEXT_MS] += max(-mean * math.log(1.0 - _rand(rng, b)), 1.0)
            changed = True
    return changed
