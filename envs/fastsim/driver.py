"""The driver: a step of a cell (1 ms tick by tick, the model's parts in order), batches, resets.

The shared clock ticks in ms (TCP, applications, the uplink, RLC arrivals); the MAC runs per
scheduling slot, ``P_SLOTS_PER_MS`` per tick (LTE: one 1 ms TTI; NR: 2**numerology slots).
Per tick and cell, in this order (``step_cell``):

1. Channel (``channel``): every ``mobility_period_s`` each UE moves to its next distance of the
   run's draws (``random`` mobility; ``cellgym.draws``, the same as ns-3's; at the end of the
   tick before, so that a step's observation holds a move at its end, as ns-3's does); the MCS
   follows from the SINR (LTE: Okumura-Hata through the calibrated CQI thresholds; NR: TR 38.901
   with LOS state, shadowing and FR2 blockage, ``channel_nr``).
2. MAC (``mac``), per slot: proportional fair gives the slot's resource blocks to one backlogged
   UE (ns-3's ``PfFfMacScheduler`` picks one UE per RBG with equal metrics: all RBGs), round
   robin splits them; HARQ retransmissions due take their RBs first, without new data. The
   transport block drains the RLC buffer byte-wise (segmentation, ``rlc``), completed packets
   reach the UE's TCP receiver (``receiver``) when the block is decoded, in order.
3. Arrivals at the eNB (``rlc``), after the tick's first slot: segments sent ``server_delay_ms +
   delay_ms`` earlier enter their UE's RLC buffer (packets with their arrival time, interleaved
   across flows, the first flow taking turns by tick); a packet that does not fit is dropped
   (tail drop at ``rlc_buffer_pkts * 1500`` bytes of PDCP PDUs). With a wired bottleneck
   (``bottleneck``) they join its drop-tail buffer at the router instead, and the packets its
   link sends in the tick enter the RLC buffers.
4. Receiver and uplink (``receiver``): cumulative and selective ACK state, delayed ACKs (every
   second in-order segment, immediately on a hole), written into a ring by time; the sender
   reads it after the ACK path's delay (air + core + server link), so ACK clocking follows the
   propagation delays.
5. XRC agent (``enb_agents/xrc.py``): per UE the capacity of new transport blocks plus its
   share of idle RBs over the last ``xrc_window_ttis`` slots (after each slot); C_i = C /
   active flows; HoL = the age of the RLC head packet at each slot's end, at the slots'
   resolution (the step keeps the latest and the largest). Rate and HoL are stored by time
   and reach the sender after the uplink core delay. With XCP or RCP flows, the bottleneck's
   router (``enb_agents/router.py``: per UE at the eNB, or at the wired bottleneck) counts the
   tick's packets, hands out XCP's feedback or RCP's rate, and closes its control interval.
6. Senders (``senders/``): ACK processing (RTT, loss detection at 3 segments above a hole, fast
   recovery, RTO), window growth (NewReno, CUBIC with HyStart, a BBR model, XRC, agent; the
   model's hooks in ``senders/dispatch.py``), then retransmissions and new segments within the
   window, pacing and application data (``app``).

The transition is pure in the sense of STYLE.md 3.5: its inputs are the frozen parameter arrays,
the state arrays and each cell's explicit counter-based RNG state; nothing global is read.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from envs.fastsim.bottleneck import BN_UDP_N
from envs.fastsim.channel import _blockage, _move_ues, _place_ue
from envs.fastsim.codes import (
    NO_RTT,
    RECOVERY_NS3_PRR,
    ROUTER_NONE,
    SSTHRESH_INF,
    TRAFFIC_SHORT,
)
from envs.fastsim.cross_traffic import _udp_tick
from envs.fastsim.enb_agents.router import _router_tick
from envs.fastsim.enb_agents.xrc import _agent_end_tti, _agent_hol, _agent_slot, _flow_rate_mbps
from envs.fastsim.loss_record import _pipe
from envs.fastsim.mac import _mac
from envs.fastsim.params import (
    FC_CCA,
    FC_D_DOWN_MS,
    FC_D_UP_TOTAL_MS,
    FC_SIZE_BYTES,
    FC_SSTHRESH_BYTES,
    FC_START_MS,
    FC_STOP_MS,
    FC_TRAFFIC,
    P_ATTACH_MS,
    P_DUPTHRESH,
    P_INIT_CWND_SEGS,
    P_MIN_RTO_MS,
    P_MOBILITY_PERIOD_MS,
    P_PBE,
    P_PDU_BYTES,
    P_RECOVERY,
    P_ROUTER,
    P_SEG_BYTES,
    P_SLOTS_PER_MS,
    P_START_OFFSETS,
    P_UL_GRANT_MS,
)
from envs.fastsim.pbe_params import PB_ON
from envs.fastsim.receiver import _uplink_tti
from envs.fastsim.rlc import _enb_arrivals
from envs.fastsim.router_params import RP_KIND
from envs.fastsim.senders.ack import _sender_acks, _syn_ack
from envs.fastsim.senders.dispatch import (
    _after_send,
    _before_acks,
    _before_send,
    _on_step,
    _paced,
    _payload_share,
)
from envs.fastsim.senders.send import _sender_send
from envs.fastsim.state import (
    CS_NEXT_MOVE_MS,
    CS_T_MS,
    I_DATA_MS,
    I_LAST_ARR_MS,
    I_RTO_AT_MS,
    I_RTO_MS,
    I_RUNNING,
    I_START_MS,
    U_DIST,
    U_HEAD_REM,
    U_HOL,
    U_LAST_MCS,
    U_O_CAP,
    U_O_DROPS,
    U_O_HOLMAX,
    U_O_TTIS,
    U_O_TX,
    U_PF_AVG,
    U_RLC_BYTES,
    U_SOJ_MAX,
    X_B_MINRTT,
    X_BUDGET,
    X_C_CURRRTT,
    X_C_DELAYMIN,
    X_C_EPOCH,
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
    X_SSTHRESH,
)
from envs.fastsim.ue_monitor import _pbe_end_tti, _pbe_slot
from envs.fastsim.xcpr_receiver import _xcpr_receivers

# ============================================================================================
# Initial state
# ============================================================================================


@njit(cache=True, error_model="numpy", _nrt=False)
def reset_cell(
    b, p, fc, cqi_tab, dist0, seed, offs, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr, dl,
    rtx, lost, obs_f, obs_u, act, bqs, bq, dr,
):  # fmt: skip
    """Put cell ``b`` at t = 0, its RNG seeded from ``seed``; flows start ``offs[b]`` ms late.

    ``offs`` are the run's drawn start offsets (``cellgym.draws``), applied when
    ``P_START_OFFSETS`` is set.
    """
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
    bqs[b] = 0.0
    bq[b] = 0
    seg = p[P_SEG_BYTES]
    for u in range(ue.shape[1]):
        ue[b, u, :] = 0.0
        _place_ue(b, u, dist0[u], True, p, cqi_tab, ue, rng)
        ue[b, u, U_LAST_MCS] = -1.0
        ue[b, u, U_PF_AVG] = 1.0
        ue[b, u, U_HEAD_REM] = p[P_PDU_BYTES]
        obs_u[b, u, 6] = dist0[u]
    for f in range(fi.shape[1]):
        offset = offs[b, f] if p[P_START_OFFSETS] > 0 else 0
        start = int(max(fc[f, FC_START_MS], p[P_ATTACH_MS])) + offset
        fi[b, f, I_START_MS] = start
        # The server opens the connection: SYN down, SYN-ACK up, then data. The SYN-ACK is an
        # idle UE's first uplink packet: it waits for the grant its buffer report brings, with
        # either uplink model (ns-3: the SYN's RTT is 45-48 ms, a data ACK's 37-41 ms; without
        # the wait the handshake's sample would set the minimum RTT below the data ACKs').
        ul_wait = p[P_UL_GRANT_MS]
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


# ============================================================================================
# One step of one cell
# ============================================================================================


@njit(cache=True, error_model="numpy", _nrt=False)
def step_cell(
    b, n_ttis, p, fc, tbs, cqi_tab, trc, bnp, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr, dl,
    rtx, lost, obs_f, obs_u, act, bqs, bq, dr,
):  # fmt: skip
    """Advance cell ``b`` by ``n_ttis`` 1 ms ticks and write its step observation."""
    nf = fi.shape[1]
    seg = p[P_SEG_BYTES]
    spm = int(p[P_SLOTS_PER_MS])
    # Agent commands (absolute window and pacing), applied at the step boundary.
    for f in range(nf):
        _on_step(int(fc[f, FC_CCA]), b, f, fi, fx, act, seg)
    for u in range(ue.shape[1]):
        ue[b, u, U_SOJ_MAX] = 0.0
    for _ in range(n_ttis):
        t = cs[b, CS_T_MS]
        # 1. The channel: FR2 blockage (random moves at the tick's end, below).
        _blockage(b, t, p, cqi_tab, rng, ue)
        # 2-3. MAC and delivery per slot, eNB arrivals after the first slot; the agent's
        # capacity and HoL after each slot.
        slot = t * spm
        _mac(b, t, slot, p, fc, fi, fx, ue, ui, rlc, lost, tbs, trc, cs, rng)
        if bnp[BN_UDP_N] > 0:
            # ON/OFF UDP cross traffic joins the bottleneck.
            _udp_tick(b, t, p, bnp, bqs, bq, rng, dr)
        _enb_arrivals(b, t, p, fc, fi, fx, ue, ui, rlc, dl, rtx, lost, bnp, bqs, bq, rng)
        _agent_slot(b, t, slot, p, fc, fi, ue, capr, tbs, trc)
        _agent_hol(b, slot, p, ue, ui, rlc)
        pbe = p[P_PBE + PB_ON] > 0  # PBE-CC's UE monitor decodes the slots' allocations
        if pbe:
            _pbe_slot(b, slot, p, ue, tbs, trc)
        for s in range(1, spm):
            _mac(b, t, slot + s, p, fc, fi, fx, ue, ui, rlc, lost, tbs, trc, cs, rng)
            _agent_slot(b, t, slot + s, p, fc, fi, ue, capr, tbs, trc)
            _agent_hol(b, slot + s, p, ue, ui, rlc)
            if pbe:
                _pbe_slot(b, slot + s, p, ue, tbs, trc)
        # 4. Receivers: delayed-ACK timeout, then their state by time (the uplink).
        if p[P_ROUTER + RP_KIND] != ROUTER_NONE:
            _xcpr_receivers(b, t, p, fc, fi, fx, fbr)  # XCP-r's receivers: the window to carry
        _uplink_tti(b, t, p, fc, fi, ui, rcv)
        # 5. The XRC agent: the feedback of the tick; the bottleneck's XCP/RCP router.
        _agent_end_tti(b, t, p, fc, fi, ue, fbr)
        if p[P_ROUTER + RP_KIND] != ROUTER_NONE:
            _router_tick(b, t, p, fc, fi, fx, ue, bnp, bqs, fbr)
        if pbe:
            _pbe_end_tti(b, t, p, fc, fi, ue, fbr)
        # 6. Senders.
        for f in range(nf):
            cca = int(fc[f, FC_CCA])
            if t == fi[b, f, I_DATA_MS]:
                _syn_ack(b, f, t, p, fc, fi, fx, fbr)
            _before_acks(cca, b, f, t, p, fc, fx, bw, rcv, fbr)
            _sender_acks(b, f, t, p, fc, fi, fx, bw, rng, rcv, fbr, lost)
            _before_send(cca, b, f, t, p, fc, fi, fx, bw, fbr)
            _sender_send(b, f, t, p, fc, fi, fx, rng, dl, rtx, lost)
            _after_send(cca, b, f, t, p, fi, fx, lost, fbr)
        cs[b, CS_T_MS] = t + 1
        _move_ues(b, t + 1, p, cqi_tab, cs, rng, ue, dr)  # 1. random moves due at the tick's end
    _observe(b, p, fc, fi, fx, ue, lost, cs, obs_f, obs_u)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _observe(b, p, fc, fi, fx, ue, lost, cs, obs_f, obs_u):
    """Write cell ``b``'s step observation (``[F, 18]`` flows, ``[U, 7]`` UEs), reset the sums."""
    nf = fi.shape[1]
    nu = ue.shape[1]
    seg = p[P_SEG_BYTES]
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
        o[8] = _pipe(fi, lost, b, f, dupthresh, p[P_RECOVERY] == RECOVERY_NS3_PRR) * seg
        net = _payload_share(cca, p, seg)  # XCP's and RCP's header takes payload bytes
        o[9] = fx[b, f, X_O_ACKED] * net
        o[10] = fx[b, f, X_O_RX] * net
        o[11] = fx[b, f, X_O_LOSS]
        o[12] = fx[b, f, X_O_RETX]
        pace = fx[b, f, X_PACING]
        o[13] = pace * 8.0 / 1000.0 if (pace > 0 and _paced(cca)) else 0.0
        # Active at the step's end as on ns-3, where an application starting or stopping at that
        # instant does so before the observation: active from its start, inactive from its stop.
        active = fi[b, f, I_RUNNING] > 0 or (
            fi[b, f, I_START_MS] == t_end and fx[b, f, X_FCT_S] < 0
        )
        stop = fc[f, FC_STOP_MS]
        o[14] = 1.0 if active and not (0 <= stop <= t_end) else 0.0
        o[15] = _flow_rate_mbps(b, f, t_end - 1, p, fc, fi, ue)
        o[16] = fx[b, f, X_O_SENT] * net
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


