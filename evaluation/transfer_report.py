"""The transfer check's tables and report: text and ``report.md`` from ``numbers.json``.

``evaluation.transfer`` runs the controllers on both backends and builds the numbers; this module
only formats them, so ``python -m evaluation.transfer --out docs/transfer --render`` rewrites the
report from committed numbers (the report text is not an input of its provenance).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tabulate import tabulate

from cellgym.provenance import markdown_line

#: How the tables name the backends.
BACKEND_LABELS: dict[str, str] = {"ns3": "ns-3", "fast": "fast"}
#: The metrics shown beside the reward: (key, label, digits).
OTHER_METRICS: tuple[tuple[str, str, int], ...] = (
    ("utilization", "util", 3),
    ("hol_delay_ms_p95", "HoL p95 ms", 1),
    ("jain_fairness", "Jain", 3),
)


def _label(backend: str) -> str:
    return BACKEND_LABELS.get(backend, backend)


def _pm(mean: float | None, half: float | None, digits: int = 3, sign: bool = False) -> str:
    """``mean ± half`` (``-`` without a mean; the mean alone without an interval)."""
    if mean is None or not math.isfinite(mean):
        return "-"
    text = f"{mean:+.{digits}f}" if sign else f"{mean:.{digits}f}"
    if half is None or not math.isfinite(half):
        return text
    return f"{text} ± {half:.{digits}f}"


def _n(row: dict[str, Any], backends: Sequence[str]) -> str:
    return "/".join(str(row[f"n_{b}"]) for b in backends)


def reward_table(numbers: dict[str, Any], fmt: str = "simple") -> str:
    """Per scenario and controller: the reward on each backend, the paired gap and the verdict."""
    backends = numbers["setup"]["backends"]
    metric = numbers["setup"]["bound"]["metric"]
    rows = []
    for r in numbers["rows"]:
        cells = [r["scenario"], r["controller"], _n(r, backends)]
        cells += [_pm(r[f"{metric}_{b}"], r[f"{metric}_{b}_ci"]) for b in backends]
        cells += [_pm(r["gap"], r["gap_ci"], sign=True), f"{r['bound']:.3f}", r["verdict"] or "-"]
        rows.append(cells)
    gap = " - ".join(_label(b) for b in backends)
    headers = ["scenario", "controller", "n", *[_label(b) for b in backends]]
    headers += [f"gap {gap} (paired)", "bound", "verdict"]
    return tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True)


def metrics_table(numbers: dict[str, Any], fmt: str = "simple") -> str:
    """Per scenario and controller: utilization, HoL delay p95 and Jain's index per backend."""
    backends = numbers["setup"]["backends"]
    rows = []
    for r in numbers["rows"]:
        cells = [r["scenario"], r["controller"]]
        for key, _, digits in OTHER_METRICS:
            cells += [_pm(r[f"{key}_{b}"], r[f"{key}_{b}_ci"], digits) for b in backends]
        rows.append(cells)
    headers = ["scenario", "controller"]
    headers += [f"{label} {_label(b)}" for _, label, _ in OTHER_METRICS for b in backends]
    return tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True)


