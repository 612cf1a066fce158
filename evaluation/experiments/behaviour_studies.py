"""Each report's study for its behaviour fingerprint: its plan of runs and its probes.

One function per experiment command (``STUDIES``, by module): it parses the report's recorded
arguments as the command does, lists every run the command makes (the plan, as data) and a probe
per run: a short run through the study's own run function (``evaluation.experiments.behaviour``
explains how they are chosen and hashed).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from cellgym.paths import REPO_ROOT
from cellgym.vocab import BACKENDS
from envs.fast_params import parse_fast_params
from evaluation.experiments.behaviour_probes import (
    FCT_PROBE_S,
    PROBE_S,
    PROBE_SEED,
    XCPR_PROBE_S,
    Probe,
    Study,
    _dropping_walls,
    _plain,
    records_result,
)

#: The benchmark's modules that make the published leaderboard (its recipe): the dataset's and
#: the recorder's are not among them.
BENCHMARK_MODULES: tuple[str, ...] = (
    "aggregate",
    "cache",
    "cli",
    "entrants",
    "leaderboard",
    "metrics",
    "publish",
    "render",
    "runner",
    "scores",
    "suite",
)


# -- the studies ----------------------------------------------------------------------------------
def _spec_id(spec: Any) -> Any:
    """The scenario as plain data, every field (nested sections included): ``_plain``'s form."""
    return _plain(spec)


def _short(spec: Any, seconds: float = PROBE_S) -> Any:
    return spec.replace(sim_time_s=min(spec.sim_time_s, seconds))


def _calibration(args: Sequence[str]) -> Study:
    from evaluation.experiments import calibrate
    from evaluation.experiments.calibration_drivers import DRIVERS, drive
    from evaluation.experiments.calibration_report import run_metrics

    ns = _parse_known(
        args,
        [
            ("--quick", {"action": "store_true"}),
            ("--seeds", {"type": int, "default": 9}),
            ("--sim-time-s", {"type": float, "default": 20.0}),
            ("--scenarios", {"default": "all"}),
            ("--fast-recovery", {"default": None}),
            ("--fast-param", {"action": "append", "default": []}),
        ],
    )
    from envs.fastsim.params import FastSimParams

    groups = {
        "all": calibrate.SCENARIOS,
        "nr": calibrate.NR_SCENARIOS,
        "traces": calibrate.TRACE_SCENARIOS,
    }
    names = list(groups.get(ns.scenarios, ns.scenarios.split(",")))
    seeds = [1] if ns.quick else list(range(1, ns.seeds + 1))
    sim_time_s = 8.0 if ns.quick else ns.sim_time_s
    knobs = {
        "recovery": ns.fast_recovery or FastSimParams.recovery,
        **parse_fast_params(ns.fast_param),
    }
    plan, probes = [], []
    for name in names:
        spec = calibrate.scenario(name, sim_time_s)
        driver = DRIVERS.get(name)
        who = driver.name if driver else spec.flows[0].cca
        plan.append({"scenario": _spec_id(spec), "driver": who, "seeds": seeds, "knobs": knobs})
        short = _short(spec)

        def ns3(short: Any = short, driver: Any = driver) -> Any:
            rec, _ = calibrate.run_ns3(short, PROBE_SEED, None, driver)
            return {"records": records_result(rec), "row": run_metrics(rec, from_s=0.0)}

        def fast(short: Any = short, driver: Any = driver) -> Any:
            if driver is None:
                rec = calibrate.run_fast(short, PROBE_SEED, knobs)
            else:
                rec = drive(short, driver, PROBE_SEED, "fast", knobs)
            return {"records": records_result(rec), "row": run_metrics(rec, from_s=0.0)}

        # Every row on both backends: the table compares them.
        shared = ("calibration", who, _spec_id(short))
        probes.append(Probe(f"ns3 {name}", {"row": f"{name} ns3"}, ns3, shared))
        probes.append(Probe(f"fast {name}", {"row": f"{name} fast"}, fast))
    return Study(
        plan,
        probes,
        (
            "evaluation.experiments.calibrate",
            "evaluation.experiments.calibration_drivers",
            "evaluation.experiments.calibration_report",
        ),
    )


