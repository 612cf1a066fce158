"""Reproduce the XRC paper's experiments (Figs. 1 and 3-7) on CellGym's ns-3 cell (and on NR).

Figs. 1 and 5 also run on NR cells, FR1 and FR2 (``fig1_nr``, ``fig5_nr``;
``--figures fig1_nr,fig5_nr`` runs those alone).

    .venv/bin/python -m evaluation.experiments.xrc_paper --out docs/xrc-reproduction [--seeds 3]

Every run is a scenario from ``configs/scenario/xrc_fig*.yaml`` with its ``agent`` flow replaced by
the congestion control under test (native ns-3 TCPs and CellGym's native XRC sender). Runs go in
parallel (``--jobs``), the metrics come from ``cellgym.metrics``, and the command writes
``numbers.json`` (every number, and the run's provenance: ``cellgym.provenance``), PNG figures and
``report.md`` (``evaluation.experiments.xrc_report``: a table beside the paper's numbers) under
``--out``. ``--quick`` shortens every scenario for a smoke test, ``--figures`` runs some figures
only (``--figures internet`` only the Internet-bottleneck experiment), and ``--render`` rewrites
``report.md`` from ``numbers.json`` without simulating.

Besides the paper's figures, ``internet`` runs XRC's Internet-bottleneck mode
(``configs/scenario/xrc_internet_bottleneck.yaml``: a 10 Mbit/s wired bottleneck with a 100-packet
drop-tail buffer below the cell's rate): XRC against CUBIC and NewReno, one run each, for the
throughput, where the queue builds (end-to-end queueing against the RLC HoL delay) and whether
XRC leaves its explicit-rate window for standard TCP.

The provenance digest covers ``INPUTS`` (the files the numbers depend on) and the arguments;
``tests/evaluation/test_provenance.py`` recomputes it on the current tree and names the inputs
that changed since the committed report was made.

Common set-up (paper, section IV): 10 MHz (50 RBs), RLC buffer of 128 MTU-sized packets, minimum
RTT 38 ms, queueing budget 10 ms.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cellgym.fields import FLOW, UE
from cellgym.metrics import (
    EpisodeRecords,
    budget_compliance,
    chunk_delivery_s,
    completed_fct_s,
    compute_metrics,
    mean_ci,
    overlap_jain,
    percentile,
    queueing_delay_samples,
    rate_mbps,
)
from cellgym.paths import REPO_ROOT
from cellgym.provenance import record
from cellgym.scenario import ScenarioSpec, load_scenario
from evaluation.experiments import inputs
from evaluation.workers import map_jobs

log = logging.getLogger(__name__)

FIG1_CCAS = ("cubic", "newreno", "illinois", "veno", "xrc")
FIG4_CCAS = ("xrc", "cubic", "newreno", "illinois")
FIG5_FIRST = ("xrc", "cubic")
FIG5_SECOND = ("cubic", "newreno", "illinois", "veno")
FIG6_CCAS = ("xrc", "cubic", "newreno", "illinois")
FIG7_CCAS = ("xrc", "cubic", "newreno", "illinois", "veno")
INTERNET_CCAS = ("xrc", "cubic", "newreno")
#: Figs. 1 and 5 on NR cells (FR1 and FR2: ``configs/scenario/xrc_fig{1,5}_nr_fr{1,2}.yaml``),
#: with fewer senders and shorter runs (``NR_SIM_TIME_S``): 5G-LENA is slower than LTE.
NR_CELLS = ("fr1", "fr2")
FIG1_NR_CCAS = ("cubic", "xrc")
FIG5_NR_PAIRS = (("xrc", "cubic"), ("cubic", "cubic"))
NR_SIM_TIME_S = {"fig1_nr": 20.0, "fig5_nr": 15.0}
FIGURES = ("fig1", "fig3", "fig4", "fig5", "fig6", "fig7", "fig1_nr", "fig5_nr", "internet")
VIDEO_CHUNK_BYTES = 17e6 / 8 * 2  # 2 s at 17 Mbit/s
COMMAND = "python -m evaluation.experiments.xrc_paper"
#: The files the report's numbers depend on (``evaluation.experiments.inputs``, their one home).
INPUTS: tuple[str, ...] = inputs.XRC_PAPER


def paper_scenario(name: str, quick: bool = False) -> ScenarioSpec:
    """``configs/scenario/<name>.yaml`` (``quick`` shortens it to at most 12 s)."""
    spec = load_scenario(name)
    if quick:
        spec = spec.replace(sim_time_s=min(spec.sim_time_s, 12.0))
        spec.flows = [f for f in spec.flows if f.start_s < spec.sim_time_s - 2]
    return spec


def with_ccas(spec: ScenarioSpec, ccas: dict[int, str]) -> ScenarioSpec:
    """A copy of ``spec`` with flow ``i``'s congestion control set to ``ccas[i]``."""
    flows = [dataclasses.replace(f, cca=ccas.get(i, f.cca)) for i, f in enumerate(spec.flows)]
    return dataclasses.replace(spec, flows=flows)


