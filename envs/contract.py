"""The environment contract: observation table, limits, action modes and reward terms, once.

``LteCellEnv`` (both backends), the PettingZoo ``MultiFlowEnv``, the fast one-call step
(``envs.fastsim.single``), the fast ``VectorEnv`` and the multi-agent ``FastMultiAgentVecEnv``
all read this module, so the observation's columns, their bounds and the action's limits cannot
drift apart between them. How a relative action becomes a command and raw values an observation
is written here in two forms: one flow (``flow_command``, ``flow_observation``) and arrays of
flows (``flow_commands``, ``flow_observations``, the multi-agent vector env's batch; one flow's
observation is the array form of its row). The fused fast step keeps its compiled copy of both
(``envs.fastsim.single``, the same float64 operations), as the reward has its one-cell, batch
(``cellgym.reward``) and compiled forms.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from cellgym.fields import FLOW, SEGMENT_BYTES
from cellgym.reward import TERMS
from cellgym.scenario import ScenarioSpec
from cellgym.vocab import ACTION_MODES, SpecError, check_choice, check_max_change, check_type

#: Columns of the agent's observation: (name, raw flow column it comes from, upper bound).
#: ``delivery_rate_mbps`` is the step's acknowledged bytes turned into a rate.
OBS_TABLE: tuple[tuple[str, str, float], ...] = (
    ("fair_rate_mbps", "fb_rate_mbps", 1e4),
    ("hol_delay_ms", "fb_hol_ms", 1e5),
    ("rtt_last_ms", "rtt_last_ms", 1e5),
    ("rtt_min_ms", "rtt_min_ms", 1e5),
    ("rtt_mean_ms", "rtt_mean_ms", 1e5),
    ("cwnd_bytes", "cwnd_bytes", 1e10),
    ("bytes_in_flight", "bytes_in_flight", 1e10),
    ("delivery_rate_mbps", "acked_bytes", 1e4),
    ("loss_events", "loss_events", 1e6),
    ("retx_segments", "retx_segments", 1e6),
    ("pacing_rate_mbps", "pacing_rate_mbps", 1e4),
)
#: Observation column names, with their unit in the name.
OBS_FIELDS: tuple[str, ...] = tuple(name for name, _, _ in OBS_TABLE)
#: Observation column index by name.
OBS: dict[str, int] = {name: i for i, name in enumerate(OBS_FIELDS)}
#: Upper bounds of the observation (the lower bound is 0).
OBS_HIGH: np.ndarray = np.array([high for _, _, high in OBS_TABLE], dtype=np.float32)
#: Raw flow columns behind the observation, in its order.
OBS_RAW_COLUMNS: np.ndarray = np.array([FLOW[raw] for _, raw, _ in OBS_TABLE])
#: The observation column computed from acknowledged bytes (bytes -> Mbit/s over the step).
OBS_ACKED: int = OBS["delivery_rate_mbps"]

#: Limits of the window and the pacing rate that actions can set.
MIN_CWND_BYTES = 2 * SEGMENT_BYTES
MAX_CWND_BYTES = 1e9
MIN_RATE_MBPS = 0.05
MAX_RATE_MBPS = 1e4

#: Reward terms in ``info`` (``cellgym.reward``).
REWARD_TERMS: tuple[str, ...] = TERMS

__all__ = [
    "ACTION_MODES",
    "MAX_CWND_BYTES",
    "MAX_RATE_MBPS",
    "MIN_CWND_BYTES",
    "MIN_RATE_MBPS",
    "OBS",
    "OBS_ACKED",
    "OBS_FIELDS",
    "OBS_HIGH",
    "OBS_RAW_COLUMNS",
    "OBS_TABLE",
    "REWARD_TERMS",
    "action_space",
    "agent_flow",
    "check_env_args",
    "flow_command",
    "flow_commands",
    "flow_observation",
    "flow_observations",
    "observation_space",
]


def observation_space() -> spaces.Box:
    """``Box(0, OBS_HIGH, (11,), float32)``."""
    return spaces.Box(low=np.zeros_like(OBS_HIGH), high=OBS_HIGH, dtype=np.float32)


def action_space() -> spaces.Box:
    """``Box(-1, 1, (1,), float32)``: a relative change per step."""
    return spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)


def agent_flow(spec: ScenarioSpec) -> int:
    """The index of the one flow a single-agent environment drives; ``SpecError`` otherwise."""
    agents = spec.agent_flows
    if len(agents) != 1:
        raise SpecError(
            f"scenario.flows has {len(agents)} flows with cca='agent': this environment "
            "controls exactly one"
        )
    return agents[0]


def check_env_args(action_mode: str, max_change: float, **_: Any) -> None:
    """Validate the environment arguments shared by every environment class."""
    check_type("action_mode", action_mode, "str")
    check_choice("action_mode", action_mode, ACTION_MODES)
    check_type("max_change", max_change, "float")
    check_max_change(max_change)


def flow_observations(rows: np.ndarray, step_s: float) -> np.ndarray:
    """The observations (``OBS_TABLE``) of raw flow rows ``[..., FLOW_FIELDS]``: ``[..., 11]``.

    One flow's row gives its observation (``flow_observation``); the multi-agent vector env
    passes ``[B, A, FLOW_FIELDS]``, every agent flow of every cell.
    """
    vals = rows[..., OBS_RAW_COLUMNS]  # a float64 copy
    vals[..., OBS_ACKED] = vals[..., OBS_ACKED] * 8e-6 / step_s  # acked bytes -> Mbit/s
    obs = vals.astype(np.float32)
    np.minimum(obs, OBS_HIGH, out=obs)
    return np.maximum(obs, 0.0, out=obs)


def flow_observation(flows: np.ndarray, flow: int, step_s: float) -> np.ndarray:
    """The observation (``OBS_TABLE``) of ``flow`` from a step's raw ``[F, FLOW_FIELDS]`` array."""
    return flow_observations(flows[flow], step_s)


