"""The HoL delay resolves an NR cell's slots and agrees with the RLC's sojourns, on both backends.

An NR FR1 cell with numerology 2 (0.25 ms slots) and one CUBIC download into a 512-packet RLC
buffer, so the queue stays busy after slow start (a 64-packet one overflows, CUBIC times out
and the queue sits empty). The HoL delay (``hol_ms``, the head's
age at the step's end; ``hol_max_ms``, the largest age in the step) must be the head's exact age:
most samples are not whole ms, and the step's largest HoL is the largest RLC sojourn of the
packets that left in the step (a head's age as it leaves is its sojourn), within one slot.

The sojourns are measured apart from the HoL on each backend: on the fast model, from the RLC
ring as each packet's last byte leaves (``U_SOJ_MAX``, the arrival slot to the sending slot); on
ns-3, from the PDCP's timestamp on each SDU as its first byte leaves the RLC for the MAC (the
agent's ``SojournTraceFile``, set through ns-3's ``NS_ATTRIBUTE_DEFAULT``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cellgym.fields import UE
from cellgym.scenario import ScenarioSpec
from envs.fastsim.state import U_SOJ_MAX
from envs.session import open_session
from evaluation.rollouts import run_native
from tests.ns3_scenarios.nr_build import nr_missing

MU = 2
SLOT_MS = 1.0 / 2**MU
FROM_S = 0.5  # past the slow start's queue


def _spec() -> ScenarioSpec:
    return ScenarioSpec.from_config(
        {
            "name": "nr_hol",
            "sim_time_s": 2.0,
            "rlc_buffer_pkts": 512,
            "cell": {"type": "nr", "numerology": MU, "bandwidth_mhz": 20.0, "los": "los"},
            "flows": [{"cca": "cubic"}],
        }
    )


def _check(t: np.ndarray, hol: np.ndarray, hol_max: np.ndarray, soj_max: np.ndarray) -> None:
    """The HoL series (per step) against the largest sojourn of the packets leaving per step."""
    keep = t > FROM_S
    hol, hol_max, soj_max = hol[keep], hol_max[keep], soj_max[keep]
    queued = hol > 0
    assert queued.mean() > 0.5, "the RLC queue should hold packets at most step ends"
    # Whole-ms HoL (the RLC's truncated reports, or a 1 ms clock) fails here.
    whole = np.isclose(hol[queued], np.round(hol[queued]))
    assert whole.mean() < 0.5, f"HoL samples in whole ms: {np.unique(hol[queued])[:20]}"
    left = soj_max > 0
    assert left.mean() > 0.9, "packets leave the RLC in nearly every step"
    # A head's age as it leaves is its sojourn: the step's largest HoL is the largest sojourn of
    # the step's packets, or the age of the head still queued at its end.
    # On ns-3 the sojourn is stamped as an SDU's first byte leaves, the HoL as its last does: a
    # slot later when it was segmented (measured: per step 0.248 ms apart at the median).
    want = np.maximum(soj_max[left], hol[left])
    got = hol_max[left]
    assert np.median(np.abs(got - want)) <= 2 * SLOT_MS + 1e-6, (got[:10], want[:10])
    assert abs(np.median(got) - np.median(want)) <= SLOT_MS + 1e-6
    assert np.median(got) > 2 * SLOT_MS  # a queue of several slots, not an empty one


def test_fast_hol_resolves_slots_and_agrees_with_the_rlc_sojourns():
    session = open_session(_spec(), 11, backend="fast")
    raw = session.start()
    t, hol, hol_max, soj = [], [], [], []
    none = np.zeros((0, 2))
    while not raw.done:
        raw = session.step(none)
        t.append(raw.t)
        hol.append(raw.ues[0, UE["hol_ms"]])
        hol_max.append(raw.ues[0, UE["hol_max_ms"]])
        soj.append(session.cell.state.ue[0, 0, U_SOJ_MAX])
    session.close()
    hol_a = np.array(hol)
    # The fast model's clock is the slot: every HoL is a whole number of slots.
    np.testing.assert_allclose(hol_a / SLOT_MS, np.round(hol_a / SLOT_MS), atol=1e-9)
    _check(np.array(t), hol_a, np.array(hol_max), np.array(soj))


@pytest.mark.ns3
def test_ns3_hol_resolves_slots_and_agrees_with_the_rlc_sojourns(tmp_path, monkeypatch):
    if missing := nr_missing():
        pytest.skip(missing)
    path = tmp_path / "sojourns.csv"
    monkeypatch.setenv("NS_ATTRIBUTE_DEFAULT", f"ns3::XrcEnbAgent::SojournTraceFile={path}")
    rec = run_native(_spec(), "cubic", 11)
    ues = np.stack(rec.ues)
    t = np.array(rec.times)
    assert path.is_file(), "the scenario program did not write the SDUs' sojourns"
    soj = pd.read_csv(path)
    assert len(soj) > 1000 and (soj["ue"] == 0).all()
    # Per step (t[k-1], t[k]]: the largest sojourn of the SDUs whose first byte left in it.
    step = np.searchsorted(t, soj["time_s"].to_numpy(), side="left")
    soj_max = np.zeros(len(t))
    inside = step < len(t)
    np.maximum.at(soj_max, step[inside], soj["sojourn_ms"].to_numpy()[inside])
    _check(t, ues[:, 0, UE["hol_ms"]], ues[:, 0, UE["hol_max_ms"]], soj_max)


# -- LTE: the uplink lead ---------------------------------------------------------------------


def _lte_spec() -> ScenarioSpec:
    return ScenarioSpec.from_config(
        {"name": "lte_hol", "sim_time_s": 2.0, "rlc_buffer_pkts": 512, "flows": [{"cca": "cubic"}]}
    )


def _fraction_after_whole_ms(hol: np.ndarray) -> np.ndarray:
    """The queued samples' part beyond whole ms."""
    return hol[hol > 0] % 1.0


def test_fast_lte_hol_counts_the_uplink_lead():
    """A packet sent on an ACK reaches the eNB one SC-FDMA symbol before the TTI it is filed in.

    ns-3's UE sends a TB's data part for 1 ms less one symbol, so its ACKs, and the packets a
    sender answers them with, reach the eNB 71.43 us (less about 4 us of wired serialization)
    before a TTI boundary: every HoL sample at a step's end is k ms plus that lead. The XRC
    agent's feedback is stamped as the ACK passes the eNB, the lead before the TTI's end, so it
    reads whole ms.
    """
    from envs.fastsim.lte import LTE_UL_LEAD_MS

    session = open_session(_lte_spec(), 11, backend="fast")
    raw = session.start()
    hol = []
    while not raw.done:
        raw = session.step(np.zeros((0, 2)))
        hol.append(raw.ues[0, UE["hol_ms"]])
    session.close()
    frac = _fraction_after_whole_ms(np.array(hol))
    assert frac.size > 50
    np.testing.assert_allclose(frac, LTE_UL_LEAD_MS, atol=1e-9)


@pytest.mark.ns3
def test_ns3_lte_hol_carries_the_same_lead():
    from envs.fastsim.lte import LTE_UL_LEAD_MS

    rec = run_native(_lte_spec(), "cubic", 11)
    ues = np.stack(rec.ues)
    frac = _fraction_after_whole_ms(ues[np.array(rec.times) > FROM_S, 0, UE["hol_ms"]])
    assert frac.size > 50
    # ns-3: the lead less the wired links' serialization (a few us; measured 0.064-0.069 ms).
    close = np.abs(frac - LTE_UL_LEAD_MS) < 0.01
    assert close.mean() > 0.9, np.unique(np.round(frac, 4))[:20]
