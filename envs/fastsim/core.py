"""The compiled cell model: one TTI (1 ms) at a time, for a batch of independent cells.

Per TTI and cell, in this order:

1. Mobility: every ``mobility_period_s`` each UE draws a distance (``random`` mobility); the MCS
   follows from Okumura-Hata SINR through the calibrated CQI thresholds.
2. Arrivals at the eNB: segments sent ``server_delay_ms + delay_ms`` earlier enter their UE's RLC
   buffer (packets with their arrival time, interleaved across flows); a packet that does not fit
   is dropped (tail drop at ``rlc_buffer_pkts * 1500`` bytes of PDCP PDUs).
3. MAC: proportional fair gives the TTI's resource blocks to one backlogged UE (ns-3's
   ``PfFfMacScheduler`` picks one UE per RBG with equal metrics: all RBGs), round robin splits
   them; a HARQ retransmission takes an allocation without new data. The transport block drains
   the RLC buffer byte-wise (segmentation), completed packets reach the UE's TCP receiver.
4. Receiver: cumulative and selective ACK state, delayed ACKs (every second in-order segment,
   immediately on a hole), written into a ring by time; the sender reads it after the ACK path's
   delay (air + core + server link), so ACK clocking follows the propagation delays.
5. XRC agent: per UE the capacity of new transport blocks plus its share of idle RBs over the last
   ``xrc_window_ttis`` TTIs; C_i = C / active flows; HoL = now - arrival of the RLC head packet.
   Rate and HoL are stored by time and reach the sender after the uplink core delay.
6. Senders: ACK processing (RTT, loss detection at 3 segments above a hole, fast recovery to
   ``ssthresh``, RTO), window growth (NewReno, CUBIC with HyStart, a BBR model, XRC, agent),
   then retransmissions and new segments within the window, pacing and application data.

The transition is pure in the sense of STYLE.md 3.5: its inputs are the frozen parameter arrays,
the state arrays and each cell's explicit counter-based RNG state; nothing global is read.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from envs.fastsim.params import (
    FC_CCA,
    FC_D_DOWN_MS,
    FC_D_SRV_UP_MS,
    FC_D_UP_TOTAL_MS,
    FC_SIZE_BYTES,
    FC_SSTHRESH_BYTES,
    FC_START_MS,
    FC_STOP_MS,
    FC_TRAFFIC,
    FC_UE,
    FC_VIDEO_ON_MS,
    FC_VIDEO_PERIOD_MS,
    FC_VIDEO_RATE_BPMS,
    P_ACTIVE_TIMEOUT_MS,
    P_AIR_DL_MS,
    P_APP_CHUNK_BYTES,
    P_ATTACH_MS,
    P_DELACK_COUNT,
    P_DELACK_TIMEOUT_MS,
    P_DUPTHRESH,
    P_HARQ_BLER,
    P_HYSTART_DELAY,
    P_INIT_CWND_SEGS,
    P_MAX_DISTANCE_M,
    P_MIN_DISTANCE_M,
    P_MIN_RTO_MS,
    P_MOBILITY,
    P_MOBILITY_PERIOD_MS,
    P_NUM_RBS,
    P_PDU_BYTES,
    P_PF_TAU_TTIS,
    P_RBG_SIZE,
    P_RECOVERY,
    P_RLC_CAP_BYTES,
    P_RWND_SEGS,
    P_SCHEDULER,
    P_SDU_OVERHEAD_BYTES,
    P_SEG_BYTES,
    P_SINR_AT_1KM_DB,
    P_SINR_SLOPE_DB,
    P_START_JITTER_MS,
    P_TB_OVERHEAD_BYTES,
    P_UL_GRANT_MS,
    P_UL_PERIOD_MS,
    P_UPLINK,
    P_USABLE_RBS,
    P_VIDEO_TICK_MS,
    P_WINDOW_TTIS,
    P_XRC_BUDGET_MS,
    P_XRC_RAMP_RTTS,
    P_XRC_UNFAIR_ALPHA,
    P_XRC_UNFAIR_RTTS,
)
from envs.fastsim.state import (
    BBR_FILTER,
    BBR_SEND_RING,
    CS_NEXT_MOVE_MS,
    CS_RR_NEXT,
    CS_T_MS,
    I_ACK_CUM,
    I_ACK_HIGH,
    I_ACK_UNIQ,
    I_CSTATE,
    I_CWND_LIMITED,
    I_DATA_MS,
    I_DELACK_MS,
    I_DELACK_N,
    I_DELACK_SEND,
    I_DUPACK_CNT,
    I_HANDED,
    I_LAST_ARR_MS,
    I_LOST_HEAD,
    I_LOST_LEN,
    I_RCV_ACKS,
    I_RCV_ACKS_TTI,
    I_RCV_CUM,
    I_RCV_DUPACKS,
    I_RCV_HIGH,
    I_RCV_LAST_OWD,
    I_RCV_OWD,
    I_RCV_UNIQ,
    I_RECOVER,
    I_RTO_AT_MS,
    I_RTO_HELD,
    I_RTO_MS,
    I_RTX_HEAD,
    I_RTX_LEN,
    I_RUNNING,
    I_SACKED,
    I_SEEN_ACKS,
    I_SEEN_DUPACKS,
    I_SEEN_OWD,
    I_SEEN_UNIQ,
    I_SND_NXT,
    I_START_MS,
    I_UL_LAST_T,
    I_UL_PEND_N,
    I_UL_PEND_TSUM,
    I_UNA,
    I_VIEW_HIGH,
    LOST_AGAIN,
    LOST_DONE,
    LOST_NEED,
    LOST_RETX,
    R_ARR,
    R_FLOW,
    R_RETX,
    R_SEND,
    R_SEQ,
    U_CAP_SUM,
    U_DIST,
    U_HARQ,
    U_HEAD_REM,
    U_HOL,
    U_LAST_MCS,
    U_MCS,
    U_NEW_TTI,
    U_O_CAP,
    U_O_DROPS,
    U_O_HOLMAX,
    U_O_TTIS,
    U_O_TX,
    U_PF_AVG,
    U_RBS_TTI,
    U_RLC_BYTES,
    UI_BSR,
    UI_RLC_HEAD,
    UI_RLC_LEN,
    V_ACKS,
    V_CUM,
    V_DUPACKS,
    V_HIGH,
    V_LAST,
    V_LAST_RAW,
    V_LEN,
    V_OWD,
    V_UNIQ,
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
    X_B_PVALID,
    X_B_ROUNDEND,
    X_B_ROUNDS,
    X_B_ROUNDSTART,
    X_B_SEEN_RAW,
    X_B_SENDEL,
    X_BUDGET,
    X_C_ACKCNT,
    X_C_CNT,
    X_C_CURRRTT,
    X_C_DELAYMIN,
    X_C_ENDSEQ,
    X_C_EPOCH,
    X_C_FOUND,
    X_C_K,
    X_C_LASTACK,
    X_C_LASTMAX,
    X_C_ORIGIN,
    X_C_ROUNDSTART,
    X_C_SAMPLES,
    X_C_TCPCWND,
    X_CMD_CWND,
    X_CMD_PACE,
    X_CWND,
    X_FB_HOL,
    X_FB_RATE,
    X_FCT_S,
    X_MIN_RTT,
    X_O_ACKED,
    X_O_LOSS,
    X_O_RETX,
    X_O_RTT_LAST,
    X_O_RTT_MIN,
    X_O_RTT_N,
    X_O_RTT_SUM,
    X_O_RX,
    X_O_SENT,
    X_PACING,
    X_PRR_DELIV,
    X_PRR_OUT,
    X_PRR_RFS,
    X_RTTVAR,
    X_SRTT,
    X_SSTHRESH,
    X_TOKENS,
    X_X_HASFB,
    X_X_HIGHDELAY,
    X_X_LASTUPD,
    X_X_MODE,
    X_X_RAMPFROM,
    X_X_RTTCNT,
    X_X_RTTSUM,
    X_X_TWND,
    X_X_UNFAIR,
    X_X_WINACKED,
    X_X_WINMEAN,
)

CCA_NEWRENO = 0
CCA_CUBIC = 1
CCA_BBR = 2
CCA_XRC = 3
CCA_AGENT = 4
TRAFFIC_BULK = 0
TRAFFIC_VIDEO = 1
TRAFFIC_SHORT = 2
ST_OPEN = 0
ST_RECOVERY = 1
ST_LOSS = 2
SSTHRESH_INF = 4.0e9
NO_RTT = 1.0e12
BBR_HIGH_GAIN = 2.89  # ns-3 TcpBbr ``HighGain`` (Linux: 2.885)
BBR_PACING_MARGIN = 0.01
BBR_CYCLE = (1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
BBR_STARTUP = 0
BBR_DRAIN = 1
BBR_PROBE_BW = 2
BBR_PROBE_RTT = 3

# ============================================================================================
# RNG and channel
# ============================================================================================


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _rand(rng: np.ndarray, b: int) -> float:
    """Uniform [0, 1) from cell ``b``'s splitmix64 counter (advances it)."""
    z = rng[b] + np.uint64(0x9E3779B97F4A7C15)
    rng[b] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _mcs_of(distance_m: float, p: np.ndarray, cqi_tab: np.ndarray) -> float:
    """MCS at a distance: Okumura-Hata SINR -> calibrated CQI -> ns-3's MCS (-1: none)."""
    sinr = p[P_SINR_AT_1KM_DB] - p[P_SINR_SLOPE_DB] * math.log10(distance_m / 1000.0)
    cqi = 0
    for c in range(1, 16):
        if sinr >= cqi_tab[0, c]:
            cqi = c
    if cqi == 0:
        return -1.0
    return cqi_tab[1, cqi]


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _bytes_of(tbs: np.ndarray, mcs: float, rbs: float, num_rbs: int) -> float:
    """Bytes ``rbs`` (fractional) RBs carry at ``mcs`` (the agent's idle-RB share)."""
    if mcs < 0 or rbs <= 0:
        return 0.0
    r = min(rbs, float(num_rbs))
    whole = int(r)
    frac = r - whole
    m = int(mcs)
    nxt = tbs[m, whole + 1] if whole < num_rbs else tbs[m, whole]
    return tbs[m, whole] + frac * (nxt - tbs[m, whole])


