"""A bulk CUBIC flow on an idle 100 MHz numerology-1 NR cell reaches the TS 38.214 rate, on both
backends (issue 13).

How the prediction is derived (``predicted_goodput_mbps``), from the MCS actually in use:

1. The carrier: 100 MHz at 30 kHz subcarrier spacing has N_RB = 273 PRBs (TS 38.101-1 Table
   5.3.2-1); a slot lasts 1 / 2**mu = 0.5 ms and has 14 OFDM symbols.
2. Resource elements per PRB (TS 38.214 5.1.3.2 step 1): N'_RE = 12 x N_symb - N_DMRS -
   N_oh with N_symb the PDSCH's symbols (12: 5G-LENA puts one PDCCH symbol before and one
   uplink control symbol after them; the fast model's ``nr_ctrl_symbols`` = 2), one DMRS symbol
   of 12 REs per PRB and xOverhead 6 (the fast model's ``nr_xoverhead``).
3. The transport block of the MCS in use on all 273 PRBs: TS 38.214 5.1.3.2 steps 2-4
   (``envs.fastsim.nr.tbs_bits``: N_info = N_RE x R x Qm x v, its quantisation, LDPC code-block
   segmentation; hand-checked in ``tests/fastsim/test_nr.py``), with the MCS table's (Qm, R).
4. The slots that carry new downlink data: on ns-3 the share of slots with a first transmission
   in 5G-LENA's own MAC trace (the rest are the uplink's slots for the ACKs and HARQ
   retransmissions); on the fast backend, where every slot is downlink, 1 / (1 + BLER) with BLER
   the first-transmission block error rate (each failed block takes one more slot).
5. Goodput: each 1,500-byte IP packet carries 1,448 bytes of TCP payload (40 bytes of TCP/IP
   header, 12 of timestamps); RLC, PDCP and MAC headers (a few bytes per packet) are left out
   (under 0.5 %).

goodput = TBS / slot x share of slots x 1448 / 1500. The measured figure is the flow's goodput
over the steps in which the cell is saturated (its RLC queue non-empty at both ends of the step,
after the first second), as a bulk flow "reaches" the rate; both must agree within 10 %.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from cellgym.fields import FLOW, SEGMENT_BYTES, UE
from cellgym.paths import ns3_build_dir
from cellgym.scenario import ScenarioSpec
from envs.fastsim import FastCellBatch, FastSimParams
from envs.fastsim.nr import num_prbs, tbs_bits
from envs.fastsim.state import U_MCS
from envs.fastsim.tables_nr import MCS_TABLES
from evaluation.rollouts import run_native

#: The cell: 100 MHz at numerology 1 (3.5 GHz), one UE at 50 m in line of sight, 256QAM.
CELL = {
    "type": "nr",
    "numerology": 1,
    "bandwidth_mhz": 100.0,
    "frequency_ghz": 3.5,
    "propagation": "umi",
    "los": "los",
    "mcs_table": "256qam",
}
#: PDSCH symbols of a slot and the per-PRB overheads of step 2.
PDSCH_SYMBOLS = 12
DMRS_RE = 12
XOVERHEAD = 6
#: TCP payload of a 1,500-byte IP packet.
PAYLOAD_FRACTION = SEGMENT_BYTES / 1500.0
TOLERANCE = 0.10
WARMUP_S = 1.0


def spec(sim_time_s: float) -> ScenarioSpec:
    return ScenarioSpec.from_config(
        {
            "name": "nr_38214",
            "sim_time_s": sim_time_s,
            "rlc_buffer_pkts": 2000,
            "cell": CELL,
            "channel": {"distances_m": [50.0]},
            "flows": [{"cca": "cubic"}],
        }
    )


def predicted_goodput_mbps(mcs: int, dl_slot_share: float) -> float:
    """Steps 1-5 of the module docstring for MCS ``mcs`` of the 256QAM table."""
    n_prb = num_prbs(CELL["bandwidth_mhz"], CELL["numerology"], CELL["frequency_ghz"])
    assert n_prb == 273
    n_re_prb = 12 * PDSCH_SYMBOLS - DMRS_RE - XOVERHEAD  # 126
    qm, rate = MCS_TABLES[CELL["mcs_table"]][mcs]
    tbs = tbs_bits(qm, rate, n_prb, n_re_prb)
    slot_s = 1e-3 / 2 ** CELL["numerology"]
    return tbs / slot_s * dl_slot_share * PAYLOAD_FRACTION / 1e6


def saturated_steps(t: np.ndarray, rlc_bytes: np.ndarray) -> np.ndarray:
    """Steps after ``WARMUP_S`` whose RLC queue is non-empty at both ends (the cell saturated)."""
    queued = rlc_bytes > 0
    busy = (t > WARMUP_S) & queued & np.roll(queued, 1)
    busy[0] = False
    assert busy.sum() >= 10, "the flow never saturated the cell"
    return busy


def goodput_mbps(rx_bytes: np.ndarray, busy: np.ndarray, step_s: float) -> float:
    return float(rx_bytes[busy].sum() * 8 / (busy.sum() * step_s) / 1e6)


def test_fast_backend_reaches_the_38214_rate():
    s = spec(3.0)
    params = FastSimParams.from_spec(s)
    batch = FastCellBatch(params, 1)
    batch.reset(np.array([1]))
    mcs = int(batch.state.ue[0, 0, U_MCS])
    assert mcs == 27  # 50 m in line of sight: the table's top MCS
    # Every slot is downlink; a failed first transmission (BLER nr_bler_target) takes one more.
    predicted = predicted_goodput_mbps(mcs, 1.0 / (1.0 + params.nr_bler_target))
    rec = run_native(s, "cubic", 1, backend="fast")
    t = np.asarray(rec.times)
    busy = saturated_steps(t, np.stack(rec.ues)[:, 0, UE["rlc_bytes"]])
    measured = goodput_mbps(np.stack(rec.flows)[:, 0, FLOW["rx_bytes"]], busy, s.step_ms / 1e3)
    assert abs(measured / predicted - 1) < TOLERANCE, (measured, predicted)


def dl_mac_trace(path: Path, t: np.ndarray, busy: np.ndarray, step_s: float) -> tuple[int, float]:
    """5G-LENA's ``NrDlMacStats.txt``: the most used MCS of first transmissions in the ``busy``
    steps (ending at ``t``), and the share of those steps' slots that carry one."""
    rows = np.loadtxt(path, comments="%", ndmin=2)
    # Columns: time, cellId, bwpId, IMSI, RNTI, frame, subframe, slot, symStart, numSym,
    # harqId, ndi, rv, mcs, tbSize.
    new = rows[rows[:, 12] == 0]
    step = np.searchsorted(t, new[:, 0], side="left")  # the step each TB falls in
    inside = (step < len(t)) & busy[np.minimum(step, len(t) - 1)]
    new = new[inside]
    mcs = int(np.bincount(new[:, 13].astype(int)).argmax())
    slots = {(int(f), int(sf), int(sl)) for f, sf, sl in new[:, 5:8]}
    slot_s = 1e-3 / 2 ** CELL["numerology"]
    return mcs, len(slots) * slot_s / (busy.sum() * step_s)


