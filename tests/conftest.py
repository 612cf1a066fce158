"""Shared fixtures: the ns-3 tier is skipped (with the reason) when the scenario is not built.

In CI (``CI`` set, as every CI service sets it) a missing part of the set-up is a failure, not a
skip: a test that skips because the ns-3 scenario build, 5G-LENA or the shared traces
(``../shared``) are missing fails there, with the skip's reason and what to set up
(``ci_required_failure``).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from pathlib import Path

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


#: A fixture built once per pytest process (under pytest-xdist: once per worker running its tests).
_SHARED_FIXTURE = re.compile(
    r"@pytest\.fixture\([^)]*scope\s*=\s*[\"'](?:class|module|package|session)[\"']"
)


@functools.cache
def _defines_shared_fixture(path: Path) -> bool:
    return path.is_file() and _SHARED_FIXTURE.search(path.read_text()) is not None


def shared_fixture_group(nodeid: str, rootpath: Path) -> str:
    """The unit of work of a test under ``pytest -n N --dist loadgroup`` (``make test``).

    A test of a module that defines a class-, module-, package- or session-scoped fixture (a
    simulation, a training run, a Slurm cluster) runs on one worker with the rest of the module
    (the group is the module's path), and one under a ``conftest.py`` that defines one with the
    rest of that directory, so that the fixture is built once, as in a serial run. Every other
    test is a unit of its own.
    """
    module = nodeid.split("::", 1)[0]
    path = rootpath / module
    if _defines_shared_fixture(path):
        return module
    for folder in path.parents:
        if _defines_shared_fixture(folder / "conftest.py"):
            return folder.relative_to(rootpath).as_posix() + "/"
        if folder == rootpath:
            break
    return nodeid


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup``, grouped by ``shared_fixture_group``.

    pytest-xdist's own ``loadgroup`` reads ``xdist_group`` marks into node ids, which pytest 9 no
    longer lets a plugin change: without this, every test would be a unit of its own.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class SharedFixtureScheduling(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return shared_fixture_group(nodeid, config.rootpath)

    return SharedFixtureScheduling(config, log)


def pytest_collection_modifyitems(config, items):
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
