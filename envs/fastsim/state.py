"""Layout of the fast simulator's state: a struct of arrays with a leading batch dimension.

Every array of ``CellState`` has the batch (cell) index first, so one compiled loop advances many
independent cells in lockstep and a single cell is just ``B = 1``. Column indices are module
constants that the compiled kernel reads as compile-time values.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from envs.fastsim.bottleneck import BQ_LEN, BS_COLS
from envs.fastsim.params import LOST_SLOTS, FastSimParams
from envs.fastsim.pbe_params import UM_LEN

# -- per cell (int64 [B, CS_LEN]) --------------------------------------------------------------
CS_T_MS = 0  # the cell's clock: start of the next TTI, ms
CS_RR_NEXT = 1  # round-robin scheduler: next UE to favour
CS_NEXT_MOVE_MS = 2  # next random distance change (the run's draws), ms
CS_LEN = 3

# -- per flow, integers (int64 [B, F, I_LEN]) --------------------------------------------------
I_START_MS = 0  # application start (with the seeded offset)
I_DATA_MS = 1  # first data after the handshake
I_SND_NXT = 2  # next new segment number
I_UNA = 3  # cumulative ACK as the sender sees it (segments)
I_HANDED = 4  # segments the application has handed to the socket
I_CSTATE = 5  # codes.ST_*: open, fast recovery, loss (after an RTO)
I_RECOVER = 6  # recovery ends when UNA reaches this
I_RTO_MS = 7  # current retransmission timeout
I_RTO_AT_MS = 8  # deadline of the retransmission timer (-1: off)
I_SEEN_ACKS = 9  # receiver ACK count already processed by the sender
I_SEEN_OWD = 10  # receiver one-way-delay sum already processed
I_SEEN_UNIQ = 11  # receiver unique segments already processed
I_VIEW_HIGH = 12  # highest segment + 1 the sender knows received (SACK)
I_SACKED = 13  # segments received above the cumulative ACK, as the sender sees it
I_RCV_CUM = 14  # receiver: next expected segment
I_RCV_HIGH = 15  # receiver: highest received + 1
I_RCV_UNIQ = 16  # receiver: distinct segments received
I_RCV_ACKS = 17  # receiver: ACKs sent
I_RCV_OWD = 18  # receiver: sum of one-way delays carried by its ACKs, ms
I_RCV_LAST_OWD = 19  # receiver: one-way delay carried by its latest ACK, ms
I_DELACK_N = 20  # receiver: segments waiting for a delayed ACK
I_DELACK_MS = 21  # receiver: arrival of the first of them
I_DELACK_SEND = 22  # receiver: its send time
I_LAST_ARR_MS = 23  # eNB agent: last arrival of the flow's packet (-1: none)
I_LOST_HEAD = 24  # lost-segment ring: head
I_LOST_LEN = 25  # lost-segment ring: entries
I_RTX_HEAD = 26  # retransmissions on their way to the eNB: head
I_RTX_LEN = 27  # and count
I_RUNNING = 28  # the application runs (started and not stopped)
I_CWND_LIMITED = 29  # the last send round was limited by the window
I_RCV_DUPACKS = 30  # receiver: ACKs that carried new SACK information (ns-3's dupacks)
I_SEEN_DUPACKS = 31  # receiver dupack count already processed by the sender
I_DUPACK_CNT = 32  # sender: duplicate ACKs counted outside recovery (ns-3 ``m_dupAckCount``)
I_RTO_HELD = 33  # sender: a partial ACK of this recovery restarted the RTO timer (ns-3)
I_RCV_ACKS_TTI = 34  # receiver: ACKs sent by the end of the previous TTI (uplink reports)
I_UL_PEND_N = 35  # ACKs queued in the UE's uplink buffer (``bsr`` uplink)
I_UL_PEND_TSUM = 36  # sum of their queueing times, ms
I_UL_LAST_T = 37  # queueing time of the latest of them, ms
I_ACK_CUM = 38  # receiver state carried by its latest ACK: next expected segment
I_ACK_HIGH = 39  # ... highest received + 1
I_ACK_UNIQ = 40  # ... distinct segments received
I_RT_ARR = 41  # packets of the flow that reached the bottleneck (router) in the current tick
# XCP-r's receiver (``receivers/xcpr.py``) and ACK loss on the reverse path (``ack_loss.py``)
I_XR_LAST_SEND = 42  # receiver: send time of the latest segment received, ms (0: none)
I_XR_RCWND = 43  # receiver: the window its ACKs carry now, bytes (0: none yet)
I_XR_REPOCH = 44  # receiver: the sender's reset count it last resynchronised to (0: none)
I_ACKS_DRAWN = 45  # sender: receiver ACKs whose loss on the reverse path is already drawn
I_RCV_SMP = 46  # receiver: ACKs that advance the cumulative ACK (ns-3's RTT samples)
I_RCV_SMP_TTI = 47  # ... sent by the end of the previous TTI (uplink reports)
I_SEEN_SMP = 48  # sender: advancing ACKs already processed
#: Sender: new segments the window allowed the ACKs of the bunch that came before the one that
#: entered fast recovery (ns-3 takes ACKs one by one): sent before the fast retransmission.
I_PRE_SEND = 49
I_LEN = 50

# -- per flow, reals (float64 [B, F, X_LEN]) ---------------------------------------------------
X_CWND = 0  # congestion window, bytes
X_SSTHRESH = 1  # slow-start threshold, bytes
X_SRTT = 2  # smoothed RTT, ms
X_RTTVAR = 3  # RTT variation, ms
X_MIN_RTT = 4  # minimum RTT (sender), ms (1e12: none)
X_PACING = 5  # pacing rate, bytes per ms (0: off)
X_TOKENS = 6  # pacing tokens, bytes
X_BUDGET = 7  # application bytes not yet handed (video, short)
X_CMD_CWND = 8  # agent: commanded window, bytes (0: none yet)
X_CMD_PACE = 9  # agent: commanded pacing, bytes per ms
X_FB_RATE = 10  # latest explicit rate on an ACK, Mbit/s
X_FB_HOL = 11  # latest HoL delay on an ACK, ms
X_FCT_S = 12  # completion time of a short flow, s (-1)
# CUBIC
X_C_CNT = 13
X_C_LASTMAX = 14
X_C_EPOCH = 15
X_C_ACKCNT = 16
X_C_TCPCWND = 17
X_C_K = 18
X_C_ORIGIN = 19
X_C_DELAYMIN = 20
X_C_ROUNDSTART = 21
X_C_LASTACK = 22
X_C_ENDSEQ = 23
X_C_CURRRTT = 24
X_C_SAMPLES = 25
X_C_FOUND = 26
# XRC
X_X_HASFB = 27
X_X_RTTSUM = 28
X_X_RTTCNT = 29
X_X_WINMEAN = 30
X_X_WINACKED = 31
X_X_HIGHDELAY = 32
X_X_LASTUPD = 33
X_X_UNFAIR = 34
X_X_RAMPFROM = 35
X_X_TWND = 36
X_X_MODE = 37
# BBR
X_B_MODE = 38
X_B_BTLBW = 39  # bytes per ms
X_B_ROUNDSTART = 40
X_B_ROUNDDELIV = 41
X_B_ROUNDEND = 42
X_B_ROUNDS = 43
X_B_CYCLE = 44
X_B_CYCLESTAMP = 45
X_B_FULLBW = 46
X_B_FULLCNT = 47
X_B_MINRTT = 48
X_B_MINSTAMP = 49
X_B_PRTT_DONE = 50
X_B_PRIOR_CWND = 51
X_B_FILLED = 52
# step observation accumulators
X_O_RTT_SUM = 53
X_O_RTT_N = 54
X_O_RTT_LAST = 55
X_O_RTT_MIN = 56
X_O_ACKED = 57
X_O_RX = 58
X_O_LOSS = 59
X_O_RETX = 60
X_O_SENT = 61
X_B_CONSERVE = 62  # BBR: packet conservation until the ACK passes this sequence
# BBR's per-packet delivery-rate sampler (Linux/ns-3 rate sampling, at 1 ms resolution)
X_B_DELIV = 63  # bytes delivered (cumulatively or selectively acknowledged) so far
X_B_DTIME = 64  # time of the latest delivery, ms
X_B_FIRSTSENT = 65  # send time of the most recently delivered segment, ms
X_B_PRIOR = 66  # the rate sample's delivered-at-send (kept across ACKs, as ns-3 does)
X_B_ACKEL = 67  # the rate sample's ACK phase, ms
X_B_SENDEL = 68  # the rate sample's send phase, ms
X_B_PVALID = 69  # 1 while the kept sample start is valid
X_B_MARKED = 70  # segments marked lost and not yet retransmitted, after the latest send
# Proportional rate reduction in fast recovery (ns-3's default ``TcpPrrRecovery``), bytes
X_PRR_DELIV = 71  # prr_delivered
X_PRR_OUT = 72  # prr_out
X_PRR_RFS = 73  # RecoverFS: bytes in flight when recovery began
X_B_LOSTOUT = 74  # segments ns-3's TcpTxBuffer marks lost (GetLost), at the latest ACK
X_B_SEEN_RAW = 75  # BBR: segments of the per-TTI ACK stream (``V_UNIQ_RAW``) already sampled
X_B_PRIOR_INFL = 76  # BBR: bytes in flight after the latest sends (the next ACK's priorInFlight)
# Router-assisted congestion control (XCP, RCP; ``enb_agents/router.py``, ``senders/xcp.py``)
X_RT_FB = 77  # router: the flow's XCP feedback so far (sum over its packets), payload bytes
X_XCP_SEEN = 78  # sender: the part of it already applied to the window
X_XR_RCWND = 79  # XCP-r receiver: its window cwnd' (the sum of the feedback), bytes
X_XR_RSEEN = 80  # XCP-r receiver: the router's feedback sum (``FB_XCP``) already added to it
X_XR_RTIME = 81  # XCP-r receiver: router time of the latest segment counted, ms (0: none)
X_XR_EPOCH = 82  # XCP-r sender: its window resets so far (the header's congestion flag)
X_ACK_LOST = 83  # share of the latest ACK bunch lost on the reverse path (0 without loss)
X_ACK_REDRAW = 84  # ACK loss: when a timeout's retransmission elicits an ACK again, ms (0: none)
# A ``pareto`` slot's current flow (``workload``): set by the workload, completed by the receiver
X_W_TARGET = 85  # the flow ends when the receiver's cumulative ACK reaches this segment (0: none)
X_W_DONE_MS = 86  # when its last segment reached the receiver, ms (-1: not yet)
# PBE-CC's sender (``senders/pbecc.py``)
X_PB_RATE = 87  # the UE's rate estimate the latest ACK carried, payload bytes per ms (0: none)
X_PB_MODE = 88  # 0: paced at the estimate; 1: BBR-like fallback (an Internet bottleneck)
X_PB_SINCE = 89  # the delay has been unexplained since this ms + 1 (0: it is explained)
X_B_PRTT_ROUND = 90  # BBR: a round started since ProbeRTT's 200 ms began (``m_probeRttRoundDone``)
X_LEN = 91
BBR_FILTER = 10  # rounds in BBR's max-bandwidth filter
BBR_SEND_RING = 1024  # ms of send-time records (``bw`` after the filter: 4 values per ms)

# -- per UE (float64 [B, U, U_LEN]) ------------------------------------------------------------
U_DIST = 0
U_MCS = 1  # MCS of the current channel (-1: out of coverage)
U_LAST_MCS = 2  # MCS of the latest new transport block (-1: none)
U_PF_AVG = 3  # PF scheduler's throughput average, bytes per TTI
U_HEAD_REM = 4  # bytes of the head packet still to send
U_RLC_BYTES = 5
U_CAP_SUM = 6  # sum of the capacity ring, bytes
U_HOL = 7  # HoL delay at the end of the latest slot, ms
U_HARQ = 8  # HARQ processes with retransmissions pending
U_NEW_TTI = 9  # new-TB bytes in the current slot (TTI)
U_RBS_TTI = 10  # RBs used in the current slot (TTI)
U_O_CAP = 11
U_O_TX = 12
U_O_HOLMAX = 13  # the largest HoL delay at a slot's end in the step, ms
U_O_DROPS = 14
U_O_TTIS = 15  # ms ticks of the step
U_LOS = 16  # NR: 1 in line of sight
U_SHADOW_Z = 17  # NR: shadow fading as a standard normal value (x sigma of the LOS state, dB)
U_BLOCKED = 18  # NR FR2: 1 while blocked
U_BLOCK_NEXT_MS = 19  # NR FR2: end of the current blockage sojourn
U_RETX_TTI = 20  # the current slot's allocation carries a HARQ retransmission
U_HQ = 21  # HARQ processes: HARQ_PROCS entries of (HQ_DUE, HQ_RBS, HQ_LEFT) from here
HARQ_PROCS = 8  # retransmission chains pending at once per UE (NR has 16 HARQ processes)
HQ_DUE = 0  # slot of the next retransmission
HQ_RBS = 1  # its RBs (those of the first transmission)
HQ_LEFT = 2  # retransmissions still to come (0: the process is free)
U_RT0 = U_HQ + 3 * HARQ_PROCS  # the UE's router (XCP, RCP at the eNB): RT_LEN values from here
# -- a router's state (RT_* from U_RT0 of a UE, or from BS_RT0 of the wired bottleneck) -------
RT_START = 0  # start of the current control interval, ms
RT_D = 1  # its length (the average RTT of the previous interval), ms (0: not started)
RT_IN = 2  # input traffic of the interval, bytes on the wire
RT_RTT_BYTES = 3  # of which bytes whose header carries an RTT
RT_SUM_RS = 4  # sum of rtt * s over those packets (ms bytes)
RT_SUM_RSC = 5  # sum of rtt * s / cwnd over those packets (ms)
RT_QMIN = 6  # XCP: the smallest queue of the interval (the persistent queue), bytes
RT_XIP = 7  # XCP: xi_p, the positive feedback factor of the interval
RT_XIN = 8  # XCP: xi_n, the negative feedback factor
RT_CAPACC = 9  # trace link: bytes of delivery opportunities in the interval
RT_RATE = 10  # RCP: the common rate R, bytes on the wire per ms (0: not set)
RT_PHI = 11  # XCP: the aggregate feedback phi of the latest interval, bytes
RT_C = 12  # the capacity the latest update used, bytes per ms
RT_LEN = 13
U_PB0 = U_RT0 + RT_LEN  # the UE's PBE-CC monitor (``ue_monitor.py``): PB_LEN values from here
#: A diagnostic nothing in the model reads: the largest RLC sojourn (arrival to the slot that
#: sends its last byte, ms) of the packets leaving the RLC in the current step (0 when it begins).
U_SOJ_MAX = U_PB0 + UM_LEN
U_LEN = U_SOJ_MAX + 1
#: The wired bottleneck's router in ``bqs``: after its own columns.
BS_RT0 = BS_COLS
#: ON/OFF UDP cross traffic at the wired bottleneck (``cross_traffic.py``): bytes not yet sent.
BS_UDP_CREDIT = BS_RT0 + RT_LEN
BS_WIDTH = BS_UDP_CREDIT + 1
#: Per UDP source from ``BS_WIDTH``: on (1) or off, its next switch (ms), the periods it has taken.
BS_UDP_COLS = 3

# -- per UE, integers (int64 [B, U, UI_LEN]) ---------------------------------------------------
UI_RLC_HEAD = 0  # RLC ring: head
UI_RLC_LEN = 1  # RLC ring: entries
UI_BSR = 2  # uplink buffer status reports of the latest TTIs, one bit each (bit 0: this TTI)
UI_HELD = 3  # ring entries from the head already transmitted, held for in-order delivery (HARQ)
UI_LEN = 4

# RLC ring entries (int64 [B, U, Q, R_LEN])
R_ARR = 0  # the slot (``t * P_SLOTS_PER_MS + s``) at whose start the packet arrived
R_FLOW = 1
R_SEQ = 2
R_SEND = 3
R_RETX = 4
R_REL = 5  # held packets: the slot of their in-order delivery
R_AIRLOST = 6  # held packets: 1 when their transport block failed every HARQ transmission
R_LEN = 7
# receiver state ring (int64 [B, F, L, V_LEN]), indexed by time
V_CUM = 0
V_HIGH = 1
V_UNIQ = 2
V_ACKS = 3
V_OWD = 4
V_LAST = 5
V_DUPACKS = 6
V_XR_CWND = 7  # XCP-r: the window the receiver's latest ACK carries, bytes
V_XR_EPOCH = 8  # XCP-r: and the sender's reset count it is synchronised to
V_SMP = 9  # ACKs that advanced the cumulative ACK: the ones ``V_OWD`` and ``V_LAST`` time
# Written every TTI, not only at uplink opportunities: the ACK stream as ns-3's UE sends it (an
# uplink grant in almost every TTI), which BBR's delivery-rate sampler follows.
V_UNIQ_RAW = 10
V_LAST_RAW = 11
V_LEN = 12
# explicit-feedback ring (float64 [B, F, L, FB_LEN]), indexed by time
FB_RATE = 0  # XRC's C_i at the eNB, Mbit/s
FB_HOL = 1  # XRC's HoL at the eNB, ms
FB_XCP = 2  # the router's XCP feedback of the flow so far (``X_RT_FB``), payload bytes
FB_RCP = 3  # the RCP rate of the flow's router, payload bytes per ms
FB_H_CWND = 4  # the congestion header the sender wrote at that time: cwnd, bytes
FB_H_RTT = 5  # and RTT, ms (0: none yet)
FB_H_EPOCH = 6  # XCP-r: and its reset count + 1 (the congestion flag, as a counter)
FB_PBE = 7  # PBE-CC: the UE's rate estimate for the flow, payload bytes per ms (``ue_monitor``)
FB_LEN = 8
# lost-segment ring entries (int64 [B, F, K, 2]): seq, state (``codes.LOST_*``)


@dataclass
class CellState:
    """Mutable state of ``B`` cells (see the module's column constants).

    Attributes:
        cs: ``[B, CS_LEN]`` clock and per-cell counters.
        rng: ``[B]`` counter-based generator state of each cell (splitmix64).
        fi: ``[B, F, I_LEN]`` integer flow state.
        fx: ``[B, F, X_LEN]`` real flow state.
        bw: ``[B, F, BBR_FILTER + 4 * BBR_SEND_RING]`` BBR's per-round maximum bandwidth, then
            per send ms the connection's delivery state (ms + 1, delivered, delivery time,
            first send time) for the per-packet rate samples.
        ue: ``[B, U, U_LEN]`` UE state.
        ui: ``[B, U, UI_LEN]`` RLC ring head and length, uplink report history.
        rlc: ``[B, U, Q, R_LEN]`` RLC packets in arrival order (the first ``UI_HELD``
            transmitted, waiting for HARQ and in-order delivery).
        capr: ``[B, U, W]`` the agent's per-TTI capacity ring.
        rcv: ``[B, F, L, V_LEN]`` receiver state by time (for the ACK path's delay).
        fbr: ``[B, F, L, FB_LEN]`` explicit feedback by time: XRC's rate and HoL at the eNB,
            the router's XCP feedback so far and RCP rate, the sender's congestion header.
        dl: ``[B, F, L, 4]`` new segments by eNB arrival time: from, to, send time, and how
            many of them left before the same TTI's retransmissions (``I_PRE_SEND``).
        rtx: ``[B, F, K, 3]`` retransmissions on their way: seq, eNB arrival, send time.
        lost: ``[B, F, K, 2]`` segments dropped at the RLC: seq, state.
        obs_flows: ``[B, F, 18]`` the step's flow observation.
        obs_ues: ``[B, U, 7]`` the step's UE observation.
        act: ``[B, F, 3]`` agent commands: cwnd bytes, pacing Mbit/s, 1 when new.
        bqs: ``[B, BS_COLS]`` the wired bottleneck: queue ring head and length, link, counters
            (``bottleneck.BS_*``).
        bq: ``[B, Q, BQ_LEN]`` the packets in the bottleneck's buffer (one slot without one).
        dr: ``[B, D]`` each cell's row of the run's draws (``cellgym.draws``, read, never
            drawn by the kernels): random moves, then UDP ON/OFF periods
            (``params.P_DRAW_*``; ``sim.draws_row``).
    """

    cs: np.ndarray
    rng: np.ndarray
    fi: np.ndarray
    fx: np.ndarray
    bw: np.ndarray
    ue: np.ndarray
    ui: np.ndarray
    rlc: np.ndarray
    capr: np.ndarray
    rcv: np.ndarray
    fbr: np.ndarray
    dl: np.ndarray
    rtx: np.ndarray
    lost: np.ndarray
    obs_flows: np.ndarray
    obs_ues: np.ndarray
    act: np.ndarray
    bqs: np.ndarray
    bq: np.ndarray
    dr: np.ndarray

    @classmethod
    def zeros(cls, params: FastSimParams, batch: int) -> CellState:
        """Allocate zeroed state for ``batch`` cells (``reset_cells`` initialises it)."""
        f, u = params.num_flows, params.num_ues
        ring, q, w = params.ring_len, params.rlc_slots, params.spec.xrc_window_ttis
        return cls(
            cs=np.zeros((batch, CS_LEN), np.int64),
            rng=np.zeros(batch, np.uint64),
            fi=np.zeros((batch, f, I_LEN), np.int64),
            fx=np.zeros((batch, f, X_LEN)),
            bw=np.zeros((batch, f, BBR_FILTER + 4 * BBR_SEND_RING)),
            ue=np.zeros((batch, u, U_LEN)),
            ui=np.zeros((batch, u, UI_LEN), np.int64),
            rlc=np.zeros((batch, u, q, R_LEN), np.int64),
            capr=np.zeros((batch, u, w)),
            rcv=np.zeros((batch, f, ring, V_LEN), np.int64),
            fbr=np.zeros((batch, f, ring, FB_LEN)),
            dl=np.zeros((batch, f, ring, 4), np.int64),
            rtx=np.zeros((batch, f, LOST_SLOTS, 3), np.int64),
            lost=np.zeros((batch, f, LOST_SLOTS, 2), np.int64),
            obs_flows=np.zeros((batch, f, 18)),
            obs_ues=np.zeros((batch, u, 7)),
            act=np.zeros((batch, f, 3)),
            bqs=np.zeros((batch, BS_WIDTH + BS_UDP_COLS * params.spec.udp_sources)),
            bq=np.zeros((batch, params.bottleneck_slots, BQ_LEN), np.int64),
            dr=np.zeros((batch, params.draws_len)),
        )

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays in field order (the kernel's argument order)."""
        return tuple(getattr(self, fl.name) for fl in fields(self))

    def select(self, index: int) -> CellState:
        """A copy of one cell's state as a batch of one."""
        return CellState(*(a[index : index + 1].copy() for a in self.arrays()))
