"""The environment step of the fast backend's cells in a single compiled call.

A cell's kernel step costs a few microseconds; in Python, turning the action into a window,
building the observation and computing the reward terms cost several times that. ``env_step``
does all of it in one call, for one cell (``LteCellEnv``) or a batch (``FastVecEnv``), with
exactly the arithmetic of the reference Python path (``LteCellEnv._command``,
``LteCellEnv._observe``, ``cellgym.reward.reward_terms``): the same float64 operations in the
same order and Python's ``min``/``max`` semantics (the first argument wins ties and NaN
comparisons). ``tests/test_fast_env.py`` checks that both paths give identical trajectories and
that a vector env's cell equals the single env.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cellgym.fields import FLOW, SEGMENT_BYTES, UE
from cellgym.reward import GROUP_CUBIC, GROUP_SAME, RewardSpec
from cellgym.vocab import SpecError
from envs.contract import (
    MAX_CWND_BYTES,
    MAX_RATE_MBPS,
    MIN_CWND_BYTES,
    MIN_RATE_MBPS,
    OBS_ACKED,
    OBS_FIELDS,
    OBS_HIGH,
    OBS_RAW_COLUMNS,
    REWARD_TERMS,
)
from envs.fastsim.driver import step_cell
from envs.fastsim.sim import FastCellBatch
from envs.fastsim.threads import over_cells

# Slots of the float64 configuration/state vector ``fcfg``.
F_MAX_CHANGE, F_STEP_S = 0, 1
F_W_UTIL, F_W_DELAY, F_W_FAIR, F_BUDGET, F_MAX_PENALTY = 2, 3, 4, 5, 6
F_MIN_CWND, F_MAX_CWND, F_MIN_RATE, F_MAX_RATE = 7, 8, 9, 10
F_ZEUS, F_W_INV, F_W_INTRA, F_W_INTER = 11, 12, 13, 14
N_FCFG = 15
# Slots of the int64 configuration vector ``icfg``; the flows' UE indices follow from I_FLOW_UE,
# then their fairness groups (``cellgym.reward.fairness_groups``).
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


@njit(error_model="numpy", _nrt=False)
def _env_cell(
    b, advance, a, fcfg, rate, icfg, obs_cols, obs_acked, obs_high, obs, terms,
    p, fc, tbs, cqi_tab, trc, bnp, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr, dl, rtx,
    lost, obs_f, obs_u, act, bqs, bq, dr,
):  # fmt: skip
    """One cell's environment step (``advance``) or only its observation and reward terms."""
    flow = icfg[I_FLOW]
    if advance:
        row = obs_f[b, flow]  # the previous step's observation: what the agent acted on
        factor = fcfg[F_MAX_CHANGE] ** a
        if icfg[I_MODE] == MODE_CWND:
            cwnd = row[_CWND]
            if cwnd == 0.0:
                cwnd = 10 * _SEG
            cwnd = _pmin(fcfg[F_MAX_CWND], _pmax(fcfg[F_MIN_CWND], cwnd * factor))
            pace = 0.0
        else:
            r = rate[b]
            if r <= 0:
                r = row[_FB_RATE]
                if r == 0.0:
                    r = 1.0
            r = _pmin(fcfg[F_MAX_RATE], _pmax(fcfg[F_MIN_RATE], r * factor))
            rate[b] = r
            rtt_min = row[_RTT_MIN]
            if rtt_min == 0.0:
                rtt_min = 40.0
            rtt_min_s = rtt_min / 1000.0
            cwnd = _pmin(_pmax(4 * _SEG, 2 * r * 1e6 / 8 * rtt_min_s), fcfg[F_MAX_CWND])
            pace = r
        act[b, flow, 0] = cwnd
        act[b, flow, 1] = pace
        act[b, flow, 2] = 1.0
        step_cell(
            b, icfg[I_TTIS], p, fc, tbs, cqi_tab, trc, bnp, cs, rng, fi, fx, bw, ue, ui, rlc, capr,
            rcv, fbr, dl, rtx, lost, obs_f, obs_u, act, bqs, bq, dr,
        )  # fmt: skip
    row = obs_f[b, flow]
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
        obs[b, i] = o
    # Reward terms: cellgym.reward.reward_terms.
    u = icfg[I_FLOW_UE + flow]
    n_flows = obs_f.shape[1]
    delivered = 0.0
    for f in range(n_flows):
        if icfg[I_FLOW_UE + f] == u:
            delivered += obs_f[b, f, _RX]
    delivered_mbps = delivered * 8e-6 / step_s
    capacity = obs_u[b, u, _CAP]
    utilization = _pmin(1.0, _pmax(0.0, delivered_mbps / capacity)) if capacity > 0 else 0.0
    e2e = 0.0
    if row[_RTT_N] > 0 and row[_RTT_MIN] > 0:
        e2e = _pmax(0.0, row[_RTT_MEAN] - row[_RTT_MIN])
    delay = _pmax(obs_u[b, u, _HOL], e2e)
    budget = fcfg[F_BUDGET]
    penalty = _pmin(fcfg[F_MAX_PENALTY], _pmax(0.0, delay - budget) / budget)
    n_active = 0
    positive = False
    total = 0.0
    squares = 0.0
    for f in range(n_flows):
        if obs_f[b, f, _ACTIVE] > 0:
            x = obs_f[b, f, _RX]
            n_active += 1
            positive = positive or x > 0
            total += x
            squares += x * x
    jain = total**2 / (n_active * squares) if positive else 1.0
    # Zeus terms (cellgym.reward.reward_terms): Delay^-1, intra- and inter-fairness.
    base = row[_RTT_MIN] if row[_RTT_N] > 0 else 0.0
    inverse = base / (base + delay) if base > 0 else 1.0
    groups = I_FLOW_UE + n_flows
    intra = _group_jain(obs_f, b, icfg, groups, flow, GROUP_SAME, False)
    inter = _group_jain(obs_f, b, icfg, groups, flow, GROUP_CUBIC, True)
    terms[b, 0] = utilization
    terms[b, 1] = delay
    terms[b, 2] = penalty
    terms[b, 3] = jain
    if fcfg[F_ZEUS] > 0:
        terms[b, 4] = (
            fcfg[F_W_UTIL] * utilization
            + fcfg[F_W_INV] * inverse
            + fcfg[F_W_INTRA] * intra
            + fcfg[F_W_INTER] * inter
        )
    else:
        terms[b, 4] = (
            fcfg[F_W_UTIL] * utilization - fcfg[F_W_DELAY] * penalty + fcfg[F_W_FAIR] * jain
        )
    terms[b, 5] = inverse
    terms[b, 6] = intra
    terms[b, 7] = inter


