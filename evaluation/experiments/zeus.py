"""The Zeus paper's evaluation on CellGym: controllers x traces x buffer regimes x seeds.

    .venv/bin/python -m evaluation.experiments.zeus --out /tmp/zeus [--backend fast|ns3|both]

Asim, Subramanian and Zaki, "The Quest for the Best: Evaluating Congestion Control in 5G"
(docs/zeus.md). For every backend, trace, buffer regime, seed and controller the command runs

- **solo**: the controller's flow alone (utilization, delay inflation; the frontier's points);
- **self**: two flows of the controller (intra-fairness);
- **vs CUBIC**: a CUBIC flow (flow 0) beside the controller's (flow 1): inter-fairness, and the
  harm the controller does to CUBIC;

and for the references CUBIC solo and CUBIC vs CUBIC (the harm baseline and the self-harm band;
they are CUBIC's own solo and self runs). The delayed-feedback oracle (``baselines/oracle.py``)
runs as a policy on every agent flow (``run_policy_flows``: two oracle flows in its self run); the
offline optimum (``cellgym.zeus.offline_optimum``) is computed from each trace. Runs go in
parallel (``--jobs``); each worker reduces its run to the Zeus metrics (``zeus_summary``), and
``evaluation.experiments.zeus_report`` writes Table 2 and Table 3 (markdown and CSV), Fig. 8
(harm to CUBIC with the self-harm band), the throughput-delay frontiers per trace, Fig. 9
(BBR-vs-CUBIC shares against the buffer size), ``numbers.json`` (every run's metrics and the
provenance: ``cellgym.provenance`` over ``INPUTS``) and ``report.md`` under ``--out``.

A *trace* is a scenario config whose channel (``channel.source``) or wired bottleneck
(``bottleneck_trace``) replays a capacity trace (``configs/scenario/traces/``, docs/traces.md);
its flows are replaced by each run's. Utilization is over the bytes the trace could carry, and
each buffer regime (``buffer_bdp``: 1, 5, 10 BDP, ``inf``) is resolved to packets on the trace's
mean rate at the nominal base RTT (``cellgym.traces.resolve_buffers``). A scenario with the
distance channel runs too (its utilization is over the recorded capacity, its BDP over the mean
capacity a short CUBIC probe records). The base RTT of delay inflation and of the fairness windows
is the scenario's propagation RTT (``nominal_base_rtt_s``), the same for every controller, the
oracle and the optimum on both backends.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cellgym import controllers
from cellgym.fields import FLOW, UE
from cellgym.metrics import EpisodeRecords, zeus_summary
from cellgym.paths import REPO_ROOT
from cellgym.provenance import record
from cellgym.scenario import FlowSpec, ScenarioSpec, load_scenario
from cellgym.seeding import rng_run_for_seed
from cellgym.traces import (
    bdp_packets,
    bottleneck_series,
    channel_series,
    nominal_base_rtt_s,
    resolve_buffers,
    series_from_rates,
)
from cellgym.traces.series import CapacitySeries
from cellgym.vocab import BACKENDS, TRACE_SOURCES, ZEUS_BUFFER_BDPS, SpecError
from evaluation.experiments import inputs
from evaluation.workers import map_jobs

log = logging.getLogger(__name__)

COMMAND = "python -m evaluation.experiments.zeus"
#: The files the report's numbers depend on (``evaluation.experiments.inputs``, their one home).
INPUTS: tuple[str, ...] = inputs.ZEUS
#: The legacy flow every controller is compared with (harm, inter-fairness).
REFERENCE = "cubic"
#: The computed reference (no simulation): full utilization at the base RTT.
OPTIMUM = "optimum"
#: The delayed-feedback oracle: a policy on every agent flow, pacing at the advertised rate.
ORACLE = "oracle"
#: The oracle's largest per-step change: large, so that it follows each step's feedback at once.
ORACLE_MAX_CHANGE = 100.0
#: The shared traces (``configs/scenario/traces/``) of the default matrix.
DEFAULT_TRACES: tuple[str, ...] = (
    "traces/att_lte_driving",
    "traces/tmobile_lte_short",
    "traces/irish5g_static",
    "traces/irish5g_driving",
)
#: Default controllers: ns-3's CCAs the backend runs, XRC, the oracle and the optimum.
DEFAULT_CONTROLLERS: dict[str, tuple[str, ...]] = {
    "fast": ("newreno", "cubic", "bbr", "xrc", ORACLE, OPTIMUM),
    "ns3": ("newreno", "cubic", "bbr", "ledbat", "vegas", "xrc", ORACLE, OPTIMUM),
}
#: Zeus's buffer regimes, in BDPs.
DEFAULT_BUFFERS: tuple[str, ...] = tuple(f"{b:g}" for b in ZEUS_BUFFER_BDPS)
#: Fig. 9's extra buffer sizes (BBR vs CUBIC only), in BDPs, as the paper's 1-15 BDP sweep.
DEFAULT_FIG9_BUFFERS: tuple[str, ...] = ("1", "2", "3", "4", "6", "8", "12", "15")
#: The default matrix per backend. ns-3 runs a subset that takes about 20 minutes on two cores
#: (the two Irish 5G traces, 5 BDP and infinite buffers, one seed, 30 s): the full matrix would
#: take hours.
DEFAULTS: dict[str, dict[str, Any]] = {
    "fast": {
        "controllers": DEFAULT_CONTROLLERS["fast"],
        "traces": DEFAULT_TRACES,
        "buffers": DEFAULT_BUFFERS,
        "fig9_buffers": DEFAULT_FIG9_BUFFERS,
        "seeds": 3,
        "duration_s": 60.0,
    },
    "ns3": {
        "controllers": DEFAULT_CONTROLLERS["ns3"],
        "traces": ("traces/irish5g_static", "traces/irish5g_driving"),
        "buffers": ("5", "inf"),
        "fig9_buffers": (),
        "seeds": 1,
        "duration_s": 30.0,
    },
}
#: Run kinds: the flows of each, by position (the controller under test as ``"C"``).
KINDS: dict[str, tuple[str, ...]] = {"solo": ("C",), "self": ("C", "C"), "vs": (REFERENCE, "C")}


def parse_buffer(text: str) -> float:
    """A buffer regime in BDPs (``inf`` or a number in [0.01, 1000])."""
    try:
        value = float(text)
    except ValueError:
        msg = f"buffers={text!r} is not a number of BDPs: allowed 0.01-1000 or inf"
        raise SpecError(msg) from None
    if not (math.isinf(value) and value > 0) and not 0.01 <= value <= 1000.0:
        raise SpecError(f"buffers={text!r} is out of range: allowed 0.01-1000 or inf")
    return value


@dataclasses.dataclass(frozen=True)
class Job:
    """One simulation of the matrix."""

    backend: str
    trace: str
    buffer: str
    seed: int
    kind: str
    controller: str
    duration_s: float
    bdp_rate_bps: float | None = None  # distance channels: the probe's mean capacity
    from_s: float = 0.0  # the metrics skip the steps ending before

    @property
    def ccas(self) -> tuple[str, ...]:
        """The flows' controllers, in order."""
        return tuple(self.controller if c == "C" else c for c in KINDS[self.kind])

    @property
    def key(self) -> tuple[str, str, str, int, str, str]:
        """The job's identity in the results."""
        return (self.backend, self.trace, self.buffer, self.seed, self.kind, self.controller)