def _paper_job_probes(jobs: Sequence[tuple[str, Any]], run: Callable[..., Any]) -> list[Probe]:
    """Probes of xrc_paper-style jobs ``(backend, Job)``: features figure, controllers, backend."""
    probes = []
    for backend, job in jobs:
        if job.seed != jobs[0][1].seed:
            continue

        def go(job: Any = job, backend: str = backend) -> Any:
            short = dataclasses.replace(job, spec=_short(job.spec))
            return records_result(run(backend, short))

        feats = {"figure": job.figure, "backend": backend}
        for i, f in enumerate(job.spec.flows):
            feats[f"cca{i}"] = f.cca
            feats[f"cca{i} on"] = f"{f.cca} {backend}"
        probes.append(Probe(f"{backend} {job.figure} {job.label}", feats, go))
    return probes


def _xrc_paper(args: Sequence[str]) -> Study:
    from evaluation.experiments import xrc_paper

    a = xrc_paper.parse_args(list(args))
    figures = xrc_paper.FIGURES if a.figures == "all" else a.figures.split(",")
    jobs = xrc_paper.make_jobs(list(range(1, a.seeds + 1)), a.quick, figures)
    plan = [{"figure": j.figure, "label": j.label, "spec": _spec_id(j.spec), "seed": j.seed}
            for j in jobs]  # fmt: skip

    def run(backend: str, job: Any) -> Any:
        return xrc_paper._run(job)[1]

    probes = _paper_job_probes([("ns3", j) for j in jobs], run)
    return Study(plan, probes, ("evaluation.experiments.xrc_paper",))


def _explicit_cell(args: Sequence[str]) -> Study:
    from evaluation.experiments import explicit_cell

    a = explicit_cell.parse_args(list(args))
    backends = BACKENDS if a.backend == "both" else (a.backend,)
    jobs = explicit_cell.make_jobs(list(range(1, a.seeds + 1)), backends, a.quick)
    plan = [{"backend": b, "figure": j.figure, "label": j.label, "spec": _spec_id(j.spec),
             "seed": j.seed} for b, j in jobs]  # fmt: skip

    def run(backend: str, job: Any) -> Any:
        return explicit_cell._run((backend, job))[2]

    return Study(
        plan,
        _paper_job_probes(jobs, run),
        ("evaluation.experiments.explicit_cell", "evaluation.experiments.xrc_paper"),
    )


def _zeus(args: Sequence[str]) -> Study:
    from evaluation.experiments import zeus

    a = zeus.parse_args(list(args))
    m_all = zeus.matrix(a)
    plan: list[Any] = [m_all, {"from_s": a.from_s}]
    probes = []
    for backend, m in m_all.items():
        jobs = zeus.make_jobs(
            backend,
            m["controllers"],
            m["traces"],
            m["buffers"],
            [PROBE_SEED],
            PROBE_S,
            m["fig9_buffers"],
            {(backend, t, PROBE_SEED): 1e7 for t in m["traces"]},
            0.0,
        )
        for job in jobs:
            spec = zeus.trace_scenario(
                job.trace, job.ccas, job.buffer, m["duration_s"], PROBE_SEED, job.bdp_rate_bps
            )
            plan.append({"job": job.key, "spec": _spec_id(spec)})

            def go(job: Any = job) -> Any:
                rec = zeus.run_records(job)
                return {"records": records_result(rec), "summary": zeus.summarize(job, rec)}

            feats = {"backend": backend, "trace": job.trace, "buffer": job.buffer,
                     "kind": job.kind, "controller": job.controller,
                     "controller on": f"{job.controller} {backend}"}  # fmt: skip
            probes.append(Probe(f"{backend} {' '.join(map(str, job.key))}", feats, go))
        for trace in m["traces"]:

            def rate(backend: str = backend, trace: str = trace) -> Any:
                spec = zeus.trace_scenario(trace, [zeus.REFERENCE], "1", PROBE_S, PROBE_SEED, 1e6)
                if zeus.is_trace(spec):
                    return None
                return zeus.probe_rate_bps(backend, trace, PROBE_SEED, PROBE_S)

            probes.append(Probe(f"{backend} rate {trace}", {f"rate {backend}": trace}, rate))

        def optimum(backend: str = backend, m: Mapping[str, Any] = m) -> Any:
            short = {**m, "seeds": [PROBE_SEED], "duration_s": PROBE_S}
            return zeus.optimum_rows(backend, short, [])

        probes.append(Probe(f"{backend} optimum", {f"optimum {backend}": "all"}, optimum))
    return Study(plan, probes, ("evaluation.experiments.zeus",))


