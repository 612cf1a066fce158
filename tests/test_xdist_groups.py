"""Under pytest-xdist, tests sharing a module- or session-scoped fixture run on one worker.

``make test`` runs ``pytest -n 2 --dist loadgroup``; ``conftest.pytest_xdist_make_scheduler``
sends the tests of a module (or a ``conftest.py``'s folder) that defines such a fixture (a
simulation, a training run, a Slurm cluster) to one worker, so that it is built once, as in a
serial run, and every other test on its own.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import shared_fixture_group

ROOT = Path(__file__).resolve().parents[1]


def test_a_module_with_a_shared_fixture_is_one_group(tmp_path):
    (tmp_path / "tests" / "sims").mkdir(parents=True)
    (tmp_path / "tests" / "test_runs.py").write_text(
        '@pytest.fixture(\n    scope="module"\n)\ndef run():\n    return 1\n'
    )
    (tmp_path / "tests" / "test_plain.py").write_text(
        "@pytest.fixture\ndef cheap():\n    return 0\n"
    )
    (tmp_path / "tests" / "sims" / "conftest.py").write_text(
        "@pytest.fixture(scope='session')\ndef cluster():\n    yield\n"
    )
    for test in ("test_a", "test_b[1-2]"):
        assert shared_fixture_group(f"tests/test_runs.py::{test}", tmp_path) == "tests/test_runs.py"
        plain = f"tests/test_plain.py::{test}"
        assert shared_fixture_group(plain, tmp_path) == plain
        nested = f"tests/sims/test_x.py::{test}"
        assert shared_fixture_group(nested, tmp_path) == "tests/sims/"


def test_the_suites_shared_fixtures_are_found():
    groups = {
        "tests/test_soak.py::test_lost_and_duplicated_steps_of_a_training_by_hand",
        "tests/notebooks/test_notebooks.py::test_x",
        "tests/agents/test_sweeps.py::test_slurm_sweep_runs_on_a_real_cluster",
        "tests/evaluation/test_benchmark.py::test_x",
    }
    for nodeid in groups:
        assert shared_fixture_group(nodeid, ROOT) == nodeid.split("::")[0]
    alone = "tests/test_repo_layout.py::test_tests_mirror_packages"
    assert shared_fixture_group(alone, ROOT) == alone
