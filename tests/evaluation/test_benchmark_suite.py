"""CellGym Bench's suites (``configs/benchmark/``): what v1 covers, its splits, and the checks.

v1 must cover what issue 27 names (LTE, NR FR1 and FR2; static, mobile and trace channels;
competition; several UEs with video and short flows; a wired bottleneck), keep its test split
disjoint from its train split (seeds, trace files and windows) and from the main job's training
traces; a suite that breaks a rule fails on load, naming the field.
"""

from __future__ import annotations

import copy

import pytest
from omegaconf import OmegaConf

from cellgym.paths import CONFIGS, traces_dir
from cellgym.vocab import BACKENDS, SpecError
from evaluation.benchmark.suite import SUITES_DIR, build_suite, load_suite, offset_s


def _data(name: str) -> dict:
    return OmegaConf.to_container(OmegaConf.load(SUITES_DIR / f"{name}.yaml"), resolve=True)


def test_v1_is_frozen_and_covers_what_the_benchmark_tests():
    s = load_suite("v1")
    assert (s.version, s.frozen, s.official_backend) == (1, True, "ns3")
    assert set(s.backends) == set(BACKENDS)
    test = s.tasks_of("test")
    assert {t.group for t in test} == {"cell", "trace", "competition", "multi-ue", "wired"}
    assert {t.cell for t in test} == {"lte", "nr-fr1", "nr-fr2"}
    assert {t.channel for t in test} == {"static", "mobile", "trace"}
    flows = [f for t in test for f in t.scenario.flows]
    assert {"cubic", "bbr"} <= {f.cca for f in flows}
    assert {"video", "short"} <= {f.traffic for f in flows}
    assert any(len(t.scenario.agent_flows) == 2 for t in test)  # two flows of the controller
    assert any(t.scenario.num_ues >= 3 for t in test)
    assert any(t.scenario.bottleneck_trace for t in test)
    # Sized for a 2-core machine: 10 s tasks, two test seeds.
    assert all(t.scenario.sim_time_s <= 20 for t in s.tasks)
    assert len(s.runs("test")) <= 40


def test_v1_splits_are_disjoint_and_hold_the_main_jobs_training_traces_out_of_test():
    s = load_suite("v1")
    assert not set(s.seeds["test"]) & set(s.seeds["train"])
    for t in s.tasks:
        if t.window_s is not None:
            assert s.trace_split(t.trace, t.window_s) == t.split, t.name
    # Trace files split by file and by window inside a long trace (ATT-LTE-driving).
    test_files = {w.trace for w in s.test_traces}
    train_traces = {t.trace for t in s.tasks_of("train") if t.trace}
    assert "mahimahi/ATT-LTE-driving.down" in test_files & train_traces
    assert train_traces - test_files  # whole files in train only
    # The main job trains on the first sim_time_s of its mixture's traces: all train here.
    main = OmegaConf.to_container(OmegaConf.load(CONFIGS / "experiment" / "default.yaml"))
    for entry in main["mixture"]["scenarios"]:
        sc = OmegaConf.load(CONFIGS / "scenario" / f"{entry['scenario']}.yaml")
        trace = sc.get("channel", {}).get("trace", "")
        if trace:
            dur = float((entry.get("overrides") or {}).get("sim_time_s", sc.sim_time_s))
            assert s.trace_split(trace, (0.0, dur)) == "train", trace


def test_windows_spread_the_seeds_evenly():
    # TMobile-LTE-short's 140 s, 10 s runs, two seeds: from 0 and from 130 s.
    assert [offset_s((0.0, 140.0), 10.0, i, 2) for i in range(2)] == [0.0, 130.0]
    # ATT's train window [0, 600) with three seeds: 0, 295, 590.
    assert [offset_s((0.0, 600.0), 10.0, i, 3) for i in range(3)] == [0.0, 295.0, 590.0]
    assert offset_s((600.0, 786.0), 10.0, 0, 1) == 600.0
    s = load_suite("v1")
    late = [spec for t, _, spec in s.runs("test") if t.name == "trace/lte-att-late"]
    assert [sp.channel.trace_offset_s for sp in late] == [600.0, 776.0]


def test_v1_trace_windows_lie_inside_their_traces():
    if not traces_dir().is_dir():
        pytest.skip(f"the shared traces are not at {traces_dir()}")
    from cellgym.traces import read_irish5g_seconds, read_mahimahi

    s = load_suite("v1")
    windows = [(t.trace, t.window_s) for t in s.tasks if t.window_s is not None]
    windows += [(w.trace, w.window_s) for w in s.test_traces if w.window_s is not None]
    for trace, window in windows:
        if trace.startswith("mahimahi/"):
            length = read_mahimahi(trace).duration_s
        else:  # one row per second
            length = float(len(read_irish5g_seconds(trace).rate_kbps))
        assert window[1] <= length + 1.0, (trace, window, length)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        # A test task replaying ATT's train window.
        (lambda d: d["tasks"][6].update(window_s=[0.0, 600.0]), "which is train"),
        # A train task reaching into ATT's test window.
        (lambda d: d["tasks"][10].update(window_s=[500.0, 700.0]), "partly test"),
        (lambda d: d["tasks"][5].update(split="both"), "train or test, not both"),
        (lambda d: d["seeds"].update(train=[9001]), "disjoint"),
        (lambda d: d["tasks"][0].update(competitor=0), "is an agent flow"),
        (lambda d: d["tasks"][5].pop("window_s"), "window_s is missing"),
        (lambda d: d["normalise"].update(zero="nosuch"), "nosuch"),
        (lambda d: d["score"].update(default="fast"), "suite.score.default"),
        (lambda d: d["tasks"][0]["scenario"].update(sim_time_s=0.5), "not above from_s"),
    ],
)
def test_a_broken_suite_fails_on_load_naming_the_field(edit, match):
    data = copy.deepcopy(_data("v1"))
    edit(data)
    with pytest.raises(SpecError, match=match):
        build_suite(data)


def test_unknown_suite_names_the_choices():
    with pytest.raises(SpecError, match="mini"):
        load_suite("v0")


def test_the_suite_modules_examples_run():
    import doctest

    from evaluation.benchmark import suite

    result = doctest.testmod(suite)
    assert result.attempted > 0 and result.failed == 0