@dataclasses.dataclass
class Job:
    """One simulation: a figure, a label, a fully specified scenario and a seed."""

    figure: str
    label: str
    spec: ScenarioSpec
    seed: int


def _run(job: Job) -> tuple[Job, EpisodeRecords, float]:
    from evaluation.rollouts import run_native

    t0 = time.perf_counter()
    rec = run_native(job.spec, job.label, job.seed, timeout_s=600)
    return job, rec, time.perf_counter() - t0


def _job_name(job: Job) -> str:
    return f"{job.figure} {job.label} seed {job.seed}"


def _done(job: Job, result: tuple[Job, EpisodeRecords, float]) -> None:
    log.info("%s: %.1f s", _job_name(job), result[2])


def make_jobs(seeds: Sequence[int], quick: bool, figures: Sequence[str] = FIGURES) -> list[Job]:
    """Every run of the ``figures``."""
    jobs = _all_jobs(seeds, quick)
    return [j for j in jobs if j.figure in figures]


def _all_jobs(seeds: Sequence[int], quick: bool) -> list[Job]:
    jobs = []
    fig1 = paper_scenario("xrc_fig1", quick)
    for cca in FIG1_CCAS:
        for s in seeds:
            jobs.append(Job("fig1", cca, with_ccas(fig1, {0: cca}), s))
    fig3 = paper_scenario("xrc_fig3", quick)
    for other in ("illinois", "cubic"):
        jobs.append(Job("fig3", f"xrc+{other}", with_ccas(fig3, {0: "xrc", 1: other}), seeds[0]))
    fig4 = paper_scenario("xrc_fig4", quick)
    for cca in FIG4_CCAS:
        jobs.append(Job("fig4", cca, with_ccas(fig4, dict.fromkeys(range(4), cca)), seeds[0]))
    fig5 = paper_scenario("xrc_fig5", quick)
    for first in FIG5_FIRST:
        for second in FIG5_SECOND:
            for s in seeds:
                label = f"{first} vs {second}"
                jobs.append(Job("fig5", label, with_ccas(fig5, {0: first, 1: second}), s))
    for cell in NR_CELLS:
        spec = paper_scenario(f"xrc_fig1_nr_{cell}", quick)
        spec = spec.replace(sim_time_s=min(spec.sim_time_s, NR_SIM_TIME_S["fig1_nr"]))
        for cca in FIG1_NR_CCAS:
            for s in seeds:
                jobs.append(Job("fig1_nr", f"{cell} {cca}", with_ccas(spec, {0: cca}), s))
        spec = paper_scenario(f"xrc_fig5_nr_{cell}", quick)
        spec = spec.replace(sim_time_s=min(spec.sim_time_s, NR_SIM_TIME_S["fig5_nr"]))
        for first, second in FIG5_NR_PAIRS:
            for s in seeds:
                label = f"{cell} {first} vs {second}"
                jobs.append(Job("fig5_nr", label, with_ccas(spec, {0: first, 1: second}), s))
    fig6 = paper_scenario("xrc_fig6", quick)
    for cca in FIG6_CCAS:
        jobs.append(Job("fig6", cca, with_ccas(fig6, {0: cca}), seeds[0]))
    fig7 = paper_scenario("xrc_fig7", quick)
    for cca in FIG7_CCAS:
        jobs.append(Job("fig7", cca, with_ccas(fig7, {0: cca}), seeds[0]))
    internet = paper_scenario("xrc_internet_bottleneck", quick)
    for cca in INTERNET_CCAS:
        jobs.append(Job("internet", cca, with_ccas(internet, {0: cca}), seeds[0]))
    return jobs


