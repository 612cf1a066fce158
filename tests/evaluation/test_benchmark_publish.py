"""Publishing the leaderboard (``python -m evaluation.benchmark publish``) and its two reports.

``publish`` on the two-task mini-suite (``configs/benchmark/mini.yaml``) on the fast backend,
with the registry cut to two controllers (``REGISTRY``; CUBIC comes as the reference) to keep it
short: it runs every controller, task and seed into the cache and writes the leaderboard with the
arguments that remake it; a second call runs nothing; a trained checkpoint whose files are absent
is left out and named, any other unknown controller still fails before any run. The registry's
real lists are the ones docs/benchmark.md documents; the reports registry knows
``docs/benchmark/ns3`` and ``docs/benchmark/fast``, and their behaviour study plans every run
and probes every controller and task on the report's backend.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from cellgym import controllers
from cellgym.paths import REPO_ROOT, traces_dir
from cellgym.provenance import input_files
from evaluation.benchmark import cli, publish, reuse
from evaluation.benchmark.cache import RunCache
from evaluation.benchmark.entrants import resolve_entrants
from evaluation.benchmark.leaderboard import inputs_of
from evaluation.benchmark.metrics import RUN_COLUMNS
from evaluation.benchmark.runner import plan
from evaluation.benchmark.suite import load_suite
from evaluation.experiments import behaviour, reports
from evaluation.experiments.behaviour import PROBE_S, cover
from evaluation.experiments.behaviour_studies import BENCHMARK_MODULES

#: The registry of these tests (``publish.registry_controllers`` patched): CUBIC is the reference.
REGISTRY = ["xrc", "xrc_policy"]
#: A checkpoint of the main job on a machine without its ``runs/`` folder.
ABSENT = "runs/no-such-main/ppo/2026-01-01_00-00-00"
NO_TRACES = pytest.mark.skipif(
    not traces_dir().is_dir(), reason=f"no shared traces at {traces_dir()}"
)


def _publish_args(out: Path, *extra: str) -> list[str]:
    """The arguments recorded (no ``--cache``)."""
    return ["publish", "--suite", "mini", "--backend", "fast", "--reps", "200", "--no-progress",
            "--jobs", "2", *extra, "--out", str(out)]  # fmt: skip


def _run(args: list[str], cache: Path, registry: list[str] = REGISTRY) -> tuple[int, str, str]:
    """``cli.main`` with the registry cut to ``registry``: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(publish, "registry_controllers", lambda suite, backend: (list(registry), []))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main([*args, "--cache", str(cache)])
    return rc, out.getvalue(), err.getvalue()


def _files(cache: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in cache.rglob("*.json")}


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> dict:
    """One publish of the mini-suite's test split on the fast backend, from an empty cache."""
    root = tmp_path_factory.mktemp("publish")
    cache, out = root / "cache", root / "board"
    args = _publish_args(out)
    rc, stdout, _ = _run(args, cache)
    numbers = json.loads((out / "numbers.json").read_text())
    return {"rc": rc, "stdout": stdout, "cache": cache, "out": out, "args": args,
            "numbers": numbers}  # fmt: skip


def _documented(name: str) -> list[str]:
    """A controller list of docs/benchmark.md's "Publishing it" (``NAME=a,b,...``)."""
    text = (REPO_ROOT / "docs" / "benchmark.md").read_text()
    found = re.search(rf"^ *{name}=([a-z_,]+)$", text, re.MULTILINE)
    assert found, f"docs/benchmark.md lists no {name}="
    return found.group(1).split(",")


def test_the_registry_gives_the_documented_controllers_of_each_backend(monkeypatch) -> None:
    v1 = load_suite("v1")
    both, ns3_only = _documented("C"), _documented("NS3_ONLY")
    assert publish.registry_controllers(v1, "ns3") == ([*both, *ns3_only], [])
    assert publish.registry_controllers(v1, "fast") == (both, [])
    # A controller that cannot run a cell type of the suite (v1 has NR tasks) is left out, named.
    lte_only = dataclasses.replace(controllers.CONTROLLERS["vegas"], cells=("lte",))
    monkeypatch.setitem(controllers.CONTROLLERS, "vegas", lte_only)
    names, left_out = publish.registry_controllers(v1, "ns3")
    assert "vegas" not in names and len(names) == len(both) + len(ns3_only) - 1
    assert [x["controller"] for x in left_out] == ["vegas"] and "nr" in left_out[0]["reason"]


