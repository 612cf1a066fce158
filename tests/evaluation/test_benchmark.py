"""CellGym Bench end to end: the mini-suite scored, cached, resumed, refused and published.

``python -m evaluation.benchmark score`` on the two-task mini-suite (``configs/benchmark/
mini.yaml``) on the fast backend through the worker pool: every run is cached, a second call
runs nothing, a deleted record is the only run a third call makes; a controller a backend cannot
run fails before any simulation (exit 2, nothing cached); a user's policy class is scored; the
leaderboard's files come from the cache with their provenance. The ns-3 tier scores the
mini-suite (1.5 s of simulated time per run) on ns-3.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evaluation.benchmark import cli
from evaluation.benchmark.cache import RunCache, code_digest
from evaluation.benchmark.entrants import resolve_entrants
from evaluation.benchmark.runner import plan
from evaluation.benchmark.suite import load_suite

CONTROLLERS = "xrc,xrc_policy"
USER = "evaluation.example_policies:DelayAimd"


def _score(cache: Path, controllers: str, backend: str = "fast", jobs: int = 1) -> list[str]:
    return [
        "score", "--suite", "mini", "--backend", backend, "--controllers", controllers,
        "--jobs", str(jobs), "--cache", str(cache), "--no-progress", "--reps", "200",
    ]  # fmt: skip


def _files(cache: Path) -> dict[str, float]:
    return {p.name: p.stat().st_mtime_ns for p in cache.rglob("*.json")}


@pytest.fixture(scope="module")
def fast_cache(tmp_path_factory) -> Path:
    """The mini-suite's test split on the fast backend, XRC native and policy and CUBIC."""
    cache = tmp_path_factory.mktemp("bench") / "cache"
    assert cli.main(_score(cache, CONTROLLERS, jobs=2)) == 0
    return cache


def test_score_runs_every_controller_task_and_seed_into_the_cache(fast_cache, capsys):
    suite = load_suite("mini")
    entrants = resolve_entrants(CONTROLLERS.split(","), suite, "fast")
    assert [e.label for e in entrants] == ["xrc", "xrc_policy", "cubic"]
    jobs = plan(suite, "test", "fast", entrants)
    assert len(jobs) == 3 * 2 * 2  # controllers (with the reference) x tasks x seeds
    cache = RunCache(fast_cache)
    for j in jobs:
        rec = cache.get("fast", j.key)
        assert rec["status"] == "ok" and rec["meta"]["code"] == code_digest("fast")
        assert rec["metrics"]["steps"] > 0 and 0 < rec["metrics"]["thpt"] <= 1.5
        if j.task == "competition/vs-cubic":
            assert rec["metrics"]["competitor_tput_mbps"] > 0
            assert 0.5 <= rec["metrics"]["inter_fairness"] <= 1.0


def test_a_second_call_runs_nothing_and_an_interrupted_one_resumes(fast_cache, tmp_path, capsys):
    cache = tmp_path / "cache"
    shutil.copytree(fast_cache, cache)
    before = _files(cache)
    assert cli.main(_score(cache, CONTROLLERS)) == 0
    out = capsys.readouterr().out
    assert "12 runs, 0 run now" in out and _files(cache) == before
    assert "xrc_policy" in out and "cubic" in out and "0.000" in out  # CUBIC is the zero
    # An interrupted call: one run's record never written. The next call makes that one only.
    lost = sorted(cache.rglob("*.json"))[3]
    lost.unlink()
    assert cli.main(_score(cache, CONTROLLERS)) == 0
    assert "12 runs, 1 run now" in capsys.readouterr().out
    after = _files(cache)
    assert after.keys() == before.keys()
    assert [k for k in after if after[k] != before[k]] == [lost.name]


def test_a_users_policy_class_is_scored_beside_the_cached_ones(fast_cache, tmp_path, capsys):
    cache = tmp_path / "cache"
    shutil.copytree(fast_cache, cache)
    assert cli.main(_score(cache, f"xrc,{USER}")) == 0
    out = capsys.readouterr().out
    assert "12 runs, 4 run now" in out and "delay_aimd" in out


