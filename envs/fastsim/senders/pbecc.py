"""PBE-CC's sender: paces at the rate the UE measured, BBR-like behind an Internet bottleneck.

The UE's monitor (``ue_monitor.py``) stamps its rate estimate on the receiver's ACKs; each TTI in
which the UE sent an ACK, the sender takes the rate that ACK carried (``_pbe_before_acks``, one
uplink delay after the UE measured it). Then (``_pbe_acks``, after every bunch of ACKs):

- BBR's machinery (``bbr.py``: delivery-rate samples, bandwidth filter, min RTT, gain cycle,
  recovery) runs on every ACK, so that the fallback starts from current estimates;
- with a rate, in the PBE mode, the sender paces at ``pacing_gain x rate`` and (outside loss
  recovery) sets its window to ``cwnd_gain x rate x min RTT``, overriding BBR's;
- the RTT that rate explains is ``max(min RTT, in flight / rate)``: the bytes beyond the
  bandwidth-delay product queue at the cell and drain at the rate. When the latest RTT exceeds
  that by more than ``margin_ms`` for ``hold_rtts`` min RTTs, the queue is elsewhere (an Internet
  bottleneck): the sender falls back to BBR's pacing and window (``X_PB_MODE`` = 1);
- the fallback ends when BBR's bottleneck bandwidth reaches ``return_share`` of the rate: the
  path carries what the cell offers again, and the cell is the bottleneck.

Before the first rate arrives (the first RTT) the sender is BBR (its startup).
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.codes import NO_RTT, RECOVERY_NS3_PRR, ST_OPEN
from envs.fastsim.loss_record import _pipe
from envs.fastsim.params import FC_D_UP_TOTAL_MS, P_PBE, P_RECOVERY
from envs.fastsim.pbe_params import (
    PB_CWND_GAIN,
    PB_HOLD_RTTS,
    PB_MARGIN_MS,
    PB_PACING_GAIN,
    PB_RETURN,
)
from envs.fastsim.senders.bbr import _bbr_acks, _bbr_sample
from envs.fastsim.state import (
    FB_PBE,
    I_CSTATE,
    V_UNIQ_RAW,
    X_B_BTLBW,
    X_B_SEEN_RAW,
    X_CWND,
    X_MIN_RTT,
    X_PACING,
    X_PB_MODE,
    X_PB_RATE,
    X_PB_SINCE,
)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _pbe_before_acks(b, f, t, p, fc, fx, bw, rcv, fbr):
    """The rate the UE stamped on the ACK it sent one uplink delay ago; BBR's rate sample."""
    tv = t - int(fc[f, FC_D_UP_TOTAL_MS])
    if tv >= 0:
        slot = tv & (rcv.shape[2] - 1)
        if rcv[b, f, slot, V_UNIQ_RAW] > fx[b, f, X_B_SEEN_RAW]:  # the UE sent an ACK then
            rate = fbr[b, f, tv & (fbr.shape[2] - 1), FB_PBE]
            if rate > 0:
                fx[b, f, X_PB_RATE] = rate
    _bbr_sample(b, f, t, p, fc, fx, bw, rcv)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _pbe_mode(fx, b, f, t, p, rtt_last, pipe_bytes):
    """The mode after an ACK: 0 paced at the rate, 1 the BBR-like fallback."""
    rate = fx[b, f, X_PB_RATE]
    min_rtt = fx[b, f, X_MIN_RTT]
    if fx[b, f, X_PB_MODE] > 0:
        if fx[b, f, X_B_BTLBW] >= p[P_PBE + PB_RETURN] * rate:
            fx[b, f, X_PB_MODE] = 0.0
            fx[b, f, X_PB_SINCE] = 0.0
        return
    explained = max(min_rtt, pipe_bytes / rate)
    if rtt_last > 0 and rtt_last - explained > p[P_PBE + PB_MARGIN_MS]:
        if fx[b, f, X_PB_SINCE] <= 0:
            fx[b, f, X_PB_SINCE] = t + 1.0
        elif t + 1.0 - fx[b, f, X_PB_SINCE] >= p[P_PBE + PB_HOLD_RTTS] * min_rtt:
            fx[b, f, X_PB_MODE] = 1.0
            fx[b, f, X_PB_SINCE] = 0.0
    else:
        fx[b, f, X_PB_SINCE] = 0.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _pbe_acks(b, f, t, p, fi, fx, bw, rng, lost, delivered_segs, rtt_last, v_high, dupthresh, seg):
    """A bunch of ACKs: BBR's update, the mode, then (PBE mode) the rate's pacing and window."""
    _bbr_acks(b, f, t, p, fi, fx, bw, rng, lost, delivered_segs, rtt_last, v_high, dupthresh, seg)
    rate = fx[b, f, X_PB_RATE]
    min_rtt = fx[b, f, X_MIN_RTT]
    if rate <= 0 or min_rtt >= NO_RTT:
        return  # BBR until the first estimate and RTT
    ns3 = p[P_RECOVERY] == RECOVERY_NS3_PRR
    pipe_bytes = _pipe(fi, lost, b, f, dupthresh, ns3) * seg
    _pbe_mode(fx, b, f, t, p, rtt_last, pipe_bytes)
    if fx[b, f, X_PB_MODE] > 0:
        return
    fx[b, f, X_PACING] = p[P_PBE + PB_PACING_GAIN] * rate
    if fi[b, f, I_CSTATE] == ST_OPEN:
        fx[b, f, X_CWND] = max(4.0 * seg, p[P_PBE + PB_CWND_GAIN] * rate * min_rtt)
