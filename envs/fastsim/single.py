"""One ``LteCellEnv`` step on the fast backend in a single compiled call.

A single cell's kernel step costs a few microseconds; in Python, turning the action into a window,
building the observation and computing the reward terms cost several times that. ``env_step``
does all of it in one call, with exactly the arithmetic of the reference Python path
(``LteCellEnv._command``, ``LteCellEnv._observe``, ``cellgym.reward.reward_terms``): the same
float64 operations in the same order and Python's ``min``/``max`` semantics (the first argument
wins ties and NaN comparisons). ``tests/test_fastsim.py`` checks that both paths give identical
trajectories.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cellgym.fields import FLOW, SEGMENT_BYTES, UE
from cellgym.reward import RewardSpec
from envs.fastsim.core import step_cell

# Slots of the float64 configuration/state vector ``fcfg``.
F_MAX_CHANGE, F_STEP_S = 0, 1
F_W_UTIL, F_W_DELAY, F_W_FAIR, F_BUDGET, F_MAX_PENALTY = 2, 3, 4, 5, 6
F_MIN_CWND, F_MAX_CWND, F_MIN_RATE, F_MAX_RATE = 7, 8, 9, 10
F_RATE = 11  # the rate-mode agent's current pacing rate (state across steps; 0 before the first)
N_FCFG = 12
# Slots of the int64 configuration vector ``icfg``; the flows' UE indices follow from I_FLOW_UE.
I_MODE, I_FLOW, I_TTIS, I_FLOW_UE = 0, 1, 2, 3
MODE_CWND, MODE_RATE = 0, 1

_SEG = float(SEGMENT_BYTES)
_CWND, _FB_RATE, _RTT_MIN = FLOW["cwnd_bytes"], FLOW["fb_rate_mbps"], FLOW["rtt_min_ms"]
_RTT_MEAN, _RTT_N = FLOW["rtt_mean_ms"], FLOW["rtt_samples"]
_RX, _ACTIVE = FLOW["rx_bytes"], FLOW["active"]
_CAP, _HOL = UE["capacity_mbps"], UE["hol_ms"]


@njit(inline="always")
def _pmax(a: float, b: float) -> float:
    """Python's ``max(a, b)``."""
    return b if b > a else a


@njit(inline="always")
def _pmin(a: float, b: float) -> float:
    """Python's ``min(a, b)``."""
    return b if b < a else a


