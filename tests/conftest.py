"""Shared fixtures: the ns-3 tier is skipped (with the reason) when the scenario is not built."""

from __future__ import annotations

import os

import pytest

from cellgym.paths import ns3_build_dir


def ns3_built(program: str = "cellgym-lte") -> bool:
    """True when the CMake build of ns3-scenarios/ holds ``program``."""
    return (ns3_build_dir() / program).is_file()


def pytest_collection_modifyitems(config, items):
    if ns3_built():
        return
    if os.environ.get("CI"):
        # In CI a missing build is a failure of the set-up, not a reason to skip.
        return
    skip = pytest.mark.skip(reason="ns-3 scenarios not built: run `bash scripts/setup.sh`")
    for item in items:
        if "ns3" in item.keywords:
            item.add_marker(skip)
