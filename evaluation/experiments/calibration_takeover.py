"""The committed calibration table's ns-3 runs, taken over where their behaviour has not moved.

ns-3 runs are what a calibration table costs (the NR table: 99 runs, about an hour on two
cores), and the run cache (``calibrate.ns3_cache_key``) lives on one machine and is keyed by the
scenario program's bytes, so a fresh machine, or a rebuilt program, reruns them all, even after a
change that touched only the fast model. But the committed table (``calibration.json``) keeps
every run's metrics and the behaviour fingerprint it was made with
(``evaluation.experiments.behaviour``: one short probe per row and backend, the plan, the
modules that turn a run into its metrics). ``take_over`` computes today's fingerprint and returns
the committed ns-3 runs of every row whose ns-3 probe records what it recorded then; the
calibration runs ns-3 only for the other rows. Nothing is taken over when:

- the committed table was made with another run length, warm-up or seed list than today's;
- a module that computes a run's metrics (``RUN_RECIPE``: the drivers of the agent rows and the
  per-run metrics) or the fingerprint's format changed;
- the committed table has no fingerprint (made before ``python -m evaluation.experiments.reports``
  stamped it).

A row is taken over only if its ns-3 probe is unchanged and, when the committed row records its
scenario's digest (``scenario_digest``), that digest is today's: a probe runs the row's scenario
for a few seconds, so a change of the scenario shows in it or in the digest. What this shares
with the fingerprint's blind spot: a change that shows only after the probe's seconds is not seen
(``behaviour``'s module docstring).
"""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluation.experiments.behaviour_probes import digest

log = logging.getLogger(__name__)

#: The calibration's modules that decide a run's metrics (by the fingerprint's recipe names): a
#: change in either reruns every ns-3 run. ``calibrate`` itself (the table's orchestration, its
#: scenarios' names) may change: a scenario's change shows in its probe and digest.
RUN_RECIPE: tuple[str, ...] = ("calibration_drivers", "calibration_report")
#: Keys of a committed run that are not its metrics.
_RUN_KEYS = ("scenario", "backend", "seed", "wall_s")


def scenario_digest(spec: Any) -> str:
    """A digest of the scenario as plain data (every field), recorded per row of the table."""
    return digest(spec)[:16]


def reusable_rows(
    committed: Mapping[str, Any],
    now: Mapping[str, Any],
    digests: Mapping[str, str],
    sim_time_s: float,
    warmup_s: float,
    seeds: Sequence[int],
) -> tuple[set[str], str]:
    """The rows whose committed ns-3 runs stand for today's, and why the others do not.

    Args:
        committed: The committed ``calibration.json``.
        now: Today's behaviour fingerprint of the same command.
        digests: Today's ``scenario_digest`` per row.
        sim_time_s: Today's run length, s.
        warmup_s: Today's warm-up, s.
        seeds: Today's seeds.

    Returns:
        The rows' names, and ``""`` or the reason no row can be taken over.
    """
    meta = committed.get("meta", {})
    recorded = meta.get("provenance", {}).get("behaviour")
    if recorded is None:
        return set(), "the committed table records no behaviour fingerprint"
    if (meta.get("sim_time_s"), meta.get("warmup_s")) != (sim_time_s, warmup_s):
        return set(), "the committed table was made with another run length or warm-up"
    if list(meta.get("seeds", [])) != list(seeds):
        return set(), "the committed table was made with other seeds"
    if any(recorded.get(k) != now.get(k) for k in ("format", "probe_s")):
        return set(), "the fingerprint's format changed"
    old_r, new_r = recorded.get("recipe", {}), now.get("recipe", {})
    if any(m not in old_r or old_r[m] != new_r.get(m) for m in RUN_RECIPE):
        return set(), f"a module of a run's metrics changed ({', '.join(RUN_RECIPE)})"
    old_p, new_p = recorded.get("probes", {}), now.get("probes", {})
    rows = set()
    for row in committed.get("rows", []):
        name = row["scenario"]
        label = f"ns3 {name}"
        if name not in digests or label not in old_p or old_p[label] != new_p.get(label):
            continue
        if row.get("scenario_digest", digests[name]) != digests[name]:
            continue
        rows.add(name)
    return rows, ""


def take_over(
    out: Path,
    command: str,
    argv: Sequence[str],
    digests: Mapping[str, str],
    sim_time_s: float,
    warmup_s: float,
    seeds: Sequence[int],
    jobs: int = 1,
) -> tuple[dict[tuple[str, int], dict[str, Any]], dict[str, Any]]:
    """The committed table's ns-3 runs (in ``out``) that today's table may use as its own.

    Args:
        out: The table's folder (its ``calibration.json``).
        command: The calibration's module (``python -m`` form), whose fingerprint is computed.
        argv: Today's arguments.
        digests: Today's ``scenario_digest`` per row.
        sim_time_s: Today's run length, s.
        warmup_s: Today's warm-up, s.
        seeds: Today's seeds.
        jobs: Probe runs at a time.

    Returns:
        ``{(row, seed): metrics}`` and an account: ``taken_over`` (runs), ``rows``, ``from_commit``
        and ``why_none`` when nothing could be.
    """
    path = out / "calibration.json"
    try:
        committed = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}, {"taken_over": 0, "why_none": f"no table in {out}"}
    # By name: the fingerprint's studies import the calibration (a static import is a cycle).
    behaviour = importlib.import_module("evaluation.experiments.behaviour")
    now = behaviour.fingerprint(command.removeprefix("python -m "), list(argv), jobs)
    rows, why = reusable_rows(committed, now, digests, sim_time_s, warmup_s, seeds)
    commit = committed.get("meta", {}).get("provenance", {}).get("commit")
    runs = {
        (r["scenario"], int(r["seed"])): {k: v for k, v in r.items() if k not in _RUN_KEYS}
        for r in committed.get("runs", [])
        if r.get("backend") == "ns3" and r["scenario"] in rows and int(r["seed"]) in seeds
    }
    account: dict[str, Any] = {"taken_over": len(runs), "rows": sorted(rows), "from_commit": commit}
    if why:
        account["why_none"] = why
    log.info(
        "ns-3 runs taken over from the committed table (commit %s): %d of rows %s%s",
        commit, len(runs), sorted(rows), f" ({why})" if why else "",
    )  # fmt: skip
    return runs, account