@njit(inline="always")
def _group_jain(obs_f, b, icfg, groups, flow, bit, with_flow):  # fmt: skip
    """``jain_of_floats`` over the active flows in group ``bit`` (and ``flow`` if asked)."""
    n = 0
    positive = False
    total = 0.0
    squares = 0.0
    for f in range(obs_f.shape[1]):
        member = (icfg[groups + f] & bit) != 0 or (with_flow and f == flow)
        if member and obs_f[b, f, _ACTIVE] > 0:
            x = obs_f[b, f, _RX]
            n += 1
            positive = positive or x > 0
            total += x
            squares += x * x
    return total**2 / (n * squares) if positive else 1.0


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def env_step(
    b0, b1, a, advance, fcfg, rate, icfg, obs_cols, obs_acked, obs_high, obs, terms,
    p, fc, tbs, cqi_tab, trc, bnp, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr, dl, rtx,
    lost, obs_f, obs_u, act, bqs, bq, dr,
):  # fmt: skip
    """Step cells ``b0`` to ``b1 - 1`` where ``advance[b]`` with relative actions ``a[b]``.

    Observes each of those cells, stepped or not. Actions are in [-1, 1]. Writes the agents'
    observations to ``obs`` (``[B, 11]`` float32) and the reward terms to ``terms`` (``[B, 8]``,
    in the order of ``cellgym.reward.TERMS``); ``rate`` (``[B]``) holds the rate-mode agents'
    pacing rates across steps (0 before the first). Without the GIL: threads run it on
    disjoint slices of one batch (``envs.fastsim.threads``).
    """
    for b in range(b0, b1):
        _env_cell(
            b, advance[b], a[b], fcfg, rate, icfg, obs_cols, obs_acked, obs_high, obs, terms,
            p, fc, tbs, cqi_tab, trc, bnp, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr, dl,
            rtx, lost, obs_f, obs_u, act, bqs, bq, dr,
        )  # fmt: skip


