"""The draws file of an ns-3 run (``--draws``): the run's random draws, as the fast model has them.

``cellgym.draws.draw`` with the episode's ``RngRun`` (the fast backend draws the same for a cell
with that seed), written into a private temporary folder removed on close.
"""

from __future__ import annotations

from pathlib import Path

from cellgym.draws import Draws, draw, write_draws_file
from cellgym.scenario import ScenarioSpec
from envs.episode_file import EpisodeFile


def draws_args(spec: ScenarioSpec, seed: int, folder: str | Path) -> list[str]:
    """Write the run's draws into ``folder`` and return the program's ``--draws`` argument.

    For running the scenario program by hand (tests, debugging): ``[program,
    *spec.to_ns3_args(seed), *draws_args(spec, seed, tmp)]``.
    """
    path = write_draws_file(draw(spec, seed), Path(folder) / f"draws-{seed}.txt")
    return [f"--draws={path.resolve()}"]


class DrawsFile(EpisodeFile):
    """The draws file of one episode.

    Args:
        spec: The scenario.
        seed: The episode's ``RngRun``.
    """

    def __init__(self, spec: ScenarioSpec, seed: int) -> None:
        super().__init__()
        self.draws: Draws = draw(spec, seed)
        path = write_draws_file(self.draws, self._make_folder("cellgym-draws-") / "draws.txt")
        self.args = [f"--draws={path}"]
