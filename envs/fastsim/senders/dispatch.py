"""The one place that branches on a flow's sender model (``codes.CCA_*``).

The shared sender code (``ack.py``, ``recovery.py``, ``send.py``) and the driver call these
hooks; each picks the congestion control's own function. Adding a congestion control: its
module in this package, its code in ``codes.py``, and its branches here.

Per TTI and flow (``driver.step_cell``): ``_before_acks``, ACK processing (``_on_acks`` for the
window, ``_ssthresh_on_loss``/``_enter_recovery``/``_exit_recovery``/``_on_open`` around loss
recovery), ``_before_send``, the send path (``_on_rto``, ``_paced``), ``_after_send``; at each
step boundary ``_on_step`` (the agent's command).
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.codes import (
    CCA_AGENT,
    CCA_BBR,
    CCA_CONSTRATE,
    CCA_CUBIC,
    CCA_PBE,
    CCA_RCP,
    CCA_XCP,
    CCA_XCPR,
    CCA_XRC,
    ST_LOSS,
    ST_RECOVERY,
    UPLINK_BSR,
)
from envs.fastsim.params import P_ROUTER, P_SEG_BYTES, P_UPLINK
from envs.fastsim.router_params import RP_HDR_BYTES
from envs.fastsim.senders.agent import _agent_apply, _agent_command
from envs.fastsim.senders.bbr import (
    _bbr_acks,
    _bbr_count_marked,
    _bbr_enter_recovery,
    _bbr_exit_recovery,
    _bbr_init,
    _bbr_record_send_state,
    _bbr_sample,
    _bbr_ssthresh,
)
from envs.fastsim.senders.constrate import _constrate_pace
from envs.fastsim.senders.cubic import (
    _cubic_increase,
    _cubic_on_rto,
    _cubic_pkts_acked,
    _cubic_ssthresh,
)
from envs.fastsim.senders.newreno import _newreno_increase, _newreno_ssthresh
from envs.fastsim.senders.pbecc import _pbe_acks, _pbe_before_acks
from envs.fastsim.senders.rcp import _rcp_feedback, _rcp_start, _rcp_window
from envs.fastsim.senders.xcp import _xcp_feedback, _xcp_header
from envs.fastsim.senders.xcpr import _xcpr_header, _xcpr_reset, _xcpr_window
from envs.fastsim.senders.xrc import _xrc_increase, _xrc_on_loss, _xrc_pkts_acked
from envs.fastsim.state import (
    I_CSTATE,
    I_CWND_LIMITED,
    X_ACK_REDRAW,
    X_CMD_CWND,
    X_CWND,
    X_SRTT,
    X_SSTHRESH,
)

# -- properties of a model ------------------------------------------------------------------


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _paced(cca):
    """The model paces its segments (when it has a pacing rate): BBR, the agent's, RCP, PBE-CC.

    And the constant-rate toy (``constrate.py``).
    """
    return (
        cca == CCA_BBR
        or cca == CCA_AGENT
        or cca == CCA_RCP
        or cca == CCA_PBE
        or cca == CCA_CONSTRATE
    )


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _payload_share(cca, p, seg):
    """Share of a segment that is data: XCP's and RCP's congestion header takes the rest."""
    if cca == CCA_XCP or cca == CCA_RCP or cca == CCA_XCPR:
        return (seg - p[P_ROUTER + RP_HDR_BYTES]) / seg
    return 1.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _sums_feedback(cca):
    """The sender sums the router's feedback off its ACKs (XCP): a lost ACK loses its share."""
    return cca == CCA_XCP


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _receiver_window(cca):
    """The receiver sums the feedback and its ACKs carry the window (XCP-r)."""
    return cca == CCA_XCPR


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _own_recovery(cca):
    """The model sets its window in fast recovery itself (BBR, PBE-CC): no PRR, no step."""
    return cca == CCA_BBR or cca == CCA_PBE


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _grows_when_cwnd_limited(cca):
    """The model grows only while the window limits the sender (ns-3's ``m_isCwndLimited``)."""
    return cca == CCA_CUBIC


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _keeps_tokens(cca):
    """The model keeps its pacing tokens while it does not pace (BBR, PBE-CC)."""
    return cca == CCA_BBR or cca == CCA_PBE


