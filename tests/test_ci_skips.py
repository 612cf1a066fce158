"""In CI a missing 5G-LENA, ns-3 build or ``../shared`` fails the test needing it (conftest.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ci_required_failure, in_ci, pytest_runtest_makereport

ROOT = Path(__file__).resolve().parents[1]

#: The skip reasons the suite gives for each missing part (as the tests word them).
MISSING_REASONS = (
    "no shared traces at /work/shared/traces",
    "the shared traces are not at /work/shared/traces",
    "shared traces are absent: [Errno 2] No such file or directory: '../shared/traces/x'",
    "no ns-3 scenario build at build/ns3/cellgym-lte",
    "ns-3 scenarios not built: run `bash scripts/setup.sh`",
)


def _nr_missing_message() -> str:
    """What the scenario program built without 5G-LENA prints (nr_build.nr_missing's reason)."""
    source = (ROOT / "ns3-scenarios/helper/cellgym-scenario-config.cc").read_text()
    start = source.index('"cellgym-lte: --cellType=nr is not available')
    block = source[start : source.index("<< std::endl", start)]
    return "".join(re.findall(r'"([^"]*)"', block))


def test_ci_is_the_ci_variable():
    assert in_ci({"CI": "true"}) and in_ci({"CI": "1"}) and in_ci({"CI": "yes"})
    assert not in_ci({}) and not in_ci({"CI": ""}) and not in_ci({"CI": "false"})
    assert not in_ci({"CI": "0"})


@pytest.mark.parametrize("reason", [*MISSING_REASONS, "NR"], ids=lambda r: r[:30])
def test_missing_setup_fails_in_ci_and_skips_elsewhere(reason):
    if reason == "NR":
        reason = _nr_missing_message()
        assert "this build has no 5G-LENA" in reason
    failure = ci_required_failure(reason, {"CI": "true"})
    assert failure is not None
    assert failure.startswith("CI must have ") and failure.endswith(reason)
    assert ci_required_failure(reason, {}) is None
    assert ci_required_failure(reason, {"CI": "false"}) is None


def test_other_skips_stay_skips_in_ci():
    for reason in ("no committed fig9 yet", "Slurm is not installed", "psutil not installed"):
        assert ci_required_failure(reason, {"CI": "true"}) is None


def _skipped(reason: str, when: str = "setup") -> pytest.TestReport:
    return pytest.TestReport(
        "tests/x.py::test_x", ("tests/x.py", 1, "test_x"), {}, "skipped",
        ("tests/x.py", 2, f"Skipped: {reason}"), when,
    )  # fmt: skip


def _run_hook(report: pytest.TestReport) -> pytest.TestReport:
    hook = pytest_runtest_makereport(None, None)
    next(hook)
    with pytest.raises(StopIteration) as stop:
        hook.send(report)
    return stop.value.value


def test_the_report_hook_turns_the_skip_into_a_failure_in_ci(monkeypatch):
    reason = "no shared traces at /work/shared/traces"
    monkeypatch.setenv("CI", "true")
    report = _run_hook(_skipped(reason))
    assert report.failed
    assert report.longrepr == (
        "CI must have the shared traces (../shared/traces or $CELLGYM_TRACES), but the test "
        f"skipped: {reason}"
    )
    # An ordinary skip, and an expected failure, stay what they are.
    assert _run_hook(_skipped("no committed fig9 yet")).skipped
    xfail = _skipped(reason, when="call")
    xfail.wasxfail = "known"
    assert _run_hook(xfail).skipped
    monkeypatch.delenv("CI")
    assert _run_hook(_skipped(reason)).skipped
