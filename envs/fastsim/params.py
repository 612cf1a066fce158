"""Frozen parameters of the fast simulator, built from the one ``ScenarioSpec`` both backends read.

``FastSimParams.from_spec(spec)`` turns a scenario into plain arrays that the compiled kernels
(``envs.fastsim.driver``) read: a vector of cell-wide scalars (``P_*`` indices), a ``[F, FC_*]``
matrix of flow settings and the link-adaptation tables. Model knobs that the scenario does not
name (air-interface delays, HARQ block error rate, scheduler, the calibrated SINR -> CQI
thresholds) are fields with defaults calibrated against ns-3 (docs/calibration/README.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from cellgym.draws import num_moves, udp_periods_per_source
from cellgym.fields import SEGMENT_BYTES
from cellgym.scenario import ScenarioSpec, SpecError
from cellgym.traces import resolve_buffers
from cellgym.vocab import NR_PROPAGATION_SCENARIOS, TRACE_SOURCES
from envs.fastsim import nr
from envs.fastsim.bottleneck import bottleneck_params
from envs.fastsim.codes import (
    LOS_CODES,
    MOBILITY_CODES,
    PROPAGATION_CODES,
    RECOVERY_CODES,
    SCHEDULER_CODES,
    TRAFFIC_CODES,
    UPLINK_CODES,
    XCPR_QUEUE_MS,
    cca_code,
)
from envs.fastsim.knobs import KNOB_LENGTHS, KNOB_RANGES, check_knob_ranges
from envs.fastsim.lte import (
    CQI_SINR_THRESHOLDS_DB,
    LTE_UL_LEAD_MS,
    MCS_FOR_CQI,
    PDCP_PDU_BYTES,
    rbg_size,
    sinr_db,
    tbs_bytes,
    usable_rbs,
)
from envs.fastsim.pbe_params import PB_LEN, PbeKnobs, pbe_knobs, pbe_scalars
from envs.fastsim.router_params import RP_LEN, RouterKnobs, check_router, router_scalars
from envs.fastsim.tables_nr import H_UT_M, SCENARIO_TABLE
from envs.fastsim.wired_params import wired_values

#: MAC schedulers (``FastSimParams.scheduler``; codes in ``codes.SCHEDULER_CODES``).
SCHEDULERS: tuple[str, ...] = tuple(SCHEDULER_CODES)
#: Loss-recovery models of the senders (``FastSimParams.recovery``).
RECOVERY_MODELS: tuple[str, ...] = tuple(RECOVERY_CODES)
#: Uplink (ACK path) models (``FastSimParams.uplink``).
UPLINK_MODELS: tuple[str, ...] = tuple(UPLINK_CODES)
#: Longest ``FastSimParams.ul_grant_ms`` (the UE's report history is one int64 bit mask).
MAX_UL_GRANT_MS = 62

# -- indices of the scalar parameter vector ---------------------------------------------------
P_NUM_RBS = 0
P_USABLE_RBS = 1
P_RBG_SIZE = 2
P_RLC_CAP_BYTES = 3
P_PDU_BYTES = 4
P_TB_OVERHEAD_BYTES = 5
P_SDU_OVERHEAD_BYTES = 6
P_AIR_DL_MS = 7
P_AIR_UL_MS = 8
P_WINDOW_TTIS = 9
P_ACTIVE_TIMEOUT_MS = 10
P_MOBILITY = 11
P_MOBILITY_PERIOD_MS = 12
P_MIN_DISTANCE_M = 13
P_MAX_DISTANCE_M = 14
P_SCHEDULER = 15
P_HARQ_BLER = 16
P_SIM_MS = 17
P_DELACK_COUNT = 18
P_DELACK_TIMEOUT_MS = 19
P_MIN_RTO_MS = 20
P_INIT_CWND_SEGS = 21
P_PF_TAU_TTIS = 22
P_XRC_BUDGET_MS = 23
P_XRC_RAMP_RTTS = 24
P_XRC_UNFAIR_RTTS = 25
P_XRC_UNFAIR_ALPHA = 26
P_SINR_AT_1KM_DB = 27
P_SINR_SLOPE_DB = 28
P_ATTACH_MS = 29
P_START_OFFSETS = 30  # 1: flows start at the run's drawn offsets (``cellgym.draws``), 0: none
P_DUPTHRESH = 31
P_SEG_BYTES = 32
P_STEP_MS = 33
P_APP_CHUNK_BYTES = 34
P_VIDEO_TICK_MS = 35
P_UL_PERIOD_MS = 36
#: Entries of each flow's loss record and retransmission queue (a power of two): every segment of
#: a full receive window (``FastSimParams.rcv_buf_bytes``) can be lost and retransmitted.
LOST_SLOTS = 4096


def knob_ranges() -> dict[str, Any]:
    """Every numeric knob's range (``knobs.KNOB_RANGES`` and the two bounded by model sizes)."""
    return {
        **KNOB_RANGES,
        "ul_grant_ms": (0, MAX_UL_GRANT_MS),
        "rcv_buf_bytes": (2 * SEGMENT_BYTES, (LOST_SLOTS - 1) * SEGMENT_BYTES),
    }


