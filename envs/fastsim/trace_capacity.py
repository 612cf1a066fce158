"""Trace-driven cell capacity: the bytes of each slot come from a capacity series.

With ``channel.source`` a trace (``mahimahi``, ``irish5g``, ``synthetic``), the series of
``cellgym.traces.channel_series`` is the cell's capacity per TTI/slot: what one UE holding every
resource block of the slot gets. The MAC still schedules (PF, RR, HARQ off: the trace already
is the delivered capacity); a UE given ``rbs`` of the ``usable`` RBs gets ``rbs / usable`` of the
slot's bytes (``_trace_tb``), and XRC's agent counts the idle RBs' share of the slot's bytes the
same way (``_trace_share``), so its capacity estimate and explicit rate follow the trace.

Rows: a series that does not depend on the run's seed (Mahimahi, or a fixed ``trace_seed``) is
one row shared by every cell; otherwise each cell has its own row, drawn from its seed (the
episode's ``RngRun``, as ns-3 draws it) at every reset. A row holds ``min(N, episode slots)``
slots: the kernel reads slot ``s`` of the episode at ``s % len``. Only those slots are synthesized
(``cellgym.traces.channel_head``: an Irish 5G cell's 20 s of an hour-long trace), and the rows of
cells reset together are synthesized on a few threads.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from cellgym.traces import channel_head

#: Threads that synthesize the rows of the cells reset together (numpy releases the GIL in the
#: draws and array loops; each row is its own generator's, so the rows are the same in any order).
RESET_THREADS = max(
    1,
    min(
        4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    ),
)
#: The kernel's capacity array when the channel is the distance model (never read).
NO_TRACE = np.zeros((1, 1), dtype=np.float64)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _trace_bytes(trc, b, slot):
    """Bytes the cell can deliver in ``slot`` of cell ``b``'s episode."""
    row = np.int64(0)
    if trc.shape[0] > 1:
        row = np.int64(b)  # int64 both ways: prange's b is unsigned (a mixed unify is float)
    return trc[row, slot % trc.shape[1]]


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _trace_share(trc, b, slot, rbs, usable):
    """Bytes of ``rbs`` (fractional) of the ``usable`` RBs in ``slot``: their share of the trace."""
    if rbs <= 0:
        return 0.0
    return _trace_bytes(trc, b, slot) * min(rbs, usable) / usable


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _trace_tb(trc, b, slot, rbs, usable):
    """A new transport block on ``rbs`` RBs: whole bytes of its share of the slot's capacity."""
    return float(int(_trace_share(trc, b, slot, float(rbs), float(usable))))


def seed_dependent(channel) -> bool:
    """Whether the series changes with the run's seed (a synthesis or generator, no fixed seed)."""
    return channel.source != "mahimahi" and channel.trace_seed is None


class TraceCapacity:
    """The ``[rows, slots]`` capacity array a batch of cells replays (``FastCellBatch``).

    Args:
        params: The cell's parameters (``params.trace_driven`` true).
        batch: Cells in the batch.
    """

    def __init__(self, params, batch: int) -> None:
        spec = params.spec
        self._channel = spec.channel
        self._slot_s = float(spec.cell.slot_s)
        self._episode_slots = max(1, int(params.sim_ms) * int(params.slots_per_ms))
        self.per_cell = seed_dependent(self._channel)
        rows = batch if self.per_cell else 1
        first = self.head(0)
        self.length = first.size  # min(series length, episode slots)
        self.array = np.zeros((rows, self.length), dtype=np.float64)
        if not self.per_cell:
            self.array[0] = first

    def head(self, seed: int) -> np.ndarray:
        """The episode's slots of the series of a run with ``seed`` (the episode's ``RngRun``).

        ``channel_series(...).bytes[:episode slots]``, synthesizing only those slots.
        """
        return channel_head(self._channel, self._slot_s, int(seed), self._episode_slots)

    def reset(self, seeds: np.ndarray, mask: np.ndarray) -> None:
        """Draw the rows of the cells being reset (seed-dependent series only)."""
        if not self.per_cell:
            return
        cells = [int(b) for b in np.flatnonzero(mask)]
        if len(cells) > 1 and RESET_THREADS > 1:
            with ThreadPoolExecutor(min(RESET_THREADS, len(cells))) as pool:
                rows = pool.map(lambda b: self.head(int(seeds[b])), cells)
                for b, row in zip(cells, rows, strict=True):
                    self.array[b] = row
            return
        for b in cells:
            self.array[b] = self.head(int(seeds[b]))
