"""Every documented benchmark command starts (``--help``), run as documented: ``python bench/x.py``.

Run that way, ``bench/`` is the first entry of ``sys.path``: a script named like a package that a
dependency imports (``bench/bottleneck.py`` shadowed pandas' optional ``bottleneck``) breaks every
benchmark at import.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Where benchmark commands are documented.
DOCS = ("bench/README.md", "README.md", "Makefile")


def _documented() -> list[str]:
    found = set()
    for doc in DOCS:
        found |= set(re.findall(r"bench/(\w+)\.py", (ROOT / doc).read_text()))
    return sorted(found)


def test_every_benchmark_is_documented_and_every_documented_one_exists():
    scripts = {p.stem for p in (ROOT / "bench").glob("*.py") if p.stem != "__init__"}
    readme = set(re.findall(r"bench/(\w+)\.py", (ROOT / "bench/README.md").read_text()))
    assert scripts - readme == set(), "benchmarks that bench/README.md does not document"
    assert set(_documented()) - scripts == set(), "documented benchmarks that do not exist"


def test_no_benchmark_shadows_a_module_a_dependency_may_import():
    from pandas.compat._optional import VERSIONS

    taken = set(sys.stdlib_module_names) | set(VERSIONS) | {"numba", "scipy", "gymnasium"}
    stems = {p.stem for p in (ROOT / "bench").glob("*.py")}
    assert stems & taken == set()


@pytest.mark.parametrize("script", _documented())
def test_documented_benchmark_starts(script):
    proc = subprocess.run(
        [sys.executable, f"bench/{script}.py", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("usage:") and f"{script}.py" in proc.stdout
