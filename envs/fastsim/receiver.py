"""The UE's TCP receiver and the uplink that carries its ACKs.

The receiver keeps cumulative and selective ACK state, ACKs every second in-order segment (a
delayed-ACK timeout), the first data segment and out-of-order segments at once (as ns-3); an
ACK carries the receiver's state of its moment. The uplink: ``periodic`` opportunities every
``ul_period_ms``, or ``bsr`` (a buffer status report in a TTI with a new ACK brings a grant
``ul_grant_ms`` later, carrying every ACK queued by then). What has left the UE by each TTI is
written into a ring by time (``rcv``), which the sender reads one uplink delay later.
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.codes import LOST_DONE, TRAFFIC_SHORT, UPLINK_BSR
from envs.fastsim.loss_record import _lost_slot
from envs.fastsim.params import (
    FC_SIZE_BYTES,
    FC_TRAFFIC,
    FC_UE,
    P_AIR_DL_MS,
    P_DELACK_COUNT,
    P_DELACK_TIMEOUT_MS,
    P_SEG_BYTES,
    P_UL_GRANT_MS,
    P_UL_PERIOD_MS,
    P_UPLINK,
)
from envs.fastsim.state import (
    I_ACK_CUM,
    I_ACK_HIGH,
    I_ACK_UNIQ,
    I_DELACK_MS,
    I_DELACK_N,
    I_DELACK_SEND,
    I_LOST_HEAD,
    I_LOST_LEN,
    I_RCV_ACKS,
    I_RCV_ACKS_TTI,
    I_RCV_CUM,
    I_RCV_DUPACKS,
    I_RCV_HIGH,
    I_RCV_LAST_OWD,
    I_RCV_OWD,
    I_RCV_SMP,
    I_RCV_SMP_TTI,
    I_RCV_UNIQ,
    I_START_MS,
    I_UL_LAST_T,
    I_UL_PEND_N,
    I_UL_PEND_TSUM,
    I_XR_LAST_SEND,
    I_XR_RCWND,
    I_XR_REPOCH,
    UI_BSR,
    V_ACKS,
    V_CUM,
    V_DUPACKS,
    V_HIGH,
    V_LAST,
    V_LAST_RAW,
    V_LEN,
    V_OWD,
    V_SMP,
    V_UNIQ,
    V_UNIQ_RAW,
    V_XR_CWND,
    V_XR_EPOCH,
    X_FCT_S,
    X_O_RX,
    X_W_DONE_MS,
    X_W_TARGET,
)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _rcv_ack(b, f, owd, fi, advances=True):
    """The receiver sends an ACK: it carries the receiver's state of this moment.

    Only an ACK that advances the cumulative ACK times a round trip (``advances``): ns-3's
    sender takes an RTT sample from those alone (``TcpSocketBase::CalculateRttSample``: the
    ACK must cover its earliest outstanding segment), and a duplicate ACK leaves the last
    sample as it was.
    """
    fi[b, f, I_RCV_ACKS] += 1
    if advances:
        fi[b, f, I_RCV_SMP] += 1
        fi[b, f, I_RCV_OWD] += owd
        fi[b, f, I_RCV_LAST_OWD] = owd
    fi[b, f, I_ACK_CUM] = fi[b, f, I_RCV_CUM]
    fi[b, f, I_ACK_HIGH] = fi[b, f, I_RCV_HIGH]
    fi[b, f, I_ACK_UNIQ] = fi[b, f, I_RCV_UNIQ]


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _receive(b, f, seq, send, retx, t, p, fc, fi, fx, lost):
    """The UE's TCP receiver gets one segment: SACK state, delayed or immediate ACK."""
    seg = p[P_SEG_BYTES]
    k = lost.shape[2]
    size = fc[f, FC_SIZE_BYTES]
    old_cum = fi[b, f, I_RCV_CUM]
    filled = False
    if retx:
        j = _lost_slot(fi, lost, b, f, seq)
        if j >= 0 and lost[b, f, j, 1] != LOST_DONE:
            lost[b, f, j, 1] = LOST_DONE
            fi[b, f, I_RCV_UNIQ] += 1
            filled = True
    else:
        fi[b, f, I_RCV_UNIQ] += 1
    fi[b, f, I_XR_LAST_SEND] = send  # XCP-r's receiver reads this segment's feedback (tick end)
    # A retransmission can be the first copy of a segment to arrive above the highest seen (a lost
    # tail), so it moves the highest sequence too.
    if seq + 1 > fi[b, f, I_RCV_HIGH]:
        fi[b, f, I_RCV_HIGH] = seq + 1
    high = fi[b, f, I_RCV_HIGH]
    cum = high
    for i in range(fi[b, f, I_LOST_LEN]):
        j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
        if lost[b, f, j, 1] != LOST_DONE and lost[b, f, j, 0] < high:
            cum = min(cum, lost[b, f, j, 0])
            break
    fi[b, f, I_RCV_CUM] = cum
    # The application reads in order (ns-3's PacketSink ``Rx``): a segment above a hole counts
    # when the hole is filled, a duplicate never.
    if cum > old_cum:
        if fc[f, FC_TRAFFIC] == TRAFFIC_SHORT:
            fx[b, f, X_O_RX] += max(0.0, min(cum * seg, size) - min(old_cum * seg, size))
        else:
            fx[b, f, X_O_RX] += (cum - old_cum) * seg
    if cum < high or filled:
        # Out of order, or a hole filled: ACK at once (RFC 5681 4.2).
        dup = seq > cum
        if dup:
            # The segment lies above the cumulative point: the ACK carries new SACK information,
            # a duplicate ACK in ns-3's sense (``isDupack = scoreboardUpdated``).
            fi[b, f, I_RCV_DUPACKS] += 1
        _rcv_ack(b, f, t - send, fi, not dup)
        fi[b, f, I_DELACK_N] = 0
    else:
        if fi[b, f, I_DELACK_N] == 0:
            fi[b, f, I_DELACK_MS] = t
            fi[b, f, I_DELACK_SEND] = send
        fi[b, f, I_DELACK_N] += 1
        # ns-3 acknowledges the first data segment at once ("to speed up the connection":
        # ``m_delAckCount = m_delAckMaxCount`` on entering ESTABLISHED), so its delayed ACKs
        # pair segments 2-3, 4-5, ...: one segment of every window waits for the next.
        if fi[b, f, I_DELACK_N] >= p[P_DELACK_COUNT] or seq == 0:
            _rcv_ack(b, f, t - fi[b, f, I_DELACK_SEND], fi)
            fi[b, f, I_DELACK_N] = 0
    if fc[f, FC_TRAFFIC] == TRAFFIC_SHORT and fx[b, f, X_FCT_S] < 0 and cum * seg >= size:
        fx[b, f, X_FCT_S] = (t + p[P_AIR_DL_MS] - fi[b, f, I_START_MS]) / 1000.0
    elif fx[b, f, X_W_TARGET] > 0 and cum >= fx[b, f, X_W_TARGET]:  # a ``pareto`` flow's end
        fx[b, f, X_W_DONE_MS] = t + p[P_AIR_DL_MS]
        fx[b, f, X_W_TARGET] = 0.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _uplink_tti(b, t, p, fc, fi, ui, rcv):
    """Delayed-ACK timeouts, then the uplink of the TTI: the ``rcv`` ring entry of ``t``.

    The ring holds what has left the UE by each TTI; the sender reads it one uplink delay later.
    """
    nf = fi.shape[1]
    nu = ui.shape[1]
    ring = rcv.shape[2]
    slot = t & (ring - 1)
    prev = (t - 1) & (ring - 1)
    bsr = p[P_UPLINK] == UPLINK_BSR
    grant_bit = int(p[P_UL_GRANT_MS])
    if bsr:
        for u in range(nu):
            ui[b, u, UI_BSR] = (ui[b, u, UI_BSR] << 1) & ((1 << (grant_bit + 1)) - 1)
    for f in range(nf):
        if fi[b, f, I_DELACK_N] > 0 and t - fi[b, f, I_DELACK_MS] >= p[P_DELACK_TIMEOUT_MS]:
            _rcv_ack(b, f, t - fi[b, f, I_DELACK_SEND], fi)
            fi[b, f, I_DELACK_N] = 0
        if bsr and fi[b, f, I_RCV_ACKS] != fi[b, f, I_RCV_ACKS_TTI]:
            # A new ACK in the UE's uplink buffer: a buffer status report in this TTI. The
            # waits that count are those of the ACKs that time a round trip (``_rcv_ack``).
            ui[b, int(fc[f, FC_UE]), UI_BSR] |= 1
            fi[b, f, I_RCV_ACKS_TTI] = fi[b, f, I_RCV_ACKS]
            n_new = fi[b, f, I_RCV_SMP] - fi[b, f, I_RCV_SMP_TTI]
            fi[b, f, I_RCV_SMP_TTI] = fi[b, f, I_RCV_SMP]
            if n_new > 0:
                fi[b, f, I_UL_PEND_N] += n_new
                fi[b, f, I_UL_PEND_TSUM] += n_new * t
                fi[b, f, I_UL_LAST_T] = t
    for f in range(nf):
        if bsr:
            # Uplink transmission iff a report ``ul_grant_ms`` ago brought a grant; it
            # carries every ACK queued by now (BBR samples this same stream).
            if (ui[b, int(fc[f, FC_UE]), UI_BSR] >> grant_bit) & 1 == 0:
                for c in range(V_LEN):
                    rcv[b, f, slot, c] = rcv[b, f, prev, c]
                continue
            # The ACKs' waits in the UE count in their RTT samples.
            n_pend = fi[b, f, I_UL_PEND_N]
            if n_pend > 0:
                fi[b, f, I_RCV_OWD] += n_pend * t - fi[b, f, I_UL_PEND_TSUM]
                fi[b, f, I_RCV_LAST_OWD] += t - fi[b, f, I_UL_LAST_T]
                fi[b, f, I_UL_PEND_N] = 0
                fi[b, f, I_UL_PEND_TSUM] = 0
            rcv[b, f, slot, V_UNIQ_RAW] = fi[b, f, I_ACK_UNIQ]
            rcv[b, f, slot, V_LAST_RAW] = fi[b, f, I_RCV_LAST_OWD]
        else:
            rcv[b, f, slot, V_UNIQ_RAW] = fi[b, f, I_ACK_UNIQ]
            rcv[b, f, slot, V_LAST_RAW] = fi[b, f, I_RCV_LAST_OWD]
            if t % int(p[P_UL_PERIOD_MS]) != 0:
                # No uplink opportunity in this TTI: the network still sees the last ACKs.
                for c in range(V_UNIQ_RAW):
                    rcv[b, f, slot, c] = rcv[b, f, prev, c]
                continue
        rcv[b, f, slot, V_CUM] = fi[b, f, I_ACK_CUM]
        rcv[b, f, slot, V_HIGH] = fi[b, f, I_ACK_HIGH]
        rcv[b, f, slot, V_UNIQ] = fi[b, f, I_ACK_UNIQ]
        rcv[b, f, slot, V_ACKS] = fi[b, f, I_RCV_ACKS]
        rcv[b, f, slot, V_OWD] = fi[b, f, I_RCV_OWD]
        rcv[b, f, slot, V_SMP] = fi[b, f, I_RCV_SMP]
        rcv[b, f, slot, V_LAST] = fi[b, f, I_RCV_LAST_OWD]
        rcv[b, f, slot, V_DUPACKS] = fi[b, f, I_RCV_DUPACKS]
        rcv[b, f, slot, V_XR_CWND] = fi[b, f, I_XR_RCWND]
        rcv[b, f, slot, V_XR_EPOCH] = fi[b, f, I_XR_REPOCH]
