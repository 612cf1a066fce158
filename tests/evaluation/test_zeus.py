"""The Zeus experiment command: a tiny matrix end to end (default tier), a short ns-3 one (``ns3``).

The tiny run checks that both tables, the figures, ``numbers.json`` and the report are written and
consistent with each other: the optimum's row is all ones, every value lies in its range, Table 3
is the scores of Table 2's means, CUBIC's self-harm band holds CUBIC's own harm, and the report is
reproduced from ``numbers.json`` by ``--render``.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from cellgym import provenance
from cellgym.fields import FLOW
from cellgym.paths import REPO_ROOT
from cellgym.reward import RewardSpec
from cellgym.scenario import load_scenario
from cellgym.vocab import SpecError
from cellgym.zeus import zeus_scores
from evaluation.experiments import zeus, zeus_report
from evaluation.rollouts import run_policy

OUTPUTS = (
    "table2.md",
    "table2.csv",
    "table2_by_trace.csv",
    "table3.md",
    "table3.csv",
    "harm.csv",
    "fig9.csv",
    "fig8_harm.png",
    "frontiers.png",
    "fig9_buffer.png",
    "numbers.json",
    "report.md",
)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _check_outputs(out: Path, args: list[str], backend: str, controllers: list[str]) -> dict:
    for name in OUTPUTS:
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name
    numbers = json.loads((out / "numbers.json").read_text())
    failed = [r for r in numbers["runs"] if "error" in r]
    assert not failed, failed
    # Provenance: fresh for the arguments, shown in the report.
    prov = numbers["provenance"]
    assert prov["args"] == args
    assert provenance.staleness(prov, REPO_ROOT, zeus.INPUTS) == ""
    assert "evaluation/experiments/zeus.py" in prov["inputs"]
    report = (out / "report.md").read_text()
    assert provenance.markdown_line(prov) in report

    t2 = {r["controller"]: r for r in _rows(out / "table2.csv") if r["backend"] == backend}
    t3 = {r["controller"]: r for r in _rows(out / "table3.csv") if r["backend"] == backend}
    assert set(t2) == set(t3) == set(controllers)
    opt = t2["optimum"]
    assert float(opt["util_pct"]) == 100.0 and float(opt["delay_inflation"]) == 1.0
    assert float(opt["intra_fairness"]) == 1.0 and float(opt["inter_fairness"]) == 1.0
    for name in ("realtime", "bulk", "mixed"):
        assert float(t3["optimum"][name]) == pytest.approx(1.0)
    solo = [r for r in numbers["runs"] if r["backend"] == backend and r["kind"] == "solo"]
    for run in solo:
        f = run["flows"][0]
        # Delay inflation is the flow's mean RTT over the path's base RTT, never below 1.
        assert f["delay_inflation"] == pytest.approx(f["rtt_ms"] / f["base_rtt_ms"], rel=1e-9)
        assert f["rtt_ms"] >= f["base_rtt_ms"] and 0.0 < f["utilization"] <= 1.0, run
    for c, r in t2.items():
        util, infl = float(r["util_pct"]), float(r["delay_inflation"])
        intra, inter = float(r["intra_fairness"]), float(r["inter_fairness"])
        if c != "optimum":
            # Table 2 is the mean of the controller's solo runs (one per trace, buffer, seed).
            own = [x["flows"][0] for x in solo if x["controller"] == c]
            assert len(own) == len(zeus_report.cells(numbers, backend)), c
            mean_util = 100.0 * sum(f["utilization"] for f in own) / len(own)
            mean_infl = sum(f["delay_inflation"] for f in own) / len(own)
            assert util == pytest.approx(mean_util, abs=0.01), (c, util, mean_util)
            assert infl == pytest.approx(mean_infl, abs=0.01), (c, infl, mean_infl)
        assert 0.5 <= intra <= 1.0 and 0.5 <= inter <= 1.0, (c, intra, inter)
        # Table 3 is the scores of Table 2's means.
        want = zeus_scores(util / 100.0, infl, intra, inter)
        for name, v in want.items():
            assert float(t3[c][name]) == pytest.approx(v, abs=1e-5), (c, name)
        assert f"| {backend} | {c} |" in (out / "table2.md").read_text()
        assert f"| {backend} | {c} |" in (out / "table3.md").read_text()
    # Delay-based flows sit below CUBIC's bufferbloat; nothing beats the optimum.
    assert float(t2["optimum"]["delay_inflation"]) <= min(
        float(r["delay_inflation"]) for r in t2.values()
    )

    # Harm: CUBIC's own harms lie in its self-harm band; the optimum takes a fair half.
    tables = zeus_report.analyse(numbers)
    for key, entry in tables["harm"].items():
        if not key.startswith(backend):
            continue
        lo, hi = entry["band"]["throughput_harm"]
        assert lo <= entry["controllers"]["cubic"]["throughput_harm"] <= hi
        assert 20.0 < entry["controllers"]["cubic"]["throughput_harm"] < 80.0
        assert entry["controllers"]["optimum"]["delay_harm"] < 0.0
    # Fig. 9's rows: BBR's share is its part of the two flows' throughput; with CUBIC's, one.
    assert tables["fig9"], "no BBR-vs-CUBIC run"
    for r in tables["fig9"]:
        total = r["controller_mbps"] + r["cubic_mbps"]
        assert total > 0.0, r
        assert r["controller_share"] == pytest.approx(r["controller_mbps"] / total, rel=1e-12)
        assert r["controller_share"] + r["cubic_mbps"] / total == pytest.approx(1.0, abs=1e-12)
        assert 0.0 <= r["controller_share"] <= 1.0
    # The report is a function of numbers.json.
    assert report == zeus_report.report(numbers, tables)
    return numbers


def test_zeus_command_tiny_matrix(tmp_path: Path) -> None:
    # A synthetic trace (capacity steps of 5, 20, 40 Mbit/s) and the distance-channel cell (its
    # utilization over the recorded capacity, its BDP over a CUBIC probe's).
    args = [
        "--backend",
        "fast",
        "--controllers",
        "bbr,oracle,optimum",
        "--traces",
        "traces/steps,single_flow",
        "--buffers",
        "1,inf",
        "--fig9-buffers",
        "3",
        "--seeds",
        "1",
        "--duration",
        "4",
        "--jobs",
        "1",
        "--out",
        str(tmp_path),
    ]
    numbers = zeus.main(args)
    _check_outputs(tmp_path, args, "fast", ["bbr", "oracle", "optimum"])
    kinds = {(r["kind"], r["controller"], r["buffer"]) for r in numbers["runs"]}
    # CUBIC's reference runs ran though CUBIC is not under test; Fig. 9's extra buffer too.
    assert {("solo", "cubic", "1"), ("self", "cubic", "inf"), ("vs", "bbr", "3")} <= kinds
    assert ("solo", "cubic", "3") not in kinds
    oracle_self = next(
        r for r in numbers["runs"] if r["kind"] == "self" and r["controller"] == "oracle"
    )
    assert oracle_self["ccas"] == ["agent", "agent"]
    # Buffers: 1 BDP is a small finite buffer, inf the unlimited one.
    pkts = {
        (r["trace"], r["buffer"]): r["buffer_pkts"] for r in numbers["runs"] if r["kind"] == "solo"
    }
    # The steps trace's mean, 65/3 Mbit/s, x 38 ms: 69 packets per BDP.
    assert pkts[("traces/steps", "1")] == 69 and pkts[("traces/steps", "inf")] >= 10**5
    assert 50 <= pkts[("single_flow", "1")] <= 200
    # The optimum: each trace's mean capacity (the steps' 65/3 Mbit/s over 4 s: 5 and 20).
    opt = numbers["optimum"]["fast"]
    assert opt["traces/steps|1"]["throughput_mbps"] == pytest.approx(12.5, rel=1e-3)
    assert opt["traces/steps|1"]["series"]["source"] == "synthetic"
    solo = [r for r in numbers["runs"] if r["kind"] == "solo" and r["trace"] == "traces/steps"]
    assert all(r["flows"][0]["throughput_mbps"] <= 12.5 * 1.02 for r in solo)
    # --render rewrites the same report from numbers.json.
    before = (tmp_path / "report.md").read_text()
    (tmp_path / "report.md").unlink()
    zeus.main([*args, "--render"])
    assert (tmp_path / "report.md").read_text() == before


def test_oracle_driver_matches_the_environment_with_one_flow() -> None:
    # With one agent flow, run_policy_flows is LteCellEnv (rate mode) driven by the oracle.
    spec = zeus.trace_scenario("single_flow", ["oracle"], "5", 3.0, 2, bdp_rate_bps=30e6)
    mine = zeus.run_policy_flows(spec, "oracle", 2, "fast", max_change=zeus.ORACLE_MAX_CHANGE)
    from baselines import make_policy

    policy = make_policy(
        "oracle", max_change=zeus.ORACLE_MAX_CHANGE, step_ms=spec.step_ms, action_mode="rate"
    )
    env_kwargs = {"max_change": zeus.ORACLE_MAX_CHANGE, "action_mode": "rate"}
    ref = run_policy(spec, policy, 2, "oracle", RewardSpec(), "fast", env_kwargs)
    a, b = np.stack(mine.flows), np.stack(ref.flows)
    assert a.shape == b.shape
    np.testing.assert_allclose(a[:, 0, FLOW["rx_bytes"]], b[:, 0, FLOW["rx_bytes"]], rtol=1e-9)
    np.testing.assert_allclose(
        a[:, 0, FLOW["pacing_rate_mbps"]], b[:, 0, FLOW["pacing_rate_mbps"]], rtol=1e-6
    )


def test_jobs_and_bad_input(capsys) -> None:
    jobs = zeus.make_jobs("fast", ["cubic", "xrc", "optimum"], ["t"], ["1", "inf"], [1, 2], 5.0)
    # Per buffer and seed: CUBIC solo + self (its vs run), XRC solo + self + vs.
    assert len(jobs) == 2 * 2 * 5
    assert {j.ccas for j in jobs if j.controller == "xrc"} == {
        ("xrc",),
        ("xrc", "xrc"),
        ("cubic", "xrc"),
    }
    assert not any(j.controller == "optimum" for j in jobs)
    with pytest.raises(SpecError, match="buffers='0'"):
        zeus.parse_buffer("0")
    with pytest.raises(SpecError, match="buffers='deep'"):
        zeus.parse_buffer("deep")
    assert math.isinf(zeus.parse_buffer("inf"))
    with pytest.raises(SpecError, match="controllers='ledbat'.*backend='fast'"):
        zeus.matrix(zeus.parse_args(["--controllers", "ledbat"]))
    with pytest.raises(SpecError, match="controllers='nope'"):
        zeus.matrix(zeus.parse_args(["--controllers", "nope"]))
    with pytest.raises(SystemExit) as exit_:
        zeus.parse_args(["--seeds", "0"])
    assert exit_.value.code == 2
    assert "error: --seeds=0 is out of range: allowed 1 or more" in capsys.readouterr().err
    # The default matrix: the shared traces, Zeus's buffers, the oracle and optimum everywhere.
    plan = zeus.matrix(zeus.parse_args(["--backend", "both"]))
    assert plan["fast"]["buffers"] == ["1", "5", "10", "inf"]
    for b in ("fast", "ns3"):
        assert {"oracle", "optimum", "cubic", "xrc"} <= set(plan[b]["controllers"])
    assert {"ledbat", "vegas"} <= set(plan["ns3"]["controllers"])
    assert len(plan["fast"]["traces"]) == 4
    # ns-3 runs a subset by default; its own options, else the general ones, override it.
    assert plan["ns3"]["buffers"] == ["5", "inf"] and plan["ns3"]["seeds"] == [1]
    plan = zeus.matrix(
        zeus.parse_args(["--backend", "both", "--seeds", "2", "--ns3-controllers", "vegas"])
    )
    assert plan["ns3"]["seeds"] == plan["fast"]["seeds"] == [1, 2]
    assert plan["ns3"]["controllers"] == ["vegas"] and "vegas" not in plan["fast"]["controllers"]


def test_trace_scenarios_resolve_buffers_on_the_trace() -> None:
    try:
        spec = zeus.trace_scenario("traces/tmobile_lte_short", ["cubic", "bbr"], "5", 10.0, 1)
    except SpecError as exc:
        pytest.skip(f"shared traces are absent: {exc}")
    assert spec.buffer_bdp is None and [f.cca for f in spec.flows] == ["cubic", "bbr"]
    assert (
        spec.sim_time_s == 10.0 and spec.channel == load_scenario("traces/tmobile_vs_cubic").channel
    )
    # 5 x 16.7 Mbit/s x 38 ms / 1500 B: 265 packets.
    assert 255 <= spec.rlc_buffer_pkts <= 275


@pytest.mark.ns3
def test_zeus_command_on_ns3(tmp_path: Path) -> None:
    args = [
        "--backend",
        "ns3",
        "--controllers",
        "ledbat,oracle,optimum",
        "--traces",
        "traces/steps",
        "--buffers",
        "inf",
        "--fig9-buffers",
        "",
        "--seeds",
        "1",
        "--duration",
        "3",
        "--jobs",
        "2",
        "--out",
        str(tmp_path),
    ]
    zeus.main(args)
    _check_outputs(tmp_path, args, "ns3", ["ledbat", "oracle", "optimum"])


def test_inputs_cover_what_the_numbers_depend_on() -> None:
    files = set(provenance.input_files(zeus.INPUTS, REPO_ROOT))
    for f in (
        "evaluation/experiments/zeus.py",
        "cellgym/zeus.py",
        "cellgym/metrics.py",
        "baselines/oracle.py",
        "configs/scenario/traces/tmobile_lte_short.yaml",
        "envs/fastsim/sim.py",
        "cellgym/traces/spec.py",
    ):
        assert f in files, f
    # The report is rendered from numbers.json: not an input.
    assert "evaluation/experiments/zeus_report.py" not in files
