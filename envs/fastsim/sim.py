"""``FastCellBatch``: B independent cells of one scenario advanced in lockstep by the kernel."""

from __future__ import annotations

import numba
import numpy as np

from cellgym.draws import Draws, draw
from cellgym.fields import UE
from envs.fastsim.bottleneck import BS_DROPS, BS_LEN, BS_QDELAY_MS, BS_QMAX, BS_SENT
from envs.fastsim.channel import _place_ue
from envs.fastsim.driver import reset_batch, step_batch
from envs.fastsim.params import FastSimParams
from envs.fastsim.state import CS_T_MS, CellState
from envs.fastsim.threads import over_cells
from envs.fastsim.trace_capacity import NO_TRACE, TraceCapacity
from envs.fastsim.workload import ParetoWorkload, has_pareto

#: From this many cells on, the batch is spread over threads (``envs.fastsim.threads``), provided
#: numba is given at least ``PARALLEL_MIN_THREADS`` threads (``NUMBA_NUM_THREADS``). On the
#: 2-core development machine, shared with other processes, threads that wait at the end of every
#: step for a descheduled sibling made 64 cells 18x and 1024 cells up to 3x slower than one
#: thread (bench/README.md).
PARALLEL_MIN_CELLS = 256
PARALLEL_MIN_THREADS = 4


def draws_row(params: FastSimParams, d: Draws) -> np.ndarray:
    """A cell's row of the draws table (``CellState.dr``) from its run's draws.

    Random moves first (UE ``u`` after move ``k + 1`` at ``k * U + u``), then each UDP source's
    ON/OFF periods in ms (``params.P_DRAW_*``).
    """
    row = np.zeros(params.draws_len)
    k, u = d.moves_m.shape
    row[: k * u] = d.moves_m.reshape(-1)
    for i, periods in enumerate(d.udp_periods_s):
        n = periods.size
        row[k * u + i * n : k * u + (i + 1) * n] = periods * 1000.0
    return row


