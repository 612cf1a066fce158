"""PRR on entering fast recovery in a bunch of ACKs: only the ACKs from the one that entered count.

ns-3 processes a bunch of duplicate ACKs one by one: those before the ACK that enters recovery
leave the socket in CA_DISORDER and never reach ``TcpPrrRecovery``'s ``prr_delivered``. The
twin took the whole bunch into PRR, so its first quota on entering recovery was larger: in
``calibration/cubic_rtt80`` (one CUBIC flow, RTT about 78 ms, a full RLC buffer when the
second loss is found) it sent three new segments beyond the recovery point at once, one of
them was dropped, and a second reduction followed when recovery ended (ssthresh 251 -> 175
segments, then CUBIC's fast convergence held the window below the path's BDP for 10 s:
utilization 0.835 against ns-3's 0.965 on 9 seeds). ns-3's runs of that scenario have one loss
event per overflow (at 0.8 s and 1.2 s for seed 1, ssthresh 349 then 250 segments).
"""

from __future__ import annotations

import numpy as np

from cellgym.fields import FLOW
from cellgym.scenario import load_scenario
from evaluation.rollouts import run_native


def test_one_overflow_gives_one_reduction_after_slow_start():
    spec = load_scenario("calibration/cubic_rtt80").replace(sim_time_s=2.0)
    rec = run_native(spec, "cubic", 1, "fast")
    flows = np.stack(rec.flows)[:, 0]
    events = np.flatnonzero(flows[:, FLOW["loss_events"]] > 0)
    assert len(events) == 2, np.array(rec.times)[events]
    ssthresh = flows[-1, FLOW["ssthresh_bytes"]] / 1448.0
    assert 240 <= ssthresh <= 260, ssthresh  # 0.7 x the window at the second overflow