# -- scenarios ------------------------------------------------------------------------------------
def is_trace(spec: ScenarioSpec) -> bool:
    """True when the scenario replays a capacity trace (a trace channel or wired bottleneck)."""
    return spec.channel.source in TRACE_SOURCES or bool(spec.bottleneck_trace)


def trace_scenario(
    trace: str,
    ccas: Sequence[str],
    buffer: str,
    duration_s: float,
    seed: int,
    bdp_rate_bps: float | None = None,
) -> ScenarioSpec:
    """The trace's scenario with ``ccas`` as its bulk flows and the buffer regime resolved.

    Every flow is a bulk flow on UE 0 from t = 0; the oracle's flows are ``agent`` flows.
    ``buffer`` (BDPs) becomes packets with ``resolve_buffers`` on a trace, or on
    ``bdp_rate_bps`` (the probe's mean capacity) on the distance channel.
    """
    base = load_scenario(trace)
    flows = [
        FlowSpec(ue=0, cca="agent" if c == ORACLE else c, traffic="bulk", start_s=0.0) for c in ccas
    ]
    spec = base.replace(sim_time_s=float(duration_s), flows=flows)
    multiple = parse_buffer(buffer)
    if is_trace(spec):
        series = trace_series(spec, seed)
        return resolve_buffers(spec.replace(buffer_bdp=multiple), series=series)
    if bdp_rate_bps is None:
        raise SpecError(f"trace={trace!r} has no capacity trace: its BDP needs a probed rate")
    pkts = bdp_packets(bdp_rate_bps, nominal_base_rtt_s(spec), multiple)
    return spec.replace(rlc_buffer_pkts=min(pkts, 1_000_000 // spec.num_ues))


#: Series already built in this process (an Irish 5G synthesis takes seconds): a worker runs
#: the jobs of one trace and seed in a row, and each job needs its series twice.
_SERIES: dict[str, CapacitySeries] = {}
_SERIES_KEPT = 8


def trace_series(spec: ScenarioSpec, seed: int) -> CapacitySeries | None:
    """The capacity series the scenario replays (``None`` on the distance channel)."""
    if spec.bottleneck_trace:
        key = repr(("bottleneck", spec.bottleneck_trace))
        make = lambda: bottleneck_series(spec)  # noqa: E731
    elif spec.channel.source in TRACE_SOURCES:
        run = rng_run_for_seed(seed)
        key = repr(("channel", spec.channel, spec.cell.slot_s, run))
        make = lambda: channel_series(spec.channel, spec.cell.slot_s, run)  # noqa: E731
    else:
        return None
    if key not in _SERIES:
        if len(_SERIES) >= _SERIES_KEPT:
            _SERIES.pop(next(iter(_SERIES)))
        _SERIES[key] = make()
    return _SERIES[key]


def preflight(spec: ScenarioSpec, backend: str, trace: str) -> None:
    """Raise ``SpecError`` naming the trace when ``backend`` cannot run its scenario."""
    try:
        if backend == "fast":
            from envs.session import check_backend_supports

            check_backend_supports(spec, backend)
        else:
            spec.to_ns3_args(1)
    except SpecError as exc:
        raise SpecError(f"traces={trace!r} does not run on backend={backend!r}: {exc}") from exc


# -- runs -----------------------------------------------------------------------------------------
def _observe(row: np.ndarray, step_s: float) -> np.ndarray:
    """One flow's observation, as ``LteCellEnv`` makes it."""
    from envs.contract import OBS_ACKED, OBS_HIGH, OBS_RAW_COLUMNS

    vals = row[OBS_RAW_COLUMNS].astype(np.float64)
    vals[OBS_ACKED] = vals[OBS_ACKED] * 8e-6 / step_s
    return np.clip(vals.astype(np.float32), 0.0, OBS_HIGH)


def run_policy_flows(
    spec: ScenarioSpec,
    policy_name: str,
    seed: int,
    backend: str,
    max_change: float = ORACLE_MAX_CHANGE,
    timeout_s: float = 600.0,
) -> EpisodeRecords:
    """Drive every ``agent`` flow with its own copy of a baseline policy, in rate mode.

    The single-agent ``LteCellEnv`` drives one flow; the Zeus self runs need two flows of the
    oracle, so this loop gives each agent flow the observation ``LteCellEnv`` would give it and
    applies the policy's action as its rate-mode command does (pacing rate times
    ``max_change ** action``, window twice the rate times the minimum RTT). With one agent
    flow it is ``run_policy`` with ``action_mode="rate"``.
    """
    from baselines import make_policy
    from cellgym.fields import SEGMENT_BYTES
    from envs.contract import MAX_CWND_BYTES, MAX_RATE_MBPS, MIN_RATE_MBPS
    from envs.session import open_session

    agents = spec.agent_flows
    step_s = spec.step_ms / 1000.0
    policies = [
        make_policy(policy_name, max_change=max_change, step_ms=spec.step_ms, action_mode="rate")
        for _ in agents
    ]
    rates = np.zeros(len(agents))
    rec = EpisodeRecords(spec=spec, controller=policy_name, seed=seed)
    session = open_session(spec, rng_run_for_seed(seed), backend=backend, timeout_s=timeout_s)
    try:
        raw = session.start()
        rec.append(raw.t, raw.flows, raw.ues)
        for p in policies:
            p.reset()
        while not raw.done:
            cmd = np.zeros((len(agents), 2))
            for i, (f, p) in enumerate(zip(agents, policies, strict=True)):
                row = raw.flows[f]
                a = float(np.clip(p.act(_observe(row, step_s)), -1.0, 1.0))
                if rates[i] <= 0:
                    rates[i] = row[FLOW["fb_rate_mbps"]] or 1.0
                rates[i] = min(MAX_RATE_MBPS, max(MIN_RATE_MBPS, rates[i] * max_change**a))
                rtt_min_s = (row[FLOW["rtt_min_ms"]] or 40.0) / 1000.0
                cwnd = max(4 * SEGMENT_BYTES, 2 * rates[i] * 1e6 / 8 * rtt_min_s)
                cmd[i] = (min(cwnd, MAX_CWND_BYTES), rates[i])
            raw = session.step(cmd)
            rec.append(raw.t, raw.flows, raw.ues)
    finally:
        session.close()
    return rec


def run_records(job: Job) -> EpisodeRecords:
    """Simulate one job and return its records."""
    from evaluation.rollouts import run_native

    spec = trace_scenario(
        job.trace, job.ccas, job.buffer, job.duration_s, job.seed, job.bdp_rate_bps
    )
    if ORACLE in job.ccas:
        return run_policy_flows(spec, ORACLE, job.seed, job.backend)
    return run_native(spec, job.controller, job.seed, job.backend, timeout_s=600.0)


def summarize(job: Job, rec: EpisodeRecords, from_s: float = 0.0) -> dict[str, Any]:
    """The Zeus metrics of every flow of a run (``zeus_summary``), against the other flow."""
    spec = rec.spec
    series = trace_series(spec, job.seed)
    base_ms = nominal_base_rtt_s(spec) * 1000.0
    flows = []
    for f in range(len(spec.flows)):
        other = (1 - f) if len(spec.flows) == 2 else None
        s = zeus_summary(rec, f, other, series, base_ms, from_s)
        s.pop("fairness_by_k", None)
        flows.append({k: _num(v) for k, v in s.items()})
    fl = np.stack(rec.flows)
    n = fl[:, :, FLOW["rtt_samples"]]
    mins = fl[:, :, FLOW["rtt_min_ms"]][(n > 0) & (fl[:, :, FLOW["rtt_min_ms"]] > 0)]
    cap = np.stack(rec.ues)[1:, 0, UE["capacity_mbps"]]
    return {
        "flows": flows,
        "ccas": [f.cca for f in spec.flows],
        "buffer_pkts": int(
            spec.bottleneck_buffer_pkts if spec.bottleneck_trace else spec.rlc_buffer_pkts
        ),
        "measured_min_rtt_ms": float(mins.min()) if mins.size else None,
        "recorded_capacity_mbps": float(cap.mean()) if cap.size else None,
    }


def _num(v: Any) -> Any:
    if isinstance(v, float | np.floating):
        return float(v) if math.isfinite(v) else None
    return v


def _logged(_job: Any, result: tuple[Any, Any, float]) -> None:
    """Log a failed simulation as it finishes."""
    job, res, _wall = result
    if isinstance(res, str):
        log.warning("%s failed: %s", job.key, res)


def _run(job: Job) -> tuple[Job, dict[str, Any] | str, float]:
    t0 = time.perf_counter()
    try:
        out: dict[str, Any] | str = summarize(job, run_records(job), job.from_s)
    except Exception as exc:  # one failed run is reported, not fatal
        log.debug("job failed", exc_info=True)
        out = f"{type(exc).__name__}: {exc}"
    return job, out, time.perf_counter() - t0


def probe_rate_bps(backend: str, trace: str, seed: int, duration_s: float) -> float:
    """Mean capacity a short CUBIC run records on a distance-channel scenario, in bit/s."""
    from evaluation.rollouts import run_native

    spec = load_scenario(trace)
    spec = spec.replace(
        sim_time_s=min(duration_s, 5.0),
        flows=[FlowSpec(ue=0, cca=REFERENCE, traffic="bulk", start_s=0.0)],
    )
    rec = run_native(spec, REFERENCE, seed, backend, timeout_s=600.0)
    cap = np.stack(rec.ues)[1:, 0, UE["capacity_mbps"]]
    return float(cap.mean()) * 1e6


def make_jobs(
    backend: str,
    controllers_: Sequence[str],
    traces: Sequence[str],
    buffers: Sequence[str],
    seeds: Sequence[int],
    duration_s: float,
    fig9_buffers: Sequence[str] = (),
    rates: dict[tuple[str, str, int], float] | None = None,
    from_s: float = 0.0,
) -> list[Job]:
    """Every simulation of one backend's matrix (the optimum needs none).

    Per trace, buffer and seed: each controller's solo, self and vs-CUBIC runs, CUBIC's solo and
    self runs whether or not CUBIC is under test (its vs run is its self run), and BBR vs CUBIC
    at the ``fig9_buffers`` not already in ``buffers``.
    """
    rates = rates or {}
    sim = [c for c in controllers_ if c != OPTIMUM]
    jobs: list[Job] = []
    for trace in traces:
        for seed in seeds:
            rate = rates.get((backend, trace, seed))
            for buf in buffers:
                for c in [REFERENCE, *[c for c in sim if c != REFERENCE]]:
                    kinds = ("solo", "self") if c == REFERENCE else ("solo", "self", "vs")
                    if c == REFERENCE and REFERENCE not in sim:
                        kinds = ("solo", "self")
                    for kind in kinds:
                        jobs.append(
                            Job(backend, trace, buf, seed, kind, c, duration_s, rate, from_s)
                        )
            for buf in fig9_buffers:
                if buf not in buffers:
                    jobs.append(
                        Job(backend, trace, buf, seed, "vs", "bbr", duration_s, rate, from_s)
                    )
    return jobs


# -- command line ---------------------------------------------------------------------------------
def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", default="docs/zeus", help="output directory")
    ap.add_argument("--backend", default="fast", choices=(*BACKENDS, "both"))
    for b in BACKENDS:
        d = {k: ",".join(v) if isinstance(v, tuple) else f"{v:g}" for k, v in DEFAULTS[b].items()}
        prefix = "" if b == "fast" else "ns3-"

        def helptext(what: str, key: str, b: str = b, d: dict[str, str] = d) -> str:
            if b == "fast":
                return f"{what}; default {d[key] or 'none'}"
            fallback = d[key] or "none"
            return f"ns-3's {what}; default: the option without ns3- when given, else {fallback}"

        ap.add_argument(
            f"--{prefix}controllers",
            help=helptext("comma list of native CCAs, oracle, optimum", "controllers"),
        )
        ap.add_argument(f"--{prefix}traces", help=helptext("comma list of scenarios", "traces"))
        ap.add_argument(f"--{prefix}buffers", help=helptext("buffer regimes in BDPs", "buffers"))
        ap.add_argument(
            f"--{prefix}fig9-buffers",
            help=helptext("extra BBR-vs-CUBIC buffers for Fig. 9 ('' for none)", "fig9_buffers"),
        )
        ap.add_argument(f"--{prefix}seeds", type=int, help=helptext("seeds 1..N", "seeds"))
        ap.add_argument(
            f"--{prefix}duration",
            type=float,
            help=helptext("simulated seconds per run", "duration_s"),
        )
    ap.add_argument("--from-s", type=float, default=0.0, help="ignore the first seconds")
    ap.add_argument("--jobs", type=int, default=2, help="simulations in parallel")
    ap.add_argument("--render", action="store_true", help="rewrite report.md from numbers.json")
    args = ap.parse_args(argv)
    for name in ("seeds", "ns3_seeds"):
        v = getattr(args, name)
        if v is not None and v < 1:
            ap.error(f"--{name.replace('_', '-')}={v} is out of range: allowed 1 or more")
    for name in ("duration", "ns3_duration"):
        v = getattr(args, name)
        if v is not None and not 0.5 <= v <= 3600:
            ap.error(f"--{name.replace('_', '-')}={v} is out of range: allowed 0.5-3600 s")
    if args.jobs < 1:
        ap.error(f"--jobs={args.jobs} is out of range: allowed 1 or more")
    return args


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _option(args: argparse.Namespace, backend: str, name: str) -> Any:
    """A matrix option of ``backend``: its own, else the general one, else its default."""
    arg = "duration" if name == "duration_s" else name
    own = getattr(args, f"ns3_{arg}") if backend == "ns3" else None
    if own is not None:
        return own
    general = getattr(args, arg)
    if general is not None:
        return general
    d = DEFAULTS[backend][name]
    return ",".join(d) if isinstance(d, tuple) else d


def matrix(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """Per backend: controllers, traces, buffers, seeds and duration, checked."""
    backends = BACKENDS if args.backend == "both" else (args.backend,)
    out = {}
    for b in backends:
        ctls = _split(_option(args, b, "controllers"))
        for c in ctls:
            if c != OPTIMUM:
                controllers.get(c, b, field_name="controllers")
        traces = _split(_option(args, b, "traces"))
        buffers = _split(_option(args, b, "buffers"))
        fig9 = _split(_option(args, b, "fig9_buffers"))
        for buf in (*buffers, *fig9):
            parse_buffer(buf)
        if "bbr" not in ctls:
            fig9 = []
        if not traces or not buffers or not ctls:
            raise SpecError("controllers, traces and buffers must each name at least one")
        out[b] = {
            "controllers": ctls,
            "traces": traces,
            "buffers": buffers,
            "fig9_buffers": fig9,
            "seeds": list(range(1, int(_option(args, b, "seeds")) + 1)),
            "duration_s": float(_option(args, b, "duration_s")),
        }
    return out


def optimum_rows(
    backend: str, m: dict[str, Any], results: list[tuple[Job, Any, float]]
) -> dict[str, dict[str, Any]]:
    """The offline optimum per trace and seed: from the trace, or the recorded capacity."""
    from cellgym.zeus import offline_optimum

    out: dict[str, dict[str, Any]] = {}
    for trace in m["traces"]:
        for seed in m["seeds"]:
            spec = trace_scenario(
                trace, [REFERENCE], m["buffers"][0], m["duration_s"], seed, bdp_rate_bps=1e6
            )
            series = trace_series(spec, seed)
            if series is None:
                caps = [
                    r["recorded_capacity_mbps"]
                    for j, r, _ in results
                    if isinstance(r, dict)
                    and (j.backend, j.trace, j.seed, j.kind) == (backend, trace, seed, "solo")
                    and r["recorded_capacity_mbps"]
                ]
                if not caps:
                    continue
                series = series_from_rates(np.array([np.mean(caps)]), m["duration_s"])
            base_ms = nominal_base_rtt_s(spec) * 1000.0
            opt = offline_optimum(series, base_ms, duration_s=m["duration_s"])
            row: dict[str, Any] = {k: float(v) for k, v in opt.items()}
            row["series"] = {"source": series.source, "name": series.name, "digest": series.digest}
            out[f"{trace}|{seed}"] = row
    return out


def run_matrix(args: argparse.Namespace, argv: Sequence[str]) -> dict[str, Any]:
    """Run every backend's matrix; return ``numbers`` (runs, optimum, meta, provenance)."""
    prov = record(COMMAND, list(argv), INPUTS, REPO_ROOT)
    plan = matrix(args)
    runs: list[dict[str, Any]] = []
    optimum: dict[str, Any] = {}
    timings: dict[str, Any] = {}
    for backend, m in plan.items():
        rates: dict[tuple[str, str, int], float] = {}
        for trace in m["traces"]:
            for seed in m["seeds"]:
                probe_spec = trace_scenario(
                    trace, [REFERENCE], m["buffers"][0], m["duration_s"], seed, 1e6
                )
                preflight(probe_spec, backend, trace)
                if not is_trace(probe_spec):
                    rates[(backend, trace, seed)] = probe_rate_bps(
                        backend, trace, seed, m["duration_s"]
                    )
        jobs = make_jobs(
            backend,
            m["controllers"],
            m["traces"],
            m["buffers"],
            m["seeds"],
            m["duration_s"],
            m["fig9_buffers"],
            rates,
            args.from_s,
        )
        log.info("%s: %d simulations on %d workers", backend, len(jobs), args.jobs)
        t0 = time.perf_counter()
        results = map_jobs(_run, jobs, args.jobs, name=lambda j: str(j.key), on_result=_logged)
        wall_s = time.perf_counter() - t0
        order = {j.key: i for i, j in enumerate(jobs)}
        results.sort(key=lambda r: order[r[0].key])
        for job, res, wall in results:
            row = dataclasses.asdict(job)
            row.pop("bdp_rate_bps")
            row.pop("from_s")
            row["wall_s"] = wall
            if isinstance(res, str):
                row["error"] = res
            else:
                row.update(res)
            runs.append(row)
        optimum[backend] = optimum_rows(backend, m, results)
        timings[backend] = {
            "wall_s": wall_s,
            "simulations": len(jobs),
            "failed": sum(isinstance(r, str) for _, r, _ in results),
            "simulated_s": len(jobs) * m["duration_s"],
        }
    return {
        "matrix": plan,
        "runs": runs,
        "optimum": optimum,
        "meta": {"timings": timings, "jobs": args.jobs, "from_s": args.from_s},
        "provenance": prov,
    }


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the matrix, then write the tables, the figures, numbers.json and the report."""
    from evaluation.experiments import zeus_report

    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    out = Path(args.out)
    if args.render:
        numbers = json.loads((out / "numbers.json").read_text())
        zeus_report.write(numbers, out)
        return numbers
    out.mkdir(parents=True, exist_ok=True)
    numbers = run_matrix(args, argv)
    zeus_report.write(numbers, out)
    return numbers


if __name__ == "__main__":
    main()
