"""The LTE cell environment: one flow's congestion control, driven step by step."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from cellgym.fields import UE
from cellgym.reward import RewardSpec, fairness_groups, reward_terms
from cellgym.scenario import ScenarioSpec
from cellgym.seeding import draw_rng_run
from cellgym.vocab import check_range, check_type
from envs.contract import (
    OBS,
    OBS_FIELDS,
    REWARD_TERMS,
    action_space,
    agent_flow,
    check_env_args,
    flow_command,
    flow_observation,
    observation_space,
)
from envs.session import RawStep, Session, check_backend_supports, open_session

__all__ = ["LteCellEnv", "OBS", "OBS_FIELDS"]


class LteCellEnv(gym.Env[np.ndarray, np.ndarray]):
    """Congestion control of one TCP flow in an LTE cell, with the base station's explicit feedback.

    ## Description
    One eNB (50 RBs by default), EPC, one or more UEs and TCP downloads from remote servers, as in
    the XRC paper. One flow (``cca="agent"`` in the scenario) is driven by the policy; the others
    run ns-3's own congestion controls beside it. The XRC base-station agent estimates each flow's
    fair share of the UE's capacity and the RLC head-of-line delay and piggybacks both on uplink
    ACKs, so the policy sees them with the real uplink delay.

    ## Action Space
    ``Box(-1, 1, (1,), float32)``: a relative change per step. With ``action_mode="cwnd"`` the new
    congestion window is ``cwnd * max_change ** a`` (bytes, clipped to [2 segments, 1e9]); with
    ``action_mode="rate"`` the pacing rate becomes ``rate * max_change ** a`` (Mbit/s, clipped to
    [0.05, 1e4]) and the window is set to ``2 * rate * rtt_min`` (at least 4 segments), so pacing
    sets the pace. The window is held by the agent's ``TcpCongestionOps`` outside loss recovery;
    a command takes effect at once (a window that opens room is sent into at the step boundary).

    ## Observation Space
    ``Box(0, high, (11,), float32)``, values of the controlled flow at the end of the step:

    | idx | name | unit | min | max | meaning |
    |-----|------|------|-----|-----|---------|
    | 0 | fair_rate_mbps | Mbit/s | 0 | 1e4 | fair-share rate C_i, as last received on an ACK |
    | 1 | hol_delay_ms | ms | 0 | 1e5 | RLC head-of-line delay of the UE, as last received |
    | 2 | rtt_last_ms | ms | 0 | 1e5 | latest RTT sample |
    | 3 | rtt_min_ms | ms | 0 | 1e5 | minimum RTT since the flow started |
    | 4 | rtt_mean_ms | ms | 0 | 1e5 | mean RTT over the step |
    | 5 | cwnd_bytes | B | 0 | 1e10 | congestion window |
    | 6 | bytes_in_flight | B | 0 | 1e10 | unacknowledged bytes |
    | 7 | delivery_rate_mbps | Mbit/s | 0 | 1e4 | bytes acknowledged in the step, as a rate |
    | 8 | loss_events | count | 0 | 1e6 | entries into fast recovery or RTO in the step |
    | 9 | retx_segments | count | 0 | 1e6 | retransmitted segments in the step |
    | 10 | pacing_rate_mbps | Mbit/s | 0 | 1e4 | current pacing rate (0: no pacing) |

    ## Rewards
    ``w_utilization * utilization - w_delay * delay_penalty + w_fairness * jain``
    (``cellgym.reward``): utilization = delivered / available rate of the flow's UE in the step;
    delay penalty = ``max(0, d - budget) / budget`` with ``d = max(HoL, RTT_mean - RTT_min)`` and a
    10 ms budget by default; Jain's index over the cell's active flows. ``info`` holds each term.
    With ``reward.form="zeus"`` (presets ``zeus_realtime``, ``zeus_bulk``, ``zeus_mixed``) the
    reward is the Zeus paper's four-term score per step, ``w_utilization * utilization +
    w_inverse_delay * inverse_delay + w_intra_fairness * intra_jain + w_inter_fairness *
    inter_jain`` (``docs/zeus.md``); ``info`` holds those terms under both forms.

    ## Starting State
    ``reset(seed=...)`` seeds ``np_random`` and draws the ns-3 ``RngRun`` of the episode from it
    (same seed, same trajectory). A fresh simulation starts at t = 0 and the first observation is
    that instant's (zeros until traffic flows).

    ## Episode End
    Terminated when simulated time reaches ``scenario.sim_time_s``; never truncated by the
    environment itself (``gymnasium.make(..., max_episode_steps=N)`` adds a time limit).

    ## Arguments
    | name | default | meaning |
    |------|---------|---------|
    | scenario | ``ScenarioSpec()`` | the cell (``cellgym.scenario.ScenarioSpec`` or a mapping) |
    | reward | ``RewardSpec()`` | reward weights and delay budget |
    | backend | ``"ns3"`` | simulator backend |
    | action_mode | ``"cwnd"`` | ``"cwnd"`` or ``"rate"`` |
    | max_change | 2.0 | largest factor by which one step changes the window or rate |
    | timeout_s | 60.0 | longest wait for one step before ``SimulatorTimeout`` (at most a day) |
    | fast_params | ``None`` | fast backend: ``FastSimParams`` overrides, ``{"uplink": "bsr"}`` |

    ``info`` also carries ``t`` (s), ``rng_run``, and ``flows``/``ues``: the step's raw per-flow and
    per-UE arrays (columns in ``cellgym.fields``).

    On the fast backend a step is one compiled call (``envs.fastsim.single``) with the same
    arithmetic as the Python path; set the attribute ``fused_step = False`` to run the Python path
    (the one the ns-3 backend runs), e.g. to check a change to it: trajectories are identical.

    ## Version History
    - v0: initial version.

    >>> import gymnasium as gym
    >>> import envs  # registers CellGym/*
    >>> env = gym.make("CellGym/LteSingleFlow-v0")
    >>> env.observation_space.shape, env.action_space.shape
    ((11,), (1,))
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        scenario: ScenarioSpec | dict[str, Any] | None = None,
        reward: RewardSpec | dict[str, Any] | None = None,
        backend: str = "ns3",
        action_mode: str = "cwnd",
        max_change: float = 2.0,
        timeout_s: float = 60.0,
        fast_params: Mapping[str, Any] | None = None,
    ) -> None:
        self.spec_scenario = ScenarioSpec.from_config(scenario or ScenarioSpec())
        self.reward_spec = RewardSpec.from_config(reward)
        flow = agent_flow(self.spec_scenario)
        check_env_args(action_mode, max_change)
        #: The fast model's field overrides (checked; empty: the calibrated defaults).
        self.fast_params = check_backend_supports(self.spec_scenario, backend, fast_params)
        check_type("timeout_s", timeout_s, "float")
        check_range("timeout_s", timeout_s, 1e-3, 86_400.0)
        self.backend = backend
        self.action_mode = action_mode
        self.max_change = float(max_change)
        self.timeout_s = float(timeout_s)
        self.flow = flow
        self.flow_ue = np.array([f.ue for f in self.spec_scenario.flows])
        self.flow_group = fairness_groups([f.cca for f in self.spec_scenario.flows], flow)
        self.step_s = self.spec_scenario.step_ms / 1000.0
        self.observation_space = observation_space()
        self.action_space = action_space()
        self._session: Session | None = None
        self._last: RawStep | None = None
        self._rate_mbps = 0.0
        self.rng_run = 0
        # The fast backend runs a whole step (action, kernel, observation, reward) in one compiled
        # call with the same arithmetic (envs.fastsim.single); False forces the Python path.
        self.fused_step = backend == "fast"
        self._fused: Any = None

    # -- Gymnasium API -------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a new simulation; ``seed`` fixes its ns-3 ``RngRun`` through ``np_random``."""
        super().reset(seed=seed)
        self._close_session()
        self.rng_run = draw_rng_run(self.np_random)
        self._session = open_session(
            self.spec_scenario,
            self.rng_run,
            backend=self.backend,
            timeout_s=self.timeout_s,
            fast_params=self.fast_params,
        )
        self._last = self._session.start()
        self._rate_mbps = 0.0
        self._fused = self._make_stepper() if self.fused_step else None
        info = self._info(self._last)
        return self._observe(self._last), info

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Apply the relative change ``action`` for one step."""
        if self._session is None or self._last is None:
            raise RuntimeError("call reset() before step()")
        if self._last.done:
            raise RuntimeError("the episode has ended: call reset()")
        a = float(np.asarray(action).reshape(-1)[0])
        if not math.isfinite(a):
            raise ValueError(f"action={action!r} is not finite: allowed [-1, 1]")
        a = min(1.0, max(-1.0, a))
        if self._fused is not None:
            raw = self._session.step_env(self._fused, a)  # type: ignore[attr-defined]
            observation = self._fused.obs[0].copy()
            terms = dict(zip(REWARD_TERMS, self._fused.terms[0].tolist(), strict=True))
        else:
            raw = self._session.step(self._command(a))
            terms = reward_terms(
                raw.flows,
                raw.ues,
                self.flow_ue,
                self.flow,
                self.step_s,
                self.reward_spec,
                self.flow_group,
            )
            observation = self._observe(raw)
        self._last = raw
        # The fused path never reads ``_last``'s arrays again: info may own them without a copy.
        info = self._info(raw, copy=self._fused is None)
        info.update(terms)
        if raw.done:
            self._close_session()
        return observation, terms["reward"], raw.done, False, info

    def close(self) -> None:
        """Stop the simulator, if one runs."""
        self._close_session()
        super().close()

    # -- helpers -------------------------------------------------------------------------------
    def _close_session(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None

    def _make_stepper(self) -> Any:
        """The backend's one-call step, where it has one (the fast backend: ``fused_stepper``)."""
        make = getattr(self._session, "fused_stepper", None)
        if make is None:
            return None
        return make(
            action_mode=self.action_mode,
            max_change=self.max_change,
            flow=self.flow,
            flow_ue=self.flow_ue,
            reward=self.reward_spec,
            flow_group=self.flow_group,
        )

    def _command(self, a: float) -> np.ndarray:
        """Turn the relative action into the absolute ``[1, 2]`` (cwnd bytes, pacing Mbit/s)."""
        assert self._last is not None
        cwnd, pacing, self._rate_mbps = flow_command(
            self._last.flows[self.flow], a, self.action_mode, self.max_change, self._rate_mbps
        )
        return np.array([[cwnd, pacing]])

    def _observe(self, raw: RawStep) -> np.ndarray:
        return flow_observation(raw.flows, self.flow, self.step_s)

    def _info(self, raw: RawStep, copy: bool = True) -> dict[str, Any]:
        return {
            "t": raw.t,
            "rng_run": self.rng_run,
            "flows": raw.flows.copy() if copy else raw.flows,
            "ues": raw.ues.copy() if copy else raw.ues,
            "capacity_mbps": float(raw.ues[self.flow_ue[self.flow], UE["capacity_mbps"]]),
        }