def test_publish_scores_every_controller_and_writes_the_leaderboard(published) -> None:
    assert published["rc"] == 0
    assert "12 runs, 12 run now" in published["stdout"]  # 3 controllers x 2 tasks x 2 seeds
    suite = load_suite("mini")
    cache = RunCache(published["cache"])
    for job in plan(suite, "test", "fast", resolve_entrants(REGISTRY, suite, "fast")):
        assert cache.get("fast", job.key)["status"] == "ok"  # the very runs `score` makes
    numbers, out = published["numbers"], published["out"]
    assert {a["controller"] for a in numbers["aggregates"]} == {*REGISTRY, "cubic", "optimum"}
    assert numbers["publish"]["controllers"] == REGISTRY
    assert (numbers["publish"]["runs"], numbers["publish"]["run_now"]) == (12, 12)
    assert numbers["left_out"] == [] and not numbers["incomplete"] and not numbers["failed"]
    # The provenance remakes it: the subcommand and every argument but the machine's cache.
    prov = numbers["provenance"]
    assert prov["args"] == published["args"]
    assert prov["command"] == "python -m evaluation.benchmark " + " ".join(published["args"])
    assert str(published["cache"]) not in prov["command"]
    assert "configs/benchmark/mini.yaml" in prov["inputs"]
    assert "evaluation/benchmark/publish.py" in prov["inputs"]
    # Each controller's run time is the sum of its runs' wall times.
    runs = pd.read_csv(out / "runs.csv")
    for c in (*REGISTRY, "cubic"):
        mine = runs[runs["controller"].eq(c)]
        assert len(mine) == 4 and (mine["wall_s"] > 0).all()
        assert numbers["wall_s"][c] == pytest.approx(mine["wall_s"].sum())
    md = (out / "leaderboard.md").read_text()
    assert "Generated by `python -m evaluation.benchmark publish`" in md
    assert "Run time: the sum of the wall times of that controller's runs" in md
    assert f"command `{prov['command']}`" in md and "| `xrc_policy` |" in md


