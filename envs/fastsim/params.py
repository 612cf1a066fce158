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

import numpy as np

from cellgym.fields import SEGMENT_BYTES
from cellgym.scenario import ScenarioSpec, SpecError
from cellgym.traces import check_wired
from envs.fastsim.codes import (
    MOBILITY_CODES,
    RECOVERY_CODES,
    SCHEDULER_CODES,
    TRAFFIC_CODES,
    UPLINK_CODES,
    cca_code,
)
from envs.fastsim.tables import MCS_TO_ITBS_DL, TBS_BITS

#: MAC schedulers (``FastSimParams.scheduler``; codes in ``codes.SCHEDULER_CODES``).
SCHEDULERS: tuple[str, ...] = tuple(SCHEDULER_CODES)
#: Loss-recovery models of the senders (``FastSimParams.recovery``).
RECOVERY_MODELS: tuple[str, ...] = tuple(RECOVERY_CODES)
#: Uplink (ACK path) models (``FastSimParams.uplink``).
UPLINK_MODELS: tuple[str, ...] = tuple(UPLINK_CODES)
#: Longest ``FastSimParams.ul_grant_ms`` (the UE's report history is one int64 bit mask).
MAX_UL_GRANT_MS = 62

#: IP packet of one full segment: 1448 B payload + 32 B TCP (with timestamps) + 20 B IPv4.
IP_PACKET_BYTES = 1500
#: PDCP PDU in the RLC buffer: the IP packet plus a 2-byte PDCP header (ns-3 counts PDU sizes).
PDCP_PDU_BYTES = 1502

#: Spectral efficiency by CQI (3GPP R1-081483, as ns-3's ``LteAmc``); only for reference.
SPECTRAL_EFFICIENCY_FOR_CQI: tuple[float, ...] = (
    0.0, 0.15, 0.23, 0.38, 0.6, 0.88, 1.18, 1.48, 1.91, 2.41, 2.73, 3.32, 3.9, 4.52, 5.12, 5.55,
)  # fmt: skip
#: MCS ns-3's schedulers pick for each wideband CQI (``LteAmc::GetMcsFromCqi``).
MCS_FOR_CQI: tuple[int, ...] = (0, 0, 1, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28)
#: Lowest SINR (dB) of CQI 1..15, calibrated so that the capacity by distance matches ns-3's
#: Okumura-Hata cell (ns3-notes: 120 m CQI 15, 130 m 14, 140-155 m 13, 160-170 m 12, 180-190 m 11,
#: 200-220 m 10, 230-240 m 9, 250 m 8, 300-320 m 7, 330-360 m 6, 370-400 m 5, 500 m 3): each
#: threshold lies between the SINRs of the last distance measured above and the first below.
CQI_SINR_THRESHOLDS_DB: tuple[float, ...] = (
    -6.0, -4.0, -2.0, 0.4, 2.0, 4.2, 6.0, 8.6, 10.3, 11.6, 13.8, 15.45, 17.05, 19.4, 20.6,
)  # fmt: skip

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
P_START_JITTER_MS = 30
P_DUPTHRESH = 31
P_SEG_BYTES = 32
P_STEP_MS = 33
P_APP_CHUNK_BYTES = 34
P_VIDEO_TICK_MS = 35
P_UL_PERIOD_MS = 36
#: Entries of each flow's loss record and retransmission queue (a power of two): every segment of
#: a full receive window (``FastSimParams.rcv_buf_bytes``) can be lost and retransmitted.
LOST_SLOTS = 4096

P_HYSTART_DELAY = 37
P_RWND_SEGS = 38
P_RECOVERY = 39  # codes.RECOVERY_*: classic (window to ssthresh), ns-3.44 (PRR, re-entry, ...)
P_UPLINK = 40  # codes.UPLINK_*: periodic opportunities, buffer status report -> grant
P_UL_GRANT_MS = 41
P_LEN = 42

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


