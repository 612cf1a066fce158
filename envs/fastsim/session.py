"""The fast backend's ``Session``: one cell, the same ``RawStep`` records as ns-3."""

from __future__ import annotations

import numpy as np

from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec
from envs.fastsim.params import FastSimParams
from envs.fastsim.sim import FastCellBatch
from envs.fastsim.single import EnvStepper
from envs.records import RawStep


class FastSession:
    """One episode of one cell on the fast simulator (``open_session(..., backend="fast")``).

    Args:
        spec: The scenario.
        seed: The run's seed (the ns-3 ``RngRun`` the environment drew): seeds the cell's RNG.
        params: Model knobs; built from ``spec`` with defaults when ``None``.
    """

    def __init__(self, spec: ScenarioSpec, seed: int, params: FastSimParams | None = None) -> None:
        self.params = params if params is not None else FastSimParams.from_spec(spec)
        self.seed = int(seed)
        self._num_agents = len(self.params.spec.agent_flows)
        self._cell: FastCellBatch | None = None
        self._done = False

    def _raw(self) -> RawStep:
        cell = self._cell
        assert cell is not None
        t_ms = int(cell.t_ms[0])
        self._done = t_ms >= cell.sim_ms
        return RawStep(t_ms / 1000.0, cell.flows[0].copy(), cell.ues[0].copy(), self._done)

    def start(self) -> RawStep:
        """Reset the cell to t = 0 and return the initial observation."""
        self._cell = FastCellBatch(self.params, 1, parallel=False)
        self._cell.reset(np.array([self.seed]))
        self._done = False
        return self._raw()

    def step(self, actions: np.ndarray) -> RawStep:
        """Apply ``[A, 2]`` actions (cwnd bytes, pacing Mbit/s per agent flow); advance a step."""
        if self._cell is None:
            raise RuntimeError("call start() before step()")
        if self._done:
            raise RuntimeError("the episode has ended: start a new session")
        acts = np.asarray(actions, dtype=np.float64)
        if acts.size != 2 * self._num_agents:
            raise ValueError(
                f"actions has shape {acts.shape}: expected ({self._num_agents}, 2) "
                "(cwnd_bytes, pacing_rate_mbps per agent flow)"
            )
        self._cell.step(acts if self._num_agents else None)
        return self._raw()

    @property
    def cell(self) -> FastCellBatch:
        """The running cell (a batch of one); raises before ``start()``."""
        if self._cell is None:
            raise RuntimeError("no episode is running: call reset() first")
        return self._cell

    def fused_stepper(
        self,
        *,
        action_mode: str,
        max_change: float,
        flow: int,
        flow_ue: np.ndarray,
        reward: RewardSpec,
        flow_group: np.ndarray | None = None,
    ) -> EnvStepper:
        """A one-call environment step on the running cell (for ``step_env``)."""
        return EnvStepper(
            self.cell,
            action_mode=action_mode,
            max_change=max_change,
            flow=flow,
            flow_ue=flow_ue,
            reward=reward,
            flow_group=flow_group,
        )

    def step_env(self, stepper: EnvStepper, a: float) -> RawStep:
        """One ``LteCellEnv`` step in one compiled call (``envs.fastsim.single``).

        ``stepper`` was built on ``cell``; ``a`` is the clipped relative action. The agent's
        observation lands in ``stepper.obs[0]`` and the reward terms in ``stepper.terms[0]``:
        the same result as ``step`` after the environment's Python path.
        """
        if self._cell is None:
            raise RuntimeError("call start() before step_env()")
        if self._done:
            raise RuntimeError("the episode has ended: start a new session")
        stepper.a[0] = a
        stepper.step()
        return self._raw()

    def set_distances(self, distances_m: np.ndarray) -> None:
        """Move the cell's UEs now (``[U]`` metres): replays a distance trace, e.g. ns-3's."""
        if self._cell is None:
            raise RuntimeError("call start() before set_distances()")
        self._cell.set_distances(np.asarray(distances_m, dtype=np.float64).reshape(1, -1))

    def close(self) -> None:
        """Release the cell; idempotent."""
        self._cell = None
