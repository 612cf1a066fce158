"""Trace-driven cells: both backends replay a capacity trace TTI by TTI (docs/traces.md).

The replay check of the issue ("both backends replay a trace to the same per-100 ms capacity
within 2 %"), measured as ``replay_error(capacity_per_window(series, 0.1), capacity_per_window(
series_from_rates(recorded capacity_mbps, step_s), 0.1)) < 0.02``: the series the scenario selects
against what the backend's XRC agent recorded step by step (new transport blocks plus the idle
RBs' share) over a short replay. A saturating CUBIC flow's transport blocks show that the real
MAC delivers the trace's bytes and never more. Each check runs on an LTE cell and on an NR cell
(20 MHz, numerology 1: 0.5 ms slots; on ns-3 5G-LENA's scheduler sizes the blocks). ns-3 runs are
2-3 simulated seconds.
"""

from __future__ import annotations

import numpy as np
import pytest

from cellgym.fields import FLOW, UE
from cellgym.paths import traces_dir
from cellgym.scenario import load_scenario
from cellgym.traces import capacity_per_window, channel_series, replay_error, series_from_rates
from envs.session import open_session
from tests.ns3_scenarios.test_nr_ns3 import _MISSING as NR_MISSING

SEED = 7
#: 5, 20 and 40 Mbit/s held 0.5 s each: 62.5, 250 and 500 kB per 100 ms.
STEPS = {"levels_mbps": [5.0, 20.0, 40.0], "hold_s": 0.5, "order": "cycle", "duration_s": 30.0}
TRACE_CONFIGS = (
    "att_lte_driving",
    "tmobile_lte_short",
    "tmobile_vs_cubic",
    "irish5g_static",
    "irish5g_driving",
    "mmwave_blockage",
    "steps",
)
#: The NR cell of the checks: 20 MHz, numerology 1 (0.5 ms slots).
NR_CELL = {"type": "nr", "numerology": 1, "bandwidth_mhz": 20.0}
CELLS = {"lte": {}, "nr": {"cell": NR_CELL}}
BACKENDS = ["fast", pytest.param("ns3", marks=pytest.mark.ns3)]
needs_shared = pytest.mark.skipif(
    not traces_dir().is_dir(), reason=f"no shared traces at {traces_dir()}"
)


def steps_spec(sim_time_s: float, cca: str = "cubic", **changes):
    return load_scenario(
        "traces/steps",
        sim_time_s=sim_time_s,
        channel={"params": STEPS},
        flows=[{"ue": 0, "cca": cca, "traffic": "bulk"}],
        **changes,
    )


