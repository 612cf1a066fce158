"""XRC's Figs. 1 and 5 with the rest of the explicit-feedback family, on LTE and NR, both backends.

    .venv/bin/python -m evaluation.experiments.explicit_cell --out docs/explicit-cell [--seeds 2]

The XRC paper's Fig. 1 (one flow, its UE's distance changing every 2 s, capacity 7-34 Mbit/s) and
Fig. 5 (a capacity-seeking flow from 0.5 s, a CUBIC flow joining at 5 s), run with every
router- or base-station-assisted controller CellGym has (``FAMILY``: XRC, XCP, RCP, PBE-CC)
beside two TCPs, on the LTE cell (``configs/scenario/xrc_fig1.yaml``, ``xrc_fig5.yaml``) and the
NR FR1 cell (``xrc_fig1_nr_fr1.yaml``, ``xrc_fig5_nr_fr1.yaml``, shortened as the XRC
reproduction shortens them). Each controller runs on every backend whose registry entry lists it
(``cellgym.controllers``); the report names the ones a backend lacks.

Fig. 5 runs each family member against CUBIC and against a second flow of its own kind (the
paper's fairness question within a controller). The numbers are those of the XRC reproduction
(``evaluation.experiments.xrc_paper.analyse``): utilization and RLC head-of-line delay for
Fig. 1; Jain's index while both flows run, the queueing and HoL delays for Fig. 5.

The command writes ``numbers.json`` (every number, the runs' wall times and the provenance:
``cellgym.provenance``), ``fig1.png``, ``fig5.png`` and ``report.md`` under ``--out``;
``--render`` rewrites the report from ``numbers.json``; ``--quick`` shortens every run.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cellgym import controllers
from cellgym.paths import REPO_ROOT
from cellgym.provenance import markdown_line, record
from cellgym.vocab import BACKENDS
from evaluation.experiments import inputs
from evaluation.experiments.xrc_paper import NR_SIM_TIME_S, Job, analyse, paper_scenario, with_ccas
from evaluation.workers import map_jobs

log = logging.getLogger(__name__)

COMMAND = "python -m evaluation.experiments.explicit_cell"
INPUTS = inputs.EXPLICIT_CELL

#: The explicit-feedback controllers, in the report's order (those the registry has).
FAMILY_ALL = ("xrc", "xcp", "rcp", "pbecc")
#: The TCPs beside them.
TCPS = ("cubic", "newreno")
#: Per cell, the figure names (as ``xrc_paper.analyse`` knows them) and their scenarios.
CELLS: dict[str, dict[str, str]] = {
    "lte": {"fig1": "xrc_fig1", "fig5": "xrc_fig5"},
    "nr": {"fig1_nr": "xrc_fig1_nr_fr1", "fig5_nr": "xrc_fig5_nr_fr1"},
}


def family() -> tuple[str, ...]:
    """The family members the registry has."""
    return tuple(c for c in FAMILY_ALL if c in controllers.CONTROLLERS)


def runs_on(cca: str, backend: str, cell: str) -> bool:
    """Whether the registry lists ``cca`` on ``backend`` and ``cell``."""
    c = controllers.CONTROLLERS[cca]
    return backend in c.backends and cell in c.cells


def make_jobs(
    seeds: Sequence[int], backends: Sequence[str], quick: bool = False
) -> list[tuple[str, Job]]:
    """Every run: (backend, job)."""
    out: list[tuple[str, Job]] = []
    for backend in backends:
        for cell, figs in CELLS.items():
            for fig, scenario in figs.items():
                spec = paper_scenario(scenario, quick)
                if fig in NR_SIM_TIME_S:
                    spec = spec.replace(sim_time_s=min(spec.sim_time_s, NR_SIM_TIME_S[fig]))
                if fig.startswith("fig1"):
                    pairs = [(c, None) for c in (*family(), *TCPS)]
                else:
                    pairs = [(c, other) for c in family() for other in dict.fromkeys(("cubic", c))]
                for first, second in pairs:
                    ccas = [first] if second is None else [first, second]
                    if not all(runs_on(c, backend, cell) for c in ccas):
                        continue
                    label = " + ".join(ccas)
                    job_spec = with_ccas(spec, dict(enumerate(ccas)))
                    out.extend((backend, Job(fig, label, job_spec, s)) for s in seeds)
    return out


def _run(item: tuple[str, Job]) -> tuple[str, Job, Any, float]:
    from evaluation.rollouts import run_native

    backend, job = item
    t0 = time.perf_counter()
    rec = run_native(job.spec, job.label, job.seed, backend=backend, timeout_s=600)
    return backend, job, rec, time.perf_counter() - t0


def missing(backends: Sequence[str]) -> dict[str, list[str]]:
    """Per backend, the controllers of the report it does not run (cell by cell)."""
    out: dict[str, list[str]] = {}
    for backend in backends:
        gaps = [
            f"{c} ({cell})"
            for c in (*family(), *TCPS)
            for cell in CELLS
            if not runs_on(c, backend, cell)
        ]
        out[backend] = gaps
    return out


def plot(numbers: dict[str, Any], out: Path) -> list[str]:
    """fig1.png (utilization against HoL p90) and fig5.png (Jain against HoL p90)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    for fig, xkey, xlabel in (
        ("fig1", "hol_p90_ms", "RLC HoL delay, 90th percentile (ms)"),
        ("fig5", "hol_p90_ms", "RLC HoL delay, 90th percentile (ms)"),
    ):
        ykey, ylabel = (
            ("utilization", "utilization") if fig == "fig1" else ("jain", "Jain's index (overlap)")
        )
        backends = list(numbers["results"])
        fig_, axes = plt.subplots(
            len(backends), len(CELLS), figsize=(5.5 * len(CELLS), 4 * len(backends)), squeeze=False
        )
        for i, backend in enumerate(backends):
            for j, (cell, figs) in enumerate(CELLS.items()):
                ax = axes[i][j]
                name = next(f for f in figs if f.startswith(fig))
                for label, m in numbers["results"][backend].get(name, {}).items():
                    x, y = m.get(xkey), m.get(ykey)
                    if x is None or y is None:
                        continue
                    ax.scatter([x], [y])
                    ax.annotate(label, (x, y), fontsize=7)
                ax.set_xscale("symlog", linthresh=10)
                ax.set_title(f"{backend}, {cell}")
                ax.set_xlabel(xlabel)
                ax.set_ylabel(ylabel)
                ax.grid(alpha=0.3)
        fig_.tight_layout()
        fig_.savefig(out / f"{fig}.png", dpi=110)
        plt.close(fig_)
        names.append(f"{fig}.png")
    return names


