"""Where the repository, the ns-3 build and run outputs live."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
#: The Hydra configs, and the scenario configs among them.
CONFIGS = REPO_ROOT / "configs"
SCENARIO_CONFIGS = CONFIGS / "scenario"


def ns3_build_dir() -> Path:
    """The CMake build of ``ns3-scenarios/`` (``$CELLGYM_NS3_BUILD`` or ``build/ns3``)."""
    return Path(os.environ.get("CELLGYM_NS3_BUILD", REPO_ROOT / "build" / "ns3"))


def ns3_program(name: str = "cellgym-lte") -> Path:
    """Path of a built scenario program; raises ``FileNotFoundError`` with the fix if absent."""
    path = ns3_build_dir() / name
    if not path.is_file():
        raise FileNotFoundError(
            f"ns-3 scenario program {path} is not built: run `bash scripts/setup.sh` "
            "(or set CELLGYM_NS3_BUILD to the CMake build directory of ns3-scenarios/)"
        )
    return path


def traces_dir() -> Path:
    """The shared traces folder (``$CELLGYM_TRACES`` or ``../shared/traces`` beside the repo).

    The traces are data, not part of the project: they are read from there, never copied in.
    """
    return Path(os.environ.get("CELLGYM_TRACES", REPO_ROOT.parent / "shared" / "traces"))