def okumura_hata_loss_db(
    distance_m: float,
    freq_mhz: float = 2120.0,
    enb_height_m: float = 30.0,
    ue_height_m: float = 1.5,
) -> float:
    """COST-231 Okumura-Hata path loss of a large city above 1.5 GHz, as ns-3 computes it.

    Args:
        distance_m: eNB-UE distance in metres.
        freq_mhz: Carrier frequency (ns-3's default downlink EARFCN 100 = 2120 MHz).
        enb_height_m: eNB antenna height (the scenario's 30 m).
        ue_height_m: UE antenna height (1.5 m).

    Returns:
        The loss in dB.
    """
    a_hm = 3.2 * math.log10(11.75 * ue_height_m) ** 2
    return (
        46.3
        + 33.9 * math.log10(freq_mhz)
        - 13.82 * math.log10(enb_height_m)
        + (44.9 - 6.55 * math.log10(enb_height_m)) * math.log10(distance_m / 1000.0)
        - a_hm
        + 3.0
    )


def sinr_db(
    distance_m: float, enb_power_dbm: float = 30.0, num_rbs: int = 50, noise_figure_db: float = 9.0
) -> float:
    """Downlink SINR of a lone cell (no interference): power per RB over thermal noise per RB."""
    power_rb_dbm = enb_power_dbm - 10.0 * math.log10(num_rbs)
    noise_rb_dbm = -174.0 + 10.0 * math.log10(180e3) + noise_figure_db
    return power_rb_dbm - okumura_hata_loss_db(distance_m) - noise_rb_dbm


def cqi_for_sinr(sinr: float, thresholds_db: tuple[float, ...] = CQI_SINR_THRESHOLDS_DB) -> int:
    """Wideband CQI (0-15) for a SINR in dB with the calibrated thresholds."""
    return int(sum(sinr >= t for t in thresholds_db))


def mcs_for_distance(distance_m: float, num_rbs: int = 50) -> int:
    """MCS the scheduler uses at ``distance_m`` (-1: out of coverage)."""
    cqi = cqi_for_sinr(sinr_db(distance_m, num_rbs=num_rbs))
    return MCS_FOR_CQI[cqi] if cqi > 0 else -1


def tbs_bytes(mcs: int, nprb: int) -> int:
    """Downlink transport block size in bytes (``LteAmc::GetDlTbSizeFromMcs / 8``)."""
    return TBS_BITS[nprb - 1][MCS_TO_ITBS_DL[mcs]] // 8


def rbg_size(num_rbs: int) -> int:
    """Resource-block group size of a bandwidth (36.213 Table 7.1.6.1-1)."""
    return 1 if num_rbs <= 10 else 2 if num_rbs <= 26 else 3 if num_rbs <= 63 else 4


def usable_rbs(num_rbs: int) -> int:
    """RBs ns-3's schedulers can allocate: whole RBGs only (48 of 50)."""
    g = rbg_size(num_rbs)
    return num_rbs // g * g


def ip_capacity_mbps(distance_m: float, num_rbs: int = 50) -> float:
    """IP-level capacity of a lone backlogged UE at ``distance_m`` under the model, in Mbit/s."""
    mcs = mcs_for_distance(distance_m, num_rbs)
    if mcs < 0:
        return 0.0
    tb = tbs_bytes(mcs, usable_rbs(num_rbs)) - 3
    return tb * IP_PACKET_BYTES / PDCP_PDU_BYTES * 8e-3


