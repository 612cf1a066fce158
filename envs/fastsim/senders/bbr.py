"""BBR (v1) as ns-3's ``TcpBbr``: delivery-rate samples, max filter, gain cycle, ProbeRTT.

Delivery-rate samples as ns-3's ``TcpRateLinux`` takes them, on the per-TTI ACK stream as ns-3's
UE sends it (``_bbr_sample``, before the ACKs of a TTI), from the delivery state each segment
carries (``_bbr_record_send_state``, before the sends); a max filter over 10 packet-timed
rounds, pacing 1 % below the estimate, a 10 s min-RTT filter, startup/drain/ProbeBW with ns-3's
``CheckCyclePhase`` rules/ProbeRTT, and loss recovery with packet conservation (BBR sets its own
window in recovery: no PRR).
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.codes import (
    BBR_DRAIN,
    BBR_PROBE_BW,
    BBR_PROBE_RTT,
    BBR_STARTUP,
    LOST_DONE,
    NO_RTT,
    RECOVERY_NS3_PRR,
    ST_LOSS,
    ST_RECOVERY,
)
from envs.fastsim.loss_record import _pipe
from envs.fastsim.params import (
    FC_D_UP_TOTAL_MS,
    P_DUPTHRESH,
    P_INIT_CWND_SEGS,
    P_RECOVERY,
    P_SEG_BYTES,
)
from envs.fastsim.rng import _rand
from envs.fastsim.state import (
    BBR_FILTER,
    BBR_SEND_RING,
    I_CSTATE,
    I_LOST_HEAD,
    I_LOST_LEN,
    I_SACKED,
    I_SND_NXT,
    I_UNA,
    V_LAST_RAW,
    V_UNIQ_RAW,
    X_B_ACKEL,
    X_B_BTLBW,
    X_B_CONSERVE,
    X_B_CYCLE,
    X_B_CYCLESTAMP,
    X_B_DELIV,
    X_B_DTIME,
    X_B_FILLED,
    X_B_FIRSTSENT,
    X_B_FULLBW,
    X_B_FULLCNT,
    X_B_LOSTOUT,
    X_B_MARKED,
    X_B_MINRTT,
    X_B_MINSTAMP,
    X_B_MODE,
    X_B_PRIOR,
    X_B_PRIOR_CWND,
    X_B_PRIOR_INFL,
    X_B_PRTT_DONE,
    X_B_PRTT_ROUND,
    X_B_PVALID,
    X_B_ROUNDEND,
    X_B_ROUNDS,
    X_B_ROUNDSTART,
    X_B_SEEN_RAW,
    X_B_SENDEL,
    X_CWND,
    X_PACING,
    X_SSTHRESH,
)

BBR_HIGH_GAIN = 2.89  # ns-3 TcpBbr ``HighGain`` (Linux: 2.885)
BBR_PACING_MARGIN = 0.01
BBR_CYCLE = (1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bbr_sample(b, f, t, p, fc, fx, bw, rcv):
    """BBR's delivery-rate sample, bandwidth filter, rounds and full-pipe check for one TTI.

    The sampler follows the ACK stream as ns-3's UE sends it, an uplink grant in almost every
    TTI (ns-3 1 ms records: 2-4 segments acknowledged in nearly every ms at 35 Mbit/s), not the
    bunches of the ``ul_period_ms`` grid that drive the window and loss detection: it reads the
    receiver's state of every TTI (``V_UNIQ_RAW``, ``V_LAST_RAW``) one uplink delay later.
    With 4 ms bunches each sample's delivered count moved in 12-segment steps (at 35 Mbit/s),
    and a sample whose start did not move added a whole bunch over the previous interval
    (+8 %, about once a round); the 10-round max filter kept those and BBR paced 5-6 % above
    the link with the window cap binding (ns-3's estimate is the link's goodput).

    As ns-3's ``TcpRateLinux`` (Linux ``tcp_rate_gen``): the bytes delivered since the sample's
    segment was sent, over the longer of its send and ACK phases; shorter than the min RTT: no
    sample. Unlike Linux, ns-3 keeps the sample's start across ACKs and moves it only to a
    segment sent with more data delivered.
    """
    seg = p[P_SEG_BYTES]
    d_up = int(fc[f, FC_D_UP_TOTAL_MS])
    tv = t - d_up
    if tv < 0:
        return
    slot = tv & (rcv.shape[2] - 1)
    new = rcv[b, f, slot, V_UNIQ_RAW] - fx[b, f, X_B_SEEN_RAW]
    if new <= 0:
        return
    fx[b, f, X_B_SEEN_RAW] = rcv[b, f, slot, V_UNIQ_RAW]
    fx[b, f, X_B_DELIV] += new * seg
    fx[b, f, X_B_DTIME] = t
    sample = -1.0
    round_end = False
    s = t - int(rcv[b, f, slot, V_LAST_RAW] + d_up)
    o = BBR_FILTER + 4 * (s & (BBR_SEND_RING - 1))
    if s >= 0 and bw[b, f, o] == s + 1:
        if fx[b, f, X_B_PRIOR] == 0 or bw[b, f, o + 1] > fx[b, f, X_B_PRIOR]:
            fx[b, f, X_B_PRIOR] = bw[b, f, o + 1]
            fx[b, f, X_B_ACKEL] = t - bw[b, f, o + 2]
            fx[b, f, X_B_SENDEL] = s - bw[b, f, o + 3]
            fx[b, f, X_B_PVALID] = 1.0
            fx[b, f, X_B_FIRSTSENT] = s
    if fx[b, f, X_B_PVALID] > 0:
        interval = max(fx[b, f, X_B_ACKEL], fx[b, f, X_B_SENDEL])
        if interval > 0 and interval >= fx[b, f, X_B_MINRTT]:
            sample = (fx[b, f, X_B_DELIV] - fx[b, f, X_B_PRIOR]) / interval
            # Packet-timed rounds (``bbr_update_round``): a round ends when a segment sent
            # after the round started is delivered, so rounds go on during loss recovery.
            round_end = fx[b, f, X_B_PRIOR] >= fx[b, f, X_B_ROUNDEND]
        else:
            fx[b, f, X_B_PVALID] = 0.0
    r = int(fx[b, f, X_B_ROUNDS]) % BBR_FILTER
    if round_end:
        fx[b, f, X_B_ROUNDS] += 1.0
        r = int(fx[b, f, X_B_ROUNDS]) % BBR_FILTER
        bw[b, f, r] = 0.0
        fx[b, f, X_B_ROUNDSTART] = t
        fx[b, f, X_B_ROUNDEND] = fx[b, f, X_B_DELIV]
        if p[P_RECOVERY] == RECOVERY_NS3_PRR:
            # ns-3 ``TcpBbr::UpdateRound``: packet conservation ends at the next round start.
            fx[b, f, X_B_CONSERVE] = 0.0
    if sample > bw[b, f, r]:
        bw[b, f, r] = sample
    best = 0.0
    for i in range(BBR_FILTER):
        best = max(best, bw[b, f, i])
    fx[b, f, X_B_BTLBW] = best
    if round_end and fx[b, f, X_B_FILLED] == 0 and best > 0:
        if best >= fx[b, f, X_B_FULLBW] * 1.25:
            fx[b, f, X_B_FULLBW] = best
            fx[b, f, X_B_FULLCNT] = 0.0
        else:
            fx[b, f, X_B_FULLCNT] += 1.0
            if fx[b, f, X_B_FULLCNT] >= 3:
                fx[b, f, X_B_FILLED] = 1.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bbr_enter_probe_bw(fx, rng, b, f, t):
    """Enter ProbeBW at a random phase, as ns-3's ``EnterProbeBW`` (after Drain, or ProbeRTT).

    The index is 7 - int(U[0, 6)), then one advance: a phase of 3-7 or 0, never the draining
    phase first.
    """
    fx[b, f, X_B_CYCLE] = float((8 - int(_rand(rng, b) * 6)) % 8)
    fx[b, f, X_B_CYCLESTAMP] = t


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bbr_on_ack(fx, fi, bw, rng, b, f, acked_bytes, rtt, pipe_bytes, t, seg, marked, ns3, iw_bytes):
    """A BBR (v1) model: windowed max bandwidth per round, min RTT, gain cycling, ProbeRTT.

    ``marked``: with ``ns3``, ns-3's ``rs.m_bytesLoss`` of the ACK in segments (|lost now -
    lost before|); otherwise the segments marked lost and not retransmitted now.
    """
    # Min RTT filter (10 s; ns-3 ``UpdateRTprop``): whether it expired is decided before this
    # ACK's sample refreshes it, and that decision enters ProbeRTT below (``CheckProbeRTT``).
    expired = fx[b, f, X_B_MINSTAMP] > 0 and t - fx[b, f, X_B_MINSTAMP] > 10000.0
    if rtt > 0 and (rtt <= fx[b, f, X_B_MINRTT] or expired):
        fx[b, f, X_B_MINRTT] = rtt
        fx[b, f, X_B_MINSTAMP] = t
    losses = marked if ns3 else marked - fx[b, f, X_B_MARKED]
    btlbw = fx[b, f, X_B_BTLBW]
    min_rtt = fx[b, f, X_B_MINRTT] if fx[b, f, X_B_MINRTT] < NO_RTT else 40.0
    bdp = btlbw * min_rtt
    mode = fx[b, f, X_B_MODE]
    if mode == BBR_STARTUP and fx[b, f, X_B_FILLED] > 0:
        mode = BBR_DRAIN
        # ns-3 ``TcpBbr::CheckDrain``: ssthresh = InFlight(1), the window a recovery ends with.
        fx[b, f, X_SSTHRESH] = bdp + 3 * seg
    # ns-3 ``CheckCyclePhase`` (Linux ``bbr_is_next_cycle_phase``), before ``CheckDrain``: the
    # probing phase lasts at least a min RTT and until in flight reaches its target (or a loss),
    # the draining phase ends after a min RTT or once in flight is down to the BDP.
    if mode == BBR_PROBE_BW:
        gain = BBR_CYCLE[int(fx[b, f, X_B_CYCLE])]
        full = t - fx[b, f, X_B_CYCLESTAMP] > min_rtt
        prior_infl = fx[b, f, X_B_PRIOR_INFL]
        if gain == 1.0:
            nxt = full
        elif gain > 1.0:
            nxt = full and (losses > 0 or prior_infl >= gain * bdp + 5 * seg)
        else:
            nxt = full or prior_infl <= bdp + 3 * seg
        if nxt:
            fx[b, f, X_B_CYCLE] = float((int(fx[b, f, X_B_CYCLE]) + 1) % 8)
            fx[b, f, X_B_CYCLESTAMP] = t
    if mode == BBR_DRAIN and pipe_bytes <= bdp + 3 * seg:
        mode = BBR_PROBE_BW
        _bbr_enter_probe_bw(fx, rng, b, f, t)
    # ProbeRTT (ns-3 ``CheckProbeRTT``, ``HandleProbeRTT``): on an expired min RTT the window
    # falls to 4 segments; once in flight is down to them, 200 ms and a round start later the
    # min RTT is stamped, the window restored and ProbeBW entered again (a new random phase).
    if mode != BBR_PROBE_RTT and expired:
        mode = BBR_PROBE_RTT
        fx[b, f, X_B_PRIOR_CWND] = fx[b, f, X_CWND]
        fx[b, f, X_B_PRTT_DONE] = 0.0
    if mode == BBR_PROBE_RTT:
        if fx[b, f, X_B_PRTT_DONE] == 0 and pipe_bytes <= 4 * seg:
            fx[b, f, X_B_PRTT_DONE] = t + 200.0
            fx[b, f, X_B_PRTT_ROUND] = 0.0
            fx[b, f, X_B_ROUNDEND] = fx[b, f, X_B_DELIV]
        elif fx[b, f, X_B_PRTT_DONE] > 0:
            if fx[b, f, X_B_ROUNDSTART] == t:
                fx[b, f, X_B_PRTT_ROUND] = 1.0
            if fx[b, f, X_B_PRTT_ROUND] > 0 and t > fx[b, f, X_B_PRTT_DONE]:
                fx[b, f, X_B_MINSTAMP] = t
                fx[b, f, X_CWND] = max(fx[b, f, X_CWND], fx[b, f, X_B_PRIOR_CWND])
                if fx[b, f, X_B_FILLED] > 0:
                    mode = BBR_PROBE_BW
                    _bbr_enter_probe_bw(fx, rng, b, f, t)
                else:
                    mode = BBR_STARTUP
    fx[b, f, X_B_MODE] = mode
    if mode == BBR_STARTUP:
        pacing_gain = BBR_HIGH_GAIN
        cwnd_gain = BBR_HIGH_GAIN
    elif mode == BBR_DRAIN:
        pacing_gain = 1.0 / BBR_HIGH_GAIN
        cwnd_gain = BBR_HIGH_GAIN
    elif mode == BBR_PROBE_BW:
        pacing_gain = BBR_CYCLE[int(fx[b, f, X_B_CYCLE])]
        cwnd_gain = 2.0
    else:
        pacing_gain = 1.0
        cwnd_gain = 1.0
    if btlbw > 0:
        # ns-3 ``TcpBbr::SetPacingRate`` (Linux ``bbr_pacing_margin_percent``): 1 % below.
        fx[b, f, X_PACING] = pacing_gain * btlbw * (1.0 - BBR_PACING_MARGIN)
    else:
        fx[b, f, X_PACING] = BBR_HIGH_GAIN * fx[b, f, X_CWND] / min_rtt
    if mode == BBR_PROBE_RTT:
        fx[b, f, X_CWND] = 4 * seg
        return
    if ns3 and acked_bytes <= 0:
        return  # ns-3 ``TcpBbr::SetCwnd``: an ACK that delivered nothing leaves the window
    # ``InFlight(cwnd_gain)``: 3 send quanta (one segment each), 2 segments more in the probing
    # phase of the cycle.
    target = cwnd_gain * bdp + 3 * seg
    if mode == BBR_PROBE_BW and int(fx[b, f, X_B_CYCLE]) == 0:
        target += 2 * seg
    cwnd = fx[b, f, X_CWND]
    # In recovery the window first loses the segments this ACK marked lost (Linux
    # ``bbr_set_cwnd_to_recover_or_restore``, ns-3 ``ModulateCwndForRecovery``), then holds what
    # is in flight plus what was delivered until the cumulative ACK passes the recovery point
    # (packet conservation; ns-3 ends it after one round, see docs/calibration/README.md).
    in_recovery = fi[b, f, I_CSTATE] == ST_RECOVERY
    if in_recovery and ns3:
        # ns-3's ``rs.m_bytesLoss`` is |lost now - lost before| (``ReceivedAck``): lost marks that
        # an ACK clears (SACKed or cumulatively acknowledged) cut the window as new ones do.
        if marked > 0:
            cwnd = max(cwnd - marked * seg, seg)
    elif in_recovery:
        if losses > 0:
            cwnd = max(cwnd - losses * seg, seg)
            fx[b, f, X_B_MARKED] = marked
    if in_recovery and fi[b, f, I_UNA] < fx[b, f, X_B_CONSERVE]:
        cwnd = max(cwnd, pipe_bytes + acked_bytes)
    elif fx[b, f, X_B_FILLED] > 0:
        cwnd = min(cwnd + acked_bytes, target)
    elif cwnd < target or btlbw <= 0 or fx[b, f, X_B_DELIV] < iw_bytes:
        # Linux ``bbr_set_cwnd``, ns-3 ``SetCwnd``: before the pipe is full the window grows
        # below the target and, whatever the target, until an initial window is delivered.
        cwnd = cwnd + acked_bytes
    fx[b, f, X_CWND] = max(cwnd, 4 * seg)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bbr_init(fx, b, f, t, rtt):
    """BBR when the handshake ends (ns-3 ``CongestionStateSet(CA_OPEN)``, Linux ``bbr_init``).

    The SYN-ACK's RTT sample is the first min RTT (ns-3: the smoothed RTT of that one sample;
    Linux: ``tcp_min_rtt``), stamped now: the data ACKs lower it only with lower samples. Without
    it the first data ACK set the minimum; on a trace whose first segments queue (an ACK RTT of
    73 ms against a 45 ms handshake), BBR kept a 64-73 ms minimum for the whole run, a bandwidth-
    delay product and window 1.4x ns-3's, and drain never emptied the queue that would have shown
    the lower RTT.
    """
    if rtt <= 0:
        return
    fx[b, f, X_B_MINRTT] = rtt
    fx[b, f, X_B_MINSTAMP] = float(t)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bbr_record_send_state(b, f, t, fi, fx, bw):
    """The delivery state a segment sent at ``t`` carries (``TcpRateLinux::SkbSent``)."""
    if fi[b, f, I_SND_NXT] <= fi[b, f, I_UNA]:
        # Start of a transmission: nothing in flight, the sample intervals start now.
        fx[b, f, X_B_FIRSTSENT] = t
        fx[b, f, X_B_DTIME] = t
    o = BBR_FILTER + 4 * (t & (BBR_SEND_RING - 1))
    bw[b, f, o] = t + 1
    bw[b, f, o + 1] = fx[b, f, X_B_DELIV]
    bw[b, f, o + 2] = fx[b, f, X_B_DTIME]
    bw[b, f, o + 3] = fx[b, f, X_B_FIRSTSENT]


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bbr_count_marked(b, f, p, fi, fx, lost):
    """After the sends: in flight, and (``classic``) the segments marked lost, not retransmitted.

    With ``ns3_prr`` BBR's loss count is ns-3's lost-count change per ACK (``X_B_LOSTOUT``, in
    ``_sender_acks``), so only the next ACK's ``priorInFlight`` is needed here.
    """
    ns3 = p[P_RECOVERY] == RECOVERY_NS3_PRR
    pipe = _pipe(fi, lost, b, f, int(p[P_DUPTHRESH]), ns3)
    # The next ACK's ``priorInFlight`` (ns-3 ``ReceivedAck``), for BBR's cycle-phase rules.
    fx[b, f, X_B_PRIOR_INFL] = pipe * p[P_SEG_BYTES]
    if not ns3:
        fx[b, f, X_B_MARKED] = fi[b, f, I_SND_NXT] - fi[b, f, I_UNA] - fi[b, f, I_SACKED] - pipe


@njit(cache=True, error_model="numpy", _nrt=False)
def _bbr_lost_out(fi, lost, b, f, dupthresh, v_high):
    """ns-3's ``TcpTxBuffer::GetLost`` in segments (BBR's ``rs.m_bytesLoss`` per ACK).

    Marked lost (dupthresh segments SACKed above, or all outstanding after an RTO) and not yet
    (s)acked, whether retransmitted or not.
    """
    k = lost.shape[2]
    n = 0
    for i in range(fi[b, f, I_LOST_LEN]):
        j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
        sq = lost[b, f, j, 0]
        if sq >= fi[b, f, I_UNA] and lost[b, f, j, 1] != LOST_DONE:
            if fi[b, f, I_CSTATE] == ST_LOSS or sq + dupthresh < v_high:
                n += 1
    return n


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bbr_acks(b, f, t, p, fi, fx, bw, rng, lost, delivered_segs, rtt_last, v_high, dupthresh, seg):
    """A bunch of ACKs: the segments they marked lost, then ``_bbr_on_ack`` (BBR's window)."""
    ns3 = p[P_RECOVERY] == RECOVERY_NS3_PRR
    pipe_bytes = _pipe(fi, lost, b, f, dupthresh, ns3) * seg
    if ns3:
        lost_now = _bbr_lost_out(fi, lost, b, f, dupthresh, v_high)
        marked = abs(lost_now - int(fx[b, f, X_B_LOSTOUT]))
        fx[b, f, X_B_LOSTOUT] = lost_now
    else:
        n_out = fi[b, f, I_SND_NXT] - fi[b, f, I_UNA] - fi[b, f, I_SACKED]
        marked = n_out - _pipe(fi, lost, b, f, dupthresh, False)
    iw_bytes = p[P_INIT_CWND_SEGS] * seg
    _bbr_on_ack(
        fx, fi, bw, rng, b, f, delivered_segs * seg, rtt_last, pipe_bytes, t, seg, marked, ns3,
        iw_bytes,
    )  # fmt: skip


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bbr_ssthresh(fx, b, f):
    """ns-3 ``TcpBbr::GetSsThresh``: ssthresh stays (InFlight(1) of the end of startup)."""
    return fx[b, f, X_SSTHRESH]


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bbr_enter_recovery(fx, fi, b, f, pipe_bytes, delivered_segs, seg):
    """BBR v1 (Linux, ns-3 TcpBbr) on entering fast recovery: save the window, conserve packets.

    For one round the window falls to what is in flight plus what this ACK delivered, and grows
    only with deliveries.
    """
    fx[b, f, X_B_PRIOR_CWND] = fx[b, f, X_CWND]
    fx[b, f, X_CWND] = max(pipe_bytes + max(delivered_segs, 0) * seg, 4 * seg)
    fx[b, f, X_B_CONSERVE] = fi[b, f, I_SND_NXT]


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bbr_exit_recovery(fx, b, f, prr_mode):
    """The window when fast recovery ends.

    ns-3 (``ProcessAck``, ``exitedFastRecovery``; ``prr_mode``): BBR restores the prior window
    (``CA_EVENT_COMPLETE_CWR``), then the socket sets it to ssthresh, which TcpBbr left at
    InFlight(1) of the end of startup; it grows back by the deliveries. ``classic``: the prior
    window comes back.
    """
    if prr_mode:
        fx[b, f, X_CWND] = fx[b, f, X_SSTHRESH]
        fx[b, f, X_B_CONSERVE] = 0.0
    else:
        fx[b, f, X_CWND] = max(fx[b, f, X_CWND], fx[b, f, X_B_PRIOR_CWND])
        fx[b, f, X_B_CONSERVE] = 0.0
