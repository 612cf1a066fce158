"""Keep numba's on-disk cache of the fast simulator consistent with its sources.

numba keys a cached function on its own source file only (modification time and size), but the
kernels here compile in code and constants from several modules (the model's parts inlined into
``driver``'s step, column indices from ``state``, ``params`` and ``cellgym.fields``, codes from
``codes``). After an edit to one of those, a cached function of another module would
run the old code. ``kernel_cache_dir`` therefore points numba's cache, while the kernels'
modules are imported (numba picks a function's cache location when it is decorated), at a
directory named by a digest of all those sources: changed sources, a fresh directory; a process
that imported older code keeps writing to the older one. The previous setting is restored after.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

from numba.core import config

_HERE = Path(__file__).resolve().parent
#: Sources that numba compiles into this package's kernels: every module of the package and its
#: subpackages (``senders/``, ``enb_agents/``), the shared column layout and the reward's
#: constants (group codes, weights) that the batch reward kernels compile in.
SOURCES: tuple[Path, ...] = (
    *sorted(p for p in _HERE.rglob("*.py") if "__pycache__" not in p.parts),
    _HERE.parent.parent / "cellgym" / "fields.py",
    _HERE.parent.parent / "cellgym" / "reward.py",
)
PREFIX = "numba-"


def sources_digest() -> str:
    """SHA-256 over the kernels' sources."""
    h = hashlib.sha256()
    for path in SOURCES:
        h.update(path.relative_to(_HERE.parent.parent).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def cache_dir(base: Path | None = None) -> Path:
    """This package's cache directory for the current sources (under ``base``).

    ``base`` defaults to ``$NUMBA_CACHE_DIR`` when set, else this package's ``__pycache__``.
    Directories of other digests under ``base`` are removed (best effort).
    """
    if base is None:
        base = Path(config.CACHE_DIR) if config.CACHE_DIR else _HERE / "__pycache__"
    path = base / (PREFIX + sources_digest()[:16])
    if not path.exists():
        for old in base.glob(PREFIX + "*"):
            shutil.rmtree(old, ignore_errors=True)
    return path


@contextlib.contextmanager
def kernel_cache_dir(base: Path | None = None) -> Iterator[Path]:
    """Within the block, functions decorated with ``cache=True`` cache under ``cache_dir``."""
    saved = config.CACHE_DIR
    path = cache_dir(base)
    config.CACHE_DIR = str(path)
    try:
        yield path
    finally:
        config.CACHE_DIR = saved
