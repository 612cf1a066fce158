"""Provenance by behaviour (``evaluation.experiments.behaviour``): what keeps a report current.

A report whose inputs changed stays current while its behaviour fingerprint (its plan, short
probe runs, its own modules' syntax) is unchanged; a change of what it does makes it stale,
naming the probes. The flow-completion study (fast backend only, one controller) is the
real study these tests fingerprint: seconds to run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cellgym.paths import traces_dir
from evaluation.experiments import behaviour, reports
from evaluation.experiments.behaviour import Probe, cover, differences, fingerprint

FCT = "evaluation.experiments.fct_paper"
ARGS = ["--out", "docs/xcp-rcp-fct", "--controllers", "cubic"]


@pytest.fixture(scope="module")
def fct_print() -> dict:
    return fingerprint(FCT, ARGS)


def test_the_fingerprint_is_the_same_run_twice(fct_print) -> None:
    again = fingerprint(FCT, ARGS)
    assert again == fct_print
    assert list(fct_print["probes"]) == ["fast cubic"]
    assert set(fct_print["recipe"]) == {"fct_paper"}
    assert differences(fct_print, again) == []


def test_a_changed_behaviour_moves_the_probe_and_is_named(fct_print, monkeypatch) -> None:
    import cellgym.workload

    # The processor-sharing reference the study divides by: a library function it calls.
    real = cellgym.workload.processor_sharing_fct_s
    monkeypatch.setattr(
        "evaluation.experiments.fct_paper.processor_sharing_fct_s",
        lambda *a, **k: real(*a, **k) * 1.000001,
    )
    moved = fingerprint(FCT, ARGS)
    assert moved["plan"] == fct_print["plan"]
    assert moved["probes"]["fast cubic"] != fct_print["probes"]["fast cubic"]
    assert differences(fct_print, moved) == ["what 1 of 1 probes record: fast cubic"]


def test_a_changed_plan_is_named(fct_print) -> None:
    other = fingerprint(FCT, [*ARGS, "--seed", "2"])
    assert other["plan"] != fct_print["plan"]
    assert differences(fct_print, other)[0].startswith("the plan")


def test_module_digest_ignores_docstrings_comments_and_layout(tmp_path, monkeypatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    src = tmp_path / "cg_probe_mod.py"
    src.write_text('"""One."""\n\ndef f(x):\n    """Doc."""\n    return x + 1\n')
    first = behaviour.module_digest("cg_probe_mod")
    src.write_text(
        '"""Two, longer."""\n# a comment\nimport os\n\ndef f( x ):\n    return (x + 1)\n'
    )
    assert behaviour.module_digest("cg_probe_mod") == first
    src.write_text('"""Two."""\n\ndef f(x):\n    return x + 2\n')
    assert behaviour.module_digest("cg_probe_mod") != first
    sys.modules.pop("cg_probe_mod", None)


def test_cover_runs_every_value_of_every_dimension_once_at_least() -> None:
    def p(label: str, **feats: str) -> Probe:
        return Probe(label, feats, lambda: None)

    probes = [
        p("a", backend="ns3", cca="cubic"),
        p("b", backend="ns3", cca="xrc"),
        p("c", backend="fast", cca="cubic"),
        p("d", backend="fast", cca="xrc"),
        p("e", backend="fast", cca="bbr"),
    ]
    chosen = cover(probes)
    seen = {(k, v) for q in chosen for k, v in q.features.items()}
    assert seen == {(k, v) for q in probes for k, v in q.features.items()}
    assert [q.label for q in chosen] == ["a", "d", "e"]


@pytest.mark.skipif(not traces_dir().is_dir(), reason=f"no shared traces at {traces_dir()}")
def test_every_study_plans_and_chooses_probes() -> None:
    """Each report's study builds (no run): a plan, probes covering it, its own modules."""
    for r in reports.REPORTS:
        study = behaviour.study_for(r.module, r.args())
        chosen = cover(study.probes)
        assert study.plan and chosen, r.name
        assert len({p.label for p in study.probes}) == len(study.probes), r.name
        assert all(m.startswith(("evaluation.", "agents.", "workflows.", "configs.")) for m in
                   study.modules), r.name  # fmt: skip
        for m in study.modules:
            behaviour.module_digest(m)


def _fake_report(tmp_path: Path, prov: dict) -> reports.Report:
    path = tmp_path / "numbers.json"
    path.write_text(json.dumps({"provenance": prov}, indent=1) + "\n")
    return reports.Report("docs/fake", str(path), FCT, ("evaluation/experiments/fct_paper.py",),
                          tuple(ARGS))  # fmt: skip


