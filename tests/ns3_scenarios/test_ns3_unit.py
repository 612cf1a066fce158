"""ns-3-style C++ unit tests (ns3-scenarios/test/), run through ns-3's test runner."""

import subprocess

import pytest

from cellgym.paths import ns3_program

pytestmark = pytest.mark.ns3


@pytest.mark.parametrize("suite", ["tcp-xrc", "explicit-router", "xcpr", "pbe", "trace-scheduler"])
def test_cpp_unit_suites_pass(suite):
    # ns-3's runner takes one suite at a time when the program holds several.
    out = subprocess.run(
        [str(ns3_program("cellgym-test-runner")), f"--suite={suite}", "--verbose"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"PASS {suite}" in out.stdout + out.stderr