def _xcpr(args: Sequence[str]) -> Study:
    from evaluation.experiments import xcpr_paper as x

    ns = _parse_known(
        args,
        [
            ("--seeds", {"type": int, "default": 10}),
            ("--sim-time-s", {"type": float, "default": x.SIM_TIME_S}),
            ("--ns3-seeds", {"type": int, "default": x.NS3_SEEDS}),
        ],
    )
    plan: list[Any] = [vars(ns)]
    probes = []
    for buffer in x.BUFFERS:
        for n, cca, loss, _fig in x.CONFIGS:
            spec = x.paper_spec(n, cca, loss, ns.sim_time_s, buffer)
            plan.append(_spec_id(spec))
            short = x.paper_spec(n, cca, loss, XCPR_PROBE_S, buffer)
            probes.append(
                Probe(
                    f"fast {n} {cca} {loss:g} {buffer}",
                    {"n": str(n), "cca": cca, "loss": f"{loss:g}", "buffer": str(buffer)},
                    lambda short=short: x.summary(x.run(short, PROBE_SEED)),
                )
            )
    for cca, loss, _fig in x.TIMEOUT_CONFIGS:
        spec = x.paper_spec(1, cca, loss, x.NS3_SIM_TIME_S, x.TIMEOUT_BUFFER)
        plan.append(_spec_id(spec))
        short = x.paper_spec(1, cca, loss, XCPR_PROBE_S, x.TIMEOUT_BUFFER)
        for name, backend, rto in x.VARIANTS:

            def go(short: Any = short, backend: str = backend, rto: Any = rto) -> Any:
                if backend == "fast":
                    return x.summary(x.run(short, PROBE_SEED, rto))
                return x.summary(x.run_ns3(short, PROBE_SEED))

            probes.append(Probe(f"timeout {cca} {loss:g} {name}", {"timeout": name}, go))
    probes.append(
        Probe(
            "outage series",
            {"outage": "series"},
            lambda: {
                "available": x.available_mbps(np.arange(0.0, 20.0, 0.1)),
                "outage": x.outage_mbps(np.arange(0.0, x.OUTAGE_SIM_S, 0.1)),
            },
        )
    )
    return Study(plan, probes, ("evaluation.experiments.xcpr_paper",))


def _fct(args: Sequence[str]) -> Study:
    from evaluation.experiments import fct_paper as f

    a = f.parse_args(list(args))
    ccas = [c for c in a.controllers.split(",") if c]
    plan: list[Any] = [
        {k: v for k, v in vars(a).items() if k not in ("jobs", "out", "render")},
        *[_spec_id(f.scenario(c, a.sim_time_s, a.slots)) for c in ccas],
        {c: f.CONTROLLERS[c] for c in ccas},
    ]
    load = f.offered_load(f.MEAN_PKTS, f.IAT_MS, f.RATE_MBPS)
    probes = [
        Probe(
            f"fast {c}",
            {"controller": c},
            lambda c=c: f.summarise(f.run_one(c, FCT_PROBE_S, a.seed, a.slots), 1.0, 10.0, load),
        )
        for c in ccas
    ]
    return Study(plan, probes, ("evaluation.experiments.fct_paper",))


#: The configs a main-job training composes (its experiment, the agent's defaults).
TRAINING_CONFIGS: tuple[str, ...] = (
    "configs/train.yaml",
    "configs/experiment/default.yaml",
    "configs/agent/ppo.yaml",
)


def _training_stack() -> tuple[str, ...]:
    """The training code's modules: the agent package's, the workflow, the config schema."""
    agents = [p.stem for p in sorted((REPO_ROOT / "agents").glob("*.py")) if p.stem != "__init__"]
    return (*(f"agents.{a}" for a in agents), "workflows.train", "configs.schema")


def _multi_agent(args: Sequence[str]) -> Study:
    from evaluation.experiments import multi_agent as ma

    ns = _parse_known(
        args,
        [
            ("--n", {"type": int, "nargs": "+", "default": [2, 4, 8]}),
            ("--timesteps", {"type": int, "default": 200_000}),
            ("--train-seed", {"type": int, "default": 0}),
            ("--seeds", {"type": int, "default": 3}),
            ("--sim-time-s", {"type": float, "default": 10.0}),
            ("--backends", {"nargs": "+", "default": list(BACKENDS)}),
        ],
    )
    plan: list[Any] = [vars(ns), *[_spec_id(ma.scenario(n, ns.sim_time_s)) for n in ns.n]]
    probes = []
    seconds = ma.FROM_S + PROBE_S
    for n in ns.n:
        for backend in ns.backends:
            for c in ma.CONTROLLERS:
                if c == ma.LEARNED:
                    continue
                job = {"n": n, "controller": c, "backend": backend, "seed": 101,
                       "sim_time_s": seconds, "model": ""}  # fmt: skip
                feats = {"n": str(n), "backend": backend, "controller": f"{c} {backend}"}
                probes.append(Probe(f"{backend} n{n} {c}", feats, lambda job=job: ma.run_one(job)))
    return Study(plan, probes, ("evaluation.experiments.multi_agent", *_training_stack()),
                 TRAINING_CONFIGS)  # fmt: skip


