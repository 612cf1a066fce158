"""The NR channel (``channel_nr.py``): TR 38.901 path loss, LOS, shadowing, FR2 blockage."""

from __future__ import annotations

import numpy as np
import pytest

from cellgym.fields import UE
from cellgym.scenario import ScenarioSpec
from envs.fastsim import FastCellBatch, FastSimParams
from envs.fastsim.channel_nr import los_probability, pathloss_db
from envs.fastsim.codes import PROP_RMA, PROP_UMA, PROP_UMI


# Hand-worked from TR 38.901 Table 7.4.1-1 at 3.5 GHz (20 log10 3.5 = 10.881), h_UT = 1.5 m.
@pytest.mark.parametrize(
    ("d2d", "los", "scen", "h_bs", "expected"),
    [
        # UMi LOS, d_BP' = 4 x 9 x 0.5 x 3.5e9 / 3e8 = 210 m > 100 m: PL1 with d3D = 100.36 m:
        # 32.4 + 21 x 2.00156 + 10.881 = 85.31.
        (100.0, True, PROP_UMI, 10.0, 85.31),
        # UMi NLOS: 35.3 x 2.00156 + 22.4 + 21.3 x 0.54407 = 104.64 (> the LOS 85.31).
        (100.0, False, PROP_UMI, 10.0, 104.64),
        # UMi LOS beyond d_BP (500 m, d3D 500.07): 32.4 + 40 x 2.69903 + 10.881
        # - 9.5 x log10(210^2 + 8.5^2) = 151.24 - 44.13 = 107.11.
        (500.0, True, PROP_UMI, 10.0, 107.11),
        # UMa LOS, d_BP' = 560 m, d3D = 300.92: 28 + 22 x 2.47845 + 10.881 = 93.41.
        (300.0, True, PROP_UMA, 25.0, 93.41),
        # UMa NLOS: 13.54 + 39.08 x 2.47845 + 10.881 = 121.28.
        (300.0, False, PROP_UMA, 25.0, 121.28),
        # RMa LOS, d_BP = 2 pi x 35 x 1.5 x 3.5e9 / 3e8 = 3848 m, d3D = 1000.56, h = 5 m:
        # 20 log10(40 pi x 1000.56 x 3.5 / 3) + 0.478 x 3.00024 - 0.701 + 0.0014 x 1000.56
        # = 103.33 + 1.434 - 0.701 + 1.399 = 105.46.
        (1000.0, True, PROP_RMA, 35.0, 105.46),
    ],
)
def test_pathloss_hand_worked(d2d, los, scen, h_bs, expected):
    assert pathloss_db(d2d, los, scen, 3.5, h_bs, 1.5) == pytest.approx(expected, abs=0.02)


def test_pathloss_rises_with_distance_and_frequency_and_nlos():
    for scen, h_bs in ((PROP_UMI, 10.0), (PROP_UMA, 25.0), (PROP_RMA, 35.0)):
        pl = [pathloss_db(d, True, scen, 3.5, h_bs, 1.5) for d in (20.0, 100.0, 400.0, 2000.0)]
        assert pl == sorted(pl)
        for d in (50.0, 300.0, 1000.0):
            assert pathloss_db(d, False, scen, 3.5, h_bs, 1.5) >= pathloss_db(
                d, True, scen, 3.5, h_bs, 1.5
            )
        assert pathloss_db(100.0, True, scen, 28.0, h_bs, 1.5) == pytest.approx(
            pathloss_db(100.0, True, scen, 3.5, h_bs, 1.5) + 20 * np.log10(8.0), abs=0.5
        )


def test_los_probability_table_7_4_2_1():
    # UMi at 50 m: 18/50 + exp(-50/36) x (1 - 18/50) = 0.36 + 0.2494 x 0.64 = 0.5196.
    assert los_probability(50.0, PROP_UMI, 1.5) == pytest.approx(0.5196, abs=1e-4)
    # UMa at 100 m (h_UT <= 13 m): 0.18 + exp(-100/63) x 0.82 = 0.3477.
    assert los_probability(100.0, PROP_UMA, 1.5) == pytest.approx(0.3477, abs=1e-4)
    # RMa at 510 m: exp(-500/1000).
    assert los_probability(510.0, PROP_RMA, 1.5) == pytest.approx(np.exp(-0.5))
    assert los_probability(10.0, PROP_UMI, 1.5) == 1.0


