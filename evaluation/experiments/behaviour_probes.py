"""Provenance by behaviour, its parts: a probe, a study, hashing runs bit for bit, the cover.

``evaluation.experiments.behaviour`` explains the fingerprint; ``behaviour_studies`` plans each
report's probes with these.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: Format of a fingerprint; bump it when what a fingerprint covers changes (every report then
#: needs ``reports --fingerprint`` once, which runs nothing but the probes).
FORMAT = 1
#: Simulated seconds of a probe.
PROBE_S = 1.0
#: The seed of every probe.
PROBE_SEED = 1
#: Simulated seconds of a flow-completion probe (100 ms RTTs: a second completes few flows).
FCT_PROBE_S = 4.0
#: Simulated seconds of an XCP-r probe (its summary measures from 1 s, its fairness from 2 s on
#: in 1 s windows).
XCPR_PROBE_S = 4.0


@dataclass
class Probe:
    """One short run of a report's plan.

    Attributes:
        label: Unique, readable (``ns3 static_cubic``).
        features: The plan's dimensions this run has a value of (``{"scenario": ..., ...}``).
        run: Runs it (short), returning JSON-able data, deterministic for the code.
        shared: Set when another report runs the very same probe (the same label and
            ``shared``): one process runs it once (``fingerprint``'s memo).
    """

    label: str
    features: Mapping[str, str]
    run: Callable[[], Any]
    shared: Any = None


@dataclass
class Study:
    """What a report's fingerprint is made of (``study_for``)."""

    plan: list[Any]
    probes: list[Probe]
    modules: tuple[str, ...]
    configs: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)


# -- hashing --------------------------------------------------------------------------------------
def _plain(x: Any) -> Any:
    """``x`` as JSON data: numpy scalars and arrays as Python, non-finite floats as strings."""
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "fc":
            return {"array": list(x.shape), "sha256": hashlib.sha256(
                np.ascontiguousarray(x, dtype=np.float64).tobytes()).hexdigest()}  # fmt: skip
        return {"array": list(x.shape), "values": x.tolist()}
    if isinstance(x, np.generic):
        return _plain(x.item())
    if isinstance(x, float):
        return x if math.isfinite(x) else repr(x)
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return _plain(dataclasses.asdict(x))
    if isinstance(x, Path):
        return x.as_posix()
    return x


def digest(x: Any) -> str:
    """SHA-256 of ``x`` as canonical JSON (``_plain``; keys sorted)."""
    blob = json.dumps(_plain(x), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def _dropping_walls(x: Any) -> Any:
    """``x`` without the wall-clock fields (``wall_s`` and the like): they are not behaviour."""
    if isinstance(x, Mapping):
        return {k: _dropping_walls(v) for k, v in x.items() if "wall" not in str(k)}
    if isinstance(x, list | tuple):
        return [_dropping_walls(v) for v in x]
    return x


def records_result(rec: Any) -> dict[str, Any]:
    """A probe's result from ``EpisodeRecords``: every array bit for bit, and its metrics."""
    from cellgym.metrics import compute_metrics
    from cellgym.reward import RewardSpec

    return {
        "times": np.asarray(rec.times, dtype=np.float64),
        "flows": np.stack(rec.flows),
        "ues": np.stack(rec.ues),
        "rewards": np.asarray(rec.rewards, dtype=np.float64),
        "metrics": compute_metrics(rec, delay_budget_ms=RewardSpec().delay_budget_ms),
    }


def cover(probes: Sequence[Probe]) -> list[Probe]:
    """A few probes that between them have every value of every feature (greedy, in order).

    Each step takes the first probe that adds the most (feature, value) pairs not yet covered.
    """
    left = set()
    for p in probes:
        left |= set(p.features.items())
    chosen: list[Probe] = []
    while left:
        best = max(probes, key=lambda p: len(left & set(p.features.items())))
        gain = left & set(best.features.items())
        if not gain:
            break
        chosen.append(best)
        left -= gain
    return chosen
