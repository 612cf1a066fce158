"""The explicit-feedback family in XRC's Figs. 1 and 5 (``experiments.explicit_cell``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cellgym import controllers, provenance
from cellgym.paths import REPO_ROOT
from evaluation.experiments import explicit_cell


def test_jobs_follow_the_registry() -> None:
    jobs = explicit_cell.make_jobs([1, 2], ["ns3", "fast"])
    for backend, job in jobs:
        for f in job.spec.flows:
            c = controllers.CONTROLLERS[f.cca]
            assert backend in c.backends, (backend, job.label)
    fast = {(j.figure, j.label) for b, j in jobs if b == "fast"}
    for cca in explicit_cell.family():
        # Every family member runs in Fig. 1 alone, and in Fig. 5 against CUBIC and itself.
        assert ("fig1", cca) in fast and ("fig5", f"{cca} + cubic") in fast
        assert ("fig5", f"{cca} + {cca}") in fast
    gaps = explicit_cell.missing(["ns3", "fast"])
    assert gaps["fast"] == [
        f"{c} ({cell})"
        for c in (*explicit_cell.family(), *explicit_cell.TCPS)
        for cell in explicit_cell.CELLS
        if "fast" not in controllers.CONTROLLERS[c].backends
    ]
    assert len({(b, j.figure, j.label, j.seed) for b, j in jobs}) == len(jobs)


def test_quick_run_on_the_fast_backend(tmp_path: Path) -> None:
    args = ["--backend", "fast", "--quick", "--seeds", "1", "--jobs", "1", "--out", str(tmp_path)]
    explicit_cell.main(args)
    numbers = json.loads((tmp_path / "numbers.json").read_text())
    prov = numbers["provenance"]
    assert prov["args"] == args
    assert provenance.staleness(prov, REPO_ROOT, explicit_cell.INPUTS) == ""
    report = (tmp_path / "report.md").read_text()
    assert provenance.markdown_line(prov) in report
    for image in numbers["meta"]["images"]:
        assert (tmp_path / image).stat().st_size > 0
    fast = numbers["results"]["fast"]
    assert len(numbers["runs"]) == numbers["meta"]["simulations"]
    for cell in ("fig1", "fig1_nr"):
        assert set(fast[cell]) == {*explicit_cell.family(), *explicit_cell.TCPS}
        for label, m in fast[cell].items():
            assert f"| fast | {'lte' if cell == 'fig1' else 'nr'} | {label} |" in report
            assert 0.0 < m["utilization"] <= 1.0
    for cell in ("fig5", "fig5_nr"):
        for cca in ("xcp", "rcp"):
            # Two flows of a router-assisted controller share the cell evenly, with a short queue;
            # CUBIC's standing queue behind them is longer.
            same = fast[cell][f"{cca} + {cca}"]
            assert same["jain"] > 0.95, (cell, cca, same)
            assert same["hol_p90_ms"] < fast[cell][f"{cca} + cubic"]["hol_p90_ms"]


def test_bad_arguments_name_the_flag(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        explicit_cell.parse_args(["--seeds", "0"])
    assert exit_.value.code == 2
    assert "error: --seeds=0 is out of range: allowed [1, 20]" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        explicit_cell.parse_args(["--backend", "gpu"])
    assert exit_.value.code == 2
    assert "argument --backend: invalid choice: 'gpu'" in capsys.readouterr().err
