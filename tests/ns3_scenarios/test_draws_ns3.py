"""One seed, the same scenario draws on ns-3 and on the fast model (``cellgym.draws``).

Read back from each backend's own records: the UEs' distances of every step (ns-3's
``--recordPath``, the fast cell's observation), when each flow's application started (ns-3's
end-of-run ``flow_start`` lines, the fast cell's state), the finished Pareto flows' arrivals and
sizes (both backends' flow records) and the UDP sources' time on (ns-3's end-of-run ``udp`` lines
against the drawn periods). Then the program's checks of a ``--draws`` file.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from cellgym.draws import draw, render_draws
from cellgym.fields import FLOW, UE, UE_FIELDS
from cellgym.paths import ns3_program
from cellgym.scenario import ScenarioSpec
from envs.fastsim import FastCellBatch, FastSimParams
from envs.fastsim.session import FastSession
from envs.fastsim.state import BS_WIDTH, I_START_MS
from envs.ns3_draws import draws_args
from envs.ns3_flows import flow_log_args, read_flow_log

pytestmark = pytest.mark.ns3

MOBILE = ScenarioSpec.from_config(
    {
        "sim_time_s": 2.0,
        "step_ms": 20.0,
        "num_ues": 3,
        "channel": {"mobility": "random", "mobility_period_s": 0.5, "distances_m": [150.0]},
        "flows": [
            {"ue": 0, "cca": "cubic"},
            # Seed 1234 draws it a 6 ms offset: it starts at 320 ms, a step's end.
            {"ue": 1, "cca": "newreno", "start_s": 0.314},
            {"ue": 2, "cca": "bbr", "traffic": "short", "size_bytes": 100_000},
        ],
    }
)
WIRED = ScenarioSpec.from_config(
    {
        "sim_time_s": 3.0,
        "bottleneck_mbps": 20.0,
        "bottleneck_buffer_pkts": 500,
        "udp_sources": 1,
        "udp_rate_mbps": 2.0,
        "udp_periods": "exponential",
        "udp_on_s": 0.3,
        "udp_off_s": 0.5,
        "flows": [{"traffic": "pareto", "pareto_iat_ms": 40.0, "pareto_cutoff_pkts": 200.0}] * 6,
    }
)


def _program(spec: ScenarioSpec, seed: int, tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    args = [str(ns3_program()), *spec.to_ns3_args(seed), *draws_args(spec, seed, tmp), *extra]
    return subprocess.run(args, cwd=tmp, capture_output=True, text=True, timeout=900)


def _ns3(spec: ScenarioSpec, seed: int, tmp: Path) -> dict[str, np.ndarray]:
    rec = tmp / f"rec-{seed}.csv"
    out = _program(spec, seed, tmp, f"--recordPath={rec}")
    assert out.returncode == 0, out.stderr[-2000:]
    rows = [r.split(",") for r in rec.read_text().splitlines()[1:] if r.split(",")[1] == "ue"]
    t = np.array([float(r[0]) for r in rows[:: spec.num_ues]])
    col = 3 + UE_FIELDS.index("distance_m")
    d = np.array([float(r[col]) for r in rows]).reshape(-1, spec.num_ues)
    starts = dict(re.findall(r"cellgym-lte: flow_start flow=(\d+) start_s=(\S+)", out.stderr))
    flows = [r.split(",") for r in rec.read_text().splitlines()[1:] if r.split(",")[1] == "flow"]
    col = 3 + FLOW["active"]
    active = np.array([float(r[col]) for r in flows]).reshape(-1, len(spec.flows))
    return {
        "t": t,
        "d": d,
        "start_ms": np.array([float(starts[str(f)]) * 1e3 for f in range(len(spec.flows))]),
        "first_active": (active > 0).argmax(axis=0),
    }


def _fast(spec: ScenarioSpec, seed: int) -> dict[str, np.ndarray]:
    s = FastSession(spec, seed)
    raw = s.start()
    t, d, a = [raw.t], [raw.ues[:, UE["distance_m"]].copy()], [raw.flows[:, FLOW["active"]]]
    while not raw.done:
        raw = s.step(np.zeros((0, 2)))
        t.append(raw.t)
        d.append(raw.ues[:, UE["distance_m"]].copy())
        a.append(raw.flows[:, FLOW["active"]].copy())
    return {
        "t": np.array(t),
        "d": np.array(d),
        "start_ms": s.cell.state.fi[0, :, I_START_MS],
        "first_active": (np.array(a) > 0).argmax(axis=0),
    }


def test_a_seed_gives_both_backends_the_same_ue_distances_and_flow_starts(tmp_path):
    runs = {}
    for seed in (1234, 1235):
        ns3, fast = _ns3(MOBILE, seed, tmp_path), _fast(MOBILE, seed)
        n = min(len(ns3["t"]), len(fast["t"]))
        assert n >= 100 and np.allclose(ns3["t"][:n], fast["t"][:n])
        print(f"seed {seed}: flow starts (ms) ns-3 {ns3['start_ms']} fast {fast['start_ms']}")
        for i in range(0, n, 25):
            print(f"  t={ns3['t'][i]:.2f} s: ns-3 {ns3['d'][i]} fast {fast['d'][i]}")
        # Every step's distances (ns-3's record rounds them to 10 digits; its positions are
        # x, y of the drawn distance at the UE's angle).
        assert np.allclose(ns3["d"][:n], fast["d"][:n], rtol=1e-8, atol=0)
        assert np.allclose(ns3["start_ms"], fast["start_ms"], rtol=0, atol=1e-6)
        # The step records: each flow is first active in the same step (a start at a step's
        # end counts in that step on both).
        assert np.array_equal(ns3["first_active"], fast["first_active"])
        # The draws themselves: four moves, at 0.5, 1.0, 1.5 and 2.0 s.
        assert len(np.unique(fast["d"][:n, 0])) == 5
        runs[seed] = fast
    assert not np.array_equal(runs[1234]["d"], runs[1235]["d"])
    assert not np.array_equal(runs[1234]["start_ms"], runs[1235]["start_ms"])


def test_pareto_arrivals_sizes_and_udp_periods_are_the_same_on_both_backends(tmp_path):
    seed = 321
    log = tmp_path / "flows.csv"
    out = _program(WIRED, seed, tmp_path, *flow_log_args(log))
    assert out.returncode == 0, out.stderr[-2000:]
    ns3 = read_flow_log(log)
    batch = FastCellBatch(FastSimParams.from_spec(WIRED), 1, parallel=False)
    batch.reset(np.array([seed]))
    while not batch.done[0]:
        batch.step()
    fast = batch.workload.finished(0)
    d = draw(WIRED, seed)
    arrivals_ms = 100.0 + d.pareto[0].after_ms
    sizes = d.pareto[0].size_pkts
    tick = np.floor(arrivals_ms).astype(int)
    assert len(ns3) > 30 and len(fast) > 30
    # Both backends' records: a finished flow's arrival (whole ms) and size are drawn ones.
    for rec in (ns3, fast):
        for r in rec:
            assert r["size_pkts"] in sizes[tick == r["arrival_ms"]]
    # And mostly the same flows finished on both.
    common = set(ns3["arrival_ms"].tolist()) & set(fast["arrival_ms"].tolist())
    assert len(common) > 0.8 * min(len(ns3), len(fast))
    # The UDP source: on for the drawn ON periods until the run ends (3 s).
    on_s = float(re.search(r"cellgym-lte: udp source=0 on_s=(\S+)", out.stderr).group(1))
    stop = WIRED.sim_time_s
    edges = np.concatenate([[0.0], np.cumsum(d.udp_periods_s[0])])
    want = sum(max(0.0, min(edges[i + 1], stop) - edges[i]) for i in range(0, len(edges) - 1, 2))
    assert on_s == pytest.approx(want, abs=1e-6)
    # The fast model's source switched at the same drawn times (its next switch: ms).
    taken = int(batch.state.bqs[0, BS_WIDTH + 2])
    assert batch.state.bqs[0, BS_WIDTH + 1] == pytest.approx(edges[taken] * 1e3)
    assert edges[taken - 1] <= stop <= edges[taken]


def _bad(tmp_path: Path, text: str, seed: int = 5) -> str:
    path = tmp_path / "draws.txt"
    path.write_text(text)
    args = [str(ns3_program()), *MOBILE.to_ns3_args(seed), f"--draws={path}"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2, out.stderr[-1000:]
    assert f"--draws='{path}'" in out.stderr
    return out.stderr


def test_the_program_checks_the_draws_file_and_exits_2_naming_it(tmp_path):
    good = render_draws(draw(MOBILE, 5))
    assert "not a draws file" in _bad(tmp_path, "hello\n")
    assert "was drawn for RngRun 5: this run's --simSeed is 6" in _bad(tmp_path, good, seed=6)
    assert "has 2 flows: this run has 3" in _bad(
        tmp_path, re.sub(r"^flows 3 (\d+) ", r"flows 2 ", good, flags=re.M)
    )
    far = re.sub(r"^(ue 1 )\S+", r"\g<1>999.5", good, flags=re.M)
    assert "UE 1's distance '999.5' is not a number in [100, 380]" in _bad(tmp_path, far)
    assert "expected 'end'" in _bad(tmp_path, good.replace("\nend\n", "\n"))
    # Random moves without draws: refused, naming what needs them.
    out = subprocess.run(
        [str(ns3_program()), *MOBILE.to_ns3_args(5)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2 and "--mobility=random needs --draws=<file>" in out.stderr
