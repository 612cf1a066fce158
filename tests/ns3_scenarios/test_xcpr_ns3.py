"""XCP-r, ACK loss and ON/OFF UDP sources on the real simulator (docs/xcp-r.md "ns-3").

The chain of ``configs/scenario/chain_ack_loss.yaml`` (as the fast backend's test,
tests/fastsim/test_xcpr.py): a 20 Mbit/s wired bottleneck with XCP's router, then an LTE cell
well above 20 Mbit/s; ten 1 Mbit/s UDP sources on together in [3, 6) s halve the capacity left
to the flow; 30 % of the ACKs lost between the router and the server. One flow, XCP or XCP-r,
with and without the loss, run directly (no bridge), recording each step and reading the
program's end-of-run lines on stderr: the ACKs drawn and dropped, each UDP source's time on
and bytes sent and received, and the feedback total the router handed the flow.
"""

from __future__ import annotations

import math
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from cellgym.fields import FLOW
from cellgym.paths import ns3_program
from cellgym.scenario import FlowSpec, ScenarioSpec, load_scenario

pytestmark = pytest.mark.ns3

LOSS = 0.3
SIM_S = 8.5
# Settled phases: the full link, the halved one (UDP on in [3, 6) s), the full link again.
PHASES = ((1.5, 3.0), (4.0, 6.0), (7.0, SIM_S))
# ns-3's initial window (TcpSocket::InitialCwnd, 10 segments) of 1448 - 20 bytes (XCP's header).
INIT_CWND = 10 * (1448 - 20)
SEG = 1448 - 20