# -- per TTI, around the ACKs and sends -------------------------------------------------------


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _on_established(cca, fx, b, f, t, rtt):
    """The SYN-ACK reached the server (``ack._syn_ack``): BBR's (and PBE-CC's) first RTT."""
    if cca == CCA_BBR or cca == CCA_PBE:
        _bbr_init(fx, b, f, t, rtt)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _before_acks(cca, b, f, t, p, fc, fx, bw, rcv, fbr):
    """Before the TTI's ACKs: BBR's delivery-rate sample; PBE-CC's rate the ACK carried."""
    if cca == CCA_BBR:
        _bbr_sample(b, f, t, p, fc, fx, bw, rcv)
    elif cca == CCA_PBE:
        _pbe_before_acks(b, f, t, p, fc, fx, bw, rcv, fbr)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _before_send(cca, b, f, t, p, fc, fi, fx, bw, fbr):
    """Before the TTI's sends: BBR's delivery state of the TTI; RCP's rate before its ACKs.

    And the constant-rate toy's rate and window.
    """
    if cca == CCA_BBR or cca == CCA_PBE:
        _bbr_record_send_state(b, f, t, fi, fx, bw)
    elif cca == CCA_RCP:
        _rcp_start(b, f, t, p, fc, fi, fx, fbr, p[P_SEG_BYTES])
    elif cca == CCA_CONSTRATE:
        _constrate_pace(b, f, t, p, fi, fx, p[P_SEG_BYTES])


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _after_send(cca, b, f, t, p, fi, fx, lost, fbr):
    """After the TTI's sends: BBR's in flight and lost count; XCP's and RCP's header."""
    if cca == CCA_BBR or cca == CCA_PBE:
        _bbr_count_marked(b, f, p, fi, fx, lost)
    elif cca == CCA_XCP or cca == CCA_RCP:
        _xcp_header(b, f, t, fx, fbr)
    elif cca == CCA_XCPR:
        _xcpr_header(b, f, t, fx, fbr)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _on_feedback(cca, b, f, fi, fx, fbr, fslot, seg):
    """ACKs arrive with the router's explicit feedback (``fbr`` at ``fslot``): XCP, RCP."""
    if cca == CCA_XCP:
        _xcp_feedback(fx, fi, b, f, fbr, fslot, seg)
    elif cca == CCA_RCP:
        _rcp_feedback(fx, b, f, fbr, fslot)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _on_receiver_window(cca, b, f, fi, fx, rcv, slot, seg):
    """ACKs arrive with the receiver's state at ``slot``: XCP-r's window."""
    if cca == CCA_XCPR:
        _xcpr_window(b, f, fi, fx, rcv, slot, seg)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _on_step(cca, b, f, fi, fx, act, seg):
    """At a step boundary: the agent's new command (window and pacing)."""
    if cca == CCA_AGENT:
        _agent_command(fx, fi, act, b, f, seg)


# -- loss recovery ----------------------------------------------------------------------------


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _ssthresh_on_loss(fx, b, f, cca, pipe_bytes, seg):
    """``GetSsThresh`` of the flow's congestion control."""
    if cca == CCA_CUBIC:
        return _cubic_ssthresh(fx, b, f, seg)
    if cca == CCA_BBR or cca == CCA_PBE:
        return _bbr_ssthresh(fx, b, f)
    return _newreno_ssthresh(pipe_bytes, seg)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _on_loss_state(fx, fi, b, f, cca, t):
    """``CongestionStateSet`` on entering recovery or loss."""
    if cca == CCA_XRC:
        _xrc_on_loss(fx, b, f)
    elif cca == CCA_XCPR:
        _xcpr_reset(fx, b, f)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _enter_recovery(fx, fi, b, f, cca, ss, pipe_bytes, delivered_segs, seg, prr_mode):
    """The window on entering fast recovery; True when PRR takes it from here (``prr_mode``).

    ns-3's default recovery, ``TcpPrrRecovery``: the window follows the deliveries (once the
    ACK is applied, ``recovery._prr_on_ack``), not a step to ssthresh (``classic``).
    """
    if cca == CCA_BBR or cca == CCA_PBE:
        _bbr_enter_recovery(fx, fi, b, f, pipe_bytes, delivered_segs, seg)
        return False
    if prr_mode:
        return True
    fx[b, f, X_CWND] = ss
    return False


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _exit_recovery(fx, b, f, cca, prr_mode):
    """The window when fast recovery ends: ssthresh (BBR: its own rule)."""
    if cca == CCA_BBR or cca == CCA_PBE:
        _bbr_exit_recovery(fx, b, f, prr_mode)
    else:
        fx[b, f, X_CWND] = fx[b, f, X_SSTHRESH]


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _on_open(fx, fi, b, f, cca, seg):
    """Back to open after recovery or loss: the agent's window applies again."""
    if cca == CCA_AGENT:
        _agent_apply(fx, fi, b, f, seg)
    elif cca == CCA_XCPR:
        _xcpr_reset(fx, b, f)  # the window recovery left: the receiver reads it again


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _on_rto(fx, fi, b, f, cca, t):
    """``CongestionStateSet(CA_LOSS)`` on a retransmission timeout."""
    if cca == CCA_CUBIC:
        _cubic_on_rto(fx, fi, b, f, float(t))
    _on_loss_state(fx, fi, b, f, cca, t)
    # ACK loss (``ack_loss.py``): the timeout's retransmission makes the receiver ACK again.
    fx[b, f, X_ACK_REDRAW] = t + max(fx[b, f, X_SRTT], 1.0)