def read_record(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step times, flow 0's ``rx_bytes`` and UE 0's ``rlc_bytes`` from ``--recordPath``'s CSV."""
    flow_col = 3 + FLOW["rx_bytes"]
    ue_col = 3 + UE["rlc_bytes"]
    t, rx, rlc = [], [], []
    for line in path.read_text().splitlines()[1:]:
        cells = line.split(",")
        if cells[1] == "flow" and cells[2] == "0":
            t.append(float(cells[0]))
            rx.append(float(cells[flow_col]))
        elif cells[1] == "ue" and cells[2] == "0":
            rlc.append(float(cells[ue_col]))
    return np.array(t), np.array(rx), np.array(rlc)


@pytest.mark.ns3
@pytest.mark.slow
def test_ns3_reaches_the_38214_rate(tmp_path):
    from cellgym.seeding import rng_run_for_seed

    program = ns3_build_dir() / "cellgym-lte"
    if not program.is_file():
        pytest.skip(f"no ns-3 scenario build at {program}")
    s = spec(2.5)
    args = [
        str(program),
        *s.to_ns3_args(rng_run_for_seed(1)),
        "--openGymPort=0",
        f"--recordPath={tmp_path / 'record.csv'}",
        "--nrMacTrace=1",
    ]
    out = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    if out.returncode == 4:
        pytest.skip(out.stderr.strip())
    assert out.returncode == 0, out.stderr
    t, rx, rlc = read_record(tmp_path / "record.csv")
    step_s = s.step_ms / 1e3
    busy = saturated_steps(t, rlc)
    mcs, share = dl_mac_trace(tmp_path / "NrDlMacStats.txt", t, busy, step_s)
    assert 0.5 < share <= 1.0
    predicted = predicted_goodput_mbps(mcs, share)
    measured = goodput_mbps(rx, busy, step_s)
    assert abs(measured / predicted - 1) < TOLERANCE, (mcs, share, measured, predicted)
