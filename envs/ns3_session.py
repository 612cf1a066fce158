"""The ns-3 backend: one scenario process per episode (``cellgym-lte``), through the bridge.

The scenario program declares flat spaces on the wire (ns3-gym's client expects 1-D boxes): the
observation ``flows`` of ``F * 18`` values, ``ues`` of ``U * 7``, ``time`` of 1, and the action of
``2 * A`` values. The session knows ``F``, ``U`` and ``A`` from the scenario, checks the declared
sizes against them and hands out ``[F, 18]`` / ``[U, 7]`` arrays.
"""

from __future__ import annotations

import logging

import gymnasium as gym
import numpy as np

from cellgym.fields import FLOW_FIELDS, UE_FIELDS
from cellgym.paths import ns3_program
from cellgym.scenario import ScenarioSpec
from envs.bridge import Ns3Bridge, SimulatorError
from envs.ns3_capacity import CapacityFile
from envs.ns3_draws import DrawsFile
from envs.records import RawStep

log = logging.getLogger(__name__)


class Ns3Session:
    """An episode of ``spec`` on the real simulator with ``RngRun = seed``.

    Args:
        spec: The scenario.
        seed: ns-3 ``RngRun`` (>= 1).
        timeout_s: Longest wait for one simulator step.
        program: The scenario executable (default: the CMake build's program of the cell type,
            ``spec.cell.ns3_program``).
        reply_ahead: Without agent flows, answer each step before decoding it (the simulator
            runs on while Python stores the step); False keeps strict lock step (the benchmark's
            reference).
    """

    def __init__(
        self,
        spec: ScenarioSpec,
        seed: int,
        timeout_s: float = 60.0,
        program: str | None = None,
        reply_ahead: bool = True,
    ) -> None:
        self.spec = spec
        self.reply_ahead = reply_ahead
        self.seed = seed
        self.args = spec.to_ns3_args(seed)
        # A trace channel: the episode's capacity file (removed on close).
        self._capacity = CapacityFile(spec, seed)
        self.args += self._capacity.args
        # The run's random draws (start offsets, moves, Pareto arrivals), as the fast backend's.
        self._draws = DrawsFile(spec, seed)
        self.args += self._draws.args
        self.program = program or ns3_program(spec.cell.ns3_program)
        self.timeout_s = timeout_s
        self._bridge: Ns3Bridge | None = None
        self._n_agents = len(spec.agent_flows)

    @property
    def pid(self) -> int | None:
        """The simulator's process id while it runs."""
        return self._bridge.pid if self._bridge is not None else None

    def start(self) -> RawStep:
        """Start the simulator and return the observation at t = 0."""
        # Without agent flows every action is empty: answer each step before decoding it, so the
        # simulator runs on while Python stores the observation.
        ahead = np.zeros(0) if self._n_agents == 0 and self.reply_ahead else None
        if self._bridge is not None:  # a restart: the last episode's simulator goes first
            self._bridge.close()
        self._bridge = Ns3Bridge(
            self.program, self.args, timeout_s=self.timeout_s, reply_ahead=ahead
        )
        try:
            obs, info = self._bridge.start()
            if isinstance(info, dict) and "flow_fields" in info:
                if (
                    tuple(info["flow_fields"]) != FLOW_FIELDS
                    or tuple(info.get("ue_fields", UE_FIELDS)) != UE_FIELDS
                ):
                    raise SimulatorError(
                        "the scenario program's columns differ from cellgym.fields: rebuild it "
                        f"(flow_fields={info['flow_fields']}, ue_fields={info.get('ue_fields')})"
                    )
            self._check_spaces(self._bridge.observation_space, self._bridge.action_space)
            return self._raw(obs, done=False)
        except BaseException:
            self.close()
            raise

    def step(self, actions: np.ndarray) -> RawStep:
        """Apply ``[A, 2]`` absolute actions and advance one step."""
        if self._bridge is None:
            raise RuntimeError("no episode is running: call reset() first")
        actions = np.asarray(actions, dtype=np.float64).reshape(self._n_agents, 2)
        obs, done, _ = self._bridge.step(actions)
        return self._raw(obs, done)

    def close(self) -> None:
        """End the simulator; idempotent."""
        if self._bridge is not None:
            self._bridge.close()
            self._bridge = None
        self._capacity.remove()
        self._draws.remove()

    def _check_spaces(self, obs_space: gym.Space | None, act_space: gym.Space | None) -> None:
        """Raise ``SimulatorError`` unless the declared spaces hold this scenario's F, U and A."""
        n_f, n_u = len(self.spec.flows), self.spec.num_ues
        expected = {
            "flows": n_f * len(FLOW_FIELDS),
            "ues": n_u * len(UE_FIELDS),
            "time": 1,
        }
        problems = []
        if not isinstance(obs_space, gym.spaces.Dict) or set(obs_space.spaces) != set(expected):
            problems.append(f"observation space {obs_space}: expected a Dict of {sorted(expected)}")
        else:
            for name, size in expected.items():
                shape = getattr(obs_space[name], "shape", None)
                if shape is None or int(np.prod(shape)) != size:
                    problems.append(
                        f"observation '{name}' has shape {shape}: expected {size} values"
                    )
        act_shape = getattr(act_space, "shape", None)
        if act_shape is None or int(np.prod(act_shape)) != 2 * self._n_agents:
            problems.append(
                f"action space has shape {act_shape}: expected {2 * self._n_agents} values "
                "(cwnd_bytes, pacing_rate_mbps per agent flow)"
            )
        if problems:
            raise SimulatorError(
                f"the scenario program's spaces do not match the scenario (F={n_f} flows, "
                f"U={n_u} UEs, A={self._n_agents} agent flows): "
                + "; ".join(problems)
                + ". Rebuild the program or check the scenario's arguments"
            )

    def _raw(self, obs: dict[str, np.ndarray], done: bool) -> RawStep:
        n_f, n_u = len(self.spec.flows), self.spec.num_ues
        return RawStep(
            t=float(obs["time"].reshape(-1)[0]),
            flows=np.asarray(obs["flows"], dtype=np.float64).reshape(n_f, len(FLOW_FIELDS)),
            ues=np.asarray(obs["ues"], dtype=np.float64).reshape(n_u, len(UE_FIELDS)),
            done=done,
        )
