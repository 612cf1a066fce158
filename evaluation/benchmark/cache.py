"""The run cache: one JSON file per (controller, task scenario, seed, backend, code behaviour).

A run's key is the SHA-256 of its identity: the controller's (``Entrant.identity``: its registry
name, or the digest of its checkpoint or policy file, and its environment settings), the task's
full scenario (with the seed's trace window), the seed, the backend, the suite's measuring
settings (``from_s``, the delay budget), the row format (``RUN_FORMAT``) and the **code digest**:
``cellgym.provenance``'s digest of the files that decide what a run does on that backend
(``run_inputs``: the core, the environments, the rollout and record code, the baselines, the
benchmark's per-run metrics, and the ns-3 program's sources or the fast model, as listed in
``evaluation.experiments.inputs``: ``BENCHMARK_RUNS_NS3``, ``BENCHMARK_RUNS_FAST``). A second
call finds every run whose key has a file and runs only the others; a run is written when it
finishes (atomically), so an interrupted call resumes where it stopped. A failed run is not
written: the next call tries it again. Changing any of those files, or the suite's scenario,
makes new keys: the old files stay, unused (delete the folder to reclaim the space).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from cellgym.paths import REPO_ROOT
from cellgym.provenance import file_digests, inputs_digest
from cellgym.scenario import ScenarioSpec
from evaluation.benchmark.metrics import RUN_FORMAT
from evaluation.experiments import inputs

#: Format of a cache file and of the key; bump it when either changes.
CACHE_FORMAT = 1
#: The default cache folder (``runs/`` is git-ignored).
DEFAULT_CACHE = REPO_ROOT / "runs" / "benchmark-cache"


def run_inputs(backend: str) -> tuple[str, ...]:
    """The input globs of the code digest on ``backend`` (the other backend's code is left out)."""
    return inputs.BENCHMARK_RUNS_NS3 if backend == "ns3" else inputs.BENCHMARK_RUNS_FAST


@cache
def code_digest(backend: str, root: Path = REPO_ROOT) -> str:
    """The digest of ``run_inputs(backend)`` on the tree at ``root`` (computed once a process)."""
    return inputs_digest(file_digests(run_inputs(backend), root), [backend])


def scenario_dict(spec: ScenarioSpec) -> dict[str, Any]:
    """The scenario as plain JSON-able data (every field, nested sections included)."""
    return json.loads(json.dumps(dataclasses.asdict(spec), default=str))


def run_key(
    identity: Mapping[str, Any],
    spec: ScenarioSpec,
    seed: int,
    backend: str,
    code: str,
    measure: Mapping[str, Any],
) -> str:
    """The cache key of one run (module docstring)."""
    blob = {
        "format": [CACHE_FORMAT, RUN_FORMAT],
        "controller": dict(identity),
        "scenario": scenario_dict(spec),
        "seed": int(seed),
        "backend": backend,
        "code": code,
        "measure": dict(measure),
    }
    return hashlib.sha256(json.dumps(blob, sort_keys=True).encode()).hexdigest()


class RunCache:
    """The cache folder: ``<root>/<backend>/<key[:2]>/<key>.json``."""

    def __init__(self, root: str | Path = DEFAULT_CACHE) -> None:
        self.root = Path(root)

    def path(self, backend: str, key: str) -> Path:
        """Where the run ``key`` is kept."""
        return self.root / backend / key[:2] / f"{key}.json"

    def get(self, backend: str, key: str) -> dict[str, Any] | None:
        """The record of run ``key`` (``None``: not run yet, or unreadable)."""
        try:
            data = json.loads(self.path(backend, key).read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("key") == key else None

    def put(self, backend: str, key: str, record: Mapping[str, Any]) -> Path:
        """Write run ``key``'s record atomically (a crash leaves the old file or none)."""
        path = self.path(backend, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({**record, "key": key}, f, indent=1, allow_nan=True)
                f.write("\n")
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path

    def scan(self, backend: str) -> Iterator[dict[str, Any]]:
        """Every record kept for ``backend`` (any code, any suite)."""
        for path in sorted((self.root / backend).glob("*/*.json")):
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and "key" in data:
                yield data