class FastCellBatch:
    """``B`` cells of one scenario; each has its own seed, RNG and state.

    Args:
        params: The frozen parameters (scenario and model knobs).
        batch: Number of cells ``B``.
        parallel: Spread cells over threads (``numba.get_num_threads()`` of them, at least
            two); ``None`` decides by batch size.
    """

    def __init__(self, params: FastSimParams, batch: int, parallel: bool | None = None) -> None:
        if batch < 1:
            raise ValueError(f"batch={batch!r}: allowed [1, inf)")
        self.params = params
        self.batch = batch
        self.state = CellState.zeros(params, batch)
        self._p = params.scalars()
        self._fc = params.flow_config()
        self._tbs = params.tbs_table()
        self._cqi = params.cqi_table()
        self._bnp = params.bottleneck_table()
        self._dist0 = params.initial_distances()
        # The run's draws of each cell (``cellgym.draws``), set at its reset.
        self.draws: list[Draws | None] = [None] * batch
        self._offs = np.zeros((batch, params.num_flows), dtype=np.int64)
        # A trace channel: the capacity of every slot (trace_capacity); else an unread stub.
        self.trace = TraceCapacity(params, batch) if params.trace_driven else None
        self._trc = self.trace.array if self.trace is not None else NO_TRACE
        self._agents = np.array(params.spec.agent_flows, dtype=np.int64)
        if parallel is None:
            parallel = (
                batch >= PARALLEL_MIN_CELLS and numba.get_num_threads() >= PARALLEL_MIN_THREADS
            )
        self.parallel = bool(parallel)
        #: Threads that step the cells (1: the calling thread alone).
        self.threads = max(numba.get_num_threads(), 2) if self.parallel else 1
        self._step = over_cells(step_batch, batch, self.threads)
        # The state's arrays never move: build the kernel's argument tuple once (per-step Python
        # overhead dominates a single cell's step).
        self._arrays = self.state.arrays()
        self._args = (self._p, self._fc, self._tbs, self._cqi, self._trc, self._bnp, *self._arrays)
        self._act = self.state.act
        self._cs = self.state.cs
        self._step_ttis = int(params.step_ttis)
        self._sim_ms = int(params.sim_ms)
        # Streams of finite flows on reused slots (``traffic: pareto``), driven between steps.
        self.workload = ParetoWorkload(params, self.state) if has_pareto(params.spec) else None

    @property
    def t_ms(self) -> np.ndarray:
        """``[B]`` each cell's clock in ms (a view of the kernel state)."""
        return self._cs[:, CS_T_MS]

    @property
    def kernel_args(self) -> tuple:
        """The kernel's arguments after ``n_ttis``: parameters, tables and state arrays."""
        return self._args

    @property
    def step_ms(self) -> int:
        """TTIs per environment step."""
        return self._step_ttis

    @property
    def sim_ms(self) -> int:
        """Episode length in ms."""
        return self._sim_ms

    def reset(self, seeds: np.ndarray, mask: np.ndarray | None = None) -> None:
        """Reset the cells selected by ``mask`` (all by default), cell ``i`` from ``seeds[i]``.

        A cell's seed is its run's ``RngRun``: the run's draws (``cellgym.draws``: start
        offsets, random moves, Pareto arrivals, UDP periods) are those an ns-3 run with that
        ``RngRun`` takes, and ``draws[i]`` keeps them.
        """
        seeds = np.asarray(seeds, dtype=np.int64).reshape(self.batch)
        if mask is None:
            mask = np.ones(self.batch, dtype=np.bool_)
        mask = np.asarray(mask, dtype=np.bool_)
        if self.trace is not None:
            self.trace.reset(seeds, mask)
        for b in np.flatnonzero(mask):
            d = draw(self.params.spec, int(seeds[b]))
            self.draws[b] = d
            self._offs[b] = d.start_offset_ms if self.params.start_offsets else 0
            self.state.dr[b] = draws_row(self.params, d)
        reset_batch(
            mask, seeds, self._offs, self._p, self._fc, self._cqi, self._dist0, *self._arrays,
        )  # fmt: skip
        if self.workload is not None:
            self.workload.reset(mask, self.draws)

    def step(self, actions: np.ndarray | None = None) -> None:
        """Advance every cell by one step; ``actions`` is ``[B, A, 2]`` (cwnd B, pacing Mbit/s)."""
        if actions is not None and self._agents.size:
            a = np.asarray(actions, dtype=np.float64).reshape(self.batch, self._agents.size, 2)
            if self._agents.size == 1:
                f = int(self._agents[0])
                self._act[:, f, 0:2] = a[:, 0]
                self._act[:, f, 2] = 1.0
            else:
                self._act[:, self._agents, 0:2] = a
                self._act[:, self._agents, 2] = 1.0
        if self.workload is None:
            self._step(self._step_ttis, *self._args)
            return
        self.workload.before_step(self.t_ms, self._step_ttis)
        self._step(self._step_ttis, *self._args)
        self.workload.after_step()

    def set_distances(self, distances_m: np.ndarray) -> None:
        """Move the UEs now: ``[B, U]`` distances in metres (replaying a trace, e.g. ns-3's).

        The channel (MCS; NR: LOS state and correlated shadowing, drawn from the cell's RNG)
        follows at once; used with ``mobility="static"`` so that the kernel's own random moves
        do not interfere.
        """
        d = np.asarray(distances_m, dtype=np.float64).reshape(self.batch, -1)
        n_ues = self.state.ue.shape[1]
        if d.shape[1] != n_ues:
            raise ValueError(f"distances_m has {d.shape[1]} UEs per cell: expected {n_ues}")
        if not np.all((d >= 1.0) & (d <= 100_000.0)):
            raise ValueError("distances_m out of range: allowed [1, 100000] m")
        for b in range(self.batch):
            for u in range(n_ues):
                _place_ue(
                    b, u, float(d[b, u]), False, self._p, self._cqi, self.state.ue, self.state.rng
                )
                self.state.obs_ues[b, u, UE["distance_m"]] = d[b, u]

    def bottleneck(self) -> dict[str, np.ndarray]:
        """The wired bottleneck of each cell (``[B]`` arrays; zeros without a bottleneck).

        ``queue_pkts`` (now, the packet on a constant-rate link's wire included), ``max_queue_pkts``
        (the most since the previous call, which restarts it), ``drops`` and ``sent_pkts`` (since
        reset), ``delay_ms`` (queueing and transmission delay of the latest packet sent).
        """
        s = self.state.bqs
        out = {
            "queue_pkts": s[:, BS_LEN].copy(),
            "max_queue_pkts": s[:, BS_QMAX].copy(),
            "drops": s[:, BS_DROPS].copy(),
            "sent_pkts": s[:, BS_SENT].copy(),
            "delay_ms": s[:, BS_QDELAY_MS].copy(),
        }
        s[:, BS_QMAX] = s[:, BS_LEN]
        return out

    @property
    def flows(self) -> np.ndarray:
        """``[B, F, 18]`` the latest flow observation (a view)."""
        return self.state.obs_flows

    @property
    def ues(self) -> np.ndarray:
        """``[B, U, 7]`` the latest UE observation (a view)."""
        return self.state.obs_ues

    @property
    def done(self) -> np.ndarray:
        """``[B]`` whether each cell reached the end of its episode."""
        return self.t_ms >= self._sim_ms