@pytest.mark.parametrize(
    ("controller", "backend", "match"),
    [
        ("illinois", "fast", "does not run on backend='fast'"),
        ("ns3::TcpIllinois", "fast", "runs on ns-3 only"),
        ("ns3::TcpMine", "ns3", "not a TypeId the scenario program can install"),
        ("nosuch", "fast", "is not a known controller"),
        ("runs/nosuch/model.zip", "fast", "no trained model"),
        ("evaluation.example_policies:Nope", "fast", "has no class 'Nope'"),
    ],
)
def test_a_controller_the_backend_cannot_run_fails_before_any_run(
    controller, backend, match, tmp_path, capsys
):
    cache = tmp_path / "cache"
    assert cli.main(_score(cache, f"xrc,{controller}", backend=backend)) == 2
    assert match in capsys.readouterr().err
    assert not cache.exists()


def test_an_ns3_typeid_is_its_registry_controller():
    suite = load_suite("mini")
    (e, _) = resolve_entrants(["ns3::TcpBbr"], suite, "fast")
    assert (e.label, e.kind, e.identity["name"]) == ("bbr", "native", "bbr")


def test_the_leaderboard_is_written_from_the_cache_with_provenance(fast_cache, tmp_path, capsys):
    out = tmp_path / "board"
    args = ["leaderboard", "--suite", "mini", "--backend", "fast", "--out", str(out)]
    assert cli.main([*args, "--cache", str(fast_cache), "--reps", "200"]) == 0
    names = {p.name for p in out.iterdir()}
    tables = ("aggregates", "improvement", "runs", "tasks", "profiles")
    figures = ("profiles", "intervals", "improvement")
    wanted = {"leaderboard.md", "numbers.json", *(f"{t}.csv" for t in tables)}
    assert wanted | {f"{f}.png" for f in figures} <= names
    numbers = json.loads((out / "numbers.json").read_text())
    prov = numbers["provenance"]
    assert prov["command"].startswith("python -m evaluation.benchmark leaderboard --suite mini")
    assert str(fast_cache) not in prov["command"]
    assert "configs/benchmark/mini.yaml" in prov["inputs"]
    assert "evaluation/benchmark/scores.py" in prov["inputs"]
    assert numbers["setup"]["code_digest"] == code_digest("fast")
    labels = {a["controller"] for a in numbers["aggregates"]}
    assert labels == {"xrc", "xrc_policy", "cubic", "optimum"}
    pairs = {(p["x"], p["y"]) for p in numbers["improvement"]}
    assert len(pairs) == 3 * 2  # every ordered pair of the run controllers
    md = (out / "leaderboard.md").read_text()
    assert "## Ranking" in md and "Provenance: commit" in md and "| `xrc_policy` |" in md
    mixed = {a["controller"]: a for a in numbers["aggregates"] if a["variant"] == "mixed"}
    assert mixed["optimum"]["iqm"] == pytest.approx(1.0)
    assert mixed["cubic"]["mean"] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.ns3
def test_the_mini_suite_on_ns3(tmp_path, capsys):
    cache = tmp_path / "cache"
    assert cli.main(_score(cache, "xrc", backend="ns3", jobs=2)) == 0
    out = capsys.readouterr().out
    assert "8 runs, 8 run now" in out
    recs = list(RunCache(cache).scan("ns3"))
    assert len(recs) == 8 and all(r["status"] == "ok" for r in recs)
    assert all(0 < r["metrics"]["thpt"] <= 1.5 for r in recs)
    board = tmp_path / "board"
    args = ["leaderboard", "--suite", "mini", "--backend", "ns3", "--out", str(board)]
    assert cli.main([*args, "--cache", str(cache), "--reps", "200"]) == 0
    numbers = json.loads((board / "numbers.json").read_text())
    assert numbers["setup"]["official"] and not numbers["incomplete"]