# -- analysis -------------------------------------------------------------------------------------
def _arrays(rec: EpisodeRecords) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.array(rec.times), np.stack(rec.flows), np.stack(rec.ues)


def short_fcts(rec: EpisodeRecords) -> np.ndarray:
    """Completion times of the short flows (every flow after the first, the capacity seeker)."""
    return completed_fct_s(compute_metrics(rec)["flows"][1:])


def analyse(results: list[tuple[Job, EpisodeRecords, float]]) -> dict[str, Any]:
    """Per figure, the numbers the paper reports, from the records."""
    out: dict[str, Any] = {}
    by_fig: dict[str, list[tuple[Job, EpisodeRecords]]] = {}
    for job, rec, _ in results:
        by_fig.setdefault(job.figure, []).append((job, rec))

    def group(fig: str) -> dict[str, list[EpisodeRecords]]:
        g: dict[str, list[EpisodeRecords]] = {}
        for job, rec in by_fig.get(fig, []):
            g.setdefault(job.label, []).append(rec)
        return g

    def mean_metric(recs: list[EpisodeRecords], key: str, sub: str | None = None) -> float:
        vals = []
        for r in recs:
            m = compute_metrics(r, from_s=1.0)
            v = m[key] if sub is None else m[key][sub]
            vals.append(np.nan if v is None else v)
        return mean_ci(vals)[0]

    for name in ("fig1", "fig1_nr"):
        fig1 = {}
        for label, recs in group(name).items():
            fig1[label] = {
                "utilization": mean_metric(recs, "utilization"),
                "hol_p50_ms": mean_metric(recs, "hol_delay_ms", "p50"),
                "hol_p90_ms": mean_metric(recs, "hol_delay_ms", "p90"),
                "hol_budget_compliance": mean_metric(recs, "hol_budget_compliance"),
            }
        out[name] = fig1
    fig3 = {}
    for label, recs in group("fig3").items():
        fig3[label] = {"jain_after_join": overlap_jain(recs[0], [0, 1], 6.0)}
    out["fig3"] = fig3
    fig4 = {}
    for label, recs in group("fig4").items():
        fig4[label] = {
            "jain": mean_metric(recs, "jain_fairness"),
            "hol_budget_compliance": mean_metric(recs, "hol_budget_compliance"),
        }
    out["fig4"] = fig4
    for name in ("fig5", "fig5_nr"):
        fig5 = {}
        for label, recs in group(name).items():
            fig5[label] = {
                "jain": float(np.mean([overlap_jain(r, [0, 1], 6.0) for r in recs])),
                "queueing_p50_ms": mean_metric(recs, "queueing_delay_ms", "p50"),
                "hol_p50_ms": mean_metric(recs, "hol_delay_ms", "p50"),
                "hol_p90_ms": mean_metric(recs, "hol_delay_ms", "p90"),
                "hol_budget_compliance": mean_metric(recs, "hol_budget_compliance"),
            }
        out[name] = fig5
    fig6 = {}
    for label, recs in group("fig6").items():
        rec = recs[0]
        t, fl, _ = _arrays(rec)
        q = queueing_delay_samples(fl[t > 1.0][:, 0])
        chunks = chunk_delivery_s(rec, 1, VIDEO_CHUNK_BYTES)
        fig6[label] = {
            "queueing_within_budget": budget_compliance(q, 10.0),
            "chunk_delivery_mean_s": float(np.mean(chunks)) if chunks else None,
            "chunk_delivery_max_s": float(np.max(chunks)) if chunks else None,
        }
    out["fig6"] = fig6
    fig7 = {}
    for label, recs in group("fig7").items():
        fcts = short_fcts(recs[0])
        fig7[label] = {
            "fct_p50_s": percentile(fcts, 50) if fcts.size else None,
            "fct_p90_s": percentile(fcts, 90) if fcts.size else None,
            "fct_max_s": float(np.max(fcts)) if fcts.size else None,
            "completed": int(fcts.size),
            "hol_p90_ms": mean_metric(recs, "hol_delay_ms", "p90"),
        }
    out["fig7"] = fig7
    internet = group("internet")
    out["internet"] = {label: internet_metrics(recs[0]) for label, recs in internet.items()}
    if "newreno" in internet:
        for label, recs in internet.items():
            out["internet"][label]["same_window_as_newreno"] = same_window(
                recs[0], internet["newreno"][0]
            )
    return out