def _f(x: Any, digits: int = 3) -> str:
    return "-" if x is None or x != x else f"{x:.{digits}f}"


def report(numbers: dict[str, Any]) -> str:
    """The Markdown report from ``numbers.json``."""
    meta = numbers["meta"]
    lines = [
        "# XRC's Figs. 1 and 5 with XCP, RCP and PBE-CC",
        "",
        markdown_line(numbers["provenance"]),
        "",
        f"{meta['simulations']} runs, seeds 1-{meta['seeds']}, {meta['wall_s']:.0f} s of wall "
        f"time. What each figure is: `evaluation/experiments/explicit_cell.py`. Not run (the "
        "backend does not have the controller yet):",
        "",
    ]
    for backend, gaps in meta["missing"].items():
        lines.append(f"- {backend}: {', '.join(gaps) if gaps else 'none'}")
    lines += ["", "## Fig. 1: one flow, capacity 7-34 Mbit/s (LTE) changing every 2 s", ""]
    lines += [
        "| backend | cell | controller | utilization | HoL p50 (ms) | HoL p90 (ms) | "
        "HoL within 10 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for backend, res in numbers["results"].items():
        for cell, figs in CELLS.items():
            name = next(f for f in figs if f.startswith("fig1"))
            for label, m in res.get(name, {}).items():
                lines.append(
                    f"| {backend} | {cell} | {label} | {_f(m['utilization'])} | "
                    f"{_f(m['hol_p50_ms'], 1)} | {_f(m['hol_p90_ms'], 1)} | "
                    f"{_f(m['hol_budget_compliance'])} |"
                )
    lines += ["", "## Fig. 5: a second flow joins at 5 s", ""]
    lines += [
        "| backend | cell | flows | Jain (both running) | queueing p50 (ms) | HoL p90 (ms) |",
        "|---|---|---|---|---|---|",
    ]
    for backend, res in numbers["results"].items():
        for cell, figs in CELLS.items():
            name = next(f for f in figs if f.startswith("fig5"))
            for label, m in res.get(name, {}).items():
                lines.append(
                    f"| {backend} | {cell} | {label} | {_f(m['jain'])} | "
                    f"{_f(m['queueing_p50_ms'], 1)} | {_f(m['hol_p90_ms'], 1)} |"
                )
    lines += ["", *[f"![{n}]({n})" for n in meta["images"]], ""]
    notes = REPO_ROOT / "docs" / "explicit-cell" / "README.md"
    if notes.is_file():
        lines += ["The papers' findings beside these, and the differences: `README.md` here.", ""]
    return "\n".join(lines)


def render(out: Path) -> str:
    """Rewrite ``out/report.md`` from ``out/numbers.json``; return the text."""
    text = report(json.loads((out / "numbers.json").read_text()))
    (out / "report.md").write_text(text)
    return text


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", default="docs/explicit-cell", help="output directory")
    ap.add_argument("--seeds", type=int, default=2, help="seeds per run (1 to 20)")
    ap.add_argument("--backend", default="both", choices=(*BACKENDS, "both"))
    ap.add_argument("--jobs", type=int, default=2, help="simulations in parallel")
    ap.add_argument("--quick", action="store_true", help="short scenarios (smoke test)")
    ap.add_argument("--render", action="store_true", help="rewrite report.md from numbers.json")
    args = ap.parse_args(argv)
    if not 1 <= args.seeds <= 20:
        ap.error(f"--seeds={args.seeds} is out of range: allowed [1, 20]")
    if not 1 <= args.jobs <= 64:
        ap.error(f"--jobs={args.jobs} is out of range: allowed [1, 64]")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    """Run every job, then write numbers.json, the figures and the report."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(args.out)
    if args.render:
        print(render(out))
        return
    out.mkdir(parents=True, exist_ok=True)
    prov = record(COMMAND, argv, INPUTS, REPO_ROOT)
    backends = list(BACKENDS) if args.backend == "both" else [args.backend]
    jobs = make_jobs(list(range(1, args.seeds + 1)), backends, args.quick)
    log.info("%d simulations on %d workers", len(jobs), args.jobs)
    t0 = time.perf_counter()
    done: dict[str, list[tuple[Job, Any, float]]] = {b: [] for b in backends}
    runs = []

    def finished(_item: tuple[str, Job], result: tuple[str, Job, Any, float]) -> None:
        backend, job, rec, wall = result
        log.info("%s %s %s seed %d: %.1f s", backend, job.figure, job.label, job.seed, wall)
        done[backend].append((job, rec, wall))
        runs.append(
            {
                "backend": backend,
                "figure": job.figure,
                "label": job.label,
                "seed": job.seed,
                "wall_s": wall,
            }
        )

    map_jobs(
        _run, jobs, args.jobs, in_process=False, on_result=finished,
        name=lambda item: f"{item[0]} {item[1].figure} {item[1].label} seed {item[1].seed}",
    )  # fmt: skip
    order = {(b, j.figure, j.label, j.seed): i for i, (b, j) in enumerate(jobs)}
    runs.sort(key=lambda r: order[(r["backend"], r["figure"], r["label"], r["seed"])])
    results = {}
    for backend, res in done.items():
        res.sort(key=lambda r: order[(backend, r[0].figure, r[0].label, r[0].seed)])
        full = analyse(res)
        results[backend] = {f: full[f] for cell in CELLS.values() for f in cell if full.get(f)}
    numbers: dict[str, Any] = {
        "results": results,
        "runs": runs,
        "meta": {
            "wall_s": time.perf_counter() - t0,
            "simulations": len(jobs),
            "seeds": args.seeds,
            "quick": args.quick,
            "family": list(family()),
            "missing": missing(backends),
        },
        "provenance": prov,
    }
    numbers["meta"]["images"] = plot(numbers, out)
    (out / "numbers.json").write_text(json.dumps(numbers, indent=2))
    print(render(out))


if __name__ == "__main__":
    main()