def cell_capacity(cell: dict, distance_m: float, seed: int = 1, **knobs) -> float:
    """Mean UE capacity (Mbit/s) of a lone backlogged UE over 0.3-0.6 s."""
    knobs.setdefault("nr_shadowing", False)
    spec = ScenarioSpec.from_config(
        {
            "sim_time_s": 0.6,
            "cell": {"type": "nr", **cell},
            "channel": {"distances_m": [distance_m]},
            "flows": [{"cca": "agent"}],
        }
    )
    batch = FastCellBatch(FastSimParams.from_spec(spec, **knobs), 1)
    batch.reset(np.array([seed]))
    caps = []
    for _ in range(30):
        batch.step(np.array([[4e6, 0.0]]))
        if batch.t_ms[0] > 300:
            caps.append(batch.ues[0, 0, UE["capacity_mbps"]])
    return float(np.mean(caps))


def test_rate_falls_with_distance_and_from_los_to_nlos():
    # Without the 15 dB array gain, so that line of sight runs out of MCS within 600 m.
    los = [
        cell_capacity({"los": "los"}, d, nr_beam_gain_fr1_db=0.0)
        for d in (50.0, 250.0, 400.0, 600.0)
    ]
    assert los == sorted(los, reverse=True)
    assert los[0] > 1.2 * los[-1]
    nlos = [cell_capacity({"los": "nlos"}, d, nr_beam_gain_fr1_db=0.0) for d in (150.0, 250.0)]
    assert nlos[0] < cell_capacity({"los": "los"}, 150.0, nr_beam_gain_fr1_db=0.0)
    assert nlos[1] < 0.7 * los[1]
    assert nlos == sorted(nlos, reverse=True)
    uma = cell_capacity({"los": "nlos", "propagation": "uma"}, 250.0, nr_beam_gain_fr1_db=0.0)
    assert uma < los[1]


def test_probabilistic_los_and_shadowing_are_seeded_draws():
    cell = {"los": "probabilistic", "propagation": "uma"}
    caps = [cell_capacity(cell, 250.0, seed, nr_shadowing=True) for seed in range(1, 7)]
    assert len(set(np.round(caps, 6))) > 1  # LOS state and shadowing differ by seed
    assert cell_capacity(cell, 250.0, 3, nr_shadowing=True) == caps[2]  # and repeat


def test_fr2_blockage_dips_the_capacity():
    cell = {"type": "nr", "numerology": 3, "bandwidth_mhz": 100.0, "frequency_ghz": 28.0}
    spec = ScenarioSpec.from_config(
        {"sim_time_s": 4.0, "cell": cell, "channel": {"distances_m": [150.0]},
         "flows": [{"cca": "agent"}]}
    )  # fmt: skip
    caps = {}
    for loss in (0.0, 20.0):  # 20 dB keeps a blocked UE above MCS 0 at 150 m
        params = FastSimParams.from_spec(
            spec, nr_shadowing=False, nr_block_loss_db=loss, nr_clear_mean_ms=300.0,
            nr_blocked_mean_ms=200.0,
        )  # fmt: skip
        batch = FastCellBatch(params, 1)
        batch.reset(np.array([5]))
        series = []
        for _ in range(200):
            batch.step(np.array([[8e6, 0.0]]))
            series.append(batch.ues[0, 0, UE["capacity_mbps"]])
        caps[loss] = np.array(series[20:])
    steady = caps[0.0]
    assert steady.max() - steady.min() < 0.2 * steady.mean()
    blocked = caps[20.0]
    assert blocked.min() < 0.5 * steady.mean()  # blocked sojourns
    assert blocked.max() > 0.9 * steady.mean()  # and clear ones
