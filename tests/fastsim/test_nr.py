"""The NR link tables (``envs/fastsim/nr.py``, ``tables_nr.py``): TS 38.214 and TS 38.101 values.

Every expected value here is worked by hand from the specification's procedure (the steps are
written next to each case), not computed by the code under test.
"""

from __future__ import annotations

import pytest

from cellgym.scenario import ScenarioSpec, SpecError
from envs.fastsim import FastSimParams, nr
from envs.fastsim.tables_nr import (
    MCS_TABLE_64QAM,
    MCS_TABLE_256QAM,
    SPECTRAL_EFFICIENCY_64QAM,
    SPECTRAL_EFFICIENCY_256QAM,
    TBS_SMALL,
)


def test_mcs_tables_match_their_spectral_efficiency_column():
    assert len(MCS_TABLE_64QAM) == 29 and len(MCS_TABLE_256QAM) == 28
    for table, se in ((MCS_TABLE_64QAM, SPECTRAL_EFFICIENCY_64QAM),
                      (MCS_TABLE_256QAM, SPECTRAL_EFFICIENCY_256QAM)):  # fmt: skip
        for (qm, r), s in zip(table, se, strict=True):
            assert qm * r / 1024 == pytest.approx(s, abs=5e-5)
    assert MCS_TABLE_256QAM[20] == (8, 682.5) and MCS_TABLE_64QAM[28] == (6, 948)


def test_tbs_table_5_1_3_2_1():
    assert len(TBS_SMALL) == 93
    assert TBS_SMALL[:4] == (24, 32, 40, 48) and TBS_SMALL[-3:] == (3624, 3752, 3824)
    assert list(TBS_SMALL) == sorted(set(TBS_SMALL))


# N'_RE = 12 x (14 - 2 PDCCH symbols) - 12 DMRS - 0 xOverhead = 132 (the defaults).
@pytest.mark.parametrize(
    ("qm", "r", "n_prb", "expected"),
    [
        # MCS 0 (table 1), 1 PRB: N_info = 132 x 120/1024 x 2 = 30.94 <= 3824;
        # n = max(3, 4 - 6) = 3, N'_info = max(24, 8 x floor(3.87)) = 24 -> TBS 24.
        (2, 120, 1, 24),
        # MCS 9 (table 1), 10 PRB: N_info = 1320 x 679/1024 x 2 = 1750.5; n = 10 - 6 = 4,
        # N'_info = 16 x floor(109.4) = 1744 -> the first table TBS >= 1744 is 1800.
        (2, 679, 10, 1800),
        # MCS 15 (table 1), 20 PRB: N_info = 2640 x 616/1024 x 4 = 6352.5 > 3824;
        # n = floor(log2(6328.5)) - 5 = 7, N'_info = max(3840, 128 x round(49.44)) = 6272;
        # R > 1/4, N'_info <= 8424: TBS = 8 x ceil(6296 / 8) - 24 = 6272.
        (4, 616, 20, 6272),
        # MCS 0 (table 1), 273 PRB: N_info = 36036 x 0.234375 = 8445.9; n = 13 - 5 = 8,
        # N'_info = 256 x round(32.898) = 8448; R <= 1/4: C = ceil(8472 / 3816) = 3,
        # TBS = 8 x 3 x ceil(8472 / 24) - 24 = 8448.
        (2, 120, 273, 8448),
        # MCS 27 (table 2), 273 PRB: N_info = 36036 x 948/1024 x 8 = 266891.6; n = 18 - 5 = 13,
        # N'_info = 8192 x round(32.577) = 270336; C = ceil(270360 / 8424) = 33,
        # TBS = 8 x 33 x ceil(270360 / 264) - 24 = 264 x 1025 - 24 = 270576.
        (8, 948, 273, 270576),
    ],
)
def test_tbs_hand_worked(qm, r, n_prb, expected):
    assert nr.tbs_bits(qm, r, n_prb, nr.re_per_prb(2, 12, 0)) == expected


def test_tbs_layers_and_re_cap():
    # Two layers double N_info: MCS 9, 10 PRB -> 3501.1, n = 5, N'_info = 32 x 109 = 3488 -> 3496.
    assert nr.tbs_bits(2, 679, 10, 132, layers=2) == 3496
    # N'_RE is capped at 156 per PRB (TS 38.214 step 1).
    assert nr.tbs_bits(2, 120, 1, 168) == nr.tbs_bits(2, 120, 1, 156)
    assert nr.tbs_bits(2, 120, 0, 132) == 0


