"""The wired bottleneck between the servers' router and the core: a drop-tail FIFO and its link.

As in the ns-3 scenario program (``cellgym-lte.cc``), segments leave their server and reach the
router ``server_delay_ms + delay_ms`` later; with a bottleneck they join its drop-tail buffer there
instead of going straight to the eNB, and reach the eNB's RLC buffer when the link has sent them
(the router -> PGW -> eNB core adds no delay in ns-3's scenario either). Two links:

- **constant rate** (``bottleneck_mbps``): a serialising link. A packet starts when the link is
  free and it is at the head of the queue, and leaves ``BN_WIRE_BYTES * 8 / rate`` later (the
  1500-byte IP packet plus the 2-byte PPP header of ns-3's point-to-point device). The buffer holds
  ``bottleneck_buffer_pkts`` packets waiting besides the one on the wire (ns-3's device queue).
- **trace** (``bottleneck_trace``): Mahimahi's link: each ms of the (looped) trace offers a number
  of delivery opportunities of one 1500-byte packet; a queued packet leaves at an opportunity,
  an opportunity with an empty queue is lost. The buffer holds ``bottleneck_buffer_pkts`` packets.

The clock ticks in ms: segments arriving at the router in a tick arrive at its start (as they do at
the eNB without a bottleneck), the link sends what it completes by the end of the tick, and those
packets enter the RLC buffer in that tick. A packet dropped at the bottleneck goes into its flow's
loss record exactly like an RLC drop. The uplink (ACKs, 56-byte packets) is not serialised: at
10 Mbit/s an ACK takes 45 us of the link.

Parameters (``bnp``, float64): ``BN_*`` scalars, then the trace's opportunities per ms from
``BN_TRACE0``. State: ``bqs`` (float64 ``[B, BS_LEN]``: ring head and length, the link's free
time, counters) and ``bq`` (int64 ``[B, Q, BQ_LEN]``: the queued packets).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cellgym.traces import MTU_BYTES, bottleneck_series
from cellgym.vocab import SpecError
from envs.fastsim import red
from envs.fastsim.codes import BN_RATE, BN_TRACE
from envs.fastsim.red import _red_arrival

# -- the parameter vector ``bnp`` --------------------------------------------------------------
BN_MODE = 0  # codes.BN_NONE, BN_RATE, BN_TRACE
BN_TX_MS = 1  # constant rate: serialisation time of one packet, ms
BN_BUF_PKTS = 2  # drop-tail buffer, packets
BN_TRACE_LEN = 3  # trace: its period, ms
BN_UDP_N = 4  # ON/OFF UDP cross traffic (``cross_traffic.py``): sources (0: none)
BN_UDP_RATE = 5  # a source's rate while on, wire bytes per ms
BN_UDP_ON_MS = 6  # on period (mean, when exponential), ms
BN_UDP_OFF_MS = 7  # off period (mean, when exponential), ms
BN_UDP_EXP = 8  # 1: exponential periods, 0: fixed
BN_UDP_START_MS = 9  # the sources start (on) here, ms
BN_RED = 10  # 1: RED (``red.py``) decides before the buffer, 0: drop-tail only
BN_RED_MIN = 11  # RED: minimum threshold of the average queue, packets
BN_RED_MAX = 12  # RED: maximum threshold, packets
BN_RED_MAXP = 13  # RED: drop probability at the maximum threshold
BN_RED_W = 14  # RED: EWMA weight
BN_TRACE0 = 15  # trace: delivery opportunities of each ms from here
#: Bytes a full segment occupies on ns-3's point-to-point link: 1448 B payload, 32 B TCP header
#: (with the timestamp option), 20 B IP header, 2 B PPP header.
BN_WIRE_BYTES = MTU_BYTES + 2

# -- per cell (float64 [B, BS_LEN]) -------------------------------------------------------------
BS_HEAD = 0  # queue ring: head
BS_LEN = 1  # queue ring: packets (constant rate: the one on the wire included)
BS_FREE_MS = 2  # constant rate: when the link finishes the packet it sent last, ms
BS_DROPS = 3  # packets dropped (buffer full), since reset
BS_SENT = 4  # packets the link delivered, since reset
BS_QDELAY_MS = 5  # queueing + transmission delay of the latest packet delivered, ms
BS_QMAX = 6  # most packets queued since the counters were last read (``FastCellBatch``)
BS_RED_AVG = 7  # RED: average queue, packets
BS_RED_COUNT = 8  # RED: packets since the last early drop (or since the average passed min)
BS_RED_IDLE_MS = 9  # RED: when the queue last went empty, ms
BS_RED_DROPS = 10  # RED: early (probabilistic or above twice the maximum) drops, since reset
BS_COLS = 11

# -- queued packets (int64 [B, Q, BQ_LEN]) ------------------------------------------------------
BQ_FLOW = 0
BQ_SEQ = 1
BQ_SEND = 2
BQ_RETX = 3
BQ_ARR = 4
BQ_LEN = 5

# ``red`` repeats these indices (it is imported here).
assert (red._BN_TX_MS, red._BN_RED_MIN, red._BN_RED_MAX, red._BN_RED_MAXP, red._BN_RED_W) == (
    BN_TX_MS, BN_RED_MIN, BN_RED_MAX, BN_RED_MAXP, BN_RED_W,
)  # fmt: skip
assert (red._BS_RED_AVG, red._BS_RED_COUNT, red._BS_RED_IDLE_MS) == (
    BS_RED_AVG, BS_RED_COUNT, BS_RED_IDLE_MS,
)  # fmt: skip


def bottleneck_params(spec, rwnd_segs: int) -> tuple[np.ndarray, int]:
    """``(bnp, queue slots)`` of a scenario's bottleneck (``BN_NONE`` and one slot without one).

    The queue never holds more than the flows can have outstanding (``rwnd_segs`` each, plus the
    packet on the wire), so its ring is that long when the buffer is larger.
    """
    if spec.bottleneck_trace:
        series = bottleneck_series(spec)
        assert series is not None
        opp = series.at_interval(0.001).bytes // MTU_BYTES
        if int(opp.sum()) == 0:
            raise SpecError(
                f"scenario.bottleneck_trace={spec.bottleneck_trace!r} has no delivery "
                "opportunity: allowed a Mahimahi trace with at least one"
            )
        bnp = np.zeros(BN_TRACE0 + opp.size)
        bnp[BN_MODE] = BN_TRACE
        bnp[BN_TRACE_LEN] = opp.size
        bnp[BN_TRACE0:] = opp
    elif spec.bottleneck_mbps > 0:
        bnp = np.zeros(BN_TRACE0)
        bnp[BN_MODE] = BN_RATE
        bnp[BN_TX_MS] = BN_WIRE_BYTES * 8.0 / (spec.bottleneck_mbps * 1000.0)
    else:
        return np.zeros(BN_TRACE0), 1
    bnp[BN_BUF_PKTS] = spec.bottleneck_buffer_pkts
    if spec.bottleneck_queue == "red":
        bnp[BN_RED] = 1.0
        bnp[BN_RED_MIN] = spec.red_min_th_pkts
        bnp[BN_RED_MAX] = spec.red_max_th_pkts
        bnp[BN_RED_MAXP] = spec.red_max_p
        bnp[BN_RED_W] = spec.red_weight
    most = len(spec.flows) * (rwnd_segs + 1) + 1
    if spec.udp_sources > 0:  # cross traffic can fill the whole buffer
        bnp[BN_UDP_N] = spec.udp_sources
        bnp[BN_UDP_RATE] = spec.udp_rate_mbps * 1000.0 / 8.0 * BN_WIRE_BYTES / MTU_BYTES
        bnp[BN_UDP_ON_MS] = spec.udp_on_s * 1000.0
        bnp[BN_UDP_OFF_MS] = spec.udp_off_s * 1000.0
        bnp[BN_UDP_EXP] = 1.0 if spec.udp_periods == "exponential" else 0.0
        bnp[BN_UDP_START_MS] = spec.udp_start_s * 1000.0
        most = spec.bottleneck_buffer_pkts + 1
    return bnp, int(min(spec.bottleneck_buffer_pkts + 1, most)) + 1


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bn_push(b, f, seq, send, retx, t, bnp, bqs, bq, rng):
    """A packet reaches the router at ``t``: join the queue; ``False`` when the buffer drops it."""
    q = bq.shape[1]
    n = int(bqs[b, BS_LEN])
    room = bnp[BN_BUF_PKTS] + (1.0 if bnp[BN_MODE] == BN_RATE else 0.0)
    if n >= room or n >= q:
        bqs[b, BS_DROPS] += 1.0
        return False
    if bnp[BN_RED] > 0 and _red_arrival(b, t, n, bnp, bqs, rng):
        bqs[b, BS_DROPS] += 1.0
        bqs[b, BS_RED_DROPS] += 1.0
        return False
    j = (int(bqs[b, BS_HEAD]) + n) % q
    bq[b, j, BQ_FLOW] = f
    bq[b, j, BQ_SEQ] = seq
    bq[b, j, BQ_SEND] = send
    bq[b, j, BQ_RETX] = 1 if retx else 0
    bq[b, j, BQ_ARR] = t
    bqs[b, BS_LEN] = n + 1
    if n + 1 > bqs[b, BS_QMAX]:
        bqs[b, BS_QMAX] = n + 1
    return True


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bn_sendable(b, t, bnp, bqs, bq, budget):
    """Whether the head packet leaves in tick ``t``; updates the link (``budget``: opportunities).

    Returns the remaining opportunities of the tick (trace), or 1/0 (constant rate: sent / not).
    """
    q = bq.shape[1]
    h = int(bqs[b, BS_HEAD])
    if bnp[BN_MODE] == BN_RATE:
        start = max(bqs[b, BS_FREE_MS], float(bq[b, h, BQ_ARR]))
        done = start + bnp[BN_TX_MS]
        if done > t + 1.0:
            return -1
        bqs[b, BS_FREE_MS] = done
        bqs[b, BS_QDELAY_MS] = done - bq[b, h, BQ_ARR]
    else:
        if budget <= 0:
            return -1
        bqs[b, BS_QDELAY_MS] = float(t - bq[b, h, BQ_ARR])
        budget -= 1
    bqs[b, BS_HEAD] = (h + 1) % q
    bqs[b, BS_LEN] -= 1.0
    bqs[b, BS_SENT] += 1.0
    if bqs[b, BS_LEN] == 0:
        bqs[b, BS_RED_IDLE_MS] = bqs[b, BS_FREE_MS] if bnp[BN_MODE] == BN_RATE else float(t)
    return budget


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bn_opportunities(t, bnp):
    """Delivery opportunities of tick ``t`` (trace); a large number for the constant-rate link."""
    if bnp[BN_MODE] == BN_TRACE:
        n = int(bnp[BN_TRACE_LEN])
        return int(bnp[BN_TRACE0 + t % n])
    return 1 << 30
