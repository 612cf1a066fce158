"""Under pytest-xdist, tests sharing a module- or session-scoped fixture run on one worker.

``make test`` runs ``pytest -n 2 --dist loadgroup``; ``conftest.shared_fixture_group`` puts the
tests of such a fixture (a simulation, a training run, a Slurm cluster) in one ``xdist_group``, so
that it is built once, as in a serial run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CONFTEST = """
from tests.conftest import pytest_collection_modifyitems  # noqa: F401


def pytest_collection_finish(session):
    for item in session.items:
        mark = item.get_closest_marker("xdist_group")
        print("GROUP", item.name, mark.args[0] if mark else None)
"""

MODULE = """
import pytest


@pytest.fixture(scope="module")
def run():
    return 1


@pytest.fixture(scope="module")
def report(run):
    return run + 1


@pytest.fixture
def cheap():
    return 0


def test_run(run):
    pass


def test_report(report):
    pass


def test_alone(cheap, tmp_path_factory, tmp_path):
    pass
"""


def test_tests_of_a_shared_fixture_share_a_group(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_mod.py").write_text(textwrap.dedent(MODULE))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    groups = dict(line.split()[1:] for line in out.stdout.splitlines() if line.startswith("GROUP "))
    # Both on the module's group (report is built on run); plugins' fixtures do not count.
    assert groups == {"test_run": "test_mod.py", "test_report": "test_mod.py", "test_alone": "None"}
