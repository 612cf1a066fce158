"""The draws file of an ns-3 run (``--draws``): the run's random draws, as the fast model has them.

``cellgym.draws.draw`` with the episode's ``RngRun`` (the fast backend draws the same for a cell
with that seed), written into a private temporary folder removed on close.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path

from cellgym.draws import Draws, draw, write_draws_file
from cellgym.scenario import ScenarioSpec


def draws_args(spec: ScenarioSpec, seed: int, folder: str | Path) -> list[str]:
    """Write the run's draws into ``folder`` and return the program's ``--draws`` argument.

    For running the scenario program by hand (tests, debugging): ``[program,
    *spec.to_ns3_args(seed), *draws_args(spec, seed, tmp)]``.
    """
    path = write_draws_file(draw(spec, seed), Path(folder) / f"draws-{seed}.txt")
    return [f"--draws={path.resolve()}"]


class DrawsFile:
    """The draws file of one episode.

    Args:
        spec: The scenario.
        seed: The episode's ``RngRun``.
    """

    def __init__(self, spec: ScenarioSpec, seed: int) -> None:
        self.draws: Draws = draw(spec, seed)
        self._dir: str | None = tempfile.mkdtemp(prefix="cellgym-draws-")
        # The folder lives as long as this object: removed on close, when an environment dropped
        # without close() is collected, or at interpreter exit.
        self._remove: weakref.finalize | None = weakref.finalize(
            self, shutil.rmtree, self._dir, ignore_errors=True
        )
        path = write_draws_file(self.draws, Path(self._dir) / "draws.txt")
        self.args = [f"--draws={path}"]

    @property
    def folder(self) -> str | None:
        """The private folder of the file (``None`` once removed)."""
        return self._dir

    def remove(self) -> None:
        """Delete the file; idempotent."""
        if self._remove is not None:
            self._remove()
            self._remove = None
            self._dir = None
