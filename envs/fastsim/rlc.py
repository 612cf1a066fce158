"""The eNB's RLC buffers: segments arriving from the servers, tail drop, segmentation.

Each UE has an RLC UM transmit buffer of PDCP PDUs with their arrival slots (so the head-of-line
delay is exact at the slots' resolution: a packet arriving in tick ``t`` arrives after the tick's
first slot, at the start of slot ``t * P_SLOTS_PER_MS + 1``); a packet that does not fit in
``rlc_buffer_pkts * 1500`` bytes is dropped and written to the loss record. A transport block
drains the buffer byte-wise and hands completed packets to the UE's receiver, or, while a HARQ
retransmission is pending, holds them in the ring (``UI_HELD`` entries from the head) until their
in-order delivery slot (PDCP in-order delivery): a transport block that failed all its
transmissions releases its packets as losses.
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.bottleneck import (
    BN_MODE,
    BQ_FLOW,
    BQ_RETX,
    BQ_SEND,
    BQ_SEQ,
    BS_HEAD,
    BS_LEN,
    _bn_opportunities,
    _bn_push,
    _bn_sendable,
)
from envs.fastsim.codes import BN_NONE, LOST_AGAIN, LOST_NEED
from envs.fastsim.loss_record import _lost_slot
from envs.fastsim.params import (
    FC_UE,
    P_PDU_BYTES,
    P_RLC_CAP_BYTES,
    P_SDU_OVERHEAD_BYTES,
    P_SLOTS_PER_MS,
    P_TB_OVERHEAD_BYTES,
    P_UL_LEAD_MS,
)
from envs.fastsim.receiver import _receive
from envs.fastsim.state import (
    I_LAST_ARR_MS,
    I_LOST_HEAD,
    I_LOST_LEN,
    I_RT_ARR,
    I_RTX_HEAD,
    I_RTX_LEN,
    R_AIRLOST,
    R_ARR,
    R_FLOW,
    R_REL,
    R_RETX,
    R_SEND,
    R_SEQ,
    U_HEAD_REM,
    U_O_DROPS,
    U_RLC_BYTES,
    U_SOJ_MAX,
    UI_HELD,
    UI_RLC_HEAD,
    UI_RLC_LEN,
    X_PACING,
)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _record_loss(b, f, seq, retx, fi, lost):
    """Write a lost segment into the flow's loss record (a retransmission lost again)."""
    k = lost.shape[2]
    if retx:
        j = _lost_slot(fi, lost, b, f, seq)
        if j >= 0:
            lost[b, f, j, 1] = LOST_AGAIN
    elif fi[b, f, I_LOST_LEN] < k:
        j = (fi[b, f, I_LOST_HEAD] + fi[b, f, I_LOST_LEN]) & (k - 1)
        lost[b, f, j, 0] = seq
        lost[b, f, j, 1] = LOST_NEED
        fi[b, f, I_LOST_LEN] += 1


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _rlc_push(b, u, f, seq, send, retx, t, p, ue, ui, rlc, fi, lost):
    """Queue one packet at the UE's RLC buffer, or drop it when the buffer is full."""
    pdu = p[P_PDU_BYTES]
    q = rlc.shape[2]
    fi[b, f, I_LAST_ARR_MS] = t
    if ue[b, u, U_RLC_BYTES] + pdu > p[P_RLC_CAP_BYTES] or ui[b, u, UI_RLC_LEN] >= q:
        ue[b, u, U_O_DROPS] += 1.0
        _record_loss(b, f, seq, retx, fi, lost)
        return
    j = (ui[b, u, UI_RLC_HEAD] + ui[b, u, UI_RLC_LEN]) % q
    rlc[b, u, j, R_ARR] = t * int(p[P_SLOTS_PER_MS]) + 1  # after the tick's first slot
    rlc[b, u, j, R_FLOW] = f
    rlc[b, u, j, R_SEQ] = seq
    rlc[b, u, j, R_SEND] = send
    rlc[b, u, j, R_RETX] = 1 if retx else 0
    ui[b, u, UI_RLC_LEN] += 1
    ue[b, u, U_RLC_BYTES] += pdu


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _arrive(b, u, f, seq, send, retx, t, p, ue, ui, rlc, fi, lost, wired, bnp, bqs, bq, rng):
    """A segment reaches the eNB, or the wired bottleneck's buffer when ``wired``.

    Either is the bottleneck's router of the explicit-feedback controls: it counts the packet
    (``enb_agents/router.py`` reads the count at the end of the tick).
    """
    fi[b, f, I_RT_ARR] += 1
    if not wired:
        _rlc_push(b, u, f, seq, send, retx, t, p, ue, ui, rlc, fi, lost)
    elif not _bn_push(b, f, seq, send, retx, t, bnp, bqs, bq, rng):
        _record_loss(b, f, seq, retx, fi, lost)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bottleneck_out(b, t, p, fc, fi, ue, ui, rlc, lost, bnp, bqs, bq):
    """Packets the bottleneck's link completes in tick ``t`` enter their UE's RLC buffer."""
    budget = _bn_opportunities(t, bnp)
    while bqs[b, BS_LEN] > 0:
        h = int(bqs[b, BS_HEAD])
        budget = _bn_sendable(b, t, bnp, bqs, bq, budget)
        if budget < 0:
            break
        f = bq[b, h, BQ_FLOW]
        if f < 0:
            continue  # cross traffic (``cross_traffic.py``) leaves towards its own receivers
        u = int(fc[f, FC_UE])
        _rlc_push(
            b, u, f, bq[b, h, BQ_SEQ], bq[b, h, BQ_SEND], bq[b, h, BQ_RETX] > 0, t, p, ue, ui, rlc,
            fi, lost,
        )  # fmt: skip


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _rtx_arrive(b, f, t, p, fc, fi, ue, ui, rlc, rtx, lost, wired, bnp, bqs, bq, rng):
    """Flow ``f``'s retransmissions due by ``t`` reach the eNB (or the wired bottleneck)."""
    k = rtx.shape[2]
    u = int(fc[f, FC_UE])
    while fi[b, f, I_RTX_LEN] > 0:
        h = fi[b, f, I_RTX_HEAD]
        if rtx[b, f, h, 1] > t:
            break
        _arrive(
            b, u, f, rtx[b, f, h, 0], rtx[b, f, h, 2], True, t, p, ue, ui, rlc, fi, lost, wired,
            bnp, bqs, bq, rng,
        )  # fmt: skip
        fi[b, f, I_RTX_HEAD] = (h + 1) & (k - 1)
        fi[b, f, I_RTX_LEN] -= 1


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def first_turn(t, n):
    """The flow of ``n`` whose segments enter the RLC first in TTI ``t`` (``_enb_arrivals``).

    Knuth's multiplicative hash of the TTI (bits 16-31 of ``t * 2654435761``), so that TTIs
    ``p`` apart, for any period ``p``, still give every flow its turn.
    """
    return (((t * 2654435761) & 0xFFFFFFFF) >> 16) % n


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _enb_arrivals(b, t, p, fc, fi, fx, ue, ui, rlc, dl, rtx, lost, bnp, bqs, bq, rng):
    """Segments reaching the eNB at ``t`` enter the RLC buffers, flows interleaved.

    The flow whose segment comes first takes turns by TTI (flow ``h(t) % n``, then the next): at
    a full buffer the first arrivals of a TTI find the room its transport blocks freed, and a
    fixed order gave flow 0 that room in every TTI. ns-3 files a TTI's segments in the order
    they reach the eNB, which belongs to no flow (two CUBIC flows on one UE, ``share2_cubic``,
    nine seeds: flow 0 carried 47 % on ns-3, 58 % on the twin in flow order, 50 % with turns).
    ``h`` is a multiplicative hash of the TTI (Knuth's, bits 16-31), not ``t`` itself: with the
    periodic uplink the ACKs, and the segments they release, arrive every fourth TTI, where
    ``t % 2`` never changes and the same flow of two came first in every contended TTI.

    With a wired bottleneck (``bottleneck``) they reach its buffer, and what its link sends in
    the tick enters the RLC buffers.
    """
    nf = fi.shape[1]
    ring = dl.shape[2]
    slot = t & (ring - 1)
    wired = bnp[BN_MODE] != BN_NONE
    # New segments that left before the same TTI's fast retransmission (``send``), then the
    # retransmissions of unpaced flows (they left the server before the rest of the TTI's new
    # data), the rest of the new data, and last the retransmissions of paced flows: a paced
    # sender's new segments of the TTI left at their pacing instants, its retransmission only
    # at the instant of the ACK that triggered it, late in the TTI (ns-3's ``TcpSocketBase``
    # retransmits on the ACK, without pacing).
    f0 = first_turn(t, nf)
    for g in range(nf):
        f = (f0 + g) % nf
        n_pre = dl[b, f, slot, 3]
        if n_pre <= 0:
            continue
        u = int(fc[f, FC_UE])
        a0 = dl[b, f, slot, 0]
        for a in range(a0, min(a0 + n_pre, dl[b, f, slot, 1])):
            _arrive(
                b, u, f, a, dl[b, f, slot, 2], False, t, p, ue, ui, rlc, fi, lost, wired, bnp,
                bqs, bq, rng,
            )  # fmt: skip
        dl[b, f, slot, 0] = min(a0 + n_pre, dl[b, f, slot, 1])
    for g in range(nf):
        f = (f0 + g) % nf
        if fx[b, f, X_PACING] <= 0.0:
            _rtx_arrive(b, f, t, p, fc, fi, ue, ui, rlc, rtx, lost, wired, bnp, bqs, bq, rng)
    more = True
    i = 0
    while more:
        more = False
        for g in range(nf):
            f = (f0 + g) % nf
            a = dl[b, f, slot, 0] + i
            if a < dl[b, f, slot, 1]:
                more = True
                u = int(fc[f, FC_UE])
                _arrive(
                    b, u, f, a, dl[b, f, slot, 2], False, t, p, ue, ui, rlc, fi, lost, wired, bnp,
                    bqs, bq, rng,
                )  # fmt: skip
        i += 1
    for g in range(nf):
        f = (f0 + g) % nf
        if fx[b, f, X_PACING] > 0.0:
            _rtx_arrive(b, f, t, p, fc, fi, ue, ui, rlc, rtx, lost, wired, bnp, bqs, bq, rng)
    for f in range(nf):
        dl[b, f, slot, 0] = 0
        dl[b, f, slot, 1] = 0
        dl[b, f, slot, 3] = 0
    if wired:
        _bottleneck_out(b, t, p, fc, fi, ue, ui, rlc, lost, bnp, bqs, bq)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _release(b, u, t, slot, p, fc, fi, fx, ui, rlc, lost):
    """Held packets whose delivery slot has come reach the receiver (or are lost), in order."""
    q = rlc.shape[2]
    while ui[b, u, UI_HELD] > 0:
        h = ui[b, u, UI_RLC_HEAD]
        if rlc[b, u, h, R_REL] > slot:
            break
        f = rlc[b, u, h, R_FLOW]
        if rlc[b, u, h, R_AIRLOST] > 0:
            _record_loss(b, f, rlc[b, u, h, R_SEQ], rlc[b, u, h, R_RETX] > 0, fi, lost)
        else:
            _receive(
                b, f, rlc[b, u, h, R_SEQ], rlc[b, u, h, R_SEND], rlc[b, u, h, R_RETX] > 0, t, p,
                fc, fi, fx, lost,
            )  # fmt: skip
        ui[b, u, UI_RLC_HEAD] = (h + 1) % q
        ui[b, u, UI_RLC_LEN] -= 1
        ui[b, u, UI_HELD] -= 1


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _serve(b, u, tb_bytes, t, slot, rel, airlost, p, fc, fi, fx, ue, ui, rlc, lost):
    """A transport block drains the UE's RLC buffer byte-wise; completed packets are delivered.

    ``rel``: the slot the block is decoded (its first transmission's, or its successful
    retransmission's); ``airlost``: every transmission fails. Packets that cannot reach the
    receiver now stay in the ring, held for in-order delivery at ``rel`` (``_release``). A
    packet leaves the RLC as the slot whose block sends its last byte begins: its sojourn is
    ``slot - R_ARR`` slots and the cell's uplink lead (``U_SOJ_MAX``, a diagnostic).
    """
    q = rlc.shape[2]
    budget = tb_bytes - p[P_TB_OVERHEAD_BYTES]
    pdu = p[P_PDU_BYTES]
    decoded = rel <= slot and not airlost
    first = True
    while budget > 0 and ui[b, u, UI_RLC_LEN] > ui[b, u, UI_HELD]:
        if not first:
            budget -= p[P_SDU_OVERHEAD_BYTES]
            if budget <= 0:
                break
        first = False
        rem = ue[b, u, U_HEAD_REM]
        if rem <= budget:
            budget -= rem
            k = (ui[b, u, UI_RLC_HEAD] + ui[b, u, UI_HELD]) % q
            soj = (slot - rlc[b, u, k, R_ARR]) / p[P_SLOTS_PER_MS] + p[P_UL_LEAD_MS]
            ue[b, u, U_SOJ_MAX] = max(ue[b, u, U_SOJ_MAX], soj)
            if decoded and ui[b, u, UI_HELD] == 0:
                h = ui[b, u, UI_RLC_HEAD]
                f = rlc[b, u, h, R_FLOW]
                _receive(
                    b, f, rlc[b, u, h, R_SEQ], rlc[b, u, h, R_SEND], rlc[b, u, h, R_RETX] > 0, t,
                    p, fc, fi, fx, lost,
                )  # fmt: skip
                ui[b, u, UI_RLC_HEAD] = (h + 1) % q
                ui[b, u, UI_RLC_LEN] -= 1
            else:
                h = (ui[b, u, UI_RLC_HEAD] + ui[b, u, UI_HELD]) % q
                rlc[b, u, h, R_REL] = int(rel)
                rlc[b, u, h, R_AIRLOST] = 1 if airlost else 0
                ui[b, u, UI_HELD] += 1
            ue[b, u, U_RLC_BYTES] -= rem
            ue[b, u, U_HEAD_REM] = pdu
        else:
            ue[b, u, U_HEAD_REM] = rem - budget
            ue[b, u, U_RLC_BYTES] -= budget
            budget = 0.0
    if ui[b, u, UI_RLC_LEN] == ui[b, u, UI_HELD]:
        ue[b, u, U_RLC_BYTES] = 0.0
