"""The NR cell's 3GPP tables, written from the specifications (used by ``envs.fastsim.nr``).

- TS 38.214 V16 Table 5.1.3.1-1 (MCS index table 1, up to 64QAM) and Table 5.1.3.1-2 (MCS index
  table 2, up to 256QAM) for the PDSCH: modulation order Qm and target code rate R x 1024 per MCS
  index (the reserved indices 29-31 and 28-31, used only for retransmissions, are left out).
- TS 38.214 Table 5.1.3.2-1: the transport block sizes for N_info <= 3824.
- TS 38.101-1 Table 5.3.2-1 (FR1) and TS 38.101-2 Table 5.3.2-1 (FR2): the maximum transmission
  bandwidth configuration N_RB per channel bandwidth (MHz) and subcarrier spacing (kHz).
- TR 38.901 V16 Table 7.4.1-1 / 7.5-6: the heights of the deployment scenarios (evaluation
  defaults of Table 7.2-1 / 7.4.1-1's notes), the shadow-fading standard deviations and the
  shadowing decorrelation distances (LOS, NLOS).
"""

from __future__ import annotations

#: TS 38.214 Table 5.1.3.1-1 (64QAM): (Qm, R x 1024) for MCS 0..28.
MCS_TABLE_64QAM: tuple[tuple[int, float], ...] = (
    (2, 120), (2, 157), (2, 193), (2, 251), (2, 308), (2, 379), (2, 449), (2, 526), (2, 602),
    (2, 679), (4, 340), (4, 378), (4, 434), (4, 490), (4, 553), (4, 616), (4, 658), (6, 438),
    (6, 466), (6, 517), (6, 567), (6, 616), (6, 666), (6, 719), (6, 772), (6, 822), (6, 873),
    (6, 910), (6, 948),
)  # fmt: skip
#: TS 38.214 Table 5.1.3.1-2 (256QAM): (Qm, R x 1024) for MCS 0..27.
MCS_TABLE_256QAM: tuple[tuple[int, float], ...] = (
    (2, 120), (2, 193), (2, 308), (2, 449), (2, 602), (4, 378), (4, 434), (4, 490), (4, 553),
    (4, 616), (4, 658), (6, 466), (6, 517), (6, 567), (6, 616), (6, 666), (6, 719), (6, 772),
    (6, 822), (6, 873), (8, 682.5), (8, 711), (8, 754), (8, 797), (8, 841), (8, 885),
    (8, 916.5), (8, 948),
)  # fmt: skip
#: The spectral efficiency column of the two tables (bit/s/Hz, as printed: 4 decimals).
SPECTRAL_EFFICIENCY_64QAM: tuple[float, ...] = (
    0.2344, 0.3066, 0.3770, 0.4902, 0.6016, 0.7402, 0.8770, 1.0273, 1.1758, 1.3262, 1.3281,
    1.4766, 1.6953, 1.9141, 2.1602, 2.4063, 2.5703, 2.5664, 2.7305, 3.0293, 3.3223, 3.6094,
    3.9023, 4.2129, 4.5234, 4.8164, 5.1152, 5.3320, 5.5547,
)  # fmt: skip
SPECTRAL_EFFICIENCY_256QAM: tuple[float, ...] = (
    0.2344, 0.3770, 0.6016, 0.8770, 1.1758, 1.4766, 1.6953, 1.9141, 2.1602, 2.4063, 2.5703,
    2.7305, 3.0293, 3.3223, 3.6094, 3.9023, 4.2129, 4.5234, 4.8164, 5.1152, 5.3320, 5.5547,
    5.8906, 6.2266, 6.5703, 6.9141, 7.1602, 7.4063,
)  # fmt: skip
MCS_TABLES: dict[str, tuple[tuple[int, float], ...]] = {
    "64qam": MCS_TABLE_64QAM,
    "256qam": MCS_TABLE_256QAM,
}

#: TS 38.214 Table 5.1.3.2-1: TBS (bits) for N_info <= 3824, indices 1..93.
TBS_SMALL: tuple[int, ...] = (
    24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152, 160, 168, 176,
    184, 192, 208, 224, 240, 256, 272, 288, 304, 320, 336, 352, 368, 384, 408, 432, 456, 480,
    504, 528, 552, 576, 608, 640, 672, 704, 736, 768, 808, 848, 888, 928, 984, 1032, 1064, 1128,
    1160, 1192, 1224, 1256, 1288, 1320, 1352, 1416, 1480, 1544, 1608, 1672, 1736, 1800, 1864,
    1928, 2024, 2088, 2152, 2216, 2280, 2408, 2472, 2536, 2600, 2664, 2728, 2792, 2856, 2976,
    3104, 3240, 3368, 3496, 3624, 3752, 3824,
)  # fmt: skip

#: N_RB by (frequency range, subcarrier spacing kHz): {channel bandwidth MHz: N_RB}.
#: FR1: TS 38.101-1 Table 5.3.2-1; FR2: TS 38.101-2 Table 5.3.2-1.
N_RB_TABLE: dict[tuple[str, int], dict[float, int]] = {
    ("FR1", 15): {
        5: 25, 10: 52, 15: 79, 20: 106, 25: 133, 30: 160, 35: 188, 40: 216, 45: 242, 50: 270,
    },
    ("FR1", 30): {
        5: 11, 10: 24, 15: 38, 20: 51, 25: 65, 30: 78, 35: 92, 40: 106, 45: 119, 50: 133,
        60: 162, 70: 189, 80: 217, 90: 245, 100: 273,
    },
    ("FR1", 60): {
        10: 11, 15: 18, 20: 24, 25: 31, 30: 38, 35: 44, 40: 51, 45: 58, 50: 65, 60: 79, 70: 93,
        80: 107, 90: 121, 100: 135,
    },
    ("FR2", 60): {50: 66, 100: 132, 200: 264},
    ("FR2", 120): {50: 32, 100: 66, 200: 132, 400: 264},
}  # fmt: skip

#: TR 38.901 deployment scenarios: base-station height (m), shadow fading sigma LOS / NLOS (dB,
#: Table 7.4.1-1; RMa LOS: 4 dB before the breakpoint, 6 dB after) and the shadowing
#: decorrelation distance LOS / NLOS (m, Table 7.5-6 Part-1).
SCENARIO_TABLE: dict[str, dict[str, float]] = {
    "umi": {"h_bs": 10.0, "sf_los": 4.0, "sf_nlos": 7.82, "dcorr_los": 10.0, "dcorr_nlos": 13.0},
    "uma": {"h_bs": 25.0, "sf_los": 4.0, "sf_nlos": 6.0, "dcorr_los": 37.0, "dcorr_nlos": 50.0},
    "rma": {"h_bs": 35.0, "sf_los": 4.0, "sf_nlos": 8.0, "dcorr_los": 37.0, "dcorr_nlos": 120.0},
}
#: UE height (m): TR 38.901's 1.5 m (outdoor UE at ground level).
H_UT_M = 1.5
