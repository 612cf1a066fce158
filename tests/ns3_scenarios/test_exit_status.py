"""docs/scenario-contract.md's exit-status table names every status the scenario program uses."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from cellgym.paths import ns3_program

ROOT = Path(__file__).resolve().parents[2]
#: The sources whose ``std::exit(N)`` and ``Fail(..., N)`` end the program.
SOURCES = (
    "ns3-scenarios/examples/cellgym-lte.cc",
    "ns3-scenarios/helper/cellgym-scenario-options.cc",
    "ns3-scenarios/helper/cellgym-scenario-config.cc",
    "ns3-scenarios/helper/cellgym-step-loop.cc",
    "ns3-scenarios/model/opengym-bridge.cc",
    "ns3-scenarios/model/zmtp-req.cc",
    "ns3-scenarios/model/cellgym-capacity-trace.cc",
    "ns3-scenarios/model/cellgym-draws.cc",
)


def _documented() -> dict[int, str]:
    text = (ROOT / "docs/scenario-contract.md").read_text()
    section = text.split("## Exit status", 1)[1].split("\n## ", 1)[0]
    return {int(m[1]): m[2] for m in re.finditer(r"^\| (\d+)[^|]*\| (.*) \|$", section, re.M)}


def test_every_exit_status_in_the_sources_is_documented_once():
    codes = set()
    for path in SOURCES:
        source = (ROOT / path).read_text()
        codes |= {int(c) for c in re.findall(r"std::exit\((\d+)\)", source)}
        # Fail("...", N): the bridge's exits, the message may span lines.
        codes |= {int(c) for c in re.findall(r"\bFail\((?:[^;]|\n)*?,\s*(\d+)\);", source)}
    assert codes == {2, 3, 4}
    documented = _documented()
    text = (ROOT / "docs/scenario-contract.md").read_text()
    assert text.count("## Exit status") == 1
    assert set(documented) == {0, 1, 2, 3, 4, 134, 137}
    # Status 4 is both a build without 5G-LENA and a protocol error.
    assert "5G-LENA" in documented[4] and "protocol error" in documented[4]


@pytest.mark.ns3
@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["--version"], 0),
        (["--ns3::NoSuchType::NoSuchAttribute=1"], 1),
        (["--noSuchOption=1"], 2),
        (["--simTime=-1"], 2),
        (["--RngRun=abc"], -6),  # SIGABRT: ns-3's own option, malformed
    ],
)
def test_the_command_line_statuses(args, status):
    out = subprocess.run(
        [str(ns3_program("cellgym-lte")), *args], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == status, out.stderr