def test_a_report_with_changed_inputs_is_current_while_its_behaviour_is(
    tmp_path, fct_print
) -> None:
    from cellgym.paths import REPO_ROOT
    from cellgym.provenance import record

    prov = record("python -m " + FCT, ARGS, ("evaluation/experiments/fct_paper.py",), REPO_ROOT)
    report = _fake_report(tmp_path, prov)
    assert report.stale() == ""
    # Its inputs as they were before some edit: stale by bytes, without a fingerprint.
    edited = {**prov, "inputs_digest": "0" * 64,
              "inputs": {"evaluation/experiments/fct_paper.py": "0" * 64}}  # fmt: skip
    report = _fake_report(tmp_path, edited)
    assert "inputs changed" in report.stale()
    # With the fingerprint it had: current (the edit kept the behaviour).
    report = _fake_report(tmp_path, {**edited, "behaviour": fct_print})
    assert report.stale() == ""
    # With a fingerprint whose probe recorded something else: stale, naming it and the command.
    other = json.loads(json.dumps(fct_print))
    other["probes"]["fast cubic"] = "1" * 64
    other["digest"] = "2" * 64
    message = _fake_report(tmp_path, {**edited, "behaviour": other}).stale()
    assert "behaviour changed" in message and "fast cubic" in message
    assert f"`python -m {FCT} {' '.join(ARGS)}`" in message


def test_stamp_refuses_a_report_whose_inputs_changed_and_records_one_that_is_current(
    tmp_path, fct_print
) -> None:
    from cellgym.paths import REPO_ROOT
    from cellgym.provenance import record

    prov = record("python -m " + FCT, ARGS, ("evaluation/experiments/fct_paper.py",), REPO_ROOT)
    edited = {**prov, "inputs_digest": "0" * 64}
    with pytest.raises(ValueError, match="cannot fingerprint, inputs changed"):
        _fake_report(tmp_path, edited).stamp()
    report = _fake_report(tmp_path, prov)
    assert report.stamp() == fct_print
    assert report.provenance()["behaviour"] == fct_print
    assert "verified_at" not in report.provenance()
    assert report.path.read_text().startswith('{\n "provenance"')  # the file's indent kept


def test_stamp_records_where_a_changed_tree_was_found_to_behave_the_same(
    tmp_path, fct_print, monkeypatch
) -> None:
    from cellgym.paths import REPO_ROOT
    from cellgym.provenance import record

    prov = record("python -m " + FCT, ARGS, ("evaluation/experiments/fct_paper.py",), REPO_ROOT)
    edited = {**prov, "inputs_digest": "0" * 64, "behaviour": fct_print}
    report = _fake_report(tmp_path, edited)
    assert report.stamp() == fct_print
    verified = report.provenance()["verified_at"]
    assert verified["inputs_digest"] == prov["inputs_digest"]  # the tree's digest now
    assert report.provenance()["inputs_digest"] == "0" * 64  # what made it stays recorded

    def no_probes(*_a, **_k):
        raise AssertionError("the probes ran again on a verified tree")

    monkeypatch.setattr(behaviour, "fingerprint", no_probes)
    assert report.stale() == ""
    # A fingerprint that no longer holds: stamping refuses, naming the command.
    other = json.loads(json.dumps(fct_print))
    other["probes"]["fast cubic"] = "1" * 64
    other["digest"] = "2" * 64
    monkeypatch.undo()
    with pytest.raises(ValueError, match="behaviour changed.*fast cubic"):
        _fake_report(tmp_path, {**edited, "behaviour": other}).stamp()


def test_committed_reports_record_their_behaviour() -> None:
    for r in reports.REPORTS:
        if not r.exists():
            continue
        fp = r.provenance().get("behaviour")
        assert fp is not None, (
            f"{r.name} records no behaviour fingerprint: run "
            f"`python -m evaluation.experiments.reports --fingerprint --only {r.name}`"
        )
        assert fp["format"] == behaviour.FORMAT, r.name


def test_fingerprint_command_refuses_an_unknown_report(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        reports.main(["--fingerprint", "--only", "docs/nowhere"])
    assert exc.value.code == 2
    assert "--only='docs/nowhere' is not a committed report" in capsys.readouterr().err


def test_the_probes_run_alike_in_worker_processes() -> None:
    args = ["--out", "docs/xcp-rcp-fct", "--controllers", "cubic,rcp"]
    assert fingerprint(FCT, args, jobs=2) == fingerprint(FCT, args, jobs=1)