#: The Internet-bottleneck experiment's steady state starts here (after slow start's losses).
INTERNET_FROM_S = 2.0


def same_window(rec: EpisodeRecords, ref: EpisodeRecords, from_s: float = 0.0) -> float:
    """Share of steps after ``from_s`` in which flow 0's window is within one segment of ``ref``'s.

    Both runs share the seed, so a sender that behaves as ``ref``'s has the same trajectory.
    """
    t, fl, _ = _arrays(rec)
    _, ref_fl, _ = _arrays(ref)
    n = min(len(t), len(ref_fl))
    keep = t[:n] > from_s
    diff = np.abs(fl[:n, 0, FLOW["cwnd_bytes"]] - ref_fl[:n, 0, FLOW["cwnd_bytes"]])[keep]
    return float(np.mean(diff <= 1448.0))


def internet_metrics(rec: EpisodeRecords, from_s: float = INTERNET_FROM_S) -> dict[str, Any]:
    """Throughput, where the queue is, and the window against XRC's target, after ``from_s``.

    The end-to-end queueing delay (RTT - minimum RTT) holds the bottleneck's queue and the RLC
    queue; the RLC HoL delay only the latter. ``above_twnd`` is the share of steps whose window
    exceeds 1.1 x twnd = explicit rate x minimum RTT (XRC's window in its explicit-rate modes;
    standard TCP ignores it), ``loss_events`` the fast retransmits and RTOs.
    """
    m = compute_metrics(rec, from_s=from_s)
    t, fl, _ = _arrays(rec)
    f0 = fl[t > from_s][:, 0]
    twnd = f0[:, FLOW["fb_rate_mbps"]] * 1e6 / 8 * f0[:, FLOW["rtt_min_ms"]] / 1000
    has = twnd > 0
    above = f0[has, FLOW["cwnd_bytes"]] > 1.1 * twnd[has]
    return {
        "throughput_mbps": m["flows"][0]["throughput_mbps"],
        "queueing_p50_ms": m["queueing_delay_ms"]["p50"],
        "queueing_p90_ms": m["queueing_delay_ms"]["p90"],
        "hol_p50_ms": m["hol_delay_ms"]["p50"],
        "hol_p90_ms": m["hol_delay_ms"]["p90"],
        "explicit_rate_mbps": float(np.mean(f0[:, FLOW["fb_rate_mbps"]])),
        "cwnd_mean_kb": float(np.mean(f0[:, FLOW["cwnd_bytes"]]) / 1000),
        "twnd_mean_kb": float(np.mean(twnd[has]) / 1000) if has.any() else None,
        "above_twnd": float(np.mean(above)) if has.any() else None,
        "loss_events": int(fl[t > from_s][:, 0, FLOW["loss_events"]].sum()),
    }


