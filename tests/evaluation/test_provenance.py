"""Committed reports carry the provenance of their inputs, and are regenerated when those change.

For each committed report the test recomputes the digest of its declared inputs
(``cellgym.provenance``) on the current tree; on a mismatch it fails naming the files whose
content changed and the command that regenerates the report. Short runs of both experiments
(``-m ns3``) check that their outputs carry the provenance.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cellgym import provenance
from cellgym.paths import REPO_ROOT
from evaluation.experiments import calibrate, multi_agent, reports, xrc_paper, xrc_report

CALIBRATION = REPO_ROOT / "docs" / "calibration"
XRC = REPO_ROOT / "docs" / "xrc-reproduction"
MULTI_AGENT = REPO_ROOT / "docs" / "multi-agent"


@pytest.mark.parametrize("report", reports.REPORTS, ids=lambda r: r.name)
def test_committed_report_is_current(report: reports.Report) -> None:
    if report.optional and not report.exists():
        pytest.skip(f"no committed {report.name} yet: `{' '.join(report.command()[1:])}` writes it")
    message = report.stale()
    assert not message, f"{report.name} is stale: {message}"


def test_regenerate_reruns_each_report_with_its_recorded_arguments(capsys) -> None:
    assert reports.main(["--regenerate", "--all", "--dry-run"]) == 0
    out = capsys.readouterr().out
    for r in reports.REPORTS:
        if r.by_hand:
            # The README's table needs a training run: named, never run from here.
            assert f"[reports] {r.name}: not remade here: {r.by_hand}" in out.splitlines()
        elif r.exists():
            line = f"[reports] {r.name}: -m {r.module} {' '.join(r.provenance()['args'])}"
            assert line.rstrip() in out.splitlines()
    with pytest.raises(SystemExit) as exc:
        reports.main(["--regenerate", "--only", "docs/nowhere"])
    assert exc.value.code == 2
    assert "docs/calibration/nr" in capsys.readouterr().err


def test_committed_reports_show_their_provenance() -> None:
    for name in ("calibration", "uplink-periodic", "nr"):
        folder = CALIBRATION if name == "calibration" else CALIBRATION / name
        prov = reports.provenance_of(folder / "calibration.json")
        assert provenance.markdown_line(prov) in (folder / "calibration.md").read_text()
    numbers = json.loads((XRC / "numbers.json").read_text())
    assert (XRC / "report.md").read_text() == xrc_report.report(numbers), (
        "docs/xrc-reproduction/report.md differs from its generator: run "
        "`python -m evaluation.experiments.xrc_paper --render --out docs/xrc-reproduction`"
    )
    numbers = json.loads((MULTI_AGENT / "numbers.json").read_text())
    assert (MULTI_AGENT / "report.md").read_text() == multi_agent.report(numbers)


def test_a_changed_input_is_named(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("A = 1\n")
    (tmp_path / "src" / "b.py").write_text("B = 1\n")
    (tmp_path / "src" / "__pycache__").mkdir()
    (tmp_path / "src" / "__pycache__" / "a.pyc").write_bytes(b"\0")
    prov = provenance.record("python -m report", ["--quick"], ["src/**/*"], tmp_path)
    assert sorted(prov["inputs"]) == ["src/a.py", "src/b.py"]
    assert provenance.staleness(prov, tmp_path) == ""
    # CRLF line ends (a Windows clone) read as LF: the same digest.
    (tmp_path / "src" / "b.py").write_bytes(b"B = 1\r\n")
    assert provenance.staleness(prov, tmp_path) == ""
    (tmp_path / "src" / "a.py").write_text("A = 2\n")
    (tmp_path / "src" / "c.py").write_text("C = 1\n")
    message = provenance.staleness(prov, tmp_path)
    assert "changed: src/a.py" in message and "added: src/c.py" in message
    assert "b.py" not in message and "`python -m report --quick`" in message
    other = provenance.record("python -m report", ["--slow"], ["src/**/*"], tmp_path)
    assert (
        other["inputs_digest"]
        != provenance.record("python -m report", ["--quick"], ["src/**/*"], tmp_path)[
            "inputs_digest"
        ]
    )


def _check_fresh(prov: dict, inputs: tuple[str, ...], args: list[str]) -> None:
    assert prov["args"] == args and prov["command"].endswith(" ".join(args))
    assert set(prov["inputs"]) == set(provenance.input_files(inputs, REPO_ROOT))
    assert provenance.staleness(prov, REPO_ROOT, inputs) == ""


@pytest.mark.ns3
def test_calibrate_writes_provenance(tmp_path: Path) -> None:
    args = ["--quick", "--scenarios", "static_cubic", "--out", str(tmp_path)]
    calibrate.main(args)
    prov = reports.provenance_of(tmp_path / "calibration.json")
    _check_fresh(prov, calibrate.INPUTS, args)
    assert "evaluation/experiments/calibrate.py" in prov["inputs"]
    assert any(f.startswith("ns3-scenarios/model/") for f in prov["inputs"])
    assert provenance.markdown_line(prov) in (tmp_path / "calibration.md").read_text()


@pytest.mark.ns3
def test_xrc_paper_writes_provenance(tmp_path: Path) -> None:
    args = ["--quick", "--seeds", "1", "--figures", "fig3", "--jobs", "2", "--out", str(tmp_path)]
    xrc_paper.main(args)
    numbers = json.loads((tmp_path / "numbers.json").read_text())
    _check_fresh(numbers["provenance"], xrc_paper.INPUTS, args)
    assert set(numbers["fig3"]) == {"xrc+illinois", "xrc+cubic"}
    report = (tmp_path / "report.md").read_text()
    assert provenance.markdown_line(numbers["provenance"]) in report
    assert report == xrc_report.report(numbers)