def _counts(rows: Sequence[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        key = r["verdict"] or "no pair"
        out[key] = out.get(key, 0) + 1
    return out


def _outside(row: dict[str, Any]) -> bool:
    return str(row["verdict"]).startswith("OUTSIDE")


def summary_lines(numbers: dict[str, Any]) -> list[str]:
    """How many rows are within the bound, overall and per controller, by verdict."""
    rows = numbers["rows"]
    lines = []
    for c in dict.fromkeys(r["controller"] for r in rows):
        mine = [r for r in rows if r["controller"] == c]
        inside = sum(r["verdict"] is not None and not _outside(r) for r in mine)
        parts = ", ".join(f"{k} {v}" for k, v in sorted(_counts(mine).items()))
        lines.append(f"- `{c}`: {inside} of {len(mine)} within ({parts})")
    inside = sum(r["verdict"] is not None and not _outside(r) for r in rows)
    sure = sum(r["verdict"] == "within" for r in rows)
    head = (
        f"{inside} of {len(rows)} rows have a mean gap within the bound, {sure} of them with "
        f"the whole interval; {sum(_outside(r) for r in rows)} are outside."
    )
    return [head, "", *lines]


def _intro(setup: dict[str, Any]) -> str:
    bound = setup["bound"]
    seeds = setup["seeds"]
    conf = f"{setup['confidence']:.0%}".replace("%", " %")
    return (
        f"Mean reward per step, mean ± half-width of the {conf} t interval over seeds "
        f"{seeds[0]}-{seeds[-1] if len(seeds) > 1 else seeds[0]} ({len(seeds)} seeds; n = runs "
        f"finished per backend). The gap is ns-3 - fast, averaged over the seeds that finished "
        f"on both backends, with the {conf} t interval of those paired differences. Bound: "
        f"|gap| <= max({bound['abs']:g}, {bound['rel'] * 100:g} % of |ns-3 value|). Verdict: "
        "`within` (the gap and its interval inside the bound), `within?` (the gap inside, its "
        "interval reaching past: more seeds would tell), `OUTSIDE?` (the gap outside, its "
        "interval reaching inside), `OUTSIDE` (both outside)."
    )


def terminal_table(numbers: dict[str, Any]) -> str:
    """What ``python -m evaluation.transfer`` prints."""
    text = [
        _intro(numbers["setup"]),
        "",
        reward_table(numbers),
        "",
        "Utilization, HoL delay p95 and Jain's index (mean ± interval per backend):",
        "",
        metrics_table(numbers),
        "",
        *summary_lines(numbers),
    ]
    return "\n".join(text)


def _setup_section(numbers: dict[str, Any]) -> list[str]:
    setup = numbers["setup"]
    controllers = [
        [f"`{c['label']}`", c["kind"], f"`{c['name']}`", c.get("action_mode") or "-"]
        for c in setup["controllers"]
    ]
    scenarios = ", ".join(f"`{s['name']}` ({s['sim_time_s']:g} s)" for s in setup["scenarios"])
    return [
        "## Setup",
        "",
        f"Scenarios (simulated time): {scenarios}. Seeds: {setup['seeds']}.",
        "",
        tabulate(
            controllers,
            headers=["controller", "kind", "source", "action mode"],
            tablefmt="github",
            disable_numparse=True,
        ),
        "",
    ]


def _failed_section(numbers: dict[str, Any]) -> list[str]:
    failed = [r for r in numbers["runs"] if r["status"] != "ok"]
    if not failed:
        return []
    lines = ["## Failed runs", ""]
    for r in failed:
        lines.append(
            f"- {_label(r['backend'])} / `{r['scenario']}` / `{r['controller']}` / seed "
            f"{r['seed']}: {r['error']}"
        )
    return [*lines, ""]


def render(numbers: dict[str, Any]) -> str:
    """``report.md`` from the numbers."""
    meta = numbers.get("meta", {})
    lines = [
        "# The fast twin against ns-3: does a result transfer?",
        "",
        "Each controller on each scenario and seed, once on ns-3 and once on the fast twin, "
        "through the loop of `evaluate.py`. A user checks their own controller with the same "
        "command (`docs/transfer.md`). Written by `python -m evaluation.transfer`; "
        "`--render` rewrites this file from `numbers.json`.",
        "",
    ]
    if "provenance" in numbers:
        lines += [markdown_line(numbers["provenance"]), ""]
    lines += ["## Summary", "", *summary_lines(numbers), ""]
    lines += ["## Mean reward per step", "", _intro(numbers["setup"]), ""]
    lines += [reward_table(numbers, fmt="github"), ""]
    lines += ["## Utilization, HoL delay p95, Jain's index", ""]
    lines += [metrics_table(numbers, fmt="github"), ""]
    lines += _setup_section(numbers)
    lines += _failed_section(numbers)
    if meta:
        run_s = ", ".join(
            f"{_label(b)} {meta[f'{b}_run_s']:.0f} s"
            for b in numbers["setup"]["backends"]
            if f"{b}_run_s" in meta
        )
        cached = meta.get("cached_runs", 0)
        kept = f"; {cached} runs taken from the run cache, made by the same code" if cached else ""
        lines += [
            f"Wall time {meta.get('wall_s', 0):.0f} s with {meta.get('jobs', 1)} jobs "
            f"(simulation time summed over runs: {run_s}{kept}).",
            "",
        ]
    return "\n".join(lines)


def write(numbers: dict[str, Any], out: Path) -> None:
    """Write ``report.md`` into ``out`` from ``numbers``."""
    (Path(out) / "report.md").write_text(render(numbers))
