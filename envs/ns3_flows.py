"""The ns-3 program's records of finished Pareto flows (``--flowLogPath``).

The program writes one CSV row per finished flow of a ``traffic: pareto`` stream
(``ns3-scenarios/model/cellgym-pareto-stream.h``): the same fields as the fast backend's
``ParetoWorkload.finished`` (``envs.fastsim.workload.RECORD_DTYPE``), so the FCT reports read
either backend's records alike.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from envs.fastsim.workload import RECORD_DTYPE


def flow_log_args(path: str | Path) -> list[str]:
    """The program argument that writes the records to ``path``."""
    return [f"--flowLogPath={Path(path)}"]


def read_flow_log(path: str | Path) -> np.ndarray:
    """The finished flows of a run as a structured array of ``RECORD_DTYPE``."""
    rows = np.genfromtxt(path, delimiter=",", names=True, dtype=None, ndmin=1)
    out = np.zeros(len(rows), dtype=RECORD_DTYPE)
    for name in RECORD_DTYPE.names:
        out[name] = rows[name] if len(rows) else []
    return out