P_HYSTART_DELAY = 37
P_RWND_SEGS = 38
P_RECOVERY = 39  # codes.RECOVERY_*: classic (window to ssthresh), ns-3.44 (PRR, re-entry, ...)
P_UPLINK = 40  # codes.UPLINK_*: periodic opportunities, buffer status report -> grant
P_UL_GRANT_MS = 41
# -- the slot and the NR cell (LTE: one 1 ms slot per ms, no NR channel) ------------------------
P_SLOTS_PER_MS = 42  # slots of the MAC per 1 ms tick of the shared clock (NR: 2**numerology)
P_CELL_NR = 43  # 1 for an NR cell (TR 38.901 channel), 0 for LTE (Okumura-Hata)
P_NR_LINK_DB = 44  # transmit power + beamforming gain - noise over the carrier, dB
P_NR_SCENARIO = 45  # codes.PROP_*
P_NR_LOS_MODE = 46  # codes.LOS_*
P_NR_FC_GHZ = 47
P_NR_H_BS = 48
P_NR_H_UT = 49
P_NR_SF_LOS = 50  # shadow fading sigma, dB (0: shadowing off)
P_NR_SF_NLOS = 51
P_NR_DCORR_LOS = 52  # shadowing decorrelation distance, m
P_NR_DCORR_NLOS = 53
P_NR_BLOCK_LOSS_DB = 54  # FR2 blockage loss (0: no blockage process)
P_NR_BLOCKED_MS = 55  # mean blocked sojourn
P_NR_CLEAR_MS = 56  # mean unblocked sojourn
P_HARQ_RTT_SLOTS = 57  # first transmission -> retransmission of a failed TB
P_HARQ_MAX_TX = 58  # transmissions of a TB at most (then the TB is lost)
P_HARQ_BLER_RETX = 59  # failure probability of a retransmission (soft combining)
P_NR_NLOS_LOSS_DB = 60  # array gain lost without a line of sight, dB
P_TRACE = 61  # 1: the cell's capacity per slot is a trace (``trace_capacity``), 0: the channel's
P_ROUTER = 62  # the explicit-feedback router's (XCP, RCP) values from here: ``router_params.RP_*``
P_ACK_LOSS = P_ROUTER + RP_LEN  # ACK loss probability on the reverse path (``ack_loss.py``)
P_WIRED_BPMS = P_ACK_LOSS + 1  # a wired cell's bytes per ms (``wired_params``)
P_PBE = P_WIRED_BPMS + 1  # PBE-CC's values from here: ``pbe_params.PB_*``
# -- the run's draws (``cellgym.draws``) in the cell's row of the draws table ``dr`` -----------
P_DRAW_MOVES = P_PBE + PB_LEN  # random moves K: ``dr[b, k * U + u]``, UE u after move k + 1
P_DRAW_UDP = P_DRAW_MOVES + 1  # ON/OFF periods (ms) per UDP source, source by source
P_DRAW_UDP0 = P_DRAW_UDP + 1  # where they begin in ``dr`` (``K * U``)
P_UL_LEAD_MS = P_DRAW_UDP0 + 1  # ``FastSimParams.ul_lead_ms`` of the cell
P_LEN = P_UL_LEAD_MS + 1

# -- columns of the flow settings matrix ------------------------------------------------------
FC_UE = 0
FC_CCA = 1
FC_TRAFFIC = 2
FC_START_MS = 3
FC_STOP_MS = 4
FC_D_DOWN_MS = 5
FC_D_SRV_UP_MS = 6
FC_D_UP_TOTAL_MS = 7
FC_SIZE_BYTES = 8
FC_VIDEO_RATE_BPMS = 9
FC_VIDEO_ON_MS = 10
FC_VIDEO_PERIOD_MS = 11
FC_SSTHRESH_BYTES = 12
FC_LEN = 13