@njit(cache=True, nogil=True, error_model="numpy", _nrt=False)
def step_batch(
    b0, b1, n_ttis, p, fc, tbs, cqi_tab, trc, bnp, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv,
    fbr, dl, rtx, lost, obs_f, obs_u, act, bqs, bq, dr,
):  # fmt: skip
    """Advance cells ``b0`` to ``b1 - 1`` by ``n_ttis`` TTIs.

    Without the GIL: threads run it on disjoint slices of one batch (``envs.fastsim.threads``).
    """
    for b in range(b0, b1):
        step_cell(
            b, n_ttis, p, fc, tbs, cqi_tab, trc, bnp, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv,
            fbr, dl, rtx, lost, obs_f, obs_u, act, bqs, bq, dr,
        )  # fmt: skip


@njit(cache=True, error_model="numpy", _nrt=False)
def reset_batch(
    mask, seeds, offs, p, fc, cqi_tab, dist0, cs, rng, fi, fx, bw, ue, ui, rlc, capr, rcv, fbr,
    dl, rtx, lost, obs_f, obs_u, act, bqs, bq, dr,
):  # fmt: skip
    """Reset the cells where ``mask`` is true, each from its own seed and start offsets."""
    for b in range(cs.shape[0]):
        if mask[b]:
            reset_cell(
                b, p, fc, cqi_tab, dist0, seeds[b], offs, cs, rng, fi, fx, bw, ue, ui, rlc, capr,
                rcv, fbr, dl, rtx, lost, obs_f, obs_u, act, bqs, bq, dr,
            )  # fmt: skip
