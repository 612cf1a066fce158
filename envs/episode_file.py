"""A file that one ns-3 episode reads, in a private temporary folder that lives as long as it.

``CapacityFile`` (``--capacityTrace``) and ``DrawsFile`` (``--draws``) write their file into
such a folder; it is removed on ``remove()``, when an environment dropped without ``close()`` is
collected, or at interpreter exit (``weakref.finalize``).
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path


class EpisodeFile:
    """The private folder of an episode's file and the program arguments that name it."""

    def __init__(self) -> None:
        self._dir: str | None = None
        self._remove: weakref.finalize | None = None
        self.args: list[str] = []

    def _make_folder(self, prefix: str) -> Path:
        """Create the private folder (``prefix`` + a random suffix) and tie its life to this."""
        self._dir = tempfile.mkdtemp(prefix=prefix)
        self._remove = weakref.finalize(self, shutil.rmtree, self._dir, ignore_errors=True)
        return Path(self._dir)

    @property
    def folder(self) -> str | None:
        """The private folder (``None`` without one, or once removed)."""
        return self._dir

    def remove(self) -> None:
        """Delete the folder and its file; idempotent."""
        if self._remove is not None:
            self._remove()
            self._remove = None
            self._dir = None
