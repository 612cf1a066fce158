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

import argparse
import ast
import dataclasses
import functools
import hashlib
import importlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cellgym.paths import REPO_ROOT
from cellgym.vocab import BACKENDS

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


# -- the studies ----------------------------------------------------------------------------------
def _spec_id(spec: Any) -> Any:
    """The scenario as plain data, every field (nested sections included)."""
    return json.loads(json.dumps(dataclasses.asdict(spec), default=str))


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
        **calibrate.parse_knobs(ns.fast_param),
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
    configs = (
        "configs/train.yaml",
        "configs/experiment/default.yaml",
        "configs/agent/ppo.yaml",
    )
    modules = (
        "evaluation.experiments.multi_agent",
        *[
            f"agents.{p.stem}"
            for p in sorted((REPO_ROOT / "agents").glob("*.py"))
            if p.stem != "__init__"
        ],
        "workflows.train",
        "configs.schema",
    )
    return Study(plan, probes, modules, configs)


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
}


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
        import multiprocessing as mp

        with mp.get_context("forkserver").Pool(jobs) as pool:
            results = dict(
                pool.imap_unordered(
                    _probe_worker, [(module, list(args), lab) for lab in labels], chunksize=1
                )
            )
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
