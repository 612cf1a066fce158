"""Where the repository, the ns-3 build and run outputs live."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
#: The Hydra configs, and the scenario configs among them.
CONFIGS = REPO_ROOT / "configs"
SCENARIO_CONFIGS = CONFIGS / "scenario"


def ns3_build_dir() -> Path:
    """The CMake build of ``ns3-scenarios/`` (``$CELLGYM_NS3_BUILD`` or ``build/ns3``)."""
    return Path(os.environ.get("CELLGYM_NS3_BUILD", REPO_ROOT / "build" / "ns3"))


#: Where a build records the digest of the sources it was made from
#: (``ns3-scenarios/cmake/SourceDigest.cmake``, after every ``cmake --build``).
SOURCE_DIGEST_FILE = "cellgym-sources.sha256"
#: The sources of a scenario program, from the repository root: ``ns3-scenarios/`` less
#: ``third_party/`` (5G-LENA is built and keyed apart), and the wire schema.
_NS3_SOURCES = "ns3-scenarios"
_NS3_SOURCES_APART = "ns3-scenarios/third_party/"
_WIRE_SCHEMA = "cellgym/proto/ns3opengym.proto"


class StaleNs3Build(RuntimeError):
    """The scenario program was built from other sources than the checkout's."""


def _source_files(root: Path) -> list[str]:
    base = root / _NS3_SOURCES
    rels = [
        p.relative_to(root).as_posix() for p in base.rglob("*") if p.is_file() or p.is_symlink()
    ]
    rels = [r for r in rels if not r.startswith(_NS3_SOURCES_APART)]
    return sorted([*rels, _WIRE_SCHEMA])


@lru_cache(maxsize=8)
def _digest_of(root: Path, signature: tuple[tuple[str, int, int], ...]) -> str:
    del signature  # the cache key: a file's path, size and modification time
    lines = "".join(
        f"{hashlib.sha256((root / rel).read_bytes()).hexdigest()}  {rel}\n"
        for rel in _source_files(root)
    )
    return hashlib.sha256(lines.encode()).hexdigest()


def ns3_sources_digest(root: Path = REPO_ROOT) -> str:
    """The digest of the scenario programs' sources, as ``SourceDigest.cmake`` computes it.

    The SHA-256 of the lines ``"<sha256 of the file>  <path from root>"`` in path order. Hashed
    again only when a file's size or modification time changed (a few ms; a stat per file).
    """
    stats = []
    for rel in _source_files(root):
        st = (root / rel).stat()
        stats.append((rel, st.st_size, st.st_mtime_ns))
    return _digest_of(root, tuple(stats))


def ns3_program(name: str = "cellgym-lte") -> Path:
    """Path of a built scenario program, made from this checkout's sources.

    Raises:
        FileNotFoundError: The program is not built (the message says how to build it).
        StaleNs3Build: It was built from other sources than the checkout's ``ns3-scenarios/``
            (edited, checked out or pulled since the build, or the build of another checkout),
            or before builds recorded their sources; the message says how to rebuild.
    """
    build = ns3_build_dir()
    path = build / name
    if not path.is_file():
        raise FileNotFoundError(
            f"ns-3 scenario program {path} is not built: run `bash scripts/setup.sh` "
            "(or set CELLGYM_NS3_BUILD to the CMake build directory of ns3-scenarios/)"
        )
    stamp = build / SOURCE_DIGEST_FILE
    built = stamp.read_text().strip() if stamp.is_file() else None
    if built != ns3_sources_digest():
        why = (
            f"{stamp} is absent (a build from before builds recorded their sources)"
            if built is None
            else f"ns3-scenarios/ (or {_WIRE_SCHEMA}) changed since {build} was built"
        )
        raise StaleNs3Build(
            f"ns-3 scenario program {path} was built from other sources than this checkout's: "
            f"{why}; rebuild it with `cmake --build {build}` (or `bash scripts/setup.sh`)"
        )
    return path


def traces_dir() -> Path:
    """The shared traces folder (``$CELLGYM_TRACES`` or ``../shared/traces`` beside the repo).

    The traces are data, not part of the project: they are read from there, never copied in.
    """
    return Path(os.environ.get("CELLGYM_TRACES", REPO_ROOT.parent / "shared" / "traces"))