def test_a_second_publish_runs_nothing(published, tmp_path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "board"
    shutil.copytree(published["cache"], cache)
    before = _files(cache)
    rc, stdout, _ = _run(_publish_args(out), cache)
    assert rc == 0 and "12 runs, 0 run now" in stdout
    assert _files(cache) == before
    numbers = json.loads((out / "numbers.json").read_text())
    assert numbers["publish"]["run_now"] == 0
    assert numbers["aggregates"] == published["numbers"]["aggregates"]
    # publish and score share the runs: score finds every one of them.
    score = ["score", "--suite", "mini", "--backend", "fast", "--controllers", ",".join(REGISTRY),
             "--no-progress", "--reps", "200"]  # fmt: skip
    rc, stdout, _ = _run(score, cache)
    assert rc == 0 and "12 runs, 0 run now" in stdout and _files(cache) == before


def _take_over(args: list[str], folder: Path, cache: Path) -> dict:
    """``reuse.take_over`` with the tests' registry."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(publish, "registry_controllers", lambda suite, backend: (list(REGISTRY), []))
        return reuse.take_over(args, folder, RunCache(cache))


def test_a_republish_takes_over_the_published_runs_whose_behaviour_is_unchanged(
    published, tmp_path
) -> None:
    # A fresh machine: an empty cache, the leaderboard committed in --out with its fingerprint.
    board = tmp_path / "board"
    shutil.copytree(published["out"], board)
    args = _publish_args(board)
    numbers = json.loads((board / "numbers.json").read_text())
    numbers["provenance"]["args"] = args
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(publish, "registry_controllers", lambda suite, backend: (list(REGISTRY), []))
        recorded = behaviour.fingerprint("evaluation.benchmark", args)
    numbers["provenance"]["behaviour"] = recorded
    (board / "numbers.json").write_text(json.dumps(numbers))

    account = _take_over(args, board, tmp_path / "cache-a")
    assert account["reused"] == 12 and account["moved_tasks"] == [], account
    assert reuse.describe(account).startswith("12 runs taken over")
    rc, stdout, _ = _run(args, tmp_path / "cache-a")
    assert rc == 0 and "12 runs, 0 run now" in stdout, stdout
    again = json.loads((board / "numbers.json").read_text())
    assert again["aggregates"] == published["numbers"]["aggregates"]  # bit for bit
    assert again["runs"] == published["numbers"]["runs"]

    # One probe moved: its controller's and its task's runs rerun, the other 4 are taken over.
    label = next(k for k in recorded["probes"] if k.endswith(" xrc"))
    _, task, _ = label.split(" ", 2)
    moved = {**recorded, "probes": {**recorded["probes"], label: "0" * 64}}
    numbers["provenance"]["behaviour"] = moved
    (board / "numbers.json").write_text(json.dumps(numbers))
    account = _take_over(args, board, tmp_path / "cache-b")
    assert account["reused"] == 4 and account["moved_controllers"] == ["xrc"], account
    assert account["moved_tasks"] == [task]
    rc, stdout, _ = _run(args, tmp_path / "cache-b")
    assert rc == 0 and "12 runs, 8 run now" in stdout, stdout  # xrc's 4, the task's other 4
    after = json.loads((board / "numbers.json").read_text())
    assert after["aggregates"] == published["numbers"]["aggregates"]  # the reruns agree

    # A checkpoint added to --controllers: its own runs only are new, the rest is taken over
    # (judged by the fingerprint of the command as published), also from the command line.
    numbers["provenance"]["behaviour"] = recorded
    (board / "numbers.json").write_text(json.dumps(numbers))
    with_checkpoint = _publish_args(board, "--controllers", ABSENT)
    account = _take_over(with_checkpoint, board, tmp_path / "cache-d")
    assert account["reused"] == 12 and account["moved_tasks"] == [], account
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(publish, "registry_controllers", lambda suite, backend: (list(REGISTRY), []))
        mp.setattr(reuse, "RunCache", lambda: RunCache(tmp_path / "cache-e"))
        assert reuse.main([str(board), "--jobs", "1", "--", *with_checkpoint]) == 0
    assert _files(tmp_path / "cache-e")
    other = _publish_args(board, "--controllers", "xrc")
    assert "other arguments" in _take_over(other, board, tmp_path / "cache-f")["why_none"]

    # Another plan (its digest changed: other runs, controllers or arguments): nothing.
    numbers["provenance"]["behaviour"] = {**recorded, "plan": "0" * 64}
    (board / "numbers.json").write_text(json.dumps(numbers))
    account = _take_over(args, board, tmp_path / "cache-c")
    assert account["reused"] == 0 and "plan" in account["why_none"]
    assert (
        reuse.moved(recorded, {**recorded, "recipe": {**recorded["recipe"], "metrics": "x"}})
        is None
    )
    assert reuse.moved(recorded, {**recorded, "recipe": {**recorded["recipe"], "render": "x"}}) == (
        set(),
        set(),
    )  # a change in how the tables are drawn keeps the runs


def test_a_missing_checkpoint_is_left_out_and_named(published, tmp_path) -> None:
    cache, out = tmp_path / "cache", tmp_path / "board"
    shutil.copytree(published["cache"], cache)
    args = _publish_args(out, "--controllers", ABSENT)
    rc, stdout, _ = _run(args, cache)
    assert rc == 0 and "12 runs, 0 run now" in stdout and f"left out {ABSENT}:" in stdout
    numbers = json.loads((out / "numbers.json").read_text())
    assert [x["controller"] for x in numbers["left_out"]] == [ABSENT]
    assert "absent" in numbers["left_out"][0]["reason"]
    assert numbers["aggregates"] == published["numbers"]["aggregates"]  # the rest as without it
    assert numbers["provenance"]["args"] == args  # a machine that has it publishes it again
    md = (out / "leaderboard.md").read_text()
    assert f"Not published: `{ABSENT}`: its trained checkpoint is absent" in md
    # Only an absent checkpoint is forgiven: an unknown name fails before any run.
    rc, _, err = _run(_publish_args(tmp_path / "other", "--controllers", "nosuch"), cache)
    assert rc == 2 and "'nosuch' is not a known controller" in err
    assert not (tmp_path / "other").exists()


def test_the_report_made_by_publish_is_current_and_remade_by_its_recorded_command(
    published,
) -> None:
    suite = load_suite("mini")
    numbers = published["out"] / "numbers.json"
    report = reports.Report("docs/mini", str(numbers), "evaluation.benchmark",
                            inputs_of(suite, "fast"), ())  # fmt: skip
    assert report.stale() == ""
    assert report.command()[1:] == ["-m", "evaluation.benchmark", *published["args"]]


@pytest.mark.parametrize("backend", ["ns3", "fast"])
def test_the_reports_registry_knows_both_leaderboards(backend) -> None:
    report = reports.by_name(f"docs/benchmark/{backend}")
    assert report.module == "evaluation.benchmark" and report.optional
    assert report.numbers == f"docs/benchmark/{backend}/numbers.json"
    args = cli._parser().parse_args(report.args())
    assert (args.command, args.suite, args.backend) == ("publish", "v1", backend)
    assert args.out == Path(report.name)
    # Its declared inputs are the files the leaderboard's provenance records.
    recorded = input_files(inputs_of(load_suite("v1"), backend), REPO_ROOT)
    assert input_files(report.inputs, REPO_ROOT) == recorded
    assert ("ns3-scenarios/examples/cellgym-lte.cc" in recorded) == (backend == "ns3")


@NO_TRACES
@pytest.mark.parametrize("backend", ["ns3", "fast"])
def test_the_leaderboards_study_plans_every_run_and_probes_each_controller_and_task(
    backend,
) -> None:
    report = reports.by_name(f"docs/benchmark/{backend}")
    study = behaviour.study_for(report.module, report.args())
    v1 = load_suite("v1")
    names = publish.registry_controllers(v1, backend)[0]
    tasks = [t.name for t in v1.tasks_of("test")]
    runs = study.plan[1:]
    assert len(runs) == len(names) * len(tasks) * len(v1.seeds["test"])
    assert {r["controller"] for r in runs} == set(names) and study.plan[0]["backend"] == backend
    chosen = cover(study.probes)
    assert {p.features["controller"] for p in chosen} == set(names)
    assert {p.features["task"] for p in chosen} == set(tasks)
    assert len(chosen) == max(len(names), len(tasks))
    assert all(p.label.startswith(f"{backend} ") for p in study.probes)
    assert study.configs == ("configs/benchmark/v1.yaml",)
    assert "evaluation.benchmark.publish" in study.modules
    assert "evaluation.benchmark.dataset" not in study.modules


def test_a_checkpoint_enters_the_plan_by_its_argument_whether_its_files_exist_or_not(
    tmp_path,
) -> None:
    model = tmp_path / "run" / "model.zip"
    text = f"ppo:{model}"
    args = ["publish", "--suite", "mini", "--backend", "fast", "--controllers", text,
            "--out", "x"]  # fmt: skip
    assert publish.absent_checkpoint(text) is not None
    absent = behaviour.study_for("evaluation.benchmark", args)
    model.parent.mkdir()
    model.write_bytes(b"")  # resolves (nothing loads it here)
    assert publish.absent_checkpoint(text) is None
    present = behaviour.study_for("evaluation.benchmark", args)
    assert absent.plan[0]["checkpoints"] == [text]
    assert behaviour.digest(absent.plan) == behaviour.digest(present.plan)
    assert [p.label for p in absent.probes] == [p.label for p in present.probes]
    assert not any(text in p.label for p in present.probes)


def test_the_leaderboards_probes_run_and_record_the_same_twice(monkeypatch) -> None:
    monkeypatch.setattr(publish, "registry_controllers", lambda suite, backend: (["xrc"], []))
    args = _publish_args(Path("x"))
    first = behaviour.fingerprint("evaluation.benchmark", args)
    assert sorted(first["probes"]) == [
        "fast cell/lte-static xrc",
        "fast competition/vs-cubic cubic",
    ]
    assert set(first["recipe"]) == {*BENCHMARK_MODULES, "configs/benchmark/mini.yaml"}
    assert behaviour.fingerprint("evaluation.benchmark", args) == first
    # A probe records the run's metrics row, measured from 0 over PROBE_S (not the suite's from_s).
    probe = next(p for p in behaviour.study_for("evaluation.benchmark", args).probes
                 if p.label == "fast cell/lte-static xrc")  # fmt: skip
    row = probe.run()
    step_s = load_suite("mini").task("cell/lte-static").scenario.step_ms / 1000
    assert set(row) == set(RUN_COLUMNS) and row["thpt"] > 0
    assert row["steps"] == round(PROBE_S / step_s)
