"""Provenance by behaviour: a report is current while the code still *does* what made it.

A committed report records (``cellgym.provenance``) the digest of its input files; any byte of any
of them changing made it stale, so a comment fix in a shared module asked for every report to be
regenerated. This module gives each report a **behaviour fingerprint** instead, and the
staleness check (``evaluation.experiments.reports``) judges by it when the report records one:

- **the plan**: every run the report's command makes, with its recorded arguments, as data (the
  full scenario of each run with every field, its controller, backend and seed). A changed
  scenario file, default or controller list changes the plan, whatever its bytes look like.
- **the probes**: short deterministic runs (``PROBE_S`` simulated seconds; the multi-agent
  study's 2 s, its metrics start at 1 s) of runs of that plan, through the study's own run
  function, hashed bit for bit with the metrics computed from them (both backends are
  deterministic for a seed, on every machine of a kind; the golden tests check the same). The
  probes are chosen so that every value of every dimension of the plan (scenario, controller,
  backend, figure, trace, buffer, cell, ...) is run at least once (``cover``), not every
  combination: a study of hundreds of runs is probed with a few dozen.
- **the recipe**: the study's own modules (the code that turns runs into its tables and text) by
  their syntax tree without docstrings, and the configuration files it reads as data, so a
  comment, docstring or formatting change keeps the report current and a code change does not.

A refactor of the library that keeps behaviour keeps every report current; a change that alters
what a probe records fails ``tests/evaluation/test_provenance.py``, naming the report, the
probes that changed and the command that regenerates it.

What this does not see: a change that shows only after ``PROBE_S`` of a run (the plan still
records the scenario, so a changed configuration is seen), or only in a combination of values
no probe runs. The golden tests (longer runs) and the reports' own checks remain.

    python -m evaluation.experiments.reports --fingerprint   # stamp the byte-current reports
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cellgym.paths import REPO_ROOT
from evaluation.experiments.behaviour_probes import (
    FORMAT,
    PROBE_S,
    Probe,
    Study,
    _dropping_walls,
    cover,
    digest,
)
from evaluation.experiments.behaviour_studies import STUDIES
from evaluation.workers import map_jobs

__all__ = [
    "FORMAT",
    "PROBE_S",
    "Probe",
    "Study",
    "config_digest",
    "cover",
    "differences",
    "digest",
    "fingerprint",
    "module_digest",
    "study_for",
]


class _Recipe(ast.NodeTransformer):
    """Drops what is not behaviour from a module's tree: docstrings and import statements."""

    def visit_Import(self, node: ast.AST) -> None:  # noqa: N802 - ast's visitor names
        return None

    def visit_ImportFrom(self, node: ast.AST) -> None:  # noqa: N802
        return None

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body = body[1:]
        if isinstance(body, list):
            node.body = body or [ast.Pass()]
        return node


def module_digest(name: str) -> str:
    """SHA-256 of a module's syntax tree without docstrings and imports.

    Comments, layout, docstrings and where names are imported from never count, so moving a
    study or the helpers it imports keeps its recipe; a change of what the code does counts.
    """
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ValueError(f"no module {name!r}")
    tree = _Recipe().visit(ast.parse(Path(spec.origin).read_text()))
    return hashlib.sha256(ast.dump(tree, include_attributes=False).encode()).hexdigest()


def config_digest(rel: str) -> str:
    """SHA-256 of a YAML file's data (comments and layout never count)."""
    import yaml

    return digest(yaml.safe_load((REPO_ROOT / rel).read_text()))


# -- the fingerprint ------------------------------------------------------------------------------
def study_for(module: str, args: Sequence[str]) -> Study:
    """The study of the report that ``python -m module args`` makes."""
    if module not in STUDIES:
        raise KeyError(f"no behaviour study for {module!r}: add one to STUDIES")
    return STUDIES[module](list(args))


#: Digests of the shared probes this process ran, by (label, shared).
_MEMO: dict[tuple[str, str], str] = {}


def _run_probe(p: Probe) -> str:
    key = (p.label, digest(p.shared)) if p.shared is not None else None
    if key is not None and key in _MEMO:
        return _MEMO[key]
    out = digest(_dropping_walls(p.run()))
    if key is not None:
        _MEMO[key] = out
    return out


@functools.lru_cache(maxsize=4)
def _worker_probes(module: str, args: tuple[str, ...]) -> dict[str, Probe]:
    """A worker's probes of a study, planned once per process (Zeus plans in seconds)."""
    return {p.label: p for p in study_for(module, args).probes}


def _probe_worker(item: tuple[str, list[str], str]) -> tuple[str, str]:
    module, args, label = item
    return label, _run_probe(_worker_probes(module, tuple(args))[label])


def fingerprint(module: str, args: Sequence[str], jobs: int = 1) -> dict[str, Any]:
    """The behaviour fingerprint of the report ``python -m module args`` makes.

    ``jobs`` > 1 runs the probes in that many processes.
    """
    study = study_for(module, args)
    chosen = cover(study.probes)
    labels = [p.label for p in chosen]
    if len(set(labels)) != len(labels):
        raise ValueError(f"{module}: two probes share a label")
    if jobs > 1 and len(chosen) > 1:
        items = [(module, list(args), lab) for lab in labels]
        results = dict(map_jobs(_probe_worker, items, jobs, name=lambda it: f"probe {it[2]}"))
    else:
        results = {p.label: _run_probe(p) for p in chosen}
    probes = {lab: results[lab] for lab in sorted(results)}
    # By the module's own name (not its package): a study moved to another folder keeps it.
    recipe = {m.rsplit(".", 1)[-1]: module_digest(m) for m in study.modules}
    if len(recipe) != len(study.modules):
        raise ValueError(f"{module}: two recipe modules share a name: {study.modules}")
    recipe.update({c: config_digest(c) for c in study.configs})
    out = {
        "format": FORMAT,
        "probe_s": PROBE_S,
        "plan": digest(study.plan),
        "recipe": recipe,
        "probes": probes,
    }
    out["digest"] = digest(out)
    return out


def differences(recorded: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What differs between two fingerprints, in words (empty when they are the same)."""
    if recorded.get("digest") == now.get("digest"):
        return []
    out = []
    if recorded.get("format") != now.get("format") or recorded.get("probe_s") != now.get("probe_s"):
        out.append(f"fingerprint format {recorded.get('format')} -> {now.get('format')}")
    if recorded.get("plan") != now.get("plan"):
        out.append("the plan (its runs' scenarios, controllers, seeds or arguments)")
    old_r, new_r = recorded.get("recipe", {}), now.get("recipe", {})
    changed = sorted(k for k in old_r.keys() | new_r.keys() if old_r.get(k) != new_r.get(k))
    if changed:
        out.append("the recipe: " + ", ".join(changed))
    old_p, new_p = recorded.get("probes", {}), now.get("probes", {})
    moved = sorted(k for k in old_p.keys() & new_p.keys() if old_p[k] != new_p[k])
    if moved:
        shown = ", ".join(moved[:6]) + (f" and {len(moved) - 6} more" if len(moved) > 6 else "")
        out.append(f"what {len(moved)} of {len(new_p)} probes record: {shown}")
    if old_p.keys() != new_p.keys():
        out.append("the probes chosen (the plan's dimensions changed)")
    return out or ["the fingerprint's digest"]