@dataclass(frozen=True)
class FastSimParams:
    """Everything the fast simulator's transition depends on, apart from its state and RNG.

    Attributes:
        spec: The scenario (shared with the ns-3 backend).
        air_dl_ms: eNB RLC -> UE application delay of a transport block, in ms (scheduling,
            PHY and decoding).
        air_ul_ms: UE -> eNB delay of an uplink ACK from its uplink transmission, in ms
            (``None``: the uplink model's calibrated value, 7 for ``periodic``, 4 for ``bsr``).
        uplink: How ACKs get uplink transmissions (``None``: ``bsr`` on an LTE cell,
            ``periodic`` on NR and wired cells). ``bsr``, as ns-3's ``LteUeMac`` with the PF
            scheduler: in every TTI in which the UE queued a new ACK it reports its buffer
            (``m_bsrPeriodicity`` 1 ms), the report brings a grant ``ul_grant_ms`` later, and a
            grant carries every ACK queued by then; the waits count in the RTT samples, and
            CUBIC's HyStart reads the smoothed RTT, as ns-3's ``PktsAcked(m_srtt)``. An ACK
            after an idle uplink waits ``ul_grant_ms`` and leaves with the ACKs queued
            meanwhile; a steady ACK stream leaves in (almost) every TTI. ``periodic``: an
            empirical stand-in, opportunities every ``ul_period_ms`` (docs/fastsim.md).
        ul_grant_ms: Buffer status report -> uplink transmission, in ms (``bsr``: an ACK after
            an idle uplink; both models: the SYN-ACK, an idle UE's first packet).
        rcv_buf_bytes: The receive window (ns-3's ``SndBufSize`` and ``RcvBufSize``, 4 MiB):
            it bounds the segments one window can lose (``LOST_SLOTS - 1`` at most).
        ul_period_ms: ``periodic`` uplink: transmission opportunities this far apart.
        hystart_delay: CUBIC's HyStart exits slow start on an RTT increase (ns-3's
            ``HyStartDetect`` includes DELAY).
        recovery: Loss recovery of the senders. ``ns3_prr`` (default): ns-3.44's
            ``TcpSocketBase``/``TcpTxBuffer``/``TcpPrrRecovery`` code paths: PRR with its
            ``uint32_t`` arithmetic (a short burst, then silence until in flight reaches
            ssthresh), in flight counting SACKed retransmissions, re-entry into recovery on a
            duplicate ACK over a lost-marked head after recovery ends, a partial ACK's
            retransmission outside the window, the fast retransmission behind the ACKs'
            new segments before it, the RTO restarted only by the first partial ACK, no growth
            on ACKs with new SACK information, BBR's conservation to the next round start.
            ``classic``: the earlier model (ssthresh on entry; docs/calibration/README.md).
        harq_bler: New-TB failure probability (0: no fading, as ns-3's static LTE cell).
        scheduler: LTE: ``pf`` (proportional fair, ns-3's ``PfFfMacScheduler``) or ``rr`` (an NR
            cell uses the scenario's ``cell.scheduler``).
        delack_count: Segments per delayed ACK (ns-3 ``TcpSocket::DelAckCount``).
        delack_timeout_ms: Delayed-ACK timeout, in ms.
        min_rto_ms: Minimum retransmission timeout, in ms (ns-3: 1 s).
        init_cwnd_segs: Initial window in segments (ns-3: 10).
        pf_tau_ttis: Time constant of the PF scheduler's throughput average, in TTIs.
        xrc_budget_ms: XRC sender's queueing-delay budget, in ms.
        xrc_ramp_rtts: RTTs in which XRC's window reaches twnd from below.
        xrc_unfair_rtts: RTTs of high delay at twnd before XRC's unfairness mode.
        xrc_unfair_alpha: XRC's growth in the unfairness mode, segments per RTT.
        explicit: Knobs of XCP's and RCP's router (``router_params.RouterKnobs`` or a mapping;
            None: the scenario's ``router`` section, ``cellgym.router_spec.RouterSpec``).
        pbe: PBE-CC's knobs (``pbe_params.PbeKnobs`` or a mapping).
        tb_overhead_bytes: RLC/MAC header bytes per transport block.
        sdu_overhead_bytes: Extra RLC header bytes per additional SDU in a transport block.
        attach_ms: Earliest flow start (the UE's attach), in ms.
        start_offsets: Flows start at the run's drawn offsets (``cellgym.draws``, 0-99 ms, as
            on ns-3); False starts them at their start time (a run replaying another's starts).
        cqi_thresholds_db: Lowest SINR of CQI 1..15, in dB.
        enb_power_dbm: eNB transmit power.
        noise_figure_db: UE noise figure.
        harq_rtt_ttis: LTE: first transmission -> HARQ retransmission, in TTIs (FDD: 8).
        ul_lead_ms: How long before its slot a packet reaches the base station, counted in
            the HoL delay and the RLC sojourns (``None``: ``lte.LTE_UL_LEAD_MS`` on LTE, else 0).
        harq_max_tx: Transmissions of a transport block at most; when all fail it is lost (RLC
            UM: its packets are lost to TCP).
        harq_bler_retx: Failure probability of a retransmission (soft combining).
        nr_bler_target: NR: BLER of first transmissions, the link adaptation's target (outer
            loop link adaptation holds it; docs/fastsim.md, "The NR cell").
        nr_harq_rtt_slots: NR: first transmission -> retransmission, in slots.
        nr_shannon_alpha, nr_mcs_offset_db: NR SINR -> MCS map: the lowest SINR of an MCS is
            10 log10(2^(SE / alpha) - 1) + offset dB (TR 36.942 A.2's attenuated Shannon bound).
        nr_ctrl_symbols, nr_dmrs_re, nr_xoverhead: NR overhead per PRB and slot: PDCCH symbols
            of 14, DMRS resource elements, TS 38.214's xOverhead (0, 6, 12 or 18).
        nr_layers: NR MIMO layers of the TBS (TS 38.214's v).
        nr_tx_power_dbm, nr_noise_figure_db: NR gNB transmit power, UE noise figure.
        nr_beam_gain_fr1_db, nr_beam_gain_fr2_db: NR combined antenna/beamforming gain (the ns-3
            cell's 4x4 gNB and 1x2 UE isotropic arrays: 10 log10(16) + 10 log10(2) = 15 dB).
        nr_nlos_loss_db: NR loss added in NLOS, per TR 38.901 scenario (UMi, UMa, RMa): array
            gain lost because 5G-LENA's ideal direct-path beam points along a blocked path while
            the channel's scattered paths arrive off the beam, and whatever else separates this
            model's NLOS link from 5G-LENA's (fitted to the ns-3 cell, XRC flow throughput).
        nr_shadowing: NR log-normal shadowing (TR 38.901 sigma per scenario) on or off.
        nr_block_loss_db: FR2 blockage loss while blocked (0: no blockage process).
        nr_blocked_mean_ms, nr_clear_mean_ms: FR2 blockage: mean blocked / unblocked sojourn.
        nr_air_dl_ms, nr_air_ul_ms, nr_ul_period_ms: NR's ``air_dl_ms``, ``air_ul_ms`` and
            ``ul_period_ms`` (placeholders until calibrated against 5G-LENA).
    """

    spec: ScenarioSpec
    air_dl_ms: int = 3
    air_ul_ms: int | None = None
    uplink: str | None = None
    ul_grant_ms: int = 7
    ul_period_ms: int = 4
    rcv_buf_bytes: int = 4 * 1024 * 1024
    hystart_delay: bool = True
    recovery: str = "ns3_prr"
    harq_bler: float = 0.0
    scheduler: str = "pf"
    delack_count: int = 2
    delack_timeout_ms: int = 200
    min_rto_ms: int = 1000
    init_cwnd_segs: int = 10
    pf_tau_ttis: float = 99.0
    xrc_budget_ms: float = 10.0
    xrc_ramp_rtts: float = 2.0
    xrc_unfair_rtts: float = 10.0
    xrc_unfair_alpha: float = 10.0
    explicit: RouterKnobs | None = None
    pbe: PbeKnobs | None = None
    tb_overhead_bytes: int = 3
    sdu_overhead_bytes: int = 2
    attach_ms: int = 100
    start_offsets: bool = True
    cqi_thresholds_db: tuple[float, ...] = field(default=CQI_SINR_THRESHOLDS_DB)
    enb_power_dbm: float = 30.0
    noise_figure_db: float = 9.0
    harq_rtt_ttis: int = 8
    ul_lead_ms: float | None = None
    harq_max_tx: int = 4
    harq_bler_retx: float = 0.01
    nr_bler_target: float = 0.1
    nr_harq_rtt_slots: int = 4
    nr_shannon_alpha: float = 0.75
    nr_mcs_offset_db: float = 0.0
    nr_ctrl_symbols: int = 2
    nr_dmrs_re: int = 12
    nr_xoverhead: int = 6
    nr_layers: int = 1
    nr_tx_power_dbm: float = 30.0
    nr_noise_figure_db: float = 9.0
    nr_beam_gain_fr1_db: float = 15.0
    nr_beam_gain_fr2_db: float = 15.0
    nr_nlos_loss_db: tuple[float, float, float] = (8.0, 20.0, -3.0)
    nr_shadowing: bool = False
    nr_block_loss_db: float = 25.0
    nr_blocked_mean_ms: float = 250.0
    nr_clear_mean_ms: float = 2000.0
    nr_air_dl_ms: int = 2
    nr_air_ul_ms: int = 3
    nr_ul_period_ms: int = 2

    def __post_init__(self) -> None:
        """Validate the model knobs and the scenario's fast-simulator support."""
        if self.scheduler not in SCHEDULERS:
            raise SpecError(f"fastsim.scheduler={self.scheduler!r}: choose one of {SCHEDULERS}")
        if self.recovery not in RECOVERY_MODELS:
            raise SpecError(f"fastsim.recovery={self.recovery!r}: choose one of {RECOVERY_MODELS}")
        if self.uplink is None:
            object.__setattr__(
                self, "uplink", "bsr" if self.spec.cell.type == "lte" else "periodic"
            )
        if self.air_ul_ms is None:
            object.__setattr__(self, "air_ul_ms", 7 if self.uplink == "periodic" else 4)
        if self.ul_lead_ms is None:
            lte = self.spec.cell.type == "lte"
            object.__setattr__(self, "ul_lead_ms", LTE_UL_LEAD_MS if lte else 0.0)
        if self.uplink not in UPLINK_MODELS:
            raise SpecError(f"fastsim.uplink={self.uplink!r}: choose one of {UPLINK_MODELS}")
        check_knob_ranges(self, knob_ranges(), "fastsim")
        for name, length in KNOB_LENGTHS.items():
            if len(getattr(self, name)) != length:
                raise SpecError(f"fastsim.{name} needs {length} values")
        for i, f in enumerate(self.spec.flows):
            cca_code(f.cca, f"scenario.flows[{i}].cca")  # SpecError if the fast model has none
        if self.spec.buffer_bdp is not None:  # Zeus buffer regime -> packets
            object.__setattr__(self, "spec", resolve_buffers(self.spec))
        explicit = self.spec.router.knobs() if self.explicit is None else self.explicit
        object.__setattr__(self, "explicit", check_router(explicit, self.spec))
        _ = self._bottleneck  # a bottleneck trace's file and content, checked now

    # -- the cell type ------------------------------------------------------------------------
    @property
    def is_nr(self) -> bool:
        """An NR cell (slots of the numerology, TR 38.901 channel, TS 38.214 link)."""
        return self.spec.cell.type == "nr"

    @property
    def slots_per_ms(self) -> int:
        """Scheduling slots per 1 ms tick: 1 (LTE TTI) or 2**numerology (NR)."""
        return round(1e-3 / self.spec.cell.slot_s)

    @property
    def num_prbs(self) -> int:
        """Resource blocks of the carrier (LTE: ``cell.rbs``; NR: TS 38.101's N_RB)."""
        c = self.spec.cell
        return nr.num_prbs(c.bandwidth_mhz, c.numerology, c.frequency_ghz) if self.is_nr else c.rbs

    @property
    def delays_ms(self) -> tuple[int, int, int]:
        """``(air_dl_ms, air_ul_ms, ul_period_ms)`` of the cell type."""
        if self.spec.cell.type == "wired":
            return 0, 0, 1  # no air interface (``wired``)
        if self.is_nr:
            return self.nr_air_dl_ms, self.nr_air_ul_ms, self.nr_ul_period_ms
        return self.air_dl_ms, int(self.air_ul_ms or 0), self.ul_period_ms

    @property
    def trace_driven(self) -> bool:
        """The channel is a capacity trace (``channel.source`` mahimahi/irish5g/synthetic)."""
        return self.spec.channel.source in TRACE_SOURCES

    @property
    def first_tx_bler(self) -> float:
        """BLER of new transport blocks: 0 on a trace (the trace is the delivered capacity)."""
        if self.trace_driven:
            return 0.0
        return self.nr_bler_target if self.is_nr else self.harq_bler

    @property
    def harq_max_pending(self) -> int:
        """Packets a UE's HARQ/in-order delivery can hold beyond the RLC buffer."""
        bler = self.first_tx_bler
        if bler <= 0:
            return 0
        rtt = self.nr_harq_rtt_slots if self.is_nr else self.harq_rtt_ttis
        most_tb = float(self.tbs_table().max())
        return int((most_tb / PDCP_PDU_BYTES + 2) * (rtt * self.harq_max_tx + 2))

    @classmethod
    def from_spec(cls, spec: ScenarioSpec, **knobs: object) -> FastSimParams:
        """Build from a scenario (a ``ScenarioSpec`` or a mapping) and optional model knobs."""
        return cls(spec=ScenarioSpec.from_config(spec), **knobs)  # type: ignore[arg-type]

    # -- derived sizes ------------------------------------------------------------------------
    @property
    def num_flows(self) -> int:
        """Flows in the cell."""
        return len(self.spec.flows)

    @property
    def num_ues(self) -> int:
        """UEs in the cell."""
        return self.spec.num_ues

    @property
    def step_ttis(self) -> int:
        """TTIs (ms) per environment step."""
        return int(self.spec.step_ms)

    @property
    def sim_ms(self) -> int:
        """Episode length in ms (a whole number of steps)."""
        return self.spec.num_steps * self.step_ttis

    @property
    def rlc_slots(self) -> int:
        """Packet slots of the RLC ring buffer (more than the buffer can hold)."""
        return int(self.spec.rlc_buffer_pkts * 1500 // PDCP_PDU_BYTES) + 2 + self.harq_max_pending

    @property
    def ring_len(self) -> int:
        """Length of the per-flow delay rings (a power of two above the longest delay)."""
        longest = 0
        for f in self.spec.flows:
            d = self._delay_ms(f.delay_ms)
            air_dl, air_ul, ul_period = self.delays_ms
            ul_wait = ul_period + self.ul_grant_ms
            longest = max(longest, d + air_dl + air_ul + ul_wait + 2)
        longest += XCPR_QUEUE_MS if any(f.cca == "xcpr" for f in self.spec.flows) else 0
        return 1 << int(math.ceil(math.log2(longest + 2)))

    @cached_property
    def _bottleneck(self) -> tuple[np.ndarray, int]:
        return bottleneck_params(self.spec, self.rcv_buf_bytes // SEGMENT_BYTES)

    def bottleneck_table(self) -> np.ndarray:
        """The wired bottleneck's parameters and trace (``envs.fastsim.bottleneck.BN_*``)."""
        return self._bottleneck[0]

    @property
    def bottleneck_slots(self) -> int:
        """Packet slots of the bottleneck's queue ring (1 without a bottleneck)."""
        return self._bottleneck[1]

    def _delay_ms(self, extra_ms: float) -> int:
        return int(round(self.spec.server_delay_ms + extra_ms))

    # -- packed arrays ------------------------------------------------------------------------
    def scalars(self) -> np.ndarray:
        """The ``P_*`` vector of cell-wide scalars."""
        s = self.spec
        p = np.zeros(P_LEN)
        air_dl, air_ul, ul_period = self.delays_ms
        n_prb = self.num_prbs
        p[P_NUM_RBS] = n_prb
        p[P_USABLE_RBS] = n_prb if self.is_nr else usable_rbs(n_prb)
        p[P_RBG_SIZE] = nr.rbg_size(n_prb) if self.is_nr else rbg_size(n_prb)
        p[P_RLC_CAP_BYTES] = s.rlc_buffer_pkts * 1500
        p[P_PDU_BYTES] = PDCP_PDU_BYTES
        p[P_TB_OVERHEAD_BYTES] = self.tb_overhead_bytes
        p[P_SDU_OVERHEAD_BYTES] = self.sdu_overhead_bytes
        p[P_AIR_DL_MS] = air_dl
        p[P_AIR_UL_MS] = air_ul
        p[P_WINDOW_TTIS] = s.xrc_window_ttis
        p[P_ACTIVE_TIMEOUT_MS] = s.active_timeout_ms
        p[P_MOBILITY] = MOBILITY_CODES[s.channel.mobility]
        p[P_MOBILITY_PERIOD_MS] = round(s.channel.mobility_period_s * 1000.0)
        p[P_MIN_DISTANCE_M] = s.channel.min_distance_m
        p[P_MAX_DISTANCE_M] = s.channel.max_distance_m
        p[P_SCHEDULER] = SCHEDULER_CODES[s.cell.scheduler if self.is_nr else self.scheduler]
        p[P_HARQ_BLER] = self.first_tx_bler
        p[P_SIM_MS] = self.sim_ms
        p[P_DELACK_COUNT] = self.delack_count
        p[P_DELACK_TIMEOUT_MS] = self.delack_timeout_ms
        p[P_MIN_RTO_MS] = self.min_rto_ms
        p[P_INIT_CWND_SEGS] = self.init_cwnd_segs
        p[P_PF_TAU_TTIS] = self.pf_tau_ttis
        p[P_XRC_BUDGET_MS] = self.xrc_budget_ms
        p[P_XRC_RAMP_RTTS] = self.xrc_ramp_rtts
        p[P_XRC_UNFAIR_RTTS] = self.xrc_unfair_rtts
        p[P_XRC_UNFAIR_ALPHA] = self.xrc_unfair_alpha
        # SINR(d) = SINR(1 km) - slope * log10(1 km / d), from the same path-loss formula.
        p[P_SINR_AT_1KM_DB] = sinr_db(1000.0, self.enb_power_dbm, s.cell.rbs, self.noise_figure_db)
        p[P_SINR_SLOPE_DB] = 44.9 - 6.55 * math.log10(30.0)
        p[P_ATTACH_MS] = self.attach_ms
        p[P_START_OFFSETS] = 1.0 if self.start_offsets else 0.0
        p[P_DUPTHRESH] = 3
        p[P_SEG_BYTES] = SEGMENT_BYTES
        p[P_STEP_MS] = self.step_ttis
        p[P_APP_CHUNK_BYTES] = 64 * 1024
        p[P_VIDEO_TICK_MS] = 10
        p[P_UL_PERIOD_MS] = ul_period
        p[P_RWND_SEGS] = self.rcv_buf_bytes // SEGMENT_BYTES
        p[P_HYSTART_DELAY] = 1.0 if self.hystart_delay else 0.0
        p[P_RECOVERY] = RECOVERY_CODES[self.recovery]
        p[P_UPLINK] = UPLINK_CODES[self.uplink]
        p[P_UL_GRANT_MS] = self.ul_grant_ms
        p[P_SLOTS_PER_MS] = self.slots_per_ms
        p[P_UL_LEAD_MS] = self.ul_lead_ms
        p[P_HARQ_RTT_SLOTS] = self.nr_harq_rtt_slots if self.is_nr else self.harq_rtt_ttis
        p[P_HARQ_MAX_TX] = self.harq_max_tx
        p[P_HARQ_BLER_RETX] = self.harq_bler_retx
        p[P_ROUTER : P_ROUTER + RP_LEN] = router_scalars(self.explicit, s)
        p[P_ACK_LOSS] = s.ack_loss
        wired = wired_values(s.cell)
        if wired is not None:  # a wired last hop: no HARQ, no RLC/MAC headers
            p[P_WIRED_BPMS], p[P_UPLINK] = wired
            p[[P_HARQ_BLER, P_HARQ_BLER_RETX, P_TB_OVERHEAD_BYTES, P_SDU_OVERHEAD_BYTES]] = 0.0
        p[P_PBE : P_PBE + PB_LEN] = pbe_scalars(pbe_knobs(self.pbe), s, self.slots_per_ms)
        if self.is_nr:
            self._nr_scalars(p, n_prb)
        p[P_DRAW_MOVES] = num_moves(s)
        p[P_DRAW_UDP] = udp_periods_per_source(s)
        p[P_DRAW_UDP0] = num_moves(s) * s.num_ues
        if self.trace_driven:
            # The trace is the channel: no blockage process of the model's own on top of it.
            p[P_TRACE] = 1.0
            p[P_NR_BLOCK_LOSS_DB] = 0.0
        return p

    def _nr_scalars(self, p: np.ndarray, n_prb: int) -> None:
        c = self.spec.cell
        fr2 = c.frequency_ghz >= 24.0
        sc = SCENARIO_TABLE[c.propagation]
        gain = self.nr_beam_gain_fr2_db if fr2 else self.nr_beam_gain_fr1_db
        noise = nr.noise_dbm(n_prb, c.numerology, self.nr_noise_figure_db)
        p[P_CELL_NR] = 1.0
        p[P_NR_LINK_DB] = self.nr_tx_power_dbm + gain - noise
        p[P_NR_SCENARIO] = PROPAGATION_CODES[c.propagation]
        p[P_NR_LOS_MODE] = LOS_CODES[c.los]
        p[P_NR_FC_GHZ] = c.frequency_ghz
        p[P_NR_H_BS] = sc["h_bs"]
        p[P_NR_H_UT] = H_UT_M
        p[P_NR_SF_LOS] = sc["sf_los"] if self.nr_shadowing else 0.0
        p[P_NR_SF_NLOS] = sc["sf_nlos"] if self.nr_shadowing else 0.0
        p[P_NR_DCORR_LOS] = sc["dcorr_los"]
        p[P_NR_DCORR_NLOS] = sc["dcorr_nlos"]
        p[P_NR_BLOCK_LOSS_DB] = self.nr_block_loss_db if fr2 else 0.0
        p[P_NR_NLOS_LOSS_DB] = self.nr_nlos_loss_db[NR_PROPAGATION_SCENARIOS.index(c.propagation)]
        p[P_NR_BLOCKED_MS] = self.nr_blocked_mean_ms
        p[P_NR_CLEAR_MS] = self.nr_clear_mean_ms

    def flow_config(self) -> np.ndarray:
        """The ``[F, FC_*]`` flow settings."""
        s = self.spec
        air_dl, air_ul, _ = self.delays_ms
        fc = np.zeros((self.num_flows, FC_LEN))
        for i, f in enumerate(s.flows):
            d_srv = self._delay_ms(f.delay_ms)
            fc[i, FC_UE] = f.ue
            fc[i, FC_CCA] = cca_code(f.cca)
            fc[i, FC_TRAFFIC] = TRAFFIC_CODES[f.traffic]
            fc[i, FC_START_MS] = max(round(f.start_s * 1000.0), self.attach_ms)
            fc[i, FC_STOP_MS] = -1.0 if f.stop_s is None else round(f.stop_s * 1000.0)
            fc[i, FC_D_DOWN_MS] = d_srv
            fc[i, FC_D_SRV_UP_MS] = d_srv
            fc[i, FC_D_UP_TOTAL_MS] = d_srv + air_dl + air_ul
            fc[i, FC_SIZE_BYTES] = f.size_bytes
            fc[i, FC_VIDEO_RATE_BPMS] = f.video_rate_mbps * 1e6 / 8 / 1000.0
            fc[i, FC_VIDEO_ON_MS] = round(f.video_on_s * 1000.0)
            fc[i, FC_VIDEO_PERIOD_MS] = round(f.video_period_s * 1000.0)
            fc[i, FC_SSTHRESH_BYTES] = f.ssthresh_segments * SEGMENT_BYTES
        return fc

    def tbs_table(self) -> np.ndarray:
        """``[MCS, RBs + 1]`` transport block bytes (per TTI or slot) by MCS and RB count."""
        if self.is_nr:
            n_re = nr.re_per_prb(self.nr_ctrl_symbols, self.nr_dmrs_re, self.nr_xoverhead)
            return nr.tbs_table_bytes(self.spec.cell, n_re, self.nr_layers)
        n = self.spec.cell.rbs
        t = np.zeros((29, n + 1))
        for mcs in range(29):
            for nprb in range(1, n + 1):
                t[mcs, nprb] = tbs_bytes(mcs, nprb)
        return t

    def cqi_table(self) -> np.ndarray:
        """``[2, 16]``: row 0 the SINR threshold of CQI 1..15 (index 0 unused), row 1 its MCS.

        NR: ``[2, MCS + 1]``, the lowest SINR of MCS 0, 1, ... (``nr.sinr_thresholds_db``).
        """
        if self.is_nr:
            c = self.spec.cell
            thr = nr.sinr_thresholds_db(c.mcs_table, self.nr_shannon_alpha, self.nr_mcs_offset_db)
            t = np.zeros((2, len(thr) + 1))
            t[0, 0] = -np.inf
            t[0, 1:] = thr
            t[1, 1:] = np.arange(len(thr))
            return t
        t = np.zeros((2, 16))
        t[0, 0] = -np.inf
        t[0, 1:] = self.cqi_thresholds_db
        t[1, :] = MCS_FOR_CQI
        return t

    @property
    def draws_len(self) -> int:
        """Length of a cell's row of the draws table (random moves, then UDP periods)."""
        s = self.spec
        return num_moves(s) * s.num_ues + udp_periods_per_source(s) * s.udp_sources

    def initial_distances(self) -> np.ndarray:
        """``[U]`` initial distances in metres."""
        return np.asarray(self.spec.ue_distances(), dtype=np.float64)