def _spec(cca: str, loss: float):
    return load_scenario(
        "chain_ack_loss", sim_time_s=SIM_S, ack_loss=loss, flows=[FlowSpec(cca=cca)]
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[tuple[str, float], dict]:
    """The four runs (XCP, XCP-r; without, with the loss), two at a time."""
    tmp: Path = tmp_path_factory.mktemp("xcpr")
    keys = [(cca, loss) for cca in ("xcp", "xcpr") for loss in (0.0, LOSS)]
    out: dict[tuple[str, float], dict] = {}
    for pair in (keys[:2], keys[2:]):
        procs = {}
        for cca, loss in pair:
            record = tmp / f"{cca}_{loss}.csv"
            args = [str(ns3_program()), *_spec(cca, loss).to_ns3_args(1), f"--recordPath={record}"]
            procs[(cca, loss)] = (subprocess.Popen(args, stderr=subprocess.PIPE, text=True), record)
        for key, (proc, record) in procs.items():
            _, err = proc.communicate(timeout=600)
            assert proc.returncode == 0, err[-2000:]
            out[key] = {"stderr": err, **_record(record)}
    return out


def _record(path: Path) -> dict[str, np.ndarray]:
    rows = [line.split(",") for line in path.read_text().splitlines()[1:]]
    flow = np.array([[float(x) for x in r[3:]] for r in rows if r[1] == "flow" and r[2] == "0"])
    t = np.array([float(r[0]) for r in rows if r[1] == "flow" and r[2] == "0"])
    return {"t": t, "cwnd": flow[:, FLOW["cwnd_bytes"]], "acked": flow[:, FLOW["acked_bytes"]]}


def _line(err: str, key: str) -> list[dict[str, float]]:
    """The end-of-run lines ``cellgym-lte: <key> a=1 b=2`` as dicts."""
    found = []
    for line in err.splitlines():
        if line.startswith(f"cellgym-lte: {key} "):
            found.append({k: float(v) for k, v in re.findall(r"(\w+)=([-\d.e+]+)", line)})
    return found


def _phase_mean(run: dict, values: np.ndarray, lo: float, hi: float) -> float:
    sel = (run["t"] >= lo) & (run["t"] < hi)
    return float(values[sel].mean())


def test_xcpr_keeps_its_window_and_throughput_under_ack_loss(runs):
    lossless, lossy = runs[("xcpr", 0.0)], runs[("xcpr", LOSS)]
    for lo, hi in PHASES:
        for field in ("cwnd", "acked"):
            want = _phase_mean(lossless, lossless[field], lo, hi)
            got = _phase_mean(lossy, lossy[field], lo, hi)
            assert got == pytest.approx(want, rel=0.1), (field, lo, hi)
    # The halved phase: the flow's throughput follows the capacity UDP leaves (10 Mbit/s of 20).
    full = _phase_mean(lossy, lossy["acked"], *PHASES[0])
    halved = _phase_mean(lossy, lossy["acked"], *PHASES[1])
    assert halved / full == pytest.approx(0.5, abs=0.1)


def test_xcp_loses_the_feedback_of_lost_acks_where_xcpr_keeps_it(runs):
    # The window moved by (cwnd - the initial window) against the feedback the router handed
    # the flow: all of it without loss and with XCP-r (its ACKs carry the window), about the
    # surviving 70 % with XCP under 30 % loss (the router hands out more to hold the window).
    applied = {}
    for key, run in runs.items():
        (fb,) = _line(run["stderr"], "xcp_feedback")
        applied[key] = (run["cwnd"][-1] - INIT_CWND) / fb["total_bytes"]
    for key in (("xcp", 0.0), ("xcpr", 0.0), ("xcpr", LOSS)):
        assert applied[key] == pytest.approx(1.0, abs=0.05), (key, applied)
    assert applied[("xcp", LOSS)] < 1 - LOSS / 2, applied


def test_ack_loss_fraction_matches_ack_loss(runs):
    for cca in ("xcp", "xcpr"):
        (drawn,) = _line(runs[(cca, LOSS)]["stderr"], "ack_loss")
        n, lost = drawn["acks"], drawn["dropped"]
        assert n > 1000
        # Binomial(n, p): within 4.5 standard deviations.
        assert abs(lost - LOSS * n) <= 4.5 * math.sqrt(n * LOSS * (1 - LOSS)), drawn
        assert _line(runs[(cca, 0.0)]["stderr"], "ack_loss") == []  # no draw without loss


def test_udp_sources_send_their_rate_while_on(runs):
    spec = _spec("xcpr", LOSS)
    sources = _line(runs[("xcpr", LOSS)]["stderr"], "udp")
    assert len(sources) == spec.udp_sources
    # Fixed periods from 3 s: on in [3, 6), off in [6, 9): 3 s on by 8.5 s.
    on_s = min(spec.udp_on_s, SIM_S - spec.udp_start_s)
    for src in sources:
        assert src["on_s"] == pytest.approx(on_s, abs=1e-6)
        rate_mbps = src["sent_bytes"] * 8 / src["on_s"] / 1e6
        # Within one 1500-byte packet of the configured rate over the on time.
        assert rate_mbps == pytest.approx(spec.udp_rate_mbps, abs=1500 * 8 / src["on_s"] / 1e6)
        # Through the bottleneck (XCP keeps its queue short: nothing dropped).
        assert src["received_bytes"] == src["sent_bytes"]


def test_xcpr_at_the_base_station_keeps_its_throughput_under_ack_loss(tmp_path):
    # No wired bottleneck: XCP's router per UE at the base station (LTE, 50 RBs, one UE at
    # 100 m, about 33 Mbit/s), the same 30 % ACK loss; settled from 1 s.
    mbps = {}
    for loss in (0.0, LOSS):
        spec = ScenarioSpec(
            name="xcpr_cell", sim_time_s=4.0, rlc_buffer_pkts=1000, ack_loss=loss,
            flows=[FlowSpec(cca="xcpr")],
        )  # fmt: skip
        record = tmp_path / f"cell_{loss}.csv"
        args = [str(ns3_program()), *spec.to_ns3_args(1), f"--recordPath={record}"]
        out = subprocess.run(args, capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, out.stderr[-2000:]
        run = _record(record)
        mbps[loss] = _phase_mean(run, run["acked"], 1.0, 4.0) * 8 / (spec.step_ms * 1e3)
    assert mbps[0.0] > 20
    assert mbps[LOSS] == pytest.approx(mbps[0.0], rel=0.1), mbps
