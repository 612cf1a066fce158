"""On a Mahimahi trace cell the twin's ACK clock is ns-3's: data reaches the eNB in every ms.

Diagnosis of the trace rows of the transfer report (docs/transfer, TMobile-LTE-short and
ATT-LTE-driving; 10 s, seeds 201-203 measured per step on both backends): both cells replay the
trace identically (the XRC agent's capacity per step is equal to the byte on both backends, and a
backlogged UE gets exactly the trace's bytes in every step on both), and a paced sender (pace90)
agrees. What differed was the ACK clock. The ``periodic`` uplink lets ACKs leave the UE only
every ``ul_period_ms`` = 4 ms, so an ACK-clocked sender's data reaches the eNB in 4 ms bunches:
99-100 % of the RLC head-of-line samples sit on one phase of the 4 ms grid (ns-3: 19-34 % on each
of the four), the minimum RTT is 41 ms against ns-3's 38 ms, and the same window holds about
20 kB less in the RLC queue (CUBIC, TMobile: 46 kB against 66 kB; HoL mean 18.0 against
20.5 ms, queueing delay 16.1 against 18.0 ms), which lowers the delay penalty by 0.24 and raises
the reward by 0.12, the whole gap at equal utilization. The ``bsr`` uplink (ns-3's
buffer-status/grant ACK timing, the LTE default) spreads the arrivals over the grid, the minimum
RTT is 38 ms and the CUBIC row agrees (reward 0.160 against ns-3's 0.151; periodic 0.275).
"""

from __future__ import annotations

import numpy as np
import pytest

from cellgym.fields import FLOW, UE
from cellgym.paths import traces_dir
from cellgym.scenario import load_scenario
from envs.fastsim.params import FastSimParams
from envs.fastsim.session import FastSession

needs_shared = pytest.mark.skipif(
    not traces_dir().is_dir(), reason=f"no shared traces at {traces_dir()}"
)
#: ns-3's minimum RTT of a CUBIC flow on this trace cell (seeds 201-203, 10 s): streaming ACKs.
NS3_MIN_RTT_MS = 38.0


def _run(fast_params: dict | None = None) -> tuple[np.ndarray, float]:
    """CUBIC on TMobile-LTE-short for 3 s: the HoL samples above 0 (ms) and the last min RTT."""
    spec = load_scenario(
        "traces/tmobile_lte_short",
        sim_time_s=3.0,
        flows=[{"ue": 0, "cca": "cubic", "traffic": "bulk"}],
    )
    session = FastSession(spec, 201, FastSimParams.from_spec(spec, **(fast_params or {})))
    raw = session.start()
    hol, rtt_min = [], 0.0
    while not raw.done:
        raw = session.step(np.zeros((0, 2)))
        hol.append(raw.ues[0, UE["hol_ms"]])
        rtt_min = float(raw.flows[0, FLOW["rtt_min_ms"]])
    session.close()
    h = np.array(hol)
    return h[h > 0], rtt_min


def _largest_phase_share(hol_ms: np.ndarray) -> float:
    """The largest share of HoL samples on one phase of a 4 ms grid (1/4 when spread evenly)."""
    phases = np.rint(hol_ms).astype(np.int64) % 4
    return float(np.bincount(phases, minlength=4).max() / phases.size)


@needs_shared
def test_ack_clocked_data_reaches_the_enb_in_every_ms_by_default():
    assert FastSimParams.from_spec(load_scenario("traces/tmobile_lte_short")).uplink == "bsr"
    hol, rtt_min = _run()
    assert hol.size > 50
    assert _largest_phase_share(hol) < 0.5  # periodic: 1.00; ns-3: 0.28
    assert rtt_min == NS3_MIN_RTT_MS  # periodic: 41 ms


@needs_shared
def test_the_periodic_uplink_bunches_acked_data_on_its_grid():
    hol, rtt_min = _run({"uplink": "periodic"})
    assert hol.size > 50
    assert _largest_phase_share(hol) > 0.9
    assert rtt_min > NS3_MIN_RTT_MS
