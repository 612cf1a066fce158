"""The ns-3 backend: one scenario process per episode (``cellgym-lte``), through the bridge."""

from __future__ import annotations

import logging

import numpy as np

from cellgym.fields import FLOW_FIELDS, UE_FIELDS
from cellgym.paths import ns3_program
from cellgym.scenario import ScenarioSpec
from envs.bridge import Ns3Bridge, SimulatorError
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
    """

    def __init__(
        self, spec: ScenarioSpec, seed: int, timeout_s: float = 60.0, program: str | None = None
    ) -> None:
        self.spec = spec
        self.seed = seed
        self.args = spec.to_ns3_args(seed)
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
        self._bridge = Ns3Bridge(self.program, self.args, timeout_s=self.timeout_s)
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
            return self._raw(obs, done=False)
        except BaseException:
            self.close()
            raise

    def step(self, actions: np.ndarray) -> RawStep:
        """Apply ``[A, 2]`` absolute actions and advance one step."""
        if self._bridge is None:
            raise RuntimeError("call start() first")
        actions = np.asarray(actions, dtype=np.float64).reshape(self._n_agents, 2)
        obs, done, _ = self._bridge.step(actions)
        return self._raw(obs, done)

    def close(self) -> None:
        """End the simulator; idempotent."""
        if self._bridge is not None:
            self._bridge.close()
            self._bridge = None

    def _raw(self, obs: dict[str, np.ndarray], done: bool) -> RawStep:
        n_f, n_u = len(self.spec.flows), self.spec.num_ues
        return RawStep(
            t=float(obs["time"].reshape(-1)[0]),
            flows=np.asarray(obs["flows"], dtype=np.float64).reshape(n_f, len(FLOW_FIELDS)),
            ues=np.asarray(obs["ues"], dtype=np.float64).reshape(n_u, len(UE_FIELDS)),
            done=done,
        )
