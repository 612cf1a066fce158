"""ACK processing shared by the senders: what a bunch of ACKs reaching the server does.

The ACKs of a TTI arrive together (the receiver's state one uplink delay earlier): RTT samples
and the RTO estimate, the base station's explicit feedback stamped on them, loss detection and
fast recovery (``recovery``), the window of the flow's congestion control (``dispatch``), the
retransmission timer.
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.ack_loss import _ack_loss
from envs.fastsim.codes import RECOVERY_NS3_PRR, ST_OPEN, ST_RECOVERY
from envs.fastsim.loss_record import _pipe
from envs.fastsim.params import (
    FC_CCA,
    FC_D_SRV_UP_MS,
    FC_D_UP_TOTAL_MS,
    P_ACK_LOSS,
    P_DUPTHRESH,
    P_MIN_RTO_MS,
    P_RECOVERY,
    P_SEG_BYTES,
)
from envs.fastsim.senders.dispatch import (
    _enter_recovery,
    _exit_recovery,
    _grows_when_cwnd_limited,
    _on_acks,
    _on_established,
    _on_feedback,
    _on_loss_state,
    _on_open,
    _on_receiver_window,
    _own_recovery,
    _paced,
    _ssthresh_on_loss,
    _sums_feedback,
)
from envs.fastsim.senders.recovery import _loss_trigger, _pre_entry_sends, _prr_on_ack
from envs.fastsim.senders.send import _sendable
from envs.fastsim.state import (
    I_CSTATE,
    I_DATA_MS,
    I_DUPACK_CNT,
    I_LOST_HEAD,
    I_LOST_LEN,
    I_PRE_SEND,
    I_RECOVER,
    I_RTO_AT_MS,
    I_RTO_HELD,
    I_RTO_MS,
    I_SACKED,
    I_SEEN_ACKS,
    I_SEEN_DUPACKS,
    I_SEEN_OWD,
    I_SEEN_SMP,
    I_SEEN_UNIQ,
    I_SND_NXT,
    I_START_MS,
    I_UNA,
    I_VIEW_HIGH,
    V_ACKS,
    V_CUM,
    V_DUPACKS,
    V_HIGH,
    V_LAST,
    V_OWD,
    V_SMP,
    V_UNIQ,
    X_CWND,
    X_FB_HOL,
    X_FB_RATE,
    X_MIN_RTT,
    X_O_ACKED,
    X_O_LOSS,
    X_O_RTT_LAST,
    X_O_RTT_MIN,
    X_O_RTT_N,
    X_O_RTT_SUM,
    X_PACING,
    X_PRR_RFS,
    X_RTTVAR,
    X_SRTT,
    X_SSTHRESH,
    X_X_HASFB,
)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _syn_ack(b, f, t, p, fc, fi, fx, fbr):
    """The SYN-ACK reaches the server at ``t`` (the flow's first data tick): its RTT sample.

    As ns-3's ``TcpSocketBase`` does with the SYN's timestamp echo: the handshake's round trip
    (``I_DATA_MS - I_START_MS``) is the first RTT sample (smoothed RTT, variation, minimum, the
    step's RTT statistics, the retransmission timeout); the explicit feedback the base station
    stamped on the SYN-ACK is the flow's first feedback.
    """
    rtt = float(fi[b, f, I_DATA_MS] - fi[b, f, I_START_MS])
    fx[b, f, X_O_RTT_SUM] += rtt
    fx[b, f, X_O_RTT_N] += 1.0
    fx[b, f, X_O_RTT_LAST] = rtt
    if fx[b, f, X_O_RTT_MIN] <= 0 or rtt < fx[b, f, X_O_RTT_MIN]:
        fx[b, f, X_O_RTT_MIN] = rtt
    fx[b, f, X_MIN_RTT] = min(fx[b, f, X_MIN_RTT], rtt)
    fx[b, f, X_SRTT] = rtt
    fx[b, f, X_RTTVAR] = rtt / 2.0
    srtt_rto = fx[b, f, X_SRTT] + max(1.0, 4.0 * fx[b, f, X_RTTVAR])
    fi[b, f, I_RTO_MS] = int(max(p[P_MIN_RTO_MS], srtt_rto))
    _on_established(int(fc[f, FC_CCA]), fx, b, f, t, rtt)
    tf = t - int(fc[f, FC_D_SRV_UP_MS])
    if tf >= 0:
        fslot = tf & (fbr.shape[2] - 1)
        fx[b, f, X_FB_RATE] = fbr[b, f, fslot, 0]
        fx[b, f, X_FB_HOL] = fbr[b, f, fslot, 1]
        if fbr[b, f, fslot, 0] > 0:
            fx[b, f, X_X_HASFB] = 1.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _sender_acks(b, f, t, p, fc, fi, fx, bw, rng, rcv, fbr, lost):
    """Process the ACKs reaching the server at ``t``: RTT, feedback, loss detection, growth."""
    seg = p[P_SEG_BYTES]
    ring = rcv.shape[2]
    cca = int(fc[f, FC_CCA])
    d_up = int(fc[f, FC_D_UP_TOTAL_MS])
    tv = t - d_up
    if tv < 0:
        return
    slot = tv & (ring - 1)
    v_acks = rcv[b, f, slot, V_ACKS]
    new_acks = v_acks - fi[b, f, I_SEEN_ACKS]
    if new_acks <= 0:
        return
    if p[P_ACK_LOSS] > 0 and _ack_loss(
        b, f, t, p, fc, fi, fx, rng, fbr, v_acks, _sums_feedback(int(fc[f, FC_CCA]))
    ):
        return  # every new ACK lost on the reverse path (``ack_loss.py``)
    v_cum = rcv[b, f, slot, V_CUM]
    v_high = rcv[b, f, slot, V_HIGH]
    v_uniq = rcv[b, f, slot, V_UNIQ]
    # RTT samples come from the ACKs that advance the cumulative ACK (``receiver._rcv_ack``);
    # a bunch of duplicate ACKs alone leaves the last sample in place (ns-3's ``m_lastRtt``).
    samples = rcv[b, f, slot, V_SMP] - fi[b, f, I_SEEN_SMP]
    fi[b, f, I_SEEN_SMP] = rcv[b, f, slot, V_SMP]
    owd_sum = rcv[b, f, slot, V_OWD] - fi[b, f, I_SEEN_OWD]
    if samples > 0 or fx[b, f, X_O_RTT_LAST] <= 0:
        rtt_mean = owd_sum / max(samples, 1) + d_up
        rtt_last = float(rcv[b, f, slot, V_LAST] + d_up)
    else:
        rtt_mean = rtt_last = fx[b, f, X_O_RTT_LAST]
    fi[b, f, I_SEEN_ACKS] = v_acks
    fi[b, f, I_SEEN_OWD] = rcv[b, f, slot, V_OWD]
    delivered_segs = v_uniq - fi[b, f, I_SEEN_UNIQ]
    fi[b, f, I_SEEN_UNIQ] = v_uniq
    new_dupacks = rcv[b, f, slot, V_DUPACKS] - fi[b, f, I_SEEN_DUPACKS]
    fi[b, f, I_SEEN_DUPACKS] = rcv[b, f, slot, V_DUPACKS]
    if samples > 0:
        fx[b, f, X_O_RTT_SUM] += rtt_mean * samples
        fx[b, f, X_O_RTT_N] += samples
        fx[b, f, X_O_RTT_LAST] = rtt_last
        rmin = min(rtt_mean, rtt_last)
        if fx[b, f, X_O_RTT_MIN] <= 0 or rmin < fx[b, f, X_O_RTT_MIN]:
            fx[b, f, X_O_RTT_MIN] = rmin
        fx[b, f, X_MIN_RTT] = min(fx[b, f, X_MIN_RTT], rmin)
        if fx[b, f, X_SRTT] <= 0:
            fx[b, f, X_SRTT] = rtt_last
            fx[b, f, X_RTTVAR] = rtt_last / 2.0
        else:
            var = 0.75 * fx[b, f, X_RTTVAR] + 0.25 * abs(fx[b, f, X_SRTT] - rtt_last)
            fx[b, f, X_RTTVAR] = var
            fx[b, f, X_SRTT] = 0.875 * fx[b, f, X_SRTT] + 0.125 * rtt_last
    # Explicit feedback stamped at the eNB when the ACK passed it.
    tf = t - int(fc[f, FC_D_SRV_UP_MS])
    if tf >= 0:
        fslot = tf & (ring - 1)
        fx[b, f, X_FB_RATE] = fbr[b, f, fslot, 0]
        fx[b, f, X_FB_HOL] = fbr[b, f, fslot, 1]
        if fbr[b, f, fslot, 0] > 0:
            fx[b, f, X_X_HASFB] = 1.0
        _on_feedback(cca, b, f, fi, fx, fbr, fslot, seg)
    _on_receiver_window(cca, b, f, fi, fx, rcv, slot, seg)
    una = fi[b, f, I_UNA]
    acked = max(v_cum - una, 0)
    fi[b, f, I_VIEW_HIGH] = v_high
    fi[b, f, I_SACKED] = max(v_uniq - v_cum, 0)
    dupthresh = int(p[P_DUPTHRESH])
    k = lost.shape[2]
    # Loss detection: a hole with dupthresh segments received above it.
    state = fi[b, f, I_CSTATE]
    entered = False
    prr_mode = p[P_RECOVERY] == RECOVERY_NS3_PRR
    if state == ST_OPEN:
        trigger = _loss_trigger(
            b, f, fi, lost, una, v_cum, v_high, new_dupacks, dupthresh, prr_mode
        )
        if trigger:
            pipe_segs = _pipe(fi, lost, b, f, dupthresh, prr_mode)
            pipe_bytes = pipe_segs * seg
            paced = fx[b, f, X_PACING] > 0 and _paced(cca)  # as ``send`` tells
            if prr_mode and not _own_recovery(cca) and not paced:
                fi[b, f, I_PRE_SEND] = _pre_entry_sends(
                    b, f, fi, fx, pipe_segs, new_acks, delivered_segs, dupthresh, seg
                )
            fx[b, f, X_O_LOSS] += 1.0
            ss = _ssthresh_on_loss(fx, b, f, cca, pipe_bytes, seg)
            fx[b, f, X_SSTHRESH] = ss
            entered = _enter_recovery(
                fx, fi, b, f, cca, ss, pipe_bytes, delivered_segs, seg, prr_mode
            )
            fi[b, f, I_CSTATE] = ST_RECOVERY
            fi[b, f, I_RECOVER] = fi[b, f, I_SND_NXT]
            _on_loss_state(fx, fi, b, f, cca, t)
    state = fi[b, f, I_CSTATE]
    exited = False
    if state != ST_OPEN and v_cum >= fi[b, f, I_RECOVER]:
        if state == ST_RECOVERY:
            _exit_recovery(fx, b, f, cca, prr_mode)
        fi[b, f, I_CSTATE] = ST_OPEN
        fi[b, f, I_DUPACK_CNT] = 0
        fi[b, f, I_RTO_HELD] = 0
        exited = state == ST_RECOVERY
        _on_open(fx, fi, b, f, cca, seg)
    # Window growth, once per ACK that delivers new data (not in recovery). Growth counts the
    # segments newly delivered (cumulatively or selectively acknowledged), so the ACK that fills
    # a hole does not count again the segments already SACKed above it.
    grown = min(max(delivered_segs, 0), acked + fi[b, f, I_SACKED])
    n_adv = min(new_acks, grown)
    if prr_mode and new_dupacks > 0:
        # ns-3 grows the window only on ACKs without new SACK information: a duplicate ACK moves
        # the socket to CA_DISORDER, where ``ProcessAck`` skips ``IncreaseWindow``, and one that
        # does not advance the cumulative ACK (every duplicate ACK here: a segment above the
        # cumulative point) only calls ``PktsAcked``, in CA_LOSS too. Each duplicate ACK
        # delivered at least the segment it SACKed.
        grown = max(grown - new_dupacks, 0)
        n_adv = min(max(new_acks - new_dupacks, 0), grown)
    fi[b, f, I_UNA] = max(una, v_cum)
    if prr_mode and not _own_recovery(cca) and fi[b, f, I_CSTATE] == ST_RECOVERY:
        prr_dupacks, prr_delivered = new_dupacks, delivered_segs
        if entered and new_dupacks > 1:
            # ns-3 takes the bunch's ACKs one by one: those before the one that entered recovery
            # (in CA_DISORDER) never reach PRR's prr_delivered.
            prr_dupacks = min(max(fi[b, f, I_DUPACK_CNT] - dupthresh + 1, 1), new_dupacks)
            prr_delivered = delivered_segs * prr_dupacks // new_dupacks
        _prr_on_ack(
            fx, fi, lost, b, f, entered, prr_delivered, prr_dupacks, una, acked, seg, p
        )  # fmt: skip
        if entered and fi[b, f, I_PRE_SEND] > 0:
            # Those segments were in flight when ns-3 entered recovery: in RecoverFS and in the
            # window PRR sets (in flight plus its quota).
            fx[b, f, X_PRR_RFS] += fi[b, f, I_PRE_SEND] * seg
            fx[b, f, X_CWND] += fi[b, f, I_PRE_SEND] * seg
    pipe = 0
    sendable = 0
    if _grows_when_cwnd_limited(cca) and n_adv > 1:
        pipe = _pipe(fi, lost, b, f, dupthresh, prr_mode)
        sendable = _sendable(b, f, p, fc, fi, fx, lost, dupthresh, seg)
    _on_acks(
        b, f, cca, t, p, fi, fx, bw, rng, lost, delivered_segs, grown, n_adv, exited, rtt_mean,
        rtt_last, v_high, dupthresh, seg, pipe, sendable,
    )  # fmt: skip
    if acked > 0:
        fx[b, f, X_O_ACKED] += acked * seg
        # ns-3 (``ProcessAck``, ``NewAck(ack, m_isFirstPartialAck)``): in fast recovery only the
        # first partial ACK restarts the retransmission timer.
        restart = True
        if prr_mode and fi[b, f, I_CSTATE] == ST_RECOVERY:
            restart = fi[b, f, I_RTO_HELD] == 0
            fi[b, f, I_RTO_HELD] = 1
        if restart:
            fi[b, f, I_RTO_AT_MS] = t + fi[b, f, I_RTO_MS]
        srtt_rto = fx[b, f, X_SRTT] + max(1.0, 4.0 * fx[b, f, X_RTTVAR])
        fi[b, f, I_RTO_MS] = int(max(p[P_MIN_RTO_MS], srtt_rto))
        # Forget holes the sender knows are filled.
        while fi[b, f, I_LOST_LEN] > 0:
            j = fi[b, f, I_LOST_HEAD]
            if lost[b, f, j, 0] >= fi[b, f, I_UNA]:
                break
            fi[b, f, I_LOST_HEAD] = (j + 1) & (k - 1)
            fi[b, f, I_LOST_LEN] -= 1