@dataclass(frozen=True)
class FastSimParams:
    """Everything the fast simulator's transition depends on, apart from its state and RNG.

    Attributes:
        spec: The scenario (shared with the ns-3 backend).
        air_dl_ms: eNB RLC -> UE application delay of a transport block, in ms (scheduling,
            PHY and decoding).
        air_ul_ms: UE -> eNB delay of an uplink ACK from its uplink transmission, in ms
            (``None``: the uplink model's calibrated value, 7 for ``periodic``, 4 for ``bsr``).
        uplink: How ACKs get uplink transmissions. ``periodic`` (default, the calibrated
            model): opportunities every ``ul_period_ms``. ``bsr``, as ns-3's ``LteUeMac`` with
            the PF scheduler: in every TTI in which the UE queued a new ACK it reports its buffer
            (``m_bsrPeriodicity`` 1 ms), the report brings a grant ``ul_grant_ms`` later, and a
            grant carries every ACK queued by then; the waits count in the RTT samples, and
            CUBIC's HyStart reads the smoothed RTT, as ns-3's ``PktsAcked(m_srtt)``. An ACK
            after an idle uplink waits ``ul_grant_ms`` and leaves with the ACKs queued
            meanwhile; a steady ACK stream leaves in (almost) every TTI. See
            docs/calibration/README.md for how the two compare with ns-3.
        ul_grant_ms: ``bsr`` uplink: buffer status report -> uplink transmission, in ms.
        rcv_buf_bytes: The sender never has more than this outstanding (ns-3's ``SndBufSize`` and
            ``RcvBufSize``, both 4 MiB in ``cellgym-lte``): the receive window. It also bounds the
            segments one window can lose, which the loss record must hold (at most
            ``LOST_SLOTS - 1`` segments).
        ul_period_ms: ``periodic`` uplink: ACKs leave the UE only at transmission
            opportunities this far apart.
        hystart_delay: CUBIC's HyStart exits slow start on an RTT increase (ns-3's
            ``HyStartDetect`` includes DELAY).
        recovery: Loss recovery of the senders. ``ns3_prr`` (default): ns-3.44's
            ``TcpSocketBase``/``TcpTxBuffer``/``TcpPrrRecovery`` code paths: PRR with its
            ``uint32_t`` arithmetic (a short burst, then silence until in flight reaches
            ssthresh), in flight counting SACKed retransmissions, re-entry into recovery on a
            duplicate ACK over a lost-marked head after recovery ends, a partial ACK's
            retransmission outside the window, the RTO restarted only by the first partial
            ACK, no window growth on ACKs with new SACK information, and BBR's packet
            conservation to the next round start. ``classic``: the window drops to ssthresh on
            entry (RFC 6675 pipe), a new recovery starts only on a hole not yet retransmitted
            (the model before; see docs/calibration/README.md for both tables).
        harq_bler: Probability that a new transport block fails and a HARQ retransmission takes
            the UE's next allocation (0: no fading, as in ns-3's static Okumura-Hata cell).
        scheduler: ``pf`` (proportional fair, ns-3's ``PfFfMacScheduler``) or ``rr``.
        delack_count: Segments per delayed ACK (ns-3 ``TcpSocket::DelAckCount``).
        delack_timeout_ms: Delayed-ACK timeout, in ms.
        min_rto_ms: Minimum retransmission timeout, in ms (ns-3: 1 s).
        init_cwnd_segs: Initial window in segments (ns-3: 10).
        pf_tau_ttis: Time constant of the PF scheduler's throughput average, in TTIs.
        xrc_budget_ms: XRC sender's queueing-delay budget, in ms.
        xrc_ramp_rtts: RTTs in which XRC's window reaches twnd from below.
        xrc_unfair_rtts: RTTs of high delay at twnd before XRC's unfairness mode.
        xrc_unfair_alpha: XRC's growth in the unfairness mode, segments per RTT.
        tb_overhead_bytes: RLC/MAC header bytes per transport block.
        sdu_overhead_bytes: Extra RLC header bytes per additional SDU in a transport block.
        attach_ms: Earliest flow start (the UE's attach), in ms.
        start_jitter_ms: Upper end of the seeded random flow start offset, in ms.
        cqi_thresholds_db: Lowest SINR of CQI 1..15, in dB.
        enb_power_dbm: eNB transmit power.
        noise_figure_db: UE noise figure.
    """

    spec: ScenarioSpec
    air_dl_ms: int = 3
    air_ul_ms: int | None = None
    uplink: str = "periodic"
    ul_grant_ms: int = 8
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
    tb_overhead_bytes: int = 3
    sdu_overhead_bytes: int = 2
    attach_ms: int = 100
    start_jitter_ms: int = 100
    cqi_thresholds_db: tuple[float, ...] = field(default=CQI_SINR_THRESHOLDS_DB)
    enb_power_dbm: float = 30.0
    noise_figure_db: float = 9.0

    def __post_init__(self) -> None:
        """Validate the model knobs and the scenario's fast-simulator support."""
        if self.scheduler not in SCHEDULERS:
            raise SpecError(f"fastsim.scheduler={self.scheduler!r}: choose one of {SCHEDULERS}")
        if self.recovery not in RECOVERY_MODELS:
            raise SpecError(f"fastsim.recovery={self.recovery!r}: choose one of {RECOVERY_MODELS}")
        if not 0.0 <= self.harq_bler < 1.0:
            raise SpecError(f"fastsim.harq_bler={self.harq_bler!r}: allowed [0, 1)")
        if self.air_ul_ms is None:
            object.__setattr__(self, "air_ul_ms", 7 if self.uplink == "periodic" else 4)
        if self.air_dl_ms < 0 or self.air_ul_ms < 0:
            raise SpecError("fastsim.air_dl_ms/air_ul_ms must be >= 0")
        most = (LOST_SLOTS - 1) * SEGMENT_BYTES
        if not 2 * SEGMENT_BYTES <= self.rcv_buf_bytes <= most:
            raise SpecError(
                f"fastsim.rcv_buf_bytes={self.rcv_buf_bytes!r}: "
                f"allowed [{2 * SEGMENT_BYTES}, {most}]"
            )
        if self.uplink not in UPLINK_MODELS:
            raise SpecError(f"fastsim.uplink={self.uplink!r}: choose one of {UPLINK_MODELS}")
        if not 0 <= self.ul_grant_ms <= MAX_UL_GRANT_MS:
            raise SpecError(
                f"fastsim.ul_grant_ms={self.ul_grant_ms!r}: allowed [0, {MAX_UL_GRANT_MS}]"
            )
        if self.ul_period_ms < 1:
            raise SpecError(f"fastsim.ul_period_ms={self.ul_period_ms!r}: allowed [1, inf)")
        if self.delack_count < 1:
            raise SpecError(f"fastsim.delack_count={self.delack_count!r}: allowed [1, inf)")
        if len(self.cqi_thresholds_db) != 15:
            raise SpecError("fastsim.cqi_thresholds_db needs 15 values (CQI 1..15)")
        for i, f in enumerate(self.spec.flows):
            cca_code(f.cca, f"scenario.flows[{i}].cca")  # SpecError if the fast model has none
        check_wired(self.spec, "fast")  # trace sources and buffer regimes: not read yet
        if self.spec.cell.type != "lte":
            raise SpecError(
                f"scenario.cell.type={self.spec.cell.type!r} is not modelled by the fast backend "
                "yet: use backend='ns3'"
            )
        if self.spec.bottleneck_mbps > 0:
            raise SpecError(
                "scenario.bottleneck_mbps > 0 (a wired bottleneck) is not modelled by the fast "
                "backend yet: use backend='ns3'"
            )

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
        return int(self.spec.rlc_buffer_pkts * 1500 // PDCP_PDU_BYTES) + 2

    @property
    def ring_len(self) -> int:
        """Length of the per-flow delay rings (a power of two above the longest delay)."""
        longest = 0
        for f in self.spec.flows:
            d = self._delay_ms(f.delay_ms)
            ul_wait = self.ul_period_ms + self.ul_grant_ms
            longest = max(longest, d + self.air_dl_ms + self.air_ul_ms + ul_wait + 2)
        return 1 << int(math.ceil(math.log2(longest + 2)))

    def _delay_ms(self, extra_ms: float) -> int:
        return int(round(self.spec.server_delay_ms + extra_ms))

    # -- packed arrays ------------------------------------------------------------------------
    def scalars(self) -> np.ndarray:
        """The ``P_*`` vector of cell-wide scalars."""
        s = self.spec
        p = np.zeros(P_LEN)
        p[P_NUM_RBS] = s.cell.rbs
        p[P_USABLE_RBS] = usable_rbs(s.cell.rbs)
        p[P_RBG_SIZE] = rbg_size(s.cell.rbs)
        p[P_RLC_CAP_BYTES] = s.rlc_buffer_pkts * 1500
        p[P_PDU_BYTES] = PDCP_PDU_BYTES
        p[P_TB_OVERHEAD_BYTES] = self.tb_overhead_bytes
        p[P_SDU_OVERHEAD_BYTES] = self.sdu_overhead_bytes
        p[P_AIR_DL_MS] = self.air_dl_ms
        p[P_AIR_UL_MS] = self.air_ul_ms
        p[P_WINDOW_TTIS] = s.xrc_window_ttis
        p[P_ACTIVE_TIMEOUT_MS] = s.active_timeout_ms
        p[P_MOBILITY] = MOBILITY_CODES[s.channel.mobility]
        p[P_MOBILITY_PERIOD_MS] = round(s.channel.mobility_period_s * 1000.0)
        p[P_MIN_DISTANCE_M] = s.channel.min_distance_m
        p[P_MAX_DISTANCE_M] = s.channel.max_distance_m
        p[P_SCHEDULER] = SCHEDULER_CODES[self.scheduler]
        p[P_HARQ_BLER] = self.harq_bler
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
        p[P_START_JITTER_MS] = self.start_jitter_ms
        p[P_DUPTHRESH] = 3
        p[P_SEG_BYTES] = SEGMENT_BYTES
        p[P_STEP_MS] = self.step_ttis
        p[P_APP_CHUNK_BYTES] = 64 * 1024
        p[P_VIDEO_TICK_MS] = 10
        p[P_UL_PERIOD_MS] = self.ul_period_ms
        p[P_RWND_SEGS] = self.rcv_buf_bytes // SEGMENT_BYTES
        p[P_HYSTART_DELAY] = 1.0 if self.hystart_delay else 0.0
        p[P_RECOVERY] = RECOVERY_CODES[self.recovery]
        p[P_UPLINK] = UPLINK_CODES[self.uplink]
        p[P_UL_GRANT_MS] = self.ul_grant_ms
        return p

    def flow_config(self) -> np.ndarray:
        """The ``[F, FC_*]`` flow settings."""
        s = self.spec
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
            fc[i, FC_D_UP_TOTAL_MS] = d_srv + self.air_dl_ms + self.air_ul_ms
            fc[i, FC_SIZE_BYTES] = f.size_bytes
            fc[i, FC_VIDEO_RATE_BPMS] = f.video_rate_mbps * 1e6 / 8 / 1000.0
            fc[i, FC_VIDEO_ON_MS] = round(f.video_on_s * 1000.0)
            fc[i, FC_VIDEO_PERIOD_MS] = round(f.video_period_s * 1000.0)
            fc[i, FC_SSTHRESH_BYTES] = f.ssthresh_segments * SEGMENT_BYTES
        return fc

    def tbs_table(self) -> np.ndarray:
        """``[29, rbs + 1]`` transport block bytes by MCS and RB count (column 0 is 0)."""
        n = self.spec.cell.rbs
        t = np.zeros((29, n + 1))
        for mcs in range(29):
            for nprb in range(1, n + 1):
                t[mcs, nprb] = tbs_bytes(mcs, nprb)
        return t

    def cqi_table(self) -> np.ndarray:
        """``[2, 16]``: row 0 the SINR threshold of CQI 1..15 (index 0 unused), row 1 its MCS."""
        t = np.zeros((2, 16))
        t[0, 0] = -np.inf
        t[0, 1:] = self.cqi_thresholds_db
        t[1, :] = MCS_FOR_CQI
        return t

    def initial_distances(self) -> np.ndarray:
        """``[U]`` initial distances in metres."""
        return np.asarray(self.spec.ue_distances(), dtype=np.float64)
