"""The NR cell's link model in Python: N_RB, the TS 38.214 TBS procedure, the SINR -> MCS map.

``FastSimParams`` builds the kernels' tables from these (``tbs_table``, ``cqi_table``): the
transport block of every MCS and PRB count per slot, and the lowest SINR of every MCS.

- N_RB: TS 38.101-1/-2 Table 5.3.2-1 at the standard channel bandwidths; a bandwidth between
  two standard ones (the scenario allows any value in the range) gets N_RB interpolated
  linearly between them and rounded down.
- Resource elements: 12 subcarriers x (14 - ``ctrl_symbols``) symbols - DMRS - xOverhead per
  PRB (TS 38.214 5.1.3.2 step 1), capped at 156.
- TBS: TS 38.214 5.1.3.2 (N_info, its quantisation, Table 5.1.3.2-1 up to 3824 bits, LDPC
  code-block segmentation above).
- SINR -> MCS at a 10 % BLER target: the attenuated Shannon bound of TR 36.942 Annex A.2,
  SE = alpha * log2(1 + SINR), inverted at each MCS's spectral efficiency:
  SINR_min(MCS) = 10 log10(2^(SE / alpha) - 1) dB (alpha = ``nr_shannon_alpha``, 0.75 by
  default: MCS 0 at -6.2 dB, 64QAM MCS 28 at 22.3 dB, 256QAM MCS 27 at 29.7 dB).
"""

from __future__ import annotations

import math

import numpy as np

from cellgym.scenario import CellSpec, SpecError
from cellgym.vocab import nr_frequency_range
from envs.fastsim.tables_nr import (
    MCS_TABLES,
    N_RB_TABLE,
    SPECTRAL_EFFICIENCY_64QAM,
    SPECTRAL_EFFICIENCY_256QAM,
    TBS_SMALL,
)

SPECTRAL_EFFICIENCY: dict[str, tuple[float, ...]] = {
    "64qam": SPECTRAL_EFFICIENCY_64QAM,
    "256qam": SPECTRAL_EFFICIENCY_256QAM,
}
#: Subcarriers per PRB and OFDM symbols per slot (normal cyclic prefix).
SUBCARRIERS = 12
SYMBOLS_PER_SLOT = 14


def scs_khz(numerology: int) -> int:
    """Subcarrier spacing of a numerology: 15 * 2**mu kHz."""
    return 15 * 2**numerology


def num_prbs(bandwidth_mhz: float, numerology: int, frequency_ghz: float) -> int:
    """N_RB of a channel bandwidth (TS 38.101 Table 5.3.2-1; linear between standard ones)."""
    fr = nr_frequency_range(frequency_ghz)
    table = N_RB_TABLE.get((str(fr), scs_khz(numerology)))
    if table is None:
        raise SpecError(
            f"scenario.cell.numerology={numerology} has no N_RB table in {fr} (TS 38.101)"
        )
    bws = sorted(table)
    if bandwidth_mhz in table:
        return table[bandwidth_mhz]
    if not bws[0] <= bandwidth_mhz <= bws[-1]:
        raise SpecError(
            f"scenario.cell.bandwidth_mhz={bandwidth_mhz!r}: allowed [{bws[0]:g}, {bws[-1]:g}] "
            f"at {scs_khz(numerology)} kHz in {fr}"
        )
    hi = next(bw for bw in bws if bw > bandwidth_mhz)
    lo = max(bw for bw in bws if bw < bandwidth_mhz)
    frac = (bandwidth_mhz - lo) / (hi - lo)
    return int(math.floor(table[lo] + frac * (table[hi] - table[lo])))


def re_per_prb(ctrl_symbols: int, dmrs_re: int, xoverhead: int) -> int:
    """N'_RE: data resource elements of one PRB in a slot (TS 38.214 5.1.3.2 step 1)."""
    return SUBCARRIERS * (SYMBOLS_PER_SLOT - ctrl_symbols) - dmrs_re - xoverhead


def tbs_bits(qm: int, rate_x1024: float, n_prb: int, n_re_prb: int, layers: int = 1) -> int:
    """Transport block size in bits (TS 38.214 5.1.3.2, steps 1-4).

    Args:
        qm: Modulation order.
        rate_x1024: Target code rate x 1024 (as the MCS tables print it).
        n_prb: Allocated PRBs.
        n_re_prb: N'_RE, data resource elements per PRB.
        layers: MIMO layers v.
    """
    if n_prb <= 0:
        return 0
    r = rate_x1024 / 1024.0
    n_re = min(156, n_re_prb) * n_prb
    n_info = n_re * r * qm * layers
    if n_info <= 0:
        return 0
    if n_info <= 3824:
        n = max(3, int(math.floor(math.log2(n_info))) - 6)
        n_info_q = max(24, 2**n * int(math.floor(n_info / 2**n)))
        for tbs in TBS_SMALL:
            if tbs >= n_info_q:
                return tbs
        return TBS_SMALL[-1]
    n = int(math.floor(math.log2(n_info - 24))) - 5
    # round(): to the nearest integer, ties up (the specification's round).
    n_info_q = max(3840, 2**n * int(math.floor((n_info - 24) / 2**n + 0.5)))
    if r <= 0.25:
        c = math.ceil((n_info_q + 24) / 3816)
        return int(8 * c * math.ceil((n_info_q + 24) / (8 * c)) - 24)
    if n_info_q > 8424:
        c = math.ceil((n_info_q + 24) / 8424)
        return int(8 * c * math.ceil((n_info_q + 24) / (8 * c)) - 24)
    return int(8 * math.ceil((n_info_q + 24) / 8) - 24)


def sinr_thresholds_db(mcs_table: str, alpha: float, offset_db: float = 0.0) -> np.ndarray:
    """Lowest SINR (dB) of each MCS at the BLER target (attenuated Shannon bound, see above)."""
    se = np.asarray(SPECTRAL_EFFICIENCY[mcs_table])
    return 10.0 * np.log10(2.0 ** (se / alpha) - 1.0) + offset_db


def tbs_table_bytes(cell: CellSpec, n_re_prb: int, layers: int) -> np.ndarray:
    """``[n_mcs, N_RB + 1]`` transport block bytes per slot by MCS and PRB count."""
    n = num_prbs(cell.bandwidth_mhz, cell.numerology, cell.frequency_ghz)
    mcs = MCS_TABLES[cell.mcs_table]
    t = np.zeros((len(mcs), n + 1))
    for m, (qm, r) in enumerate(mcs):
        for k in range(1, n + 1):
            t[m, k] = tbs_bits(qm, r, k, n_re_prb, layers) // 8
    return t


def rbg_size(n_prb: int) -> int:
    """Nominal RBG size P of a bandwidth part (TS 38.214 Table 5.1.2.2.1-1, configuration 1)."""
    return 2 if n_prb <= 36 else 4 if n_prb <= 72 else 8 if n_prb <= 144 else 16


def noise_dbm(n_prb: int, numerology: int, noise_figure_db: float) -> float:
    """Thermal noise over the occupied bandwidth (N_RB x 12 x SCS) plus the noise figure."""
    bw_hz = n_prb * SUBCARRIERS * scs_khz(numerology) * 1e3
    return -174.0 + 10.0 * math.log10(bw_hz) + noise_figure_db
