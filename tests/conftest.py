"""Shared fixtures: the ns-3 tier is skipped (with the reason) when the scenario is not built.

In CI (``CI`` set, as every CI service sets it) a missing part of the set-up is a failure, not a
skip: a test that skips because the ns-3 scenario build, 5G-LENA or the shared traces
(``../shared``) are missing fails there, with the skip's reason and what to set up
(``ci_required_failure``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

import pytest

from cellgym.paths import ns3_build_dir

#: Parts of the set-up CI must have, and how a skip reason names each one missing.
CI_REQUIRED: dict[str, re.Pattern[str]] = {
    "the ns-3 scenario build (bash scripts/setup.sh)": re.compile(
        r"ns-3 scenarios? (?:build|not built)"
    ),
    "5G-LENA in the ns-3 build (bash scripts/setup.sh builds it)": re.compile(r"5G-LENA"),
    "the shared traces (../shared/traces or $CELLGYM_TRACES)": re.compile(r"shared traces"),
}


def in_ci(environ: Mapping[str, str] | None = None) -> bool:
    """True under CI: ``CI`` is set to anything but empty, ``0`` or ``false``."""
    value = (os.environ if environ is None else environ).get("CI", "")
    return value.strip().lower() not in ("", "0", "false", "no")


def ci_required_failure(reason: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The failure a skip with ``reason`` becomes in CI; None where it stays a skip."""
    if not in_ci(environ):
        return None
    for part, pattern in CI_REQUIRED.items():
        if pattern.search(reason):
            return f"CI must have {part}, but the test skipped: {reason}"
    return None


def ns3_built(program: str = "cellgym-lte") -> bool:
    """True when the CMake build of ns3-scenarios/ holds ``program``."""
    return (ns3_build_dir() / program).is_file()


#: Scopes whose fixtures are built once per pytest process: under pytest-xdist, once per worker.
_SHARED_SCOPES = ("class", "module", "package", "session")


def shared_fixture_group(item: pytest.Item) -> str | None:
    """The ``xdist_group`` of a test that uses a shared fixture of the project's own tests.

    Under ``pytest -n N --dist loadgroup`` (``make test``), tests with one group run on one
    worker, so that a module- or session-scoped fixture (a simulation, a training run, a Slurm
    cluster) is built once, as in a serial run, not once per worker that draws one of its tests.
    The group is where the fixture is defined (its module, or its conftest's directory), so that
    fixtures built on one another (``tiny_eval`` on ``tiny_run``) keep their tests together.
    Plugins' fixtures (``tmp_path_factory``, ``worker_id``) are defined nowhere in the tree and do
    not count.
    """
    fixtureinfo = getattr(item, "_fixtureinfo", None)
    if fixtureinfo is None:
        return None
    for name in sorted(item.fixturenames):
        defs = fixtureinfo.name2fixturedefs.get(name)
        if not defs or defs[-1].scope not in _SHARED_SCOPES:
            continue
        node = getattr(defs[-1], "node", None)
        where = node.nodeid if node is not None else defs[-1].baseid
        if where:
            return where
    return None


def _group_shared_fixtures(items) -> None:
    for item in items:
        group = shared_fixture_group(item)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))


def pytest_collection_modifyitems(config, items):
    _group_shared_fixtures(items)
    if ns3_built():
        return
    if in_ci():
        # In CI a missing build is a failure of the set-up, not a reason to skip.
        return
    skip = pytest.mark.skip(reason="ns-3 scenarios not built: run `bash scripts/setup.sh`")
    for item in items:
        if "ns3" in item.keywords:
            item.add_marker(skip)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """In CI, a skip for a missing 5G-LENA, ns-3 build or shared traces is a failure."""
    report = yield
    if report.skipped and isinstance(report.longrepr, tuple) and not hasattr(report, "wasxfail"):
        message = ci_required_failure(str(report.longrepr[2]).removeprefix("Skipped: "))
        if message is not None:
            report.outcome = "failed"
            report.longrepr = message
    return report
