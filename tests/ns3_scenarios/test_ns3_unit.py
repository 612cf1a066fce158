"""ns-3-style C++ unit tests (ns3-scenarios/test/), run through ns-3's test runner."""

import subprocess

import pytest

from cellgym.paths import ns3_program

pytestmark = pytest.mark.ns3


def test_cpp_unit_suites_pass():
    out = subprocess.run(
        [str(ns3_program("cellgym-test-runner")), "--verbose"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASS tcp-xrc" in out.stdout + out.stderr
    assert "PASS explicit-router" in out.stdout + out.stderr