def _transfer(args: Sequence[str]) -> Study:
    from cellgym.reward import RewardSpec
    from evaluation.user_policies import execute_user_job

    # By name, as ``reports`` runs every study: ``evaluation.transfer`` reads this package's
    # input lists, so a static import would make a cycle.
    t = importlib.import_module("evaluation.transfer")

    a = t._parser().parse_args(list(args))
    names = [s.strip() for s in a.scenarios.split(",") if s.strip()]
    scenarios = t.resolve_scenarios(names, a.sim_time_s, a.from_s)
    ctls = t.resolve_controllers([c.strip() for c in a.controllers.split(",") if c.strip()])
    jobs = t.make_jobs(ctls, scenarios, t.parse_seeds(a.seeds), RewardSpec(), a.timeout_s, a.from_s)
    plan = [{"controller": _plain(j.controller), "spec": _spec_id(j.scenario), "seed": j.seed,
             "backend": j.backend, "from_s": j.from_s} for j in jobs]  # fmt: skip
    probes = []
    first_seed = jobs[0].seed
    for j in jobs:
        if j.seed != first_seed:
            continue
        short = dataclasses.replace(j, scenario=_short(j.scenario), from_s=0.0, seed=PROBE_SEED)

        def go(short: Any = short) -> Any:
            return _dropping_walls(execute_user_job(short).row)

        feats = {
            "backend": j.backend,
            "scenario": j.scenario.name,
            "controller": j.controller.label,
            "controller on": f"{j.controller.label} {j.backend}",
        }
        probes.append(Probe(f"{j.backend} {j.scenario.name} {j.controller.label}", feats, go))
    return Study(
        plan,
        probes,
        ("evaluation.transfer",),
        ("configs/experiment/default.yaml",),
    )


def _benchmark(args: Sequence[str]) -> Study:
    """The published leaderboard (``python -m evaluation.benchmark publish``), on its backend.

    The plan is every run the command makes (the registry's controllers of the backend, the
    extra ones and the references, with their identities, on every task and seed of the split),
    and the trained checkpoints among the extra controllers by their argument only: their files
    are git-ignored, absent on most machines, and the cache keys them by content anyway. The
    probes run the registry's and the other extra controllers (never a checkpoint, so that every
    machine chooses the same probes) through the benchmark's own run function, each controller
    and each task at least once (``cover``).
    """
    # By name, as for ``_transfer``: the benchmark reads this package's input lists.
    cli = importlib.import_module("evaluation.benchmark.cli")
    pub = importlib.import_module("evaluation.benchmark.publish")
    runner = importlib.import_module("evaluation.benchmark.runner")
    entrants = importlib.import_module("evaluation.benchmark.entrants")
    suites = importlib.import_module("evaluation.benchmark.suite")

    a = cli._parser().parse_args(list(args))
    if a.command != pub.SUBCOMMAND:
        raise ValueError(f"evaluation.benchmark {a.command}: only `publish` makes a report")
    suite = suites.load_suite(a.suite)
    names, left_out = pub.registry_controllers(suite, a.backend)
    extra = cli._controllers(a.controllers)
    checkpoints = [t for t in extra if pub.is_checkpoint(t)]
    texts = [*names, *(t for t in extra if t not in checkpoints)]
    jobs = runner.plan(
        suite, a.split, a.backend, entrants.resolve_entrants(texts, suite, a.backend)
    )
    plan: list[Any] = [
        {"suite": suite.name, "split": a.split, "backend": a.backend, "reps": a.reps,
         "from_s": suite.from_s, "delay_budget_ms": suite.delay_budget_ms,
         "left_out": left_out, "checkpoints": checkpoints},
        *({"controller": j.entrant.label, "identity": j.entrant.identity, "task": j.task,
           "seed": j.seed, "spec": _spec_id(j.scenario)} for j in jobs),
    ]  # fmt: skip
    probes = []
    first_seed = jobs[0].seed
    for j in jobs:
        if j.seed != first_seed:
            continue
        short = dataclasses.replace(j, scenario=_short(j.scenario), seed=PROBE_SEED, from_s=0.0)

        def go(short: Any = short) -> Any:
            rec = runner.execute(short)
            if rec["status"] != "ok":
                raise RuntimeError(f"probe {short.entrant.label} / {short.task}: {rec['error']}")
            return _dropping_walls(rec["metrics"])

        feats = {"controller": j.entrant.label, "task": j.task}
        probes.append(Probe(f"{a.backend} {j.task} {j.entrant.label}", feats, go))
    rel = suite.path.resolve()
    configs = (rel.relative_to(REPO_ROOT).as_posix(),) if rel.is_relative_to(REPO_ROOT) else ()
    modules = tuple(f"evaluation.benchmark.{m}" for m in BENCHMARK_MODULES)
    return Study(plan, probes, modules, configs)