def test_num_prbs_from_ts_38_101():
    assert nr.num_prbs(20.0, 1, 3.5) == 51
    assert nr.num_prbs(100.0, 1, 3.5) == 273
    assert nr.num_prbs(20.0, 0, 3.5) == 106
    assert nr.num_prbs(50.0, 0, 2.0) == 270
    assert nr.num_prbs(100.0, 2, 3.5) == 135
    assert nr.num_prbs(100.0, 3, 28.0) == 66
    assert nr.num_prbs(400.0, 3, 28.0) == 264
    assert nr.num_prbs(200.0, 2, 28.0) == 264
    # Between standard bandwidths: linear, rounded down (17.5 MHz at 30 kHz: 38 + 0.5 x 13).
    assert nr.num_prbs(17.5, 1, 3.5) == 44


def test_sinr_thresholds_follow_the_attenuated_shannon_bound():
    thr = nr.sinr_thresholds_db("64qam", 0.75)
    # MCS 0: SE 0.2344 -> 10 log10(2^(0.2344 / 0.75) - 1) = -6.16 dB; MCS 28: 22.27 dB.
    assert thr[0] == pytest.approx(-6.16, abs=0.01)
    assert thr[28] == pytest.approx(22.27, abs=0.01)
    assert nr.sinr_thresholds_db("256qam", 0.75)[27] == pytest.approx(29.72, abs=0.01)
    # Monotone in the spectral efficiency (table 1's MCS 17, 64QAM, sits just below MCS 16).
    se = SPECTRAL_EFFICIENCY_64QAM
    assert sorted(range(29), key=lambda m: thr[m]) == sorted(range(29), key=lambda m: se[m])
    assert nr.sinr_thresholds_db("64qam", 0.75, 2.0)[0] == pytest.approx(thr[0] + 2.0)


def nr_spec(**cell) -> ScenarioSpec:
    return ScenarioSpec.from_config({"cell": {"type": "nr", **cell}, "flows": [{"cca": "xrc"}]})


def test_params_slot_length_and_tables():
    for mu, slot_s in ((0, 1e-3), (1, 0.5e-3), (2, 0.25e-3)):
        p = FastSimParams.from_spec(nr_spec(numerology=mu, bandwidth_mhz=20.0))
        assert p.spec.cell.slot_s == slot_s
        assert p.slots_per_ms == 2**mu
    p = FastSimParams.from_spec(nr_spec(numerology=3, bandwidth_mhz=100.0, frequency_ghz=28.0))
    assert p.slots_per_ms == 8 and p.num_prbs == 66
    lte = FastSimParams.from_spec({"flows": [{"cca": "xrc"}]})
    assert lte.slots_per_ms == 1 and not lte.is_nr
    # Without the overhead of xOverhead (TS 38.214's value for the hand-worked TBS below).
    p = FastSimParams.from_spec(nr_spec(mcs_table="256qam", bandwidth_mhz=100.0), nr_xoverhead=0)
    tbs = p.tbs_table()
    assert tbs.shape == (28, 274)
    assert tbs[27, 273] == 270576 // 8
    cqi = p.cqi_table()
    assert cqi.shape == (2, 29) and list(cqi[1, 1:4]) == [0, 1, 2]


@pytest.mark.parametrize(
    ("knob", "value"),
    [("nr_layers", 5), ("nr_bler_target", 1.0), ("nr_harq_rtt_slots", 0), ("harq_max_tx", 0),
     ("nr_dmrs_re", 7), ("nr_xoverhead", 5), ("nr_shannon_alpha", 2.0), ("nr_ctrl_symbols", 4),
     ("nr_block_loss_db", -1.0), ("nr_clear_mean_ms", 0.0), ("nr_ul_period_ms", 0)],
)  # fmt: skip
def test_bad_knobs_rejected_naming_the_field(knob, value):
    with pytest.raises(SpecError, match=rf"fastsim\.{knob}="):
        FastSimParams.from_spec(nr_spec(), **{knob: value})


def test_bad_cell_values_rejected_naming_the_field():
    with pytest.raises(SpecError, match=r"scenario\.cell\.bandwidth_mhz"):
        nr_spec(numerology=0, bandwidth_mhz=80.0)
    with pytest.raises(SpecError, match=r"scenario\.cell\.numerology"):
        nr_spec(numerology=3, frequency_ghz=3.5)
    with pytest.raises(SpecError, match=r"scenario\.cell\.propagation"):
        nr_spec(propagation="indoor")
    with pytest.raises(SpecError, match=r"scenario\.cell\.rbs"):
        nr_spec(rbs=25)
