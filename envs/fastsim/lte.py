"""The LTE cell's link model in Python: Okumura-Hata SINR, calibrated CQI, ns-3's MCS, 36.213 TBS.

``FastSimParams`` (``params.py``, which re-exports these names) builds the kernels' LTE tables
from them; ``ip_capacity_mbps`` is the lone-UE capacity the tests compare with ns-3.
"""

from __future__ import annotations

import math

from envs.fastsim.tables import MCS_TO_ITBS_DL, TBS_BITS

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


#: LTE's uplink lead: ns-3's ``LteUePhy`` sends a TB's data part for ``UL_DATA_DURATION`` (one
#: ms less one SC-FDMA symbol, 71,429 ns, less 1 ns), so the eNB receives the ACKs it carries,
#: and a sender's ACK-clocked answer reaches the eNB (after whole-ms wired delays), 71.43 us
#: before the TTI in which the model has it arrive: ns-3's HoL delays read k + 0.064-0.069 ms
#: (the rest, about 4 us, is the wired links' serialization), the model's k ms without it.
#: With the XRC budget a whole number of ms, that lead decides whether a step is within it.
LTE_UL_LEAD_MS = 71_430e-6
