"""What ``--controllers`` may name, checked against the suite and backend before any run.

An entrant is one controller on the leaderboard:

- a registry name (``cellgym.controllers``: ns-3's TCPs, ``xrc``, ``xcp``, ``rcp``, ``xcpr``,
  ``pbecc``, the baseline policies such as ``xrc_policy`` and ``oracle``), run with the suite's
  ``policy_settings``;
- an ns-3 TypeId (``ns3::TcpBbr``): the registry's sender with that TypeId (the scenario program
  knows only the TypeIds compiled into it, ``ns3-scenarios/model/cellgym-sender-app.cc``);
- a trained checkpoint (a ``train.py`` run directory, a ``model.zip``, ``<algo>:<path>``);
- a user's policy class (``module:Class`` or ``path/to/file.py:Class``,
  ``evaluation.user_policies``);
- ``optimum``: the Zeus offline optimum, computed, never run.

Its ``identity`` (JSON) is what the cache keys on: the registry name, or the SHA-256 of the
checkpoint's files or of the policy class's source file, and the environment settings it runs
with; its label is only its name in the tables.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cellgym import controllers
from cellgym.provenance import file_digest
from cellgym.vocab import SpecError
from evaluation.benchmark.suite import OPTIMUM, Suite
from evaluation.resolve import ControllerSpec, resolve_controller, unique_labels
from evaluation.user_policies import is_class_ref, resolve_user_policy

#: Kind of the computed optimum.
COMPUTED = "computed"


@dataclass(frozen=True)
class Entrant:
    """One controller of a score (picklable).

    Attributes:
        text: As given on the command line.
        spec: What runs (``None`` for the computed optimum).
        identity: What the cache keys on (JSON-able).
    """

    text: str
    spec: ControllerSpec | None
    identity: dict[str, Any]

    @property
    def label(self) -> str:
        """Its name in the tables."""
        return OPTIMUM if self.spec is None else self.spec.label

    @property
    def kind(self) -> str:
        """``native``, ``baseline``, ``trained``, ``policy`` or ``computed``."""
        return COMPUTED if self.spec is None else self.spec.kind

    @property
    def computed(self) -> bool:
        """True for the optimum (no runs)."""
        return self.spec is None


def typeid_name(text: str, where: str) -> str:
    """The registry name of an ns-3 TypeId (``ns3::TcpCubic`` -> ``cubic``).

    Raises:
        SpecError: A TypeId the scenario program does not map to a sender, with the fix.
    """
    for name, c in controllers.CONTROLLERS.items():
        if c.ns3_type and c.ns3_type == text:
            return name
    known = ", ".join(c.ns3_type for c in controllers.CONTROLLERS.values() if c.ns3_type)
    raise SpecError(
        f"{where}={text!r} is not a TypeId the scenario program can install: it knows {known}. "
        "A TCP of your own runs once it is a native controller: its TcpCongestionOps in "
        "ns3-scenarios/model/, its name -> TypeId in cellgym-sender-app.cc and its registry "
        "entry (docs/architecture.md, 'Add a controller'); then name it here"
    )


def _source_file(ref: str) -> Path | None:
    left = ref.rpartition(":")[0]
    if left.endswith(".py"):
        return Path(left)
    try:
        found = importlib.util.find_spec(left)
    except (ImportError, ValueError):
        return None
    return Path(found.origin) if found is not None and found.origin else None


def identity_of(spec: ControllerSpec) -> dict[str, Any]:
    """What the cache keys on for ``spec`` (module docstring)."""
    out: dict[str, Any] = {
        "kind": spec.kind,
        "action_mode": spec.action_mode,
        "max_change": spec.max_change,
    }
    if spec.kind in ("native", "baseline"):
        out["name"] = spec.name
    elif spec.kind == "trained":
        files = [spec.name, spec.vecnormalize]
        out["files"] = [file_digest(Path(f)) if f else None for f in files]
        out.update(algo=spec.algo, features=spec.features)
    else:
        src = _source_file(spec.name)
        out["name"] = spec.name.rpartition(":")[2]
        out["source"] = file_digest(src) if src is not None and src.is_file() else spec.name
    return out


def _check_tasks(entrant: ControllerSpec, suite: Suite, backend: str, where: str) -> None:
    """A registry controller runs every cell type of the suite's tasks."""
    if entrant.kind not in ("native", "baseline"):
        return
    entry = controllers.get(entrant.name, backend, field_name=where)
    for t in suite.tasks:
        if t.scenario.cell.type not in entry.cells:
            raise SpecError(
                f"{where}={entrant.name!r} does not run on task {t.name} ({t.cell} cell): it "
                f"runs on {', '.join(entry.cells)} cells"
            )


def resolve_entrant(text: str, suite: Suite, backend: str, where: str) -> Entrant:
    """One controller, checked to run on ``backend`` and every task of ``suite``.

    Raises:
        SpecError: Naming ``where``: an unknown controller, one that ``backend`` (or a task's
            cell) cannot run, a missing checkpoint, or a policy class that does not import.
    """
    text = str(text).strip()
    if text == OPTIMUM:
        return Entrant(text, None, {"kind": COMPUTED, "name": OPTIMUM})
    if text.startswith("ns3::"):
        name = typeid_name(text, where)
        if backend not in controllers.CONTROLLERS[name].backends:
            raise SpecError(
                f"{where}={text!r} ({name}) runs on ns-3 only, not on backend={backend!r}: "
                f"score it with --backend ns3"
            )
        text = name
    if is_class_ref(text):
        spec = resolve_user_policy(text, where)
    else:
        try:
            spec = resolve_controller(text, where, backend=backend)
        except FileNotFoundError as exc:
            raise SpecError(str(exc)) from None
    if spec.kind == "baseline" and spec.name in suite.policy_settings:
        spec = dataclasses.replace(spec, **suite.policy_settings[spec.name])
    _check_tasks(spec, suite, backend, where)
    return Entrant(text, spec, identity_of(spec))


def resolve_entrants(
    texts: Sequence[str], suite: Suite, backend: str, with_references: bool = True
) -> list[Entrant]:
    """The controllers of ``texts`` (each once, labels unique), then the suite's references.

    Raises:
        SpecError: As ``resolve_entrant``, before any simulation.
    """
    if not texts:
        raise SpecError("--controllers is empty: name at least one controller")
    wanted = [*texts, *(suite.references if with_references else ())]
    out: list[Entrant] = []
    seen: set[str] = set()
    for i, text in enumerate(wanted):
        where = f"--controllers[{i}]" if i < len(texts) else f"suite.references[{i - len(texts)}]"
        e = resolve_entrant(text, suite, backend, where)
        key = json.dumps(e.identity, sort_keys=True)
        if key not in seen:
            seen.add(key)
            out.append(e)
    specs = unique_labels([e.spec for e in out if e.spec is not None])
    relabelled = iter(specs)
    return [e if e.spec is None else dataclasses.replace(e, spec=next(relabelled)) for e in out]


def entrant_hash(identity: dict[str, Any]) -> str:
    """A short digest of an identity (a folder-safe name)."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