class EnvStepper:
    """``env_step``'s configuration and buffers for the cells of a ``FastCellBatch``.

    Fill ``a`` (relative actions, clipped to [-1, 1]) and ``advance`` (cells to step), call
    ``step``; the observations are then in ``obs`` and the reward terms in ``terms``.

    Args:
        cells: The batch (its state arrays are used in place).
        action_mode: ``"cwnd"`` or ``"rate"``.
        max_change: Largest factor of one step's change.
        flow: Index of the agent's flow.
        flow_ue: ``[F]`` each flow's UE.
        reward: Weights and budget.
        flow_group: ``[F]`` fairness groups (``cellgym.reward.fairness_groups``); ``None``: no
            peers and no CUBIC flow (only the penalty form accepts that).
    """

    def __init__(
        self,
        cells: FastCellBatch,
        *,
        action_mode: str,
        max_change: float,
        flow: int,
        flow_ue: np.ndarray,
        reward: RewardSpec,
        flow_group: np.ndarray | None = None,
    ) -> None:
        if cells.workload is not None:
            raise SpecError(
                "scenario.flows[i].traffic='pareto' runs through FastCellBatch.step only, not "
                "the environments' one-call step: drive a FastCellBatch (docs/xcp-rcp-fct)"
            )
        if flow_group is None:
            if reward.form == "zeus":
                raise SpecError("reward.form='zeus' needs each flow's fairness group (flow_group)")
            flow_group = np.zeros(len(flow_ue), dtype=np.int64)
        self.fcfg = np.zeros(N_FCFG, dtype=np.float64)
        self.fcfg[F_MAX_CHANGE] = max_change
        self.fcfg[F_STEP_S] = cells.step_ms / 1000.0
        self.fcfg[F_W_UTIL] = reward.w_utilization
        self.fcfg[F_W_DELAY] = reward.w_delay
        self.fcfg[F_W_FAIR] = reward.w_fairness
        self.fcfg[F_BUDGET] = reward.delay_budget_ms
        self.fcfg[F_MAX_PENALTY] = reward.max_delay_penalty
        self.fcfg[F_MIN_CWND], self.fcfg[F_MAX_CWND] = MIN_CWND_BYTES, MAX_CWND_BYTES
        self.fcfg[F_MIN_RATE], self.fcfg[F_MAX_RATE] = MIN_RATE_MBPS, MAX_RATE_MBPS
        self.fcfg[F_ZEUS] = 1.0 if reward.form == "zeus" else 0.0
        self.fcfg[F_W_INV] = reward.w_inverse_delay
        self.fcfg[F_W_INTRA] = reward.w_intra_fairness
        self.fcfg[F_W_INTER] = reward.w_inter_fairness
        mode = {"cwnd": MODE_CWND, "rate": MODE_RATE}[action_mode]
        flow_ues = np.asarray(flow_ue).tolist()
        groups = np.asarray(flow_group, dtype=np.int64).tolist()
        self.icfg = np.array([mode, flow, cells.step_ms, *flow_ues, *groups], dtype=np.int64)
        batch = cells.batch
        self.a = np.zeros(batch, dtype=np.float64)
        self.advance = np.ones(batch, dtype=np.bool_)
        self.rate = np.zeros(batch, dtype=np.float64)
        self.obs = np.zeros((batch, len(OBS_FIELDS)), dtype=np.float32)
        self.terms = np.zeros((batch, len(REWARD_TERMS)), dtype=np.float64)
        self._fn = over_cells(env_step, batch, cells.threads)
        self._args = (
            self.a, self.advance, self.fcfg, self.rate, self.icfg,
            OBS_RAW_COLUMNS.astype(np.int64), OBS_ACKED, OBS_HIGH, self.obs, self.terms,
            *cells.kernel_args,
        )  # fmt: skip

    def step(self) -> None:
        """Step the cells selected by ``advance`` with actions ``a``; observe every cell."""
        self._fn(*self._args)