# -- figures --------------------------------------------------------------------------------------
def plot(results: list[tuple[Job, EpisodeRecords, float]], out: Path) -> list[str]:
    """Draw the figures as PNG files; return their names."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    first = {}
    for job, rec, _ in results:
        first.setdefault((job.figure, job.label), rec)

    figures = {job.figure for job, _, _ in results}
    if figures & {"fig1_nr", "fig5_nr"}:
        # Figs. 1 and 5 on NR: the HoL delay CDFs of each cell and sender (one seed).
        fig, axes = plt.subplots(1, 2, figsize=(12, 4))
        for ax, name in zip(axes, ("fig1_nr", "fig5_nr"), strict=True):
            for (figname, lab), rec in first.items():
                if figname == name:
                    hol = np.sort(np.stack(rec.ues)[:, 0, UE["hol_ms"]])
                    ax.plot(hol, np.linspace(0, 1, hol.size), label=lab, lw=1)
            ax.set(xlabel="RLC HoL delay (ms)", ylabel="CDF", title=f"{name}: HoL delay")
            ax.set_xscale("symlog")
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "nr_fig1_fig5.png", dpi=110)
        names.append("nr_fig1_fig5.png")
        plt.close(fig)
    if not figures & set(FIGURES[:6]):
        return names

    # Fig. 1: rate tracking (one seed) and HoL CDF.
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4))
    cap_drawn = False
    for cca in FIG1_CCAS:
        rec = first.get(("fig1", cca))
        if rec is None:
            continue
        t, fl, ue = _arrays(rec)
        if not cap_drawn:
            a.fill_between(t, ue[:, 0, UE["capacity_mbps"]], color="0.85", label="capacity")
            cap_drawn = True
        rate = rate_mbps(fl[:, 0, FLOW["rx_bytes"]], rec.spec.step_ms / 1000)
        a.plot(t, np.convolve(rate, np.ones(10) / 10, mode="same"), label=cca, lw=1)
        hol = np.sort(ue[:, 0, UE["hol_ms"]])
        b.plot(hol, np.linspace(0, 1, hol.size), label=cca)
    a.set(xlabel="time (s)", ylabel="rate (Mbit/s)", title="Fig. 1a: rate tracking")
    b.set(xlabel="RLC HoL delay (ms)", ylabel="CDF", title="Fig. 1b: HoL delay", xscale="symlog")
    a.legend(fontsize=7)
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "fig1.png", dpi=110)
    names.append("fig1.png")
    plt.close(fig)

    # Figs. 3, 4, 6: per-flow throughput over time.
    for figname, labels in (
        ("fig3", ("xrc+illinois", "xrc+cubic")),
        ("fig4", FIG4_CCAS),
        ("fig6", FIG6_CCAS),
    ):
        present = [lab for lab in labels if (figname, lab) in first]
        if not present:
            continue
        fig, axes = plt.subplots(1, len(present), figsize=(4 * len(present), 3.2), squeeze=False)
        for ax, lab in zip(axes[0], present, strict=True):
            rec = first[(figname, lab)]
            t, fl, _ = _arrays(rec)
            for f, fs in enumerate(rec.spec.flows):
                rate = rate_mbps(fl[:, f, FLOW["rx_bytes"]], rec.spec.step_ms / 1000)
                ax.plot(
                    t,
                    np.convolve(rate, np.ones(25) / 25, mode="same"),
                    lw=1,
                    label=f"{f}: {fs.cca} {fs.traffic}",
                )
            ax.set(title=f"{figname}: {lab}", xlabel="time (s)", ylabel="Mbit/s")
            ax.legend(fontsize=6)
        fig.tight_layout()
        fig.savefig(out / f"{figname}.png", dpi=110)
        names.append(f"{figname}.png")
        plt.close(fig)

    # Fig. 5: HoL CDFs; Fig. 7: FCT CDFs.
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4))
    for (figname, lab), rec in first.items():
        if figname == "fig5":
            _, _, ue = _arrays(rec)
            hol = np.sort(ue[:, 0, UE["hol_ms"]])
            a.plot(hol, np.linspace(0, 1, hol.size), label=lab, lw=1)
        if figname == "fig7":
            fcts = np.sort(short_fcts(rec))
            if fcts.size:
                b.plot(fcts, np.linspace(0, 1, len(fcts)), label=lab)
    a.set(xlabel="RLC HoL delay (ms)", ylabel="CDF", title="Fig. 5: HoL delay", xscale="symlog")
    b.set(xlabel="FCT of short NewReno flows (s)", ylabel="CDF", title="Fig. 7: FCT")
    a.legend(fontsize=6)
    b.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "fig5_fig7.png", dpi=110)
    names.append("fig5_fig7.png")
    plt.close(fig)

    # Internet bottleneck: each flow's window against XRC's twnd (explicit rate x minimum RTT).
    present = [c for c in INTERNET_CCAS if ("internet", c) in first]
    if present:
        fig, ax = plt.subplots(figsize=(7, 3.5))
        for cca in present:
            t, fl, _ = _arrays(first[("internet", cca)])
            wide = {"lw": 4, "alpha": 0.4} if cca == "xrc" else {"lw": 1}
            ax.plot(t, fl[:, 0, FLOW["cwnd_bytes"]] / 1000, label=f"{cca} cwnd", **wide)
            if cca == "xrc":
                twnd = fl[:, 0, FLOW["fb_rate_mbps"]] * fl[:, 0, FLOW["rtt_min_ms"]] / 8
                ax.plot(t, twnd, "k--", lw=1, label="xrc twnd (C_i x RTT_min)")
        ax.set(xlabel="time (s)", ylabel="kB", title="Internet bottleneck (10 Mbit/s): windows")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / "internet.png", dpi=110)
        names.append("internet.png")
        plt.close(fig)
    return names


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", default="docs/xrc-reproduction", help="output directory")
    ap.add_argument("--seeds", type=int, default=3, help="seeds for distribution figures (1, 5)")
    ap.add_argument("--jobs", type=int, default=2, help="simulations in parallel")
    ap.add_argument("--quick", action="store_true", help="short scenarios (smoke test)")
    ap.add_argument(
        "--figures", default="all", help="comma list of " + ",".join(FIGURES) + " (or all)"
    )
    ap.add_argument("--render", action="store_true", help="rewrite report.md from numbers.json")
    args = ap.parse_args(argv)
    figures = FIGURES if args.figures == "all" else tuple(args.figures.split(","))
    bad = sorted(set(figures) - set(FIGURES))
    if bad:
        ap.error(f"unknown figures {bad}; choose from {FIGURES}")
    args.figure_list = figures
    return args


def render(out: Path) -> str:
    """Rewrite ``out/report.md`` from ``out/numbers.json``; return the text."""
    from evaluation.experiments.xrc_report import report

    text = report(json.loads((out / "numbers.json").read_text()))
    (out / "report.md").write_text(text)
    return text


def main(argv: Sequence[str] | None = None) -> None:
    """Run the experiments, then write numbers.json, the figures and the report."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(args.out)
    if args.render:
        print(render(out))
        return
    out.mkdir(parents=True, exist_ok=True)
    prov = record(COMMAND, argv, INPUTS, REPO_ROOT)
    jobs = make_jobs(list(range(1, args.seeds + 1)), args.quick, args.figure_list)
    log.info("%d simulations on %d workers", len(jobs), args.jobs)
    t0 = time.perf_counter()
    results = map_jobs(_run, jobs, args.jobs, name=_job_name, in_process=False, on_result=_done)
    wall_s = time.perf_counter() - t0
    numbers = analyse(results)
    numbers["meta"] = {
        "wall_s": wall_s,
        "simulations": len(jobs),
        "seeds": args.seeds,
        "quick": args.quick,
        "figures": list(args.figure_list),
        "images": plot(results, out),
        "nr_sim_time_s": NR_SIM_TIME_S,
    }
    numbers["provenance"] = prov
    (out / "numbers.json").write_text(json.dumps(numbers, indent=2))
    print(render(out))


if __name__ == "__main__":
    main()
