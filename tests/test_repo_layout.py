"""The layout stays as docs/architecture.md describes it: paths exist, modules stay small."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "cellgym",
    "envs",
    "agents",
    "baselines",
    "configs",
    "evaluation",
    "learners",
    "workflows",
)
#: Modules that are tables rather than code (generated or transcribed from a standard).
TABLES = {"cellgym/proto/ns3opengym_pb2.py", "envs/fastsim/tables.py"}
MAX_LINES = 650  # "about 600"


def test_every_path_in_the_architecture_doc_exists():
    text = (ROOT / "docs" / "architecture.md").read_text()
    paths = set(re.findall(r"`([\w./-]+/[\w./-]*)`", text))
    assert len(paths) > 20
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_no_module_is_longer_than_about_600_lines():
    long = []
    for pkg in (*PACKAGES, "tests", "bench"):
        for path in (ROOT / pkg).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            n = len(path.read_text().splitlines())
            if rel not in TABLES and n > MAX_LINES:
                long.append(f"{rel}: {n} lines")
    assert not long, "\n".join(long)


def test_tests_mirror_packages():
    allowed = {*PACKAGES, "fastsim", "golden", "notebooks", "ns3_scenarios"}
    for path in (ROOT / "tests").rglob("test_*.py"):
        parts = path.relative_to(ROOT / "tests").parts
        assert len(parts) == 1 or parts[0] in allowed, f"{path}: not under a package's folder"
