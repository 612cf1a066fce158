"""The capacity file of a trace-driven ns-3 cell (``--capacityTrace``, docs/traces.md).

The series depends on the run's seed (a synthesis or generator without ``trace_seed``), so it is
written per episode: ``cellgym.traces.channel_series`` at the cell's TTI with the episode's
``RngRun`` (as the fast backend draws it), into a private temporary folder removed on close.
"""

from __future__ import annotations

from cellgym.scenario import ScenarioSpec
from cellgym.traces import channel_series, write_capacity_file
from cellgym.vocab import TRACE_SOURCES
from envs.episode_file import EpisodeFile


class CapacityFile(EpisodeFile):
    """The capacity file of one episode, or nothing for the distance channel.

    Args:
        spec: The scenario.
        seed: The episode's ``RngRun``.
    """

    def __init__(self, spec: ScenarioSpec, seed: int) -> None:
        super().__init__()
        if spec.channel.source not in TRACE_SOURCES:
            return
        series = channel_series(spec.channel, spec.cell.slot_s, seed)
        path = write_capacity_file(series, self._make_folder("cellgym-capacity-") / "capacity.txt")
        self.args = [f"--capacityTrace={path}"]