# ============================================================================================
# Initial state
# ============================================================================================


@njit(cache=True, error_model="numpy", _nrt=False)
def reset_cell(
    b, p, fc, cqi_tab, dist0, seed, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr, dl, rtx,
    lost, obs_f, obs_u, act,
):  # fmt: skip
    """Put cell ``b`` at t = 0, its RNG seeded from ``seed`` (draws the flows' start offsets)."""
    rng[b] = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x632BE59BD9B4E019)
    cs[b, :] = 0
    cs[b, CS_NEXT_MOVE_MS] = int(p[P_MOBILITY_PERIOD_MS])
    fi[b] = 0
    fx[b] = 0.0
    bw[b] = 0.0
    ui[b] = 0
    rlc[b] = 0
    capr[b] = 0.0
    rcv[b] = 0
    fbr[b] = 0.0
    dl[b] = 0
    rtx[b] = 0
    lost[b] = 0
    obs_f[b] = 0.0
    obs_u[b] = 0.0
    act[b] = 0.0
    seg = p[P_SEG_BYTES]
    for u in range(ue.shape[1]):
        ue[b, u, :] = 0.0
        ue[b, u, U_DIST] = dist0[u]
        ue[b, u, U_MCS] = _mcs_of(dist0[u], p, cqi_tab)
        ue[b, u, U_LAST_MCS] = -1.0
        ue[b, u, U_PF_AVG] = 1.0
        ue[b, u, U_HEAD_REM] = p[P_PDU_BYTES]
        obs_u[b, u, 6] = dist0[u]
    for f in range(fi.shape[1]):
        jitter = int(_rand(rng, b) * p[P_START_JITTER_MS])
        start = int(max(fc[f, FC_START_MS], p[P_ATTACH_MS])) + jitter
        fi[b, f, I_START_MS] = start
        # The server opens the connection: SYN down, SYN-ACK up, then data.
        # The SYN-ACK waits for an uplink grant (``bsr`` uplink: an idle UE's first report).
        ul_wait = p[P_UL_GRANT_MS] if p[P_UPLINK] > 0 else 0.0
        fi[b, f, I_DATA_MS] = start + int(fc[f, FC_D_DOWN_MS] + fc[f, FC_D_UP_TOTAL_MS] + ul_wait)
        fi[b, f, I_RTO_MS] = int(p[P_MIN_RTO_MS])
        fi[b, f, I_RTO_AT_MS] = -1
        fi[b, f, I_LAST_ARR_MS] = -1
        fx[b, f, X_CWND] = p[P_INIT_CWND_SEGS] * seg
        ss = fc[f, FC_SSTHRESH_BYTES]
        fx[b, f, X_SSTHRESH] = ss if ss > 0 else SSTHRESH_INF
        fx[b, f, X_MIN_RTT] = NO_RTT
        fx[b, f, X_FCT_S] = -1.0
        fx[b, f, X_C_EPOCH] = -1.0
        fx[b, f, X_C_DELAYMIN] = -1.0
        fx[b, f, X_C_CURRRTT] = -1.0
        fx[b, f, X_B_MINRTT] = NO_RTT
        if fc[f, FC_TRAFFIC] == TRAFFIC_SHORT:
            fx[b, f, X_BUDGET] = fc[f, FC_SIZE_BYTES]
        obs_f[b, f, 17] = -1.0