def _main_job(args: Sequence[str]) -> Study:
    """The README's main-job table: ``make run`` (``python train.py <args>``), then its rendering.

    The plan is the composed training config (every key but the run's folder), the training
    mixture's batches (scenario, fast-model knobs, cells) and the final evaluation's scenarios.
    The probes run what the policy was trained in and judged on, without the policy (training
    is not repeatable across machines: torch's kernels round by instruction set): XRC's policy
    on every batch of the mixture on the fast model, and every baseline of the evaluation on
    every evaluation scenario on its backend. The recipe: the training stack's modules (the
    agent factory, features, mixture, callbacks; the workflow; the evaluation's tables), the
    configs it composes.
    """
    from agents.mixture import mixture_batches
    from configs.schema import compose_train, to_dict, validate_train
    from evaluation.rollouts import run_controller

    cfg = compose_train([*args, "run_dir=_"])
    plain = to_dict(cfg)
    plain.pop("run_dir", None)
    typed = validate_train(cfg)
    batches = mixture_batches(typed)
    finals = typed.final_scenarios()
    plan: list[Any] = [
        plain,
        *({"train": _spec_id(spec), "knobs": _plain(knobs), "cells": n}
          for spec, knobs, n in batches),
        *({"evaluate": _spec_id(spec)} for spec in finals),
    ]  # fmt: skip
    common = {"timeout_s": typed.timeout_s, "max_change": typed.max_change,
              "action_mode": typed.action_mode}  # fmt: skip
    probes = []
    for spec, knobs, _ in batches:
        variant = ",".join(f"{k}={v}" for k, v in sorted(knobs.items()))
        short, fast_params = _short(spec), dict(knobs)

        def train(spec: Any = short, knobs: Mapping[str, Any] = fast_params) -> Any:
            rec = run_controller(spec, "xrc_policy", PROBE_SEED, typed.reward, "fast",
                                 fast_params=knobs, **common)  # fmt: skip
            return records_result(rec)

        feats = {"training scenario": spec.name, "variant": variant}
        probes.append(Probe(f"train fast {spec.name} {variant}", feats, train))
    for spec in finals:
        short = _short(spec)
        for name in typed.eval_baselines:

            def judge(spec: Any = short, name: str = name) -> Any:
                rec = run_controller(spec, name, PROBE_SEED, typed.reward, typed.eval_backend,
                                     **common)  # fmt: skip
                return records_result(rec)

            feats = {"evaluation scenario": spec.name, "baseline": name}
            probes.append(Probe(f"evaluate {typed.eval_backend} {spec.name} {name}", feats, judge))
    modules = ("evaluation.readme_table", "evaluation.report", "evaluation.pool",
               *_training_stack())  # fmt: skip
    return Study(plan, probes, modules, TRAINING_CONFIGS)


def _parse_known(args: Sequence[str], options: Sequence[tuple[str, dict[str, Any]]]) -> Any:
    ap = argparse.ArgumentParser(add_help=False)
    for flag, kw in options:
        ap.add_argument(flag, **kw)
    ns, _ = ap.parse_known_args(list(args))
    return ns


#: Each report's study, by the module that makes it (``evaluation.experiments.reports``).
STUDIES: dict[str, Callable[[Sequence[str]], Study]] = {
    "evaluation.experiments.calibrate": _calibration,
    "evaluation.experiments.xrc_paper": _xrc_paper,
    "evaluation.experiments.explicit_cell": _explicit_cell,
    "evaluation.experiments.zeus": _zeus,
    "evaluation.experiments.xcpr_paper": _xcpr,
    "evaluation.experiments.fct_paper": _fct,
    "evaluation.experiments.multi_agent": _multi_agent,
    "evaluation.transfer": _transfer,
    "evaluation.benchmark": _benchmark,
    "evaluation.readme_table": _main_job,
}