def replay(spec, backend: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run ``spec`` to its end: per-step ``capacity_mbps``, ``tx_mbps`` and flow 0's rate."""
    if backend == "ns3" and spec.cell.type == "nr" and NR_MISSING:
        pytest.skip(NR_MISSING)  # a build without 5G-LENA
    session = open_session(spec, SEED, backend=backend)
    raw = session.start()
    n_agents = len(spec.agent_flows)
    caps, txs, rates = [], [], []
    try:
        while not raw.done:
            raw = session.step(np.zeros((n_agents, 2)))
            caps.append(raw.ues[0, UE["capacity_mbps"]])
            txs.append(raw.ues[0, UE["tx_mbps"]])
            rates.append(raw.flows[0, FLOW["enb_rate_mbps"]])
    finally:
        session.close()
    return np.array(caps), np.array(txs), np.array(rates)


def per_window(spec, rates_mbps: np.ndarray) -> np.ndarray:
    rec = series_from_rates(rates_mbps, spec.step_ms / 1000.0)
    return capacity_per_window(rec, 0.1, spec.sim_time_s)


def check_replay(spec, backend: str) -> tuple[np.ndarray, np.ndarray]:
    """Assert the replay check; return the trace's and the UE's TB bytes per 100 ms."""
    caps, txs, _ = replay(spec, backend)
    series = channel_series(spec.channel, spec.cell.slot_s, SEED)
    want = capacity_per_window(series, 0.1, spec.sim_time_s)
    err = replay_error(want, per_window(spec, caps))
    assert err < 0.02, f"{backend} {spec.cell.type}: replay error {err:.4f}"
    # The UE's transport blocks never carry more than the trace (per 100 ms, 0.5 % for the
    # windows' rounding of steps).
    sent = per_window(spec, txs)
    assert np.all(sent <= want * 1.005 + 1.0), f"{backend}: sent {sent} above {want}"
    return want, sent


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_trace_replays_within_2_percent_through_the_mac(backend, cell):
    spec = steps_spec(3.0, **CELLS[cell])
    _, sent = check_replay(spec, backend)
    # The saturating CUBIC flow reaches the 40 Mbit/s level (windows 1.0-1.5 s): on ns-3 the
    # real MAC and RLC carry the resized blocks.
    assert sent[10:15].max() >= 0.95 * 500_000, f"{backend} {cell}: {sent[10:15]}"


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_xrc_explicit_rate_follows_a_capacity_step(backend, cell):
    spec = steps_spec(2.0, cca="xrc", **CELLS[cell])
    _, _, rates = replay(spec, backend)
    step_s = spec.step_ms / 1000.0
    # The agent's rate at the end of each 0.5 s hold (its window is 40 TTIs): 5, 20, 40 Mbit/s.
    for end_s, level in ((0.5, 5.0), (1.0, 20.0), (1.5, 40.0), (2.0, 5.0)):
        got = rates[int(round(end_s / step_s)) - 2]
        assert got == pytest.approx(level, rel=0.02), f"{backend} {cell} at {end_s} s"


@needs_shared
@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shared_mahimahi_slice_replays_within_2_percent(backend, cell):
    spec = load_scenario(
        "traces/tmobile_lte_short",
        sim_time_s=3.0,
        channel={"trace_offset_s": 30},
        flows=[{"ue": 0, "cca": "cubic", "traffic": "bulk"}],
        **CELLS[cell],
    )
    want, sent = check_replay(spec, backend)
    # 73 % of its TTIs carry nothing, the rest 1,500-28,500 bytes (on NR spread over the two
    # slots of each ms): the bursts get through the MAC. CUBIC's losses at the RLC cost it
    # retransmission timeouts on both backends (its fast retransmission queued behind new
    # segments, docs/calibration/README.md): measured 1-3 s on LTE, ns-3 56.8 % of the trace
    # (silent 1.00-1.35 s), fast 45.1 % (silent 1.20-1.30 s and 1.80-1.95 s).
    assert sent[10:].sum() >= 0.4 * want[10:].sum(), f"{backend} {cell}"


@needs_shared
@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lossless_flow_gets_the_whole_bursty_mahimahi_slice(backend, cell):
    # NewReno behind a 3,000-packet RLC buffer never loses a packet and keeps the queue
    # backlogged through the slice's bursts (73 % of its ms empty): every 100 ms window from
    # 1 s on carries the trace's bytes (measured: 100.0 % on both backends and cells).
    spec = load_scenario(
        "traces/tmobile_lte_short",
        sim_time_s=3.0,
        channel={"trace_offset_s": 30},
        rlc_buffer_pkts=3000,
        flows=[{"ue": 0, "cca": "newreno", "traffic": "bulk"}],
        **CELLS[cell],
    )
    want, sent = check_replay(spec, backend)
    assert np.all(sent[10:] >= 0.98 * want[10:]), f"{backend} {cell}: {sent[10:] / want[10:]}"


@needs_shared
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_irish5g_slice_replays_on_an_nr_cell(backend):
    # Seconds 8-11 of the download, about 20 Mbit/s shaped by the CQI (its first seconds, 0-0.2
    # Mbit/s, starve TCP on ns-3 on either cell type: a few bytes per TTI or slot, mostly
    # headers; from 24 s on it reaches 70-200 Mbit/s, where CUBIC overflows the 128-packet RLC
    # buffer in slow start and waits for a timeout).
    spec = load_scenario(
        "traces/irish5g_static",
        sim_time_s=3.0,
        channel={"trace_offset_s": 8},
        flows=[{"ue": 0, "cca": "cubic", "traffic": "bulk"}],
        cell=NR_CELL,
    )
    want, sent = check_replay(spec, backend)
    # The per-slot synthesis reaches the UE: CUBIC's blocks from 1 s on.
    assert sent[10:].sum() >= 0.5 * want[10:].sum(), f"{backend}: {sent.sum()} of {want.sum()}"


@pytest.mark.parametrize("name", TRACE_CONFIGS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_trace_configs_run_a_few_steps(name, backend):
    spec = load_scenario(f"traces/{name}", sim_time_s=0.2)
    if spec.channel.source in ("mahimahi", "irish5g") and not traces_dir().is_dir():
        pytest.skip(f"no shared traces at {traces_dir()}")
    caps, _, _ = replay(spec, backend)
    assert len(caps) == 10 and np.all(np.isfinite(caps)) and caps.sum() > 0


@pytest.mark.ns3
def test_ns3_refuses_a_capacity_file_of_another_interval(tmp_path):
    import subprocess

    from cellgym.paths import ns3_program
    from cellgym.traces import write_capacity_file

    series = channel_series(steps_spec(1.0).channel, 0.0005, SEED)  # 0.5 ms: not the LTE TTI
    path = write_capacity_file(series, tmp_path / "cap.txt")
    args = [str(ns3_program()), "--simTime=0.1", "--channelSource=synthetic"]
    done = subprocess.run([*args, f"--capacityTrace={path}"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "--capacityTrace=" in done.stderr and "interval_us 500" in done.stderr
    # A trace source without its file is refused too, never run on the distance channel.
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode == 2 and "--capacityTrace" in done.stderr
    if NR_MISSING:
        return
    # An NR cell reads the numerology's slot: mu = 2 (250 us) refuses the 500 us file, mu = 1
    # reads it.
    nr = [*args, "--cellType=nr", f"--capacityTrace={path}", "--flows=ue=0,cca=cubic"]
    done = subprocess.run([*nr, "--numerology=2"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "--capacityTrace=" in done.stderr and "interval_us 500" in done.stderr
    done = subprocess.run([*nr, "--numerology=1"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_short_queue_gets_the_whole_trace_below_one_full_band_block(backend):
    # 6 and 10 Mbit/s: 750 and 1,250 bytes per TTI, below the 4,395 of the full band at MCS 28,
    # so the trace shrinks every block the scheduler allocates. XRC keeps the RLC queue short
    # (a few kB): the scheduler must still see the data the shrunk blocks left in the RLC, or the
    # UE waits unserved until the RLC's next report (before the fix ns-3 delivered 43-56 % of
    # the 6 Mbit/s level, the twin 100 %). From 0.5 s (XRC's start) and 300 ms after the step up:
    # at least 98 % of the trace in all, and on ns-3 in every 100 ms (the twin's XRC dips to
    # 94 % in one window at 0.7 s, its pacing against the 40-TTI rate window).
    levels = {"levels_mbps": [6.0, 10.0], "hold_s": 1.0, "order": "cycle", "duration_s": 30.0}
    spec = load_scenario(
        "traces/steps",
        sim_time_s=2.0,
        channel={"params": levels},
        flows=[{"ue": 0, "cca": "xrc", "traffic": "bulk"}],
    )
    _, txs, _ = replay(spec, backend)
    want = capacity_per_window(channel_series(spec.channel, spec.cell.slot_s, SEED), 0.1, 2.0)
    share = per_window(spec, txs) / want
    steady = np.r_[share[5:10], share[13:20]]
    assert steady.mean() >= 0.98, f"{backend}: {np.round(share, 3)}"
    if backend == "ns3":
        assert np.all(steady >= 0.98), f"{backend}: {np.round(share, 3)}"


def _nr_payload_bytes(backend: str, cca: str, level_mbps: float, sim_time_s: float) -> float:
    """Bytes flow 0's receiver got on the NR cell replaying ``level_mbps`` throughout."""
    levels = {"levels_mbps": [level_mbps], "hold_s": 1.0, "order": "cycle", "duration_s": 30.0}
    spec = load_scenario(
        "traces/steps",
        sim_time_s=sim_time_s,
        channel={"params": levels},
        flows=[{"ue": 0, "cca": cca, "traffic": "bulk"}],
        cell=NR_CELL,
    )
    if backend == "ns3" and NR_MISSING:
        pytest.skip(NR_MISSING)
    session = open_session(spec, SEED, backend=backend)
    raw = session.start()
    rx = 0.0
    try:
        while not raw.done:
            raw = session.step(np.zeros((len(spec.agent_flows), 2)))
            rx += float(raw.flows[0, FLOW["rx_bytes"]])
    finally:
        session.close()
    return rx


@pytest.mark.ns3
@pytest.mark.parametrize(
    ("cca", "level_mbps", "sim_time_s"), [("newreno", 0.15, 4.0), ("xrc", 1.0, 3.0)]
)
def test_an_nr_trace_cell_serves_a_short_queue_the_whole_trace(cca, level_mbps, sim_time_s):
    # 5G-LENA gives a UE RBGs until the fixed MCS's TB holds its buffer, so a short queue holds a
    # few of the slot's RBG-symbols. The trace scheduler shares the slot's trace bytes among the
    # RBG-symbols assigned (not the slot's): a lone UE gets the whole trace, as on the twin.
    # Before, its share was of the whole slot: at 0.15 Mbit/s (9 bytes per 0.5 ms slot) NewReno's
    # receiver got 8.7 kB in 4 s on ns-3 against 46.3 kB on the twin (the Irish static session's
    # first seconds starved: the NR calibration row's utilization 0.000), and XRC at 1 Mbit/s
    # 0.79 of the twin's bytes; with it 0.97 and 0.97.
    ns3 = _nr_payload_bytes("ns3", cca, level_mbps, sim_time_s)
    fast = _nr_payload_bytes("fast", cca, level_mbps, sim_time_s)
    assert ns3 >= 0.9 * fast, f"{cca} at {level_mbps} Mbit/s: ns-3 {ns3:.0f} B, fast {fast:.0f} B"
    assert ns3 >= 0.5 * level_mbps * 1e6 / 8 * sim_time_s, f"{cca}: ns-3 {ns3:.0f} B"
