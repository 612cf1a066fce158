"""The capacity file of a trace-driven ns-3 cell (``--capacityTrace``, docs/traces.md).

The series depends on the run's seed (a synthesis or generator without ``trace_seed``), so it is
written per episode: ``cellgym.traces.channel_series`` at the cell's TTI with the episode's
``RngRun`` (as the fast backend draws it), into a private temporary folder removed on close.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path

from cellgym.scenario import ScenarioSpec
from cellgym.traces import channel_series, write_capacity_file
from cellgym.vocab import TRACE_SOURCES


class CapacityFile:
    """The capacity file of one episode, or nothing for the distance channel.

    Args:
        spec: The scenario.
        seed: The episode's ``RngRun``.
    """

    def __init__(self, spec: ScenarioSpec, seed: int) -> None:
        self._dir: str | None = None
        self._remove: weakref.finalize | None = None
        self.args: list[str] = []
        if spec.channel.source not in TRACE_SOURCES:
            return
        series = channel_series(spec.channel, spec.cell.slot_s, seed)
        self._dir = tempfile.mkdtemp(prefix="cellgym-capacity-")
        # The folder lives as long as this object: removed on close, when an environment dropped
        # without close() is collected, or at interpreter exit.
        self._remove = weakref.finalize(self, shutil.rmtree, self._dir, ignore_errors=True)
        path = write_capacity_file(series, Path(self._dir) / "capacity.txt")
        self.args = [f"--capacityTrace={path}"]

    @property
    def folder(self) -> str | None:
        """The private folder of the file (``None`` without one, or once removed)."""
        return self._dir

    def remove(self) -> None:
        """Delete the file; idempotent."""
        if self._remove is not None:
            self._remove()
            self._remove = None
            self._dir = None
