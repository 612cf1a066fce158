"""Pareto flow arrivals in the fast model: streams of finite flows on reused flow slots.

A ``pareto`` flow of the scenario is a *slot*; the slots with the same ue, cca, delay and
``pareto_*`` values form one stream (``cellgym.workload``). Per cell and stream, flows arrive with
exponential inter-arrival times and truncated-Pareto sizes: the run's draws (``cellgym.draws``,
from the cell's seed at reset: the same arrivals and sizes as an ns-3 run with that ``RngRun``;
an arrival starts at its ms, the model's tick). At each step boundary:

- **before the step**: the arrivals up to the step's end join the stream's FIFO; each takes a
  free slot and starts at its arrival time (the kernel holds it until then), or at the step's
  start if it had to wait. A new flow on a slot is a fresh connection: the slot's congestion
  control, RTT estimator and timers are put back to their values at reset (its handshake, initial
  window, slow start or XCP/RCP start), its sequence numbers continue where the slot's previous
  flow ended, and its application hands over the flow's size (whole 1448-byte segments, each an
  MTU on the wire).
- **after the step**: a flow is finished when the receiver's cumulative ACK covered its last
  segment (``X_W_DONE_MS``, set by the receiver in the kernel, to the ms). Its record: size,
  arrival, start (later than the arrival when it waited for a slot), end, and FCT = end -
  arrival (the paper's "SYN sent" to "last packet received", a wait for a slot included). The
  slot is free again once the sender has every ACK (nothing of the flow left in flight).

An arrival that finds every slot of its stream busy waits in the FIFO; ``waited`` counts those.
Slots freed within a step are taken at the next step boundary.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cellgym.draws import Draws, pareto_stream_start_s, pareto_streams
from envs.fastsim.params import P_SEG_BYTES, FastSimParams
from envs.fastsim.state import (
    I_CSTATE,
    I_DATA_MS,
    I_DUPACK_CNT,
    I_HANDED,
    I_RTO_AT_MS,
    I_RTO_HELD,
    I_RTO_MS,
    I_START_MS,
    I_UNA,
    X_B_CONSERVE,
    X_B_FILLED,
    X_B_PRTT_ROUND,
    X_BUDGET,
    X_C_CNT,
    X_CWND,
    X_MIN_RTT,
    X_PACING,
    X_PRR_DELIV,
    X_PRR_OUT,
    X_PRR_RFS,
    X_RTTVAR,
    X_SRTT,
    X_SSTHRESH,
    X_TOKENS,
    X_W_DONE_MS,
    X_W_TARGET,
    CellState,
)

#: A slot's start before a flow takes it: never (the kernel's clock stays below it).
IDLE_START_MS = 1 << 60
#: The real state a new flow puts back to its reset value: window, threshold, RTT estimator,
#: pacing, and the controls' own state (CUBIC, XRC, BBR, PRR); the observation sums, the
#: router's XCP feedback account and the ACK-stream counters carry on.
FRESH_X = np.array(
    [X_CWND, X_SSTHRESH, X_SRTT, X_RTTVAR, X_MIN_RTT, X_PACING, X_TOKENS]
    + list(range(X_C_CNT, X_B_FILLED + 1))
    + [X_B_CONSERVE, X_PRR_DELIV, X_PRR_OUT, X_PRR_RFS, X_B_PRTT_ROUND]
)
#: The integer state a new flow puts back: congestion state, RTO timer, duplicate ACK count.
FRESH_I = np.array([I_CSTATE, I_RTO_MS, I_RTO_AT_MS, I_DUPACK_CNT, I_RTO_HELD])

#: Fields of a finished flow's record (``ParetoWorkload.finished``).
RECORD_DTYPE = np.dtype(
    [
        ("cell", np.int64),
        ("stream", np.int64),
        ("slot", np.int64),
        ("size_pkts", np.int64),
        ("arrival_ms", np.int64),
        ("start_ms", np.int64),
        ("done_ms", np.float64),
        ("fct_s", np.float64),
    ]
)


def has_pareto(spec) -> bool:
    """Some flows are slots of a Pareto flow stream (``traffic: pareto``)."""
    return any(f.traffic == "pareto" for f in spec.flows)


@dataclass
class _Stream:
    slots: np.ndarray  # flow indices
    first_ms: float  # the stream's arrivals count from this


class ParetoWorkload:
    """The Pareto flow streams of a batch of cells (``FastCellBatch`` drives it).

    Args:
        params: The scenario's parameters (its ``pareto`` flows).
        state: The batch's state arrays.
    """

    def __init__(self, params: FastSimParams, state: CellState) -> None:
        spec = params.spec
        self.state = state
        self.batch = state.fi.shape[0]
        self.seg = float(params.scalars()[P_SEG_BYTES])
        self.streams = [
            _Stream(
                np.array(idx, dtype=np.int64),
                pareto_stream_start_s(spec, idx, params.attach_ms / 1000.0) * 1000.0,
            )
            for idx in pareto_streams(spec)
        ]
        b, s = self.batch, len(self.streams)
        # Per cell and stream: the drawn arrivals (ms) and sizes, and the next one's index.
        self._arr_ms: list[list[np.ndarray]] = [[] for _ in range(b)]
        self._arr_pkts: list[list[np.ndarray]] = [[] for _ in range(b)]
        self._next = np.zeros((b, s), dtype=np.int64)
        self._pending: list[list[list[tuple[int, int]]]] = [
            [[] for _ in range(s)] for _ in range(b)
        ]
        nf = state.fi.shape[1]
        self._busy = np.zeros((b, nf), dtype=np.int8)  # 0 free, 1 running, 2 done (draining)
        self._arrival = np.zeros((b, nf), dtype=np.int64)
        self._start = np.zeros((b, nf), dtype=np.int64)
        self._size = np.zeros((b, nf), dtype=np.int64)
        self._fx0 = np.zeros((b, nf, FRESH_X.size))
        self._fi0 = np.zeros((b, nf, FRESH_I.size), dtype=np.int64)
        self._handshake = np.zeros((b, nf), dtype=np.int64)
        self.records: list[list[tuple]] = [[] for _ in range(b)]
        self.arrivals = np.zeros(b, dtype=np.int64)
        self.waited = np.zeros(b, dtype=np.int64)

    def reset(self, mask: np.ndarray, draws: list[Draws | None]) -> None:
        """After the kernel's reset: idle slots and each cell's drawn arrivals (``draws[b]``)."""
        fi, fx = self.state.fi, self.state.fx
        for b in np.flatnonzero(mask):
            d = draws[b]
            assert d is not None and len(d.pareto) == len(self.streams)
            self._arr_ms[b] = [
                st.first_ms + a.after_ms for st, a in zip(self.streams, d.pareto, strict=True)
            ]
            self._arr_pkts[b] = [a.size_pkts for a in d.pareto]
            self._next[b] = 0
            self.records[b] = []
            self.arrivals[b] = 0
            self.waited[b] = 0
            self._busy[b] = 0
            for k, st in enumerate(self.streams):
                sl = st.slots
                self._pending[b][k] = []
                self._fx0[b, sl] = fx[b][np.ix_(sl, FRESH_X)]
                self._fi0[b, sl] = fi[b][np.ix_(sl, FRESH_I)]
                self._handshake[b, sl] = fi[b, sl, I_DATA_MS] - fi[b, sl, I_START_MS]
                fi[b, sl, I_START_MS] = IDLE_START_MS
                fi[b, sl, I_DATA_MS] = IDLE_START_MS
                fx[b, sl, X_W_TARGET] = 0.0
                fx[b, sl, X_W_DONE_MS] = -1.0

    def before_step(self, t0: np.ndarray, step_ms: int) -> None:
        """Queue the arrivals until each cell's step end and start what finds a free slot."""
        for b in range(self.batch):
            end = float(t0[b] + step_ms)
            for k, st in enumerate(self.streams):
                pend = self._pending[b][k]
                times, sizes = self._arr_ms[b][k], self._arr_pkts[b][k]
                i = int(self._next[b, k])
                while i < times.size and times[i] < end:
                    pend.append((int(times[i]), int(sizes[i])))
                    i += 1
                self._next[b, k] = i
                if not pend:
                    continue
                free = st.slots[self._busy[b, st.slots] == 0]
                n = min(free.size, len(pend))
                for j in range(n):
                    arr, size = pend[j]
                    self._start_flow(b, int(free[j]), arr, max(arr, int(t0[b])), size)
                # Arrivals before this step's start that are still queued waited for a slot.
                left = pend[n:]
                self.waited[b] += sum(1 for a, _ in left if a < t0[b] + step_ms and a >= t0[b])
                self._pending[b][k] = left

    def _start_flow(self, b: int, f: int, arrival: int, start: int, size_pkts: int) -> None:
        fi, fx = self.state.fi, self.state.fx
        fx[b, f, FRESH_X] = self._fx0[b, f]
        fi[b, f, FRESH_I] = self._fi0[b, f]
        fx[b, f, X_BUDGET] = size_pkts * self.seg
        fx[b, f, X_W_TARGET] = float(fi[b, f, I_HANDED] + size_pkts)
        fx[b, f, X_W_DONE_MS] = -1.0
        fi[b, f, I_START_MS] = start
        fi[b, f, I_DATA_MS] = start + self._handshake[b, f]
        self._busy[b, f] = 1
        self._arrival[b, f] = arrival
        self._start[b, f] = start
        self._size[b, f] = size_pkts
        self.arrivals[b] += 1

    def after_step(self) -> None:
        """Record the flows that finished; free the slots whose sender has every ACK."""
        fi, fx = self.state.fi, self.state.fx
        for b, f in zip(*np.nonzero(self._busy == 1), strict=True):
            done = fx[b, f, X_W_DONE_MS]
            if done >= 0:
                k = self._stream_of(f)
                fct = (done - self._arrival[b, f]) / 1000.0
                self.records[b].append(
                    (b, k, f, self._size[b, f], self._arrival[b, f], self._start[b, f], done, fct)
                )
                self._busy[b, f] = 2
        drain = self._busy == 2
        if drain.any():
            idle = drain & (fi[:, :, I_UNA] >= fi[:, :, I_HANDED]) & (fx[:, :, X_BUDGET] <= 0)
            self._busy[idle] = 0

    def _stream_of(self, f: int) -> int:
        for k, st in enumerate(self.streams):
            if f in st.slots:
                return k
        raise KeyError(f)

    def finished(self, b: int | None = None) -> np.ndarray:
        """The finished flows' records (``RECORD_DTYPE``) of cell ``b``, or of every cell."""
        rows = [r for c in (range(self.batch) if b is None else [b]) for r in self.records[c]]
        return np.array(rows, dtype=RECORD_DTYPE)

    def active(self) -> np.ndarray:
        """``[B]`` flows running now (started, not finished)."""
        return (self._busy == 1).sum(axis=1)

    def queued(self) -> np.ndarray:
        """``[B]`` arrivals waiting for a free slot now."""
        return np.array([sum(len(q) for q in self._pending[b]) for b in range(self.batch)])