def flow_command(
    row: np.ndarray, a: float, action_mode: str, max_change: float, rate_mbps: float
) -> tuple[float, float, float]:
    """Turn a relative action into the absolute command of one agent flow.

    Args:
        row: The flow's raw values of the last step (``FLOW_FIELDS``).
        a: The clipped relative action in [-1, 1].
        action_mode: ``cwnd`` (the window changes by ``max_change ** a``) or ``rate`` (the pacing
            rate does; the window becomes twice the rate times the minimum RTT).
        max_change: Largest factor of one step.
        rate_mbps: The flow's pacing rate set by the previous action (0 before the first).

    Returns:
        ``(cwnd_bytes, pacing_rate_mbps, rate_mbps)``: the command (a pacing rate of 0 means no
        pacing) and the rate to pass back next step.
    """
    factor = max_change**a
    if action_mode == "cwnd":
        cwnd = row[FLOW["cwnd_bytes"]] or 10 * SEGMENT_BYTES
        return min(MAX_CWND_BYTES, max(MIN_CWND_BYTES, float(cwnd * factor))), 0.0, rate_mbps
    if rate_mbps <= 0:
        rate_mbps = row[FLOW["fb_rate_mbps"]] or 1.0
    rate_mbps = min(MAX_RATE_MBPS, max(MIN_RATE_MBPS, float(rate_mbps * factor)))
    rtt_min_s = (row[FLOW["rtt_min_ms"]] or 40.0) / 1000.0
    cwnd = max(4 * SEGMENT_BYTES, 2 * rate_mbps * 1e6 / 8 * rtt_min_s)
    return min(cwnd, MAX_CWND_BYTES), rate_mbps, rate_mbps


def flow_commands(
    rows: np.ndarray, a: np.ndarray, action_mode: str, max_change: float, rate_mbps: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``flow_command`` for arrays of agent flows (the multi-agent vector env's batch).

    Args:
        rows: ``[..., FLOW_FIELDS]`` the flows' raw values of the last step.
        a: ``[...]`` the clipped relative actions.
        action_mode: ``cwnd`` or ``rate`` (``flow_command``).
        max_change: Largest factor of one step.
        rate_mbps: ``[...]`` each flow's pacing rate set by its previous action (0 before).

    Returns:
        ``(cwnd_bytes, rate_mbps)``: the windows, and in ``rate`` mode the new pacing rates (in
        ``cwnd`` mode ``rate_mbps`` unchanged, no pacing). A NaN raw value stays NaN here, where
        ``flow_command``'s Python ``min``/``max`` return the bound.
    """
    factor = max_change**a
    if action_mode == "cwnd":
        cwnd = rows[..., FLOW["cwnd_bytes"]]
        cwnd = np.where(cwnd != 0, cwnd, 10 * SEGMENT_BYTES)
        return np.minimum(MAX_CWND_BYTES, np.maximum(MIN_CWND_BYTES, cwnd * factor)), rate_mbps
    fb = rows[..., FLOW["fb_rate_mbps"]]
    start = np.where(fb != 0, fb, 1.0)
    rate = np.where(rate_mbps > 0, rate_mbps, start)
    rate = np.minimum(MAX_RATE_MBPS, np.maximum(MIN_RATE_MBPS, rate * factor))
    rtt = rows[..., FLOW["rtt_min_ms"]]
    rtt_min_s = np.where(rtt != 0, rtt, 40.0) / 1000.0
    cwnd = np.maximum(4 * SEGMENT_BYTES, 2 * rate * 1e6 / 8 * rtt_min_s)
    return np.minimum(cwnd, MAX_CWND_BYTES), rate