# -- window growth ----------------------------------------------------------------------------


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _cwnd_limited_after_send(fi, fx, b, f, pipe, sendable, seg):
    """``m_isCwndLimited`` after the segments the window allows now are sent (none: unchanged)."""
    room = int((fx[b, f, X_CWND] - pipe * seg) // seg)  # whole segments the window allows
    if room > 0 and sendable > 0:
        # Less than a segment of window is left after the send unless what waits runs out first.
        fi[b, f, I_CWND_LIMITED] = 1 if sendable >= room else 0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _on_acks(
    b, f, cca, t, p, fi, fx, bw, rng, lost, delivered_segs, grown, n_adv, exited, rtt_mean,
    rtt_last, v_high, dupthresh, seg, pipe, sendable,
):  # fmt: skip
    """The window after a bunch of ACKs (``ack._sender_acks``).

    BBR takes the bunch at once. The others see ``n_adv`` ACKs that advanced, sharing the
    ``grown`` newly delivered segments, each one ``PktsAcked`` and (outside recovery, and not
    on the ACK that ended it) ``IncreaseWindow``. ns-3 sends after each ACK, so CUBIC's
    cwnd-limited test (``m_isCwndLimited``, left by the last segment sent) holds, from the second
    ACK of a bunch on, for the send the window then allows: ``pipe`` segments in flight after
    the bunch and ``sendable`` segments waiting (``send._sendable``).
    """
    if cca == CCA_BBR:
        _bbr_acks(
            b, f, t, p, fi, fx, bw, rng, lost, delivered_segs, rtt_last, v_high, dupthresh, seg
        )
    elif cca == CCA_PBE:
        _pbe_acks(
            b, f, t, p, fi, fx, bw, rng, lost, delivered_segs, rtt_last, v_high, dupthresh, seg
        )
    elif cca == CCA_XCP or cca == CCA_XCPR:
        return  # the window moves by the router's feedback only (``_on_feedback``, XCP-r's ACKs)
    elif cca == CCA_CONSTRATE:
        return  # the window is the receive window (``_before_send``)
    elif cca == CCA_RCP:
        _rcp_window(fx, b, f, p, seg)
    elif n_adv > 0:
        base = grown // n_adv
        extra = grown - base * n_adv
        grow = fi[b, f, I_CSTATE] != ST_RECOVERY and not exited
        # ns-3 passes HyStart the smoothed RTT (``PktsAcked(..., m_srtt)``); the periodic
        # uplink's calibration rests on the bunch's mean RTT.
        rtt_hy = fx[b, f, X_SRTT] if p[P_UPLINK] == UPLINK_BSR else rtt_mean
        for a in range(n_adv):
            segs = base + (1 if a < extra else 0)
            if cca == CCA_CUBIC:
                _cubic_pkts_acked(fx, b, f, rtt_hy, float(t), seg, p)
                if a > 0:
                    _cwnd_limited_after_send(fi, fx, b, f, pipe, sendable, seg)
                if grow:
                    _cubic_increase(fx, fi, b, f, segs, float(t), seg)
            elif cca == CCA_XRC:
                _xrc_pkts_acked(fx, b, f, segs, rtt_mean, seg)
                if grow:
                    _xrc_increase(fx, b, f, segs, float(t), seg, p)
            elif cca == CCA_AGENT and fx[b, f, X_CMD_CWND] > 0:
                if grow:
                    # ns-3's agent ops: NewReno's slow start rebuilds the window after an RTO
                    # (CA_LOSS) until the loss is repaired and the commanded window returns.
                    if fi[b, f, I_CSTATE] == ST_LOSS:
                        _newreno_increase(fx, b, f, segs, seg)
                    _agent_apply(fx, fi, b, f, seg)
            elif grow:
                _newreno_increase(fx, b, f, segs, seg)