# ============================================================================================
# Congestion controls
# ============================================================================================


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _newreno_increase(fx, b, f, segs, seg):
    """ns-3 ``TcpNewReno::IncreaseWindow``: +1 segment per ACK in slow start, then seg^2/cwnd."""
    if fx[b, f, X_CWND] < fx[b, f, X_SSTHRESH] and segs >= 1:
        fx[b, f, X_CWND] += seg
        segs -= 1
    if fx[b, f, X_CWND] >= fx[b, f, X_SSTHRESH] and segs > 0:
        fx[b, f, X_CWND] += math.floor(max(1.0, seg * seg / fx[b, f, X_CWND]))


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _cubic_hystart_reset(fx, fi, b, f, t):
    fx[b, f, X_C_ROUNDSTART] = t
    fx[b, f, X_C_LASTACK] = t
    fx[b, f, X_C_ENDSEQ] = fi[b, f, I_SND_NXT]
    fx[b, f, X_C_CURRRTT] = -1.0
    fx[b, f, X_C_SAMPLES] = 0.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _cubic_pkts_acked(fx, b, f, rtt, t, seg, p):
    """ns-3 ``TcpCubic::PktsAcked``: delay minimum and HyStart (ack train and delay increase)."""
    if fx[b, f, X_C_EPOCH] >= 0 and t - fx[b, f, X_C_EPOCH] < 10.0:
        return
    if fx[b, f, X_C_DELAYMIN] < 0 or fx[b, f, X_C_DELAYMIN] > rtt:
        fx[b, f, X_C_DELAYMIN] = rtt
    cwnd = fx[b, f, X_CWND]
    if cwnd <= fx[b, f, X_SSTHRESH] and cwnd >= 16 * seg and fx[b, f, X_C_FOUND] == 0:
        dmin = fx[b, f, X_C_DELAYMIN]
        if t - fx[b, f, X_C_LASTACK] <= 2.0:
            fx[b, f, X_C_LASTACK] = t
            if t - fx[b, f, X_C_ROUNDSTART] > dmin:
                fx[b, f, X_C_FOUND] = 1.0
        if fx[b, f, X_C_SAMPLES] < 8:
            if fx[b, f, X_C_CURRRTT] < 0 or fx[b, f, X_C_CURRRTT] > rtt:
                fx[b, f, X_C_CURRRTT] = rtt
            fx[b, f, X_C_SAMPLES] += 1.0
        elif p[P_HYSTART_DELAY] > 0 and fx[b, f, X_C_CURRRTT] > dmin + min(max(dmin, 4.0), 1000.0):
            fx[b, f, X_C_FOUND] = 1.0
        if fx[b, f, X_C_FOUND] > 0:
            fx[b, f, X_SSTHRESH] = cwnd


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _cubic_update(fx, b, f, segs, t, seg):
    """ns-3 ``TcpCubic::Update``: ACKs to wait per segment of growth (cubic and TCP-friendly)."""
    seg_cwnd = int(fx[b, f, X_CWND] // seg)
    fx[b, f, X_C_ACKCNT] += segs
    if fx[b, f, X_C_EPOCH] < 0:
        fx[b, f, X_C_EPOCH] = t
        fx[b, f, X_C_ACKCNT] = segs
        fx[b, f, X_C_TCPCWND] = seg_cwnd
        if fx[b, f, X_C_LASTMAX] <= seg_cwnd:
            fx[b, f, X_C_K] = 0.0
            fx[b, f, X_C_ORIGIN] = seg_cwnd
        else:
            fx[b, f, X_C_K] = ((fx[b, f, X_C_LASTMAX] - seg_cwnd) / 0.4) ** (1.0 / 3.0)
            fx[b, f, X_C_ORIGIN] = fx[b, f, X_C_LASTMAX]
    dmin = max(fx[b, f, X_C_DELAYMIN], 0.0)
    ts = (t + dmin - fx[b, f, X_C_EPOCH]) / 1000.0
    k = fx[b, f, X_C_K]
    offs = k - ts if ts < k else ts - k
    delta = math.floor(0.4 * offs * offs * offs)
    origin = fx[b, f, X_C_ORIGIN]
    target = max(origin - delta, 0.0) if ts < k else origin + delta
    if target > seg_cwnd:
        cnt = seg_cwnd // int(target - seg_cwnd)
    else:
        cnt = 100 * seg_cwnd
    if fx[b, f, X_C_LASTMAX] == 0 and cnt > 20:
        cnt = 20
    # TCP friendliness (scale = 8 (1 + beta) / 3 / (1 - beta) in ns-3's integer arithmetic).
    dlt = (seg_cwnd * 15) >> 3
    if dlt < 1:
        dlt = 1
    while fx[b, f, X_C_ACKCNT] > dlt:
        fx[b, f, X_C_ACKCNT] -= dlt
        fx[b, f, X_C_TCPCWND] += 1.0
    if fx[b, f, X_C_TCPCWND] > seg_cwnd:
        max_cnt = seg_cwnd // int(fx[b, f, X_C_TCPCWND] - seg_cwnd)
        if cnt > max_cnt:
            cnt = max_cnt
    return max(cnt, 2)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _cubic_increase(fx, fi, b, f, segs, t, seg):
    """ns-3 ``TcpCubic::IncreaseWindow`` (byte counting in slow start)."""
    if fi[b, f, I_CWND_LIMITED] == 0:
        return
    if fx[b, f, X_CWND] < fx[b, f, X_SSTHRESH]:
        if fi[b, f, I_UNA] > fx[b, f, X_C_ENDSEQ]:
            _cubic_hystart_reset(fx, fi, b, f, t)
        fx[b, f, X_CWND] += segs * seg
        segs = 0
    if fx[b, f, X_CWND] >= fx[b, f, X_SSTHRESH] and segs > 0:
        fx[b, f, X_C_CNT] += segs
        cnt = _cubic_update(fx, b, f, segs, t, seg)
        if fx[b, f, X_C_CNT] >= cnt:
            fx[b, f, X_CWND] += seg
            fx[b, f, X_C_CNT] -= cnt


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _cubic_ssthresh(fx, b, f, seg):
    """ns-3 ``TcpCubic::GetSsThresh``: fast convergence, beta 0.7, end of epoch."""
    seg_cwnd = int(fx[b, f, X_CWND] // seg)
    if seg_cwnd < fx[b, f, X_C_LASTMAX]:
        fx[b, f, X_C_LASTMAX] = math.floor(seg_cwnd * 1.7 / 2.0)
    else:
        fx[b, f, X_C_LASTMAX] = seg_cwnd
    fx[b, f, X_C_EPOCH] = -1.0
    return max(math.floor(seg_cwnd * 0.7), 2) * seg


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xrc_pkts_acked(fx, b, f, segs, rtt, seg):
    """``TcpXrc::PktsAcked``: mean RTT over one window of data (equation 3 of the paper)."""
    if rtt > 0:
        fx[b, f, X_X_RTTSUM] += rtt
        fx[b, f, X_X_RTTCNT] += 1.0
    fx[b, f, X_X_WINACKED] += segs * seg
    if fx[b, f, X_X_WINACKED] >= fx[b, f, X_CWND] and fx[b, f, X_X_RTTCNT] > 0:
        fx[b, f, X_X_WINMEAN] = fx[b, f, X_X_RTTSUM] / fx[b, f, X_X_RTTCNT]
        fx[b, f, X_X_RTTSUM] = 0.0
        fx[b, f, X_X_RTTCNT] = 0.0
        fx[b, f, X_X_WINACKED] = 0.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xrc_increase(fx, b, f, segs, t, seg, p):
    """``TcpXrc::IncreaseWindow``: twnd = R_exp RTT_min, ramp, probe, reset, unfairness mode."""
    elapsed = t - fx[b, f, X_X_LASTUPD] if fx[b, f, X_X_LASTUPD] >= 0 else 0.0
    fx[b, f, X_X_LASTUPD] = t
    rate = fx[b, f, X_FB_RATE]
    min_rtt = fx[b, f, X_MIN_RTT]
    if fx[b, f, X_X_HASFB] == 0 or rate <= 0 or min_rtt >= NO_RTT or segs == 0:
        fx[b, f, X_X_MODE] = 0.0
        _newreno_increase(fx, b, f, segs, seg)
        return
    budget = p[P_XRC_BUDGET_MS]
    cwnd = fx[b, f, X_CWND]
    hol = fx[b, f, X_FB_HOL]
    twnd = rate * 1e6 / 8.0 * min_rtt / 1e3
    fx[b, f, X_X_TWND] = twnd
    if fx[b, f, X_X_WINMEAN] > 0:
        mean = fx[b, f, X_X_WINMEAN]
    elif fx[b, f, X_X_RTTCNT] > 0:
        mean = fx[b, f, X_X_RTTSUM] / fx[b, f, X_X_RTTCNT]
    else:
        mean = min_rtt
    e2e = max(0.0, mean - min_rtt)
    delta = max(e2e, hol)
    per_seg = seg * seg / cwnd
    if hol <= budget and e2e - hol > budget:
        fx[b, f, X_X_MODE] = 6.0  # Internet bottleneck: standard TCP
        fx[b, f, X_X_UNFAIR] = 0.0
        fx[b, f, X_X_HIGHDELAY] = 0.0
        _newreno_increase(fx, b, f, segs, seg)
        return
    if cwnd < fx[b, f, X_SSTHRESH]:
        if cwnd < twnd and delta <= budget:
            fx[b, f, X_X_MODE] = 1.0
            _newreno_increase(fx, b, f, segs, seg)
            return
        fx[b, f, X_SSTHRESH] = cwnd
    nxt = cwnd
    if delta > budget:
        if cwnd <= 1.05 * twnd:
            fx[b, f, X_X_HIGHDELAY] += elapsed
        if fx[b, f, X_X_HIGHDELAY] >= p[P_XRC_UNFAIR_RTTS] * min_rtt:
            fx[b, f, X_X_UNFAIR] = 1.0
        fx[b, f, X_X_RAMPFROM] = 0.0
        if fx[b, f, X_X_UNFAIR] > 0:
            fx[b, f, X_X_MODE] = 5.0
            nxt = max(cwnd, twnd) + p[P_XRC_UNFAIR_ALPHA] * per_seg * segs
        else:
            fx[b, f, X_X_MODE] = 4.0
            nxt = twnd
    else:
        fx[b, f, X_X_HIGHDELAY] = 0.0
        fx[b, f, X_X_UNFAIR] = 0.0
        if cwnd < twnd:
            fx[b, f, X_X_MODE] = 2.0
            if fx[b, f, X_X_RAMPFROM] <= 0:
                fx[b, f, X_X_RAMPFROM] = cwnd
            step = (twnd - fx[b, f, X_X_RAMPFROM]) / p[P_XRC_RAMP_RTTS] * seg / cwnd * segs
            nxt = min(twnd, cwnd + max(step, per_seg * segs))
        else:
            fx[b, f, X_X_MODE] = 3.0
            fx[b, f, X_X_RAMPFROM] = 0.0
            nxt = cwnd + max(1.0, per_seg * segs)
    fx[b, f, X_CWND] = math.floor(min(max(nxt, 2 * seg), 4e9))


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _agent_apply(fx, fi, b, f, seg):
    """The agent's ``Apply``: hold the commanded window outside loss recovery."""
    cmd = fx[b, f, X_CMD_CWND]
    if cmd <= 0:
        return
    fx[b, f, X_PACING] = fx[b, f, X_CMD_PACE]
    if fi[b, f, I_CSTATE] == ST_OPEN:
        fx[b, f, X_CWND] = math.floor(min(max(cmd, seg), 4e9))
        fx[b, f, X_SSTHRESH] = min(fx[b, f, X_CWND], fx[b, f, X_SSTHRESH])


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
        if p[P_RECOVERY] > 0:
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
def _bbr_on_ack(fx, fi, bw, rng, b, f, acked_bytes, rtt, pipe_bytes, t, seg, marked, ns3):
    """A BBR (v1) model: windowed max bandwidth per round, min RTT, gain cycling, ProbeRTT.

    ``marked``: with ``ns3``, ns-3's ``rs.m_bytesLoss`` of the ACK in segments (|lost now -
    lost before|); otherwise the segments marked lost and not retransmitted now.
    """
    # Min RTT filter (10 s).
    if rtt > 0 and (rtt <= fx[b, f, X_B_MINRTT] or t - fx[b, f, X_B_MINSTAMP] > 10000.0):
        if rtt < fx[b, f, X_B_MINRTT] or fx[b, f, X_B_MODE] != BBR_PROBE_RTT:
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
        # ``EnterProbeBW``: index 7 - int(U[0, 6)), then one advance: 3-7 or 0, never the
        # draining phase first.
        fx[b, f, X_B_CYCLE] = float((8 - int(_rand(rng, b) * 6)) % 8)
        fx[b, f, X_B_CYCLESTAMP] = t
    stale = t - fx[b, f, X_B_MINSTAMP] > 10000.0 and fx[b, f, X_B_MINSTAMP] > 0
    if mode != BBR_PROBE_RTT and stale:
        mode = BBR_PROBE_RTT
        fx[b, f, X_B_PRIOR_CWND] = fx[b, f, X_CWND]
        fx[b, f, X_B_PRTT_DONE] = t + 200.0
    if mode == BBR_PROBE_RTT and t >= fx[b, f, X_B_PRTT_DONE]:
        fx[b, f, X_B_MINSTAMP] = t
        mode = BBR_PROBE_BW if fx[b, f, X_B_FILLED] > 0 else BBR_STARTUP
        fx[b, f, X_CWND] = max(fx[b, f, X_CWND], fx[b, f, X_B_PRIOR_CWND])
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
    elif cwnd < target or btlbw <= 0:
        cwnd = cwnd + acked_bytes
    fx[b, f, X_CWND] = max(cwnd, 4 * seg)


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
    ns3 = p[P_RECOVERY] > 0
    pipe = _pipe(fi, lost, b, f, int(p[P_DUPTHRESH]), ns3)
    # The next ACK's ``priorInFlight`` (ns-3 ``ReceivedAck``), for BBR's cycle-phase rules.
    fx[b, f, X_B_PRIOR_INFL] = pipe * p[P_SEG_BYTES]
    if not ns3:
        fx[b, f, X_B_MARKED] = fi[b, f, I_SND_NXT] - fi[b, f, I_UNA] - fi[b, f, I_SACKED] - pipe


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _ssthresh_on_loss(fx, b, f, cca, pipe_bytes, seg):
    """``GetSsThresh`` of the flow's congestion control."""
    if cca == CCA_CUBIC:
        return _cubic_ssthresh(fx, b, f, seg)
    if cca == CCA_BBR:
        return fx[b, f, X_SSTHRESH]
    return max(2 * seg, math.floor(pipe_bytes / 2.0))


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _on_loss_state(fx, fi, b, f, cca, t):
    """``CongestionStateSet`` on entering recovery or loss."""
    if cca == CCA_XRC:
        fx[b, f, X_X_UNFAIR] = 0.0
        fx[b, f, X_X_HIGHDELAY] = 0.0
        fx[b, f, X_X_RAMPFROM] = 0.0


# ============================================================================================
# Sender
# ============================================================================================


@njit(cache=True, error_model="numpy", _nrt=False)
def _lost_slot(fi, lost, b, f, seq):
    """Index of segment ``seq`` in the flow's loss record, or -1 when it is not there."""
    k = lost.shape[2]
    for i in range(fi[b, f, I_LOST_LEN]):
        j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
        if lost[b, f, j, 0] == seq:
            return j
    return -1


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
def _pipe(fi, lost, b, f, dupthresh, ns3):
    """Segments in flight: sent, not (s)acked and not known lost (RFC 6675 style).

    With ``ns3`` as ns-3.44's ``TcpTxBuffer::BytesInFlight`` (sent - sacked - lost + retrans):
    a retransmitted segment counts until it is cumulatively acknowledged, also once SACKed (its
    ``m_retrans`` byte count is only removed by ``DiscardUpTo``; an RTO clears them all).
    """
    n = fi[b, f, I_SND_NXT] - fi[b, f, I_UNA] - fi[b, f, I_SACKED]
    high = fi[b, f, I_VIEW_HIGH]
    loss_state = fi[b, f, I_CSTATE] == ST_LOSS
    k = lost.shape[2]
    for i in range(fi[b, f, I_LOST_LEN]):
        j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
        if lost[b, f, j, 0] < fi[b, f, I_UNA]:
            continue
        st = lost[b, f, j, 1]
        if st == LOST_NEED:
            if loss_state or lost[b, f, j, 0] + dupthresh < high:
                n -= 1
        elif ns3 and st == LOST_DONE and not loss_state:
            n += 1
    return max(n, 0)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _prr_on_ack(fx, fi, lost, b, f, entered, delivered_segs, dupacks, una_before, acked, seg, p):
    """ns-3.44 ``TcpPrrRecovery`` (``EnterRecovery``/``DoRecovery``) for one bunch of ACKs.

    RFC 6937 proportional rate reduction with ns-3.44's integer arithmetic, which matters here:
    (1) ``prr_delivered`` gains, for every duplicate ACK while it is below RecoverFS (the bytes in
    flight when recovery began), one segment more than the SACK-derived delivery (the non-SACK
    estimate applied to SACK too); (2) the proportional quota ``ceil(prr_delivered * ssthresh /
    RecoverFS) - prr_out`` multiplies two ``uint32_t`` byte counts, so the product wraps modulo
    2^32: once ``prr_delivered * ssthresh`` passes 4.29e9 (about 25 segments at a 120-segment
    ssthresh) the quota falls below what was sent and the sender stops until in flight reaches
    ssthresh; (3) below ssthresh PRR-CRB takes ``max(prr_delivered - prr_out, delivered)`` in
    ``uint32_t`` (a negative difference wraps and wins: no send), plus a segment once a
    retransmission is cumulatively ACKed (PRR-SSRB). The window is in flight plus the quota;
    sends in recovery count into ``prr_out`` (``_sender_send``). Net effect against a step to
    ssthresh: a burst of about 1.4 segments per delivered one on the first ACKs of recovery, into
    a buffer that just overflowed, then silence; segments of that burst are lost and found after
    recovery ends, a second reduction within about one RTT (ns-3 traces show both).
    """
    dupthresh = int(p[P_DUPTHRESH])
    iseg = int(seg)
    pipe = _pipe(fi, lost, b, f, dupthresh, True) * iseg
    if entered:
        fx[b, f, X_PRR_OUT] = 0.0
        fx[b, f, X_PRR_DELIV] = 0.0
        fx[b, f, X_PRR_RFS] = max(pipe, iseg)
        dupacks = max(dupacks, 1)  # EnterRecovery calls DoRecovery as for a duplicate ACK
    dsegs = max(delivered_segs, 0)
    deliv = dsegs * iseg
    if deliv <= 0 and dupacks <= 0:
        return
    rfs = int(fx[b, f, X_PRR_RFS])
    prr_del = int(fx[b, f, X_PRR_DELIV])
    if dupacks > 0:
        base = dsegs // dupacks
        extra = dsegs - base * dupacks
        for i in range(dupacks):
            if prr_del < rfs:
                prr_del += iseg
            prr_del += (base + (1 if i < extra else 0)) * iseg
    else:
        prr_del += deliv
    fx[b, f, X_PRR_DELIV] = prr_del
    ss = int(fx[b, f, X_SSTHRESH])
    prr_out = int(fx[b, f, X_PRR_OUT])
    if pipe > ss:
        prod = (prr_del * ss) & 0xFFFFFFFF  # uint32_t * uint32_t in ns-3.44
        send = int(math.ceil(prod / rfs)) - prr_out
    else:
        d = prr_del - prr_out
        limit = max(d, deliv) if d >= 0 else d  # std::max of two uint32_t
        # safeACK: the ACK cumulatively acknowledged a retransmitted segment (PRR-SSRB).
        if acked > 0:
            k = lost.shape[2]
            for i in range(fi[b, f, I_LOST_LEN]):
                j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
                sq = lost[b, f, j, 0]
                if sq >= una_before and sq < fi[b, f, I_UNA] and lost[b, f, j, 1] != LOST_NEED:
                    limit += iseg
                    break
        send = min(limit, ss - pipe)
    if prr_out <= 0:
        send = max(send, iseg)  # force the fast retransmission on entering recovery
    elif acked > 0 and not entered and fi[b, f, I_UNA] < fi[b, f, I_RECOVER]:
        # A partial ACK whose new head was not retransmitted yet retransmits once outside the
        # window (``ProcessAck``: ``DoRetransmit`` unless ``IsRetransmittedDataAcked``).
        j = _lost_slot(fi, lost, b, f, fi[b, f, I_UNA])
        head_rtx = j >= 0 and (lost[b, f, j, 1] == LOST_RETX or lost[b, f, j, 1] == LOST_AGAIN)
        if not head_rtx:
            send = max(send, iseg)
    fx[b, f, X_CWND] = max(pipe + send, iseg)


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
    v_cum = rcv[b, f, slot, V_CUM]
    v_high = rcv[b, f, slot, V_HIGH]
    v_uniq = rcv[b, f, slot, V_UNIQ]
    owd_sum = rcv[b, f, slot, V_OWD] - fi[b, f, I_SEEN_OWD]
    rtt_mean = owd_sum / new_acks + d_up
    rtt_last = float(rcv[b, f, slot, V_LAST] + d_up)
    fi[b, f, I_SEEN_ACKS] = v_acks
    fi[b, f, I_SEEN_OWD] = rcv[b, f, slot, V_OWD]
    delivered_segs = v_uniq - fi[b, f, I_SEEN_UNIQ]
    fi[b, f, I_SEEN_UNIQ] = v_uniq
    new_dupacks = rcv[b, f, slot, V_DUPACKS] - fi[b, f, I_SEEN_DUPACKS]
    fi[b, f, I_SEEN_DUPACKS] = rcv[b, f, slot, V_DUPACKS]
    # RTT samples (every ACK carries a timestamp echo).
    fx[b, f, X_O_RTT_SUM] += rtt_mean * new_acks
    fx[b, f, X_O_RTT_N] += new_acks
    fx[b, f, X_O_RTT_LAST] = rtt_last
    rmin = min(rtt_mean, rtt_last)
    if fx[b, f, X_O_RTT_MIN] <= 0 or rmin < fx[b, f, X_O_RTT_MIN]:
        fx[b, f, X_O_RTT_MIN] = rmin
    fx[b, f, X_MIN_RTT] = min(fx[b, f, X_MIN_RTT], rmin)
    if fx[b, f, X_SRTT] <= 0:
        fx[b, f, X_SRTT] = rtt_last
        fx[b, f, X_RTTVAR] = rtt_last / 2.0
    else:
        fx[b, f, X_RTTVAR] = 0.75 * fx[b, f, X_RTTVAR] + 0.25 * abs(fx[b, f, X_SRTT] - rtt_last)
        fx[b, f, X_SRTT] = 0.875 * fx[b, f, X_SRTT] + 0.125 * rtt_last
    # Explicit feedback stamped at the eNB when the ACK passed it.
    tf = t - int(fc[f, FC_D_SRV_UP_MS])
    if tf >= 0:
        fslot = tf & (ring - 1)
        fx[b, f, X_FB_RATE] = fbr[b, f, fslot, 0]
        fx[b, f, X_FB_HOL] = fbr[b, f, fslot, 1]
        if fbr[b, f, fslot, 0] > 0:
            fx[b, f, X_X_HASFB] = 1.0
    una = fi[b, f, I_UNA]
    acked = max(v_cum - una, 0)
    fi[b, f, I_VIEW_HIGH] = v_high
    fi[b, f, I_SACKED] = max(v_uniq - v_cum, 0)
    dupthresh = int(p[P_DUPTHRESH])
    k = lost.shape[2]
    # Loss detection: a hole with dupthresh segments received above it.
    state = fi[b, f, I_CSTATE]
    entered = False
    prr_mode = p[P_RECOVERY] > 0
    if state == ST_OPEN:
        trigger = False
        for i in range(fi[b, f, I_LOST_LEN]):
            j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
            if (
                lost[b, f, j, 1] == LOST_NEED
                and lost[b, f, j, 0] >= una
                and lost[b, f, j, 0] + dupthresh < v_high
            ):
                trigger = True
                break
        # ns-3 (``TcpSocketBase::DupAck``) also enters recovery on the third duplicate ACK
        # (``m_dupAckCount``, reset when recovery ends or a cumulative ACK carries no new SACK
        # information) while a hole is open at the cumulative ACK, whether or not that segment
        # was retransmitted already: a hole beyond the recovery point still open when recovery
        # ends starts a new recovery (a second reduction), and the head is sent again.
        if prr_mode:
            if new_dupacks == 0 and v_cum > una:
                fi[b, f, I_DUPACK_CNT] = 0
            fi[b, f, I_DUPACK_CNT] += max(new_dupacks, 0)
        dup_rule = fi[b, f, I_DUPACK_CNT] >= dupthresh
        if prr_mode and not trigger and v_cum < v_high and (dup_rule or new_dupacks > 0):
            j = _lost_slot(fi, lost, b, f, v_cum)
            # ``IsLost(HighACK)``: the head keeps ns-3's lost mark after its retransmission, so
            # any duplicate ACK re-enters recovery.
            if j >= 0 and (dup_rule or v_cum + dupthresh < v_high):
                trigger = True
                if lost[b, f, j, 1] == LOST_RETX or lost[b, f, j, 1] == LOST_AGAIN:
                    lost[b, f, j, 1] = LOST_NEED
        if trigger:
            pipe_bytes = _pipe(fi, lost, b, f, dupthresh, p[P_RECOVERY] > 0) * seg
            fx[b, f, X_O_LOSS] += 1.0
            ss = _ssthresh_on_loss(fx, b, f, cca, pipe_bytes, seg)
            fx[b, f, X_SSTHRESH] = ss
            if cca != CCA_BBR and prr_mode:
                # ns-3's default recovery, ``TcpPrrRecovery``: the window follows the
                # deliveries (below, once the ACK is applied), not a step to ssthresh.
                entered = True
            elif cca != CCA_BBR:
                fx[b, f, X_CWND] = ss
            else:
                # BBR v1 (Linux, ns-3 TcpBbr): save the window, then packet conservation for
                # one round: the window falls to what is in flight plus what this ACK
                # delivered, and grows only with deliveries.
                fx[b, f, X_B_PRIOR_CWND] = fx[b, f, X_CWND]
                fx[b, f, X_CWND] = max(pipe_bytes + max(delivered_segs, 0) * seg, 4 * seg)
                fx[b, f, X_B_CONSERVE] = fi[b, f, I_SND_NXT]
            fi[b, f, I_CSTATE] = ST_RECOVERY
            fi[b, f, I_RECOVER] = fi[b, f, I_SND_NXT]
            _on_loss_state(fx, fi, b, f, cca, t)
    state = fi[b, f, I_CSTATE]
    exited = False
    if state != ST_OPEN and v_cum >= fi[b, f, I_RECOVER]:
        if state == ST_RECOVERY and cca != CCA_BBR:
            fx[b, f, X_CWND] = fx[b, f, X_SSTHRESH]
        elif state == ST_RECOVERY and prr_mode:
            # ns-3 (``ProcessAck``, ``exitedFastRecovery``): BBR restores the prior window
            # (``CA_EVENT_COMPLETE_CWR``), then the socket sets it to ssthresh, which TcpBbr left
            # at InFlight(1) of the end of startup; it grows back by the deliveries.
            fx[b, f, X_CWND] = fx[b, f, X_SSTHRESH]
            fx[b, f, X_B_CONSERVE] = 0.0
        elif state == ST_RECOVERY:
            fx[b, f, X_CWND] = max(fx[b, f, X_CWND], fx[b, f, X_B_PRIOR_CWND])
            fx[b, f, X_B_CONSERVE] = 0.0
        fi[b, f, I_CSTATE] = ST_OPEN
        fi[b, f, I_DUPACK_CNT] = 0
        fi[b, f, I_RTO_HELD] = 0
        exited = state == ST_RECOVERY
        if cca == CCA_AGENT:
            _agent_apply(fx, fi, b, f, seg)
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
    if prr_mode and cca != CCA_BBR and fi[b, f, I_CSTATE] == ST_RECOVERY:
        _prr_on_ack(fx, fi, lost, b, f, entered, delivered_segs, new_dupacks, una, acked, seg, p)
    if cca == CCA_BBR:
        ns3 = p[P_RECOVERY] > 0
        pipe_bytes = _pipe(fi, lost, b, f, dupthresh, ns3) * seg
        if ns3:
            lost_now = _bbr_lost_out(fi, lost, b, f, dupthresh, v_high)
            marked = abs(lost_now - int(fx[b, f, X_B_LOSTOUT]))
            fx[b, f, X_B_LOSTOUT] = lost_now
        else:
            n_out = fi[b, f, I_SND_NXT] - fi[b, f, I_UNA] - fi[b, f, I_SACKED]
            marked = n_out - _pipe(fi, lost, b, f, dupthresh, False)
        _bbr_on_ack(
            fx, fi, bw, rng, b, f, delivered_segs * seg, rtt_last, pipe_bytes, t, seg, marked, ns3
        )
    elif n_adv > 0:
        base = grown // n_adv
        extra = grown - base * n_adv
        grow = fi[b, f, I_CSTATE] != ST_RECOVERY and not exited
        # ns-3 passes HyStart the smoothed RTT (``PktsAcked(..., m_srtt)``); the periodic
        # uplink's calibration rests on the bunch's mean RTT.
        rtt_hy = fx[b, f, X_SRTT] if p[P_UPLINK] > 0 else rtt_mean
        for a in range(n_adv):
            segs = base + (1 if a < extra else 0)
            if cca == CCA_CUBIC:
                _cubic_pkts_acked(fx, b, f, rtt_hy, float(t), seg, p)
                if grow:
                    _cubic_increase(fx, fi, b, f, segs, float(t), seg)
            elif cca == CCA_XRC:
                _xrc_pkts_acked(fx, b, f, segs, rtt_mean, seg)
                if grow:
                    _xrc_increase(fx, b, f, segs, float(t), seg, p)
            elif cca == CCA_AGENT and fx[b, f, X_CMD_CWND] > 0:
                if grow:
                    _agent_apply(fx, fi, b, f, seg)
            elif grow:
                _newreno_increase(fx, b, f, segs, seg)
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


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _sender_send(b, f, t, p, fc, fi, fx, rng, dl, rtx, lost):
    """RTO check, application data, then retransmissions and new segments within the window."""
    seg = p[P_SEG_BYTES]
    cca = int(fc[f, FC_CCA])
    traffic = int(fc[f, FC_TRAFFIC])
    k = lost.shape[2]
    ring = dl.shape[2]
    dupthresh = int(p[P_DUPTHRESH])
    start = fi[b, f, I_START_MS]
    stop = fc[f, FC_STOP_MS]
    running = t >= start and (stop < 0 or t < stop) and fx[b, f, X_FCT_S] < 0
    fi[b, f, I_RUNNING] = 1 if running else 0
    if t < fi[b, f, I_DATA_MS]:
        return
    # Retransmission timeout.
    outstanding = fi[b, f, I_SND_NXT] > fi[b, f, I_UNA]
    if outstanding and fi[b, f, I_RTO_AT_MS] >= 0 and t >= fi[b, f, I_RTO_AT_MS]:
        pipe_bytes = _pipe(fi, lost, b, f, dupthresh, p[P_RECOVERY] > 0) * seg
        fx[b, f, X_O_LOSS] += 1.0
        # ns-3 ``ReTxTimeout`` keeps ssthresh on a repeated timeout of the retransmitted head.
        if not (p[P_RECOVERY] > 0 and fi[b, f, I_CSTATE] == ST_LOSS):
            fx[b, f, X_SSTHRESH] = _ssthresh_on_loss(fx, b, f, cca, pipe_bytes, seg)
        fx[b, f, X_CWND] = seg
        fi[b, f, I_DUPACK_CNT] = 0
        fi[b, f, I_CSTATE] = ST_LOSS
        fi[b, f, I_RECOVER] = fi[b, f, I_SND_NXT]
        fi[b, f, I_RTO_MS] = min(2 * fi[b, f, I_RTO_MS], 60000)
        fi[b, f, I_RTO_AT_MS] = t + fi[b, f, I_RTO_MS]
        for i in range(fi[b, f, I_LOST_LEN]):
            j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
            if lost[b, f, j, 1] == LOST_RETX or lost[b, f, j, 1] == LOST_AGAIN:
                lost[b, f, j, 1] = LOST_NEED
        if cca == CCA_CUBIC:
            fx[b, f, X_C_ORIGIN] = 0.0
            fx[b, f, X_C_K] = 0.0
            fx[b, f, X_C_ACKCNT] = 0.0
            fx[b, f, X_C_TCPCWND] = 0.0
            fx[b, f, X_C_DELAYMIN] = -1.0
            fx[b, f, X_C_FOUND] = 0.0
            _cubic_hystart_reset(fx, fi, b, f, float(t))
        _on_loss_state(fx, fi, b, f, cca, t)
    # The application keeps about two windows plus a chunk queued in the socket.
    cwnd = fx[b, f, X_CWND]
    if running:
        limit = fi[b, f, I_UNA] + int(math.ceil((2.0 * cwnd + p[P_APP_CHUNK_BYTES]) / seg))
        room = limit - fi[b, f, I_HANDED]
        if traffic == TRAFFIC_VIDEO:
            tick = int(p[P_VIDEO_TICK_MS])
            since = t - start
            if (
                since % tick == 0
                and (since % int(fc[f, FC_VIDEO_PERIOD_MS])) < fc[f, FC_VIDEO_ON_MS]
            ):
                fx[b, f, X_BUDGET] += fc[f, FC_VIDEO_RATE_BPMS] * tick
        if room > 0:
            if traffic == TRAFFIC_BULK:
                give = room
                fx[b, f, X_O_SENT] += give * seg
            else:
                budget = fx[b, f, X_BUDGET]
                if traffic == TRAFFIC_SHORT:
                    avail = int(math.ceil(budget / seg))
                else:
                    avail = int(budget // seg)
                give = min(room, avail)
                if give > 0:
                    nbytes = min(give * seg, budget)
                    fx[b, f, X_BUDGET] = budget - nbytes
                    fx[b, f, X_O_SENT] += nbytes
            if give > 0:
                fi[b, f, I_HANDED] += give
    # Pacing tokens.
    pace = fx[b, f, X_PACING]
    paced = pace > 0 and (cca == CCA_BBR or cca == CCA_AGENT)
    if paced:
        fx[b, f, X_TOKENS] = min(fx[b, f, X_TOKENS] + pace, pace + seg)
    pipe = _pipe(fi, lost, b, f, dupthresh, p[P_RECOVERY] > 0)
    d_down = int(fc[f, FC_D_DOWN_MS])
    arrive = t + d_down
    limited = False
    # Retransmissions first, lowest sequence first.
    prr = p[P_RECOVERY] > 0 and cca != CCA_BBR and fi[b, f, I_CSTATE] == ST_RECOVERY
    high = fi[b, f, I_VIEW_HIGH]
    loss_state = fi[b, f, I_CSTATE] == ST_LOSS
    for i in range(fi[b, f, I_LOST_LEN]):
        j = (fi[b, f, I_LOST_HEAD] + i) & (k - 1)
        if lost[b, f, j, 1] != LOST_NEED or lost[b, f, j, 0] < fi[b, f, I_UNA]:
            continue
        if not (loss_state or lost[b, f, j, 0] + dupthresh < high):
            break
        if cwnd - pipe * seg < seg:
            limited = True
            break
        if paced and fx[b, f, X_TOKENS] <= 0:
            break
        if fi[b, f, I_RTX_LEN] >= k:
            break
        lost[b, f, j, 1] = LOST_RETX
        r = (fi[b, f, I_RTX_HEAD] + fi[b, f, I_RTX_LEN]) & (k - 1)
        rtx[b, f, r, 0] = lost[b, f, j, 0]
        rtx[b, f, r, 1] = arrive
        rtx[b, f, r, 2] = t
        fi[b, f, I_RTX_LEN] += 1
        fx[b, f, X_O_RETX] += 1.0
        pipe += 1
        if prr:
            fx[b, f, X_PRR_OUT] += seg
        if paced:
            fx[b, f, X_TOKENS] -= seg
    # New data.
    first = fi[b, f, I_SND_NXT]
    nxt = first
    handed = fi[b, f, I_HANDED]
    rwnd_end = fi[b, f, I_UNA] + int(p[P_RWND_SEGS])  # the receive window's right edge
    while nxt < handed and nxt < rwnd_end:
        if cwnd - pipe * seg < seg:
            limited = True
            break
        if paced and fx[b, f, X_TOKENS] <= 0:
            break
        nxt += 1
        pipe += 1
        if prr:
            fx[b, f, X_PRR_OUT] += seg
        if paced:
            fx[b, f, X_TOKENS] -= seg
    if nxt > first:
        if first == fi[b, f, I_UNA] and fi[b, f, I_RTX_LEN] == 0:
            fi[b, f, I_RTO_AT_MS] = t + fi[b, f, I_RTO_MS]
        slot = arrive & (ring - 1)
        dl[b, f, slot, 0] = first
        dl[b, f, slot, 1] = nxt
        dl[b, f, slot, 2] = t
        fi[b, f, I_SND_NXT] = nxt
    elif fi[b, f, I_RTO_AT_MS] < 0 and fi[b, f, I_SND_NXT] > fi[b, f, I_UNA]:
        fi[b, f, I_RTO_AT_MS] = t + fi[b, f, I_RTO_MS]
    fi[b, f, I_CWND_LIMITED] = 1 if (limited or pipe * seg + seg > cwnd) else 0
    if not paced and cca != CCA_BBR:
        fx[b, f, X_TOKENS] = 0.0


# ============================================================================================
# eNB: RLC, MAC, agent; UE receiver
# ============================================================================================


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _rlc_push(b, u, f, seq, send, retx, t, p, ue, ui, rlc, fi, lost):
    """Queue one packet at the UE's RLC buffer, or drop it when the buffer is full."""
    pdu = p[P_PDU_BYTES]
    q = rlc.shape[2]
    k = lost.shape[2]
    fi[b, f, I_LAST_ARR_MS] = t
    if ue[b, u, U_RLC_BYTES] + pdu > p[P_RLC_CAP_BYTES] or ui[b, u, UI_RLC_LEN] >= q:
        ue[b, u, U_O_DROPS] += 1.0
        if retx:
            j = _lost_slot(fi, lost, b, f, seq)
            if j >= 0:
                lost[b, f, j, 1] = LOST_AGAIN
        elif fi[b, f, I_LOST_LEN] < k:
            j = (fi[b, f, I_LOST_HEAD] + fi[b, f, I_LOST_LEN]) & (k - 1)
            lost[b, f, j, 0] = seq
            lost[b, f, j, 1] = LOST_NEED
            fi[b, f, I_LOST_LEN] += 1
        return
    j = (ui[b, u, UI_RLC_HEAD] + ui[b, u, UI_RLC_LEN]) % q
    rlc[b, u, j, R_ARR] = t
    rlc[b, u, j, R_FLOW] = f
    rlc[b, u, j, R_SEQ] = seq
    rlc[b, u, j, R_SEND] = send
    rlc[b, u, j, R_RETX] = 1 if retx else 0
    ui[b, u, UI_RLC_LEN] += 1
    ue[b, u, U_RLC_BYTES] += pdu


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _enb_arrivals(b, t, p, fc, fi, ue, ui, rlc, dl, rtx, lost):
    """Segments reaching the eNB at ``t`` enter the RLC buffers, flows interleaved."""
    nf = fi.shape[1]
    ring = dl.shape[2]
    k = rtx.shape[2]
    slot = t & (ring - 1)
    # Retransmissions first (they left the server earlier than same-TTI new data at most).
    for f in range(nf):
        u = int(fc[f, FC_UE])
        while fi[b, f, I_RTX_LEN] > 0:
            h = fi[b, f, I_RTX_HEAD]
            if rtx[b, f, h, 1] > t:
                break
            _rlc_push(b, u, f, rtx[b, f, h, 0], rtx[b, f, h, 2], True, t, p, ue, ui, rlc, fi, lost)
            fi[b, f, I_RTX_HEAD] = (h + 1) & (k - 1)
            fi[b, f, I_RTX_LEN] -= 1
    more = True
    i = 0
    while more:
        more = False
        for f in range(nf):
            a = dl[b, f, slot, 0] + i
            if a < dl[b, f, slot, 1]:
                more = True
                u = int(fc[f, FC_UE])
                _rlc_push(b, u, f, a, dl[b, f, slot, 2], False, t, p, ue, ui, rlc, fi, lost)
        i += 1
    for f in range(nf):
        dl[b, f, slot, 0] = 0
        dl[b, f, slot, 1] = 0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _rcv_ack(b, f, owd, fi):
    """The receiver sends an ACK: it carries the receiver's state of this moment."""
    fi[b, f, I_RCV_ACKS] += 1
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
    payload = seg
    if fc[f, FC_TRAFFIC] == TRAFFIC_SHORT:
        payload = max(0.0, min(seg, size - seq * seg))
    fx[b, f, X_O_RX] += payload
    filled = False
    if retx:
        j = _lost_slot(fi, lost, b, f, seq)
        if j >= 0 and lost[b, f, j, 1] != LOST_DONE:
            lost[b, f, j, 1] = LOST_DONE
            fi[b, f, I_RCV_UNIQ] += 1
            filled = True
    else:
        fi[b, f, I_RCV_UNIQ] += 1
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
    if cum < high or filled:
        # Out of order, or a hole filled: ACK at once (RFC 5681 4.2).
        if seq > cum:
            # The segment lies above the cumulative point: the ACK carries new SACK information,
            # a duplicate ACK in ns-3's sense (``isDupack = scoreboardUpdated``).
            fi[b, f, I_RCV_DUPACKS] += 1
        _rcv_ack(b, f, t - send, fi)
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


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _serve(b, u, tb_bytes, t, p, fc, fi, fx, ue, ui, rlc, lost):
    """A transport block drains the UE's RLC buffer byte-wise; completed packets are delivered."""
    q = rlc.shape[2]
    budget = tb_bytes - p[P_TB_OVERHEAD_BYTES]
    pdu = p[P_PDU_BYTES]
    first = True
    while budget > 0 and ui[b, u, UI_RLC_LEN] > 0:
        if not first:
            budget -= p[P_SDU_OVERHEAD_BYTES]
            if budget <= 0:
                break
        first = False
        rem = ue[b, u, U_HEAD_REM]
        if rem <= budget:
            budget -= rem
            h = ui[b, u, UI_RLC_HEAD]
            f = rlc[b, u, h, R_FLOW]
            _receive(
                b, f, rlc[b, u, h, R_SEQ], rlc[b, u, h, R_SEND], rlc[b, u, h, R_RETX] > 0, t, p,
                fc, fi, fx, lost,
            )  # fmt: skip
            ui[b, u, UI_RLC_HEAD] = (h + 1) % q
            ui[b, u, UI_RLC_LEN] -= 1
            ue[b, u, U_RLC_BYTES] -= rem
            ue[b, u, U_HEAD_REM] = pdu
        else:
            ue[b, u, U_HEAD_REM] = rem - budget
            ue[b, u, U_RLC_BYTES] -= budget
            budget = 0.0
    if ui[b, u, UI_RLC_LEN] == 0:
        ue[b, u, U_RLC_BYTES] = 0.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _mac(b, t, p, fc, fi, fx, ue, ui, rlc, lost, tbs, cs, rng):
    """Schedule the TTI's resource blocks and transmit the transport blocks."""
    nu = ue.shape[1]
    usable = int(p[P_USABLE_RBS])
    bler = p[P_HARQ_BLER]
    tau = p[P_PF_TAU_TTIS]
    for u in range(nu):
        ue[b, u, U_NEW_TTI] = 0.0
        ue[b, u, U_RBS_TTI] = 0.0
    if p[P_SCHEDULER] == 0:
        best = -1
        best_metric = -1.0
        for u in range(nu):
            if ui[b, u, UI_RLC_LEN] > 0 and ue[b, u, U_MCS] >= 0:
                rate = tbs[int(ue[b, u, U_MCS]), usable]
                metric = rate / max(ue[b, u, U_PF_AVG], 1e-9)
                if metric > best_metric:
                    best_metric = metric
                    best = u
        if best >= 0:
            ue[b, best, U_RBS_TTI] = usable
    else:
        n = 0
        for u in range(nu):
            if ui[b, u, UI_RLC_LEN] > 0 and ue[b, u, U_MCS] >= 0:
                n += 1
        if n > 0:
            g = int(p[P_RBG_SIZE])
            nrbg = usable // g
            each = nrbg // n
            rest = nrbg - each * n
            start = cs[b, CS_RR_NEXT] % nu
            given = 0
            for i in range(nu):
                u = (start + i) % nu
                if ui[b, u, UI_RLC_LEN] > 0 and ue[b, u, U_MCS] >= 0:
                    r = each + (1 if given < rest else 0)
                    given += 1
                    ue[b, u, U_RBS_TTI] = r * g
            cs[b, CS_RR_NEXT] = (start + 1) % nu
    for u in range(nu):
        rbs = int(ue[b, u, U_RBS_TTI])
        sent = 0.0
        if rbs > 0:
            mcs = int(ue[b, u, U_MCS])
            tb = tbs[mcs, rbs]
            if ue[b, u, U_HARQ] > 0:
                ue[b, u, U_HARQ] = 0.0  # this allocation carries a HARQ retransmission
            else:
                if bler > 0 and _rand(rng, b) < bler:
                    ue[b, u, U_HARQ] = 1.0
                ue[b, u, U_NEW_TTI] = tb
                ue[b, u, U_LAST_MCS] = mcs
                sent = tb
                _serve(b, u, tb, t, p, fc, fi, fx, ue, ui, rlc, lost)
        # Floored so that an idle UE's average never decays into (slow) denormal numbers.
        ue[b, u, U_PF_AVG] = max((1.0 - 1.0 / tau) * ue[b, u, U_PF_AVG] + sent / tau, 1e-6)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _ue_active(b, u, t, p, fc, fi):
    """The UE has a flow the agent counts as active."""
    for f in range(fi.shape[1]):
        if int(fc[f, FC_UE]) == u:
            last = fi[b, f, I_LAST_ARR_MS]
            if last >= 0 and t - last < p[P_ACTIVE_TIMEOUT_MS]:
                return True
    return False


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _flow_rate_mbps(b, f, t, p, fc, fi, ue):
    """The agent's C_i = C / active flows of the UE (the flow itself counted)."""
    u = int(fc[f, FC_UE])
    n = 0
    self_active = False
    for g in range(fi.shape[1]):
        if int(fc[g, FC_UE]) == u:
            last = fi[b, g, I_LAST_ARR_MS]
            if last >= 0 and t - last < p[P_ACTIVE_TIMEOUT_MS]:
                n += 1
                if g == f:
                    self_active = True
    if not self_active:
        n += 1
    cap_mbps = ue[b, u, U_CAP_SUM] * 8.0 / p[P_WINDOW_TTIS] / 1000.0
    return cap_mbps / n


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _agent_end_tti(b, t, p, fc, fi, ue, ui, rlc, capr, fbr, tbs):
    """The XRC agent closes the TTI: capacity ring, HoL, feedback values by time."""
    nu = ue.shape[1]
    usable = p[P_USABLE_RBS]
    w = capr.shape[2]
    used = 0.0
    eligible = 0
    for u in range(nu):
        used += ue[b, u, U_RBS_TTI]
        if _ue_active(b, u, t, p, fc, fi):
            eligible += 1
    idle = 0.0 if used >= usable else usable - used
    pos = t % w
    for u in range(nu):
        act = _ue_active(b, u, t, p, fc, fi)
        sharers = eligible + (0 if act else 1)
        cap = ue[b, u, U_NEW_TTI] + _bytes_of(
            tbs, ue[b, u, U_LAST_MCS], idle / sharers, int(p[P_NUM_RBS])
        )
        ue[b, u, U_CAP_SUM] += cap - capr[b, u, pos]
        capr[b, u, pos] = cap
        ue[b, u, U_O_CAP] += cap
        ue[b, u, U_O_TX] += ue[b, u, U_NEW_TTI]
        ue[b, u, U_O_TTIS] += 1.0
        if ui[b, u, UI_RLC_LEN] > 0:
            hol = float(t - rlc[b, u, ui[b, u, UI_RLC_HEAD], R_ARR])
        else:
            hol = 0.0
        ue[b, u, U_HOL] = hol
        ue[b, u, U_O_HOLMAX] = max(ue[b, u, U_O_HOLMAX], hol)
    ring = fbr.shape[2]
    slot = t & (ring - 1)
    for f in range(fi.shape[1]):
        fbr[b, f, slot, 0] = _flow_rate_mbps(b, f, t, p, fc, fi, ue)
        fbr[b, f, slot, 1] = ue[b, int(fc[f, FC_UE]), U_HOL]


# ============================================================================================
# One step of one cell
# ============================================================================================


@njit(cache=True, error_model="numpy", _nrt=False)
def step_cell(
    b, n_ttis, p, fc, tbs, cqi_tab, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr, dl, rtx,
    lost, obs_f, obs_u, act,
):  # fmt: skip
    """Advance cell ``b`` by ``n_ttis`` TTIs and write its step observation."""
    nf = fi.shape[1]
    nu = ue.shape[1]
    seg = p[P_SEG_BYTES]
    ring = rcv.shape[2]
    # Agent commands (absolute window and pacing), applied at the step boundary.
    for f in range(nf):
        if int(fc[f, FC_CCA]) == CCA_AGENT and act[b, f, 2] > 0:
            fx[b, f, X_CMD_CWND] = max(act[b, f, 0], 1.0)
            fx[b, f, X_CMD_PACE] = max(act[b, f, 1], 0.0) * 1e6 / 8.0 / 1000.0
            act[b, f, 2] = 0.0
            _agent_apply(fx, fi, b, f, seg)
    for _ in range(n_ttis):
        t = cs[b, CS_T_MS]
        # 1. Mobility.
        if p[P_MOBILITY] > 0 and t >= cs[b, CS_NEXT_MOVE_MS]:
            lo = p[P_MIN_DISTANCE_M]
            hi = p[P_MAX_DISTANCE_M]
            for u in range(nu):
                d = lo + (hi - lo) * _rand(rng, b)
                ue[b, u, U_DIST] = d
                ue[b, u, U_MCS] = _mcs_of(d, p, cqi_tab)
            cs[b, CS_NEXT_MOVE_MS] += int(p[P_MOBILITY_PERIOD_MS])
        # 2-3. eNB arrivals, MAC and delivery.
        _mac(b, t, p, fc, fi, fx, ue, ui, rlc, lost, tbs, cs, rng)
        _enb_arrivals(b, t, p, fc, fi, ue, ui, rlc, dl, rtx, lost)
        # 4. Receivers: delayed-ACK timeout, then their state by time. The ring holds what has
        # left the UE by each TTI; the sender reads it one uplink delay later.
        slot = t & (ring - 1)
        prev = (t - 1) & (ring - 1)
        bsr = p[P_UPLINK] > 0
        grant_bit = int(p[P_UL_GRANT_MS])
        if bsr:
            for u in range(nu):
                ui[b, u, UI_BSR] = (ui[b, u, UI_BSR] << 1) & ((1 << (grant_bit + 1)) - 1)
        for f in range(nf):
            if fi[b, f, I_DELACK_N] > 0 and t - fi[b, f, I_DELACK_MS] >= p[P_DELACK_TIMEOUT_MS]:
                _rcv_ack(b, f, t - fi[b, f, I_DELACK_SEND], fi)
                fi[b, f, I_DELACK_N] = 0
            if bsr and fi[b, f, I_RCV_ACKS] != fi[b, f, I_RCV_ACKS_TTI]:
                # A new ACK in the UE's uplink buffer: a buffer status report in this TTI.
                ui[b, int(fc[f, FC_UE]), UI_BSR] |= 1
                n_new = fi[b, f, I_RCV_ACKS] - fi[b, f, I_RCV_ACKS_TTI]
                fi[b, f, I_RCV_ACKS_TTI] = fi[b, f, I_RCV_ACKS]
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
            rcv[b, f, slot, V_LAST] = fi[b, f, I_RCV_LAST_OWD]
            rcv[b, f, slot, V_DUPACKS] = fi[b, f, I_RCV_DUPACKS]
        # 5. The XRC agent.
        _agent_end_tti(b, t, p, fc, fi, ue, ui, rlc, capr, fbr, tbs)
        # 6. Senders.
        for f in range(nf):
            if int(fc[f, FC_CCA]) == CCA_BBR:
                _bbr_sample(b, f, t, p, fc, fx, bw, rcv)
            _sender_acks(b, f, t, p, fc, fi, fx, bw, rng, rcv, fbr, lost)
            if int(fc[f, FC_CCA]) == CCA_BBR:
                _bbr_record_send_state(b, f, t, fi, fx, bw)
            _sender_send(b, f, t, p, fc, fi, fx, rng, dl, rtx, lost)
            if int(fc[f, FC_CCA]) == CCA_BBR:
                _bbr_count_marked(b, f, p, fi, fx, lost)
        cs[b, CS_T_MS] = t + 1
    # Observation of the step.
    t_end = cs[b, CS_T_MS]
    dupthresh = int(p[P_DUPTHRESH])
    for f in range(nf):
        cca = int(fc[f, FC_CCA])
        started = t_end > fi[b, f, I_START_MS]
        o = obs_f[b, f]
        o[0] = fx[b, f, X_FB_RATE]
        o[1] = fx[b, f, X_FB_HOL]
        o[2] = fx[b, f, X_O_RTT_LAST]
        o[3] = max(fx[b, f, X_O_RTT_MIN], 0.0)
        n = fx[b, f, X_O_RTT_N]
        o[4] = fx[b, f, X_O_RTT_SUM] / n if n > 0 else fx[b, f, X_O_RTT_LAST]
        o[5] = n
        o[6] = fx[b, f, X_CWND] if started else 0.0
        o[7] = min(fx[b, f, X_SSTHRESH], 1e9) if started else 0.0
        o[8] = _pipe(fi, lost, b, f, dupthresh, p[P_RECOVERY] > 0) * seg
        o[9] = fx[b, f, X_O_ACKED]
        o[10] = fx[b, f, X_O_RX]
        o[11] = fx[b, f, X_O_LOSS]
        o[12] = fx[b, f, X_O_RETX]
        pace = fx[b, f, X_PACING]
        o[13] = pace * 8.0 / 1000.0 if (pace > 0 and (cca == CCA_BBR or cca == CCA_AGENT)) else 0.0
        o[14] = 1.0 if fi[b, f, I_RUNNING] > 0 else 0.0
        o[15] = _flow_rate_mbps(b, f, t_end - 1, p, fc, fi, ue)
        o[16] = fx[b, f, X_O_SENT]
        o[17] = fx[b, f, X_FCT_S]
        fx[b, f, X_O_RTT_SUM] = 0.0
        fx[b, f, X_O_RTT_N] = 0.0
        fx[b, f, X_O_ACKED] = 0.0
        fx[b, f, X_O_RX] = 0.0
        fx[b, f, X_O_LOSS] = 0.0
        fx[b, f, X_O_RETX] = 0.0
        fx[b, f, X_O_SENT] = 0.0
    for u in range(nu):
        o = obs_u[b, u]
        ttis = max(ue[b, u, U_O_TTIS], 1.0)
        o[0] = ue[b, u, U_O_CAP] * 8.0 / ttis / 1000.0
        o[1] = ue[b, u, U_O_TX] * 8.0 / ttis / 1000.0
        o[2] = ue[b, u, U_HOL]
        o[3] = max(ue[b, u, U_O_HOLMAX], ue[b, u, U_HOL])
        o[4] = ue[b, u, U_RLC_BYTES]
        o[5] = ue[b, u, U_O_DROPS]
        o[6] = ue[b, u, U_DIST]
        ue[b, u, U_O_CAP] = 0.0
        ue[b, u, U_O_TX] = 0.0
        ue[b, u, U_O_HOLMAX] = 0.0
        ue[b, u, U_O_DROPS] = 0.0
        ue[b, u, U_O_TTIS] = 0.0


# ============================================================================================
# Batched entry points
# ============================================================================================


@njit(cache=True, error_model="numpy", _nrt=False)
def step_batch(
    n_ttis, p, fc, tbs, cqi_tab, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr, dl, rtx, lost,
    obs_f, obs_u, act,
):  # fmt: skip
    """Advance every cell of the batch by ``n_ttis`` TTIs (one thread)."""
    for b in range(cs.shape[0]):
        step_cell(
            b, n_ttis, p, fc, tbs, cqi_tab, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr, dl,
            rtx, lost, obs_f, obs_u, act,
        )  # fmt: skip


@njit(cache=True, parallel=True, error_model="numpy", _nrt=False)
def step_batch_parallel(
    n_ttis, p, fc, tbs, cqi_tab, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr, dl, rtx, lost,
    obs_f, obs_u, act,
):  # fmt: skip
    """Advance every cell of the batch by ``n_ttis`` TTIs, cells spread over threads."""
    for b in prange(cs.shape[0]):
        step_cell(
            b, n_ttis, p, fc, tbs, cqi_tab, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr, dl,
            rtx, lost, obs_f, obs_u, act,
        )  # fmt: skip


@njit(cache=True, error_model="numpy", _nrt=False)
def reset_batch(
    mask, seeds, p, fc, cqi_tab, dist0, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr, dl, rtx,
    lost, obs_f, obs_u, act,
):  # fmt: skip
    """Reset the cells where ``mask`` is true, each from its own seed."""
    for b in range(cs.shape[0]):
        if mask[b]:
            reset_cell(
                b, p, fc, cqi_tab, dist0, seeds[b], cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv,
                fbr, dl, rtx, lost, obs_f, obs_u, act,
            )  # fmt: skip