@njit(cache=True, error_model="numpy", _nrt=False)
def env_step(
    a, fcfg, icfg, obs_cols, obs_acked, obs_high, obs, terms,
    p, fc, tbs, cqi_tab, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr, dl, rtx, lost,
    obs_f, obs_u, act,
):  # fmt: skip
    """Apply the relative action ``a`` (in [-1, 1]) to cell 0, advance one step, observe.

    Writes the agent's observation to ``obs`` (float32) and the reward terms to ``terms`` (in
    the order of ``cellgym.reward.TERMS``); returns the simulated time in ms at the step's end.
    """
    flow = icfg[I_FLOW]
    row = obs_f[0, flow]  # the previous step's observation: what the agent acted on
    factor = fcfg[F_MAX_CHANGE] ** a
    if icfg[I_MODE] == MODE_CWND:
        cwnd = row[_CWND]
        if cwnd == 0.0:
            cwnd = 10 * _SEG
        cwnd = _pmin(fcfg[F_MAX_CWND], _pmax(fcfg[F_MIN_CWND], cwnd * factor))
        pace = 0.0
    else:
        rate = fcfg[F_RATE]
        if rate <= 0:
            rate = row[_FB_RATE]
            if rate == 0.0:
                rate = 1.0
        rate = _pmin(fcfg[F_MAX_RATE], _pmax(fcfg[F_MIN_RATE], rate * factor))
        fcfg[F_RATE] = rate
        rtt_min = row[_RTT_MIN]
        if rtt_min == 0.0:
            rtt_min = 40.0
        rtt_min_s = rtt_min / 1000.0
        cwnd = _pmin(_pmax(4 * _SEG, 2 * rate * 1e6 / 8 * rtt_min_s), fcfg[F_MAX_CWND])
        pace = rate
    act[0, flow, 0] = cwnd
    act[0, flow, 1] = pace
    act[0, flow, 2] = 1.0
    step_cell(
        0, icfg[I_TTIS], p, fc, tbs, cqi_tab, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr,
        dl, rtx, lost, obs_f, obs_u, act,
    )  # fmt: skip
    row = obs_f[0, flow]
    step_s = fcfg[F_STEP_S]
    for i in range(obs_cols.size):
        v = row[obs_cols[i]]
        if i == obs_acked:
            v = v * 8e-6 / step_s
        o = np.float32(v)
        if obs_high[i] < o:
            o = obs_high[i]
        if o < 0.0:
            o = np.float32(0.0)
        obs[i] = o
    # Reward terms: cellgym.reward.reward_terms.
    u = icfg[I_FLOW_UE + flow]
    n_flows = obs_f.shape[1]
    delivered = 0.0
    for f in range(n_flows):
        if icfg[I_FLOW_UE + f] == u:
            delivered += obs_f[0, f, _RX]
    delivered_mbps = delivered * 8e-6 / step_s
    capacity = obs_u[0, u, _CAP]
    utilization = _pmin(1.0, _pmax(0.0, delivered_mbps / capacity)) if capacity > 0 else 0.0
    e2e = 0.0
    if row[_RTT_N] > 0 and row[_RTT_MIN] > 0:
        e2e = _pmax(0.0, row[_RTT_MEAN] - row[_RTT_MIN])
    delay = _pmax(obs_u[0, u, _HOL], e2e)
    budget = fcfg[F_BUDGET]
    penalty = _pmin(fcfg[F_MAX_PENALTY], _pmax(0.0, delay - budget) / budget)
    n_active = 0
    positive = False
    total = 0.0
    squares = 0.0
    for f in range(n_flows):
        if obs_f[0, f, _ACTIVE] > 0:
            x = obs_f[0, f, _RX]
            n_active += 1
            positive = positive or x > 0
            total += x
            squares += x * x
    jain = total**2 / (n_active * squares) if positive else 1.0
    terms[0] = utilization
    terms[1] = delay
    terms[2] = penalty
    terms[3] = jain
    terms[4] = fcfg[F_W_UTIL] * utilization - fcfg[F_W_DELAY] * penalty + fcfg[F_W_FAIR] * jain
    return cs[0, 0]


def env_config(
    *,
    action_mode: str,
    max_change: float,
    step_s: float,
    step_ttis: int,
    flow: int,
    flow_ue: np.ndarray,
    reward: RewardSpec,
    cwnd_range: tuple[float, float],
    rate_range: tuple[float, float],
) -> tuple[np.ndarray, np.ndarray]:
    """``(fcfg, icfg)`` for ``env_step`` from the environment's settings."""
    fcfg = np.zeros(N_FCFG, dtype=np.float64)
    fcfg[F_MAX_CHANGE] = max_change
    fcfg[F_STEP_S] = step_s
    fcfg[F_W_UTIL] = reward.w_utilization
    fcfg[F_W_DELAY] = reward.w_delay
    fcfg[F_W_FAIR] = reward.w_fairness
    fcfg[F_BUDGET] = reward.delay_budget_ms
    fcfg[F_MAX_PENALTY] = reward.max_delay_penalty
    fcfg[F_MIN_CWND], fcfg[F_MAX_CWND] = cwnd_range
    fcfg[F_MIN_RATE], fcfg[F_MAX_RATE] = rate_range
    mode = {"cwnd": MODE_CWND, "rate": MODE_RATE}[action_mode]
    icfg = np.array([mode, flow, step_ttis, *np.asarray(flow_ue).tolist()], dtype=np.int64)
    return fcfg, icfg
