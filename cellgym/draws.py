"""The run's random draws of the scenario itself, from one source for both backends.

A run's seed (its ns-3 ``RngRun``, ``cellgym.seeding``) fixes every draw that shapes the scenario
rather than the radio or the packets:

- ``start_offset_ms``: each flow starts a whole number of ms in ``[0, START_OFFSET_MS)`` after
  its ``start_s`` (no earlier than the UE's attach), so that seeds give independent replications
  of otherwise deterministic scenarios (``traffic: pareto`` slots: 0, their stream's arrivals are
  the randomness);
- ``moves_m``: ``mobility: random``: the distance of UE ``u`` after its ``k + 1``-th move, at
  ``(k + 1) * mobility_period_s``, uniform in ``[min_distance_m, max_distance_m]``;
- ``pareto``: per Pareto flow stream (``cellgym.workload``), the arrivals (ms after the stream's
  start, exponential inter-arrival times of mean ``pareto_iat_ms``) and their sizes (bounded
  Pareto, whole packets) until the end of the run;
- ``udp_periods_s``: ``udp_periods: exponential``: per ON/OFF UDP source its alternating ON and
  OFF durations from ``udp_start_s`` to the end of the run.

Each kind (and each UE, stream and source) has its own numpy generator seeded with
``[rng_run, kind, index]``, so adding a UE or a flow leaves the others' draws as they were.

The ns-3 program reads them from a file (``write_draws_file``, ``--draws``; the scenario program
validates it and exits with status 2 naming ``--draws`` on a bad file,
``ns3-scenarios/model/cellgym-draws.h``); the fast model reads the same arrays (the kernels' move
table and start offsets, the Pareto workload's arrivals). What stays drawn inside each simulator:
the radio (fading, NR LOS state, shadowing and FR2 blockage, HARQ and decoding errors), ACK loss,
RED's drops and the PF scheduler's ties (``docs/fastsim.md``, "Random draws").

>>> from cellgym.scenario import ScenarioSpec
>>> spec = ScenarioSpec(flows=[{"cca": "cubic"}, {"cca": "agent"}])
>>> d = draw(spec, 7)
>>> d.start_offset_ms.shape, bool((d.start_offset_ms < START_OFFSET_MS).all())
((2,), True)
>>> bool((draw(spec, 7).start_offset_ms == d.start_offset_ms).all())
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cellgym.vocab import SpecError
from cellgym.workload import ParetoSizes

#: Flows start up to this many ms (exclusive) after their start time (whole ms).
START_OFFSET_MS = 100
#: First line of a draws file.
DRAWS_FILE_MAGIC = "# cellgym-draws v1"

# Seed-sequence tags of the kinds of draws (``[rng_run, tag, index]``).
_TAG_START = 0x57A7
_TAG_MOVE = 0x30E5
_TAG_PARETO = 0x9A7E
_TAG_PARETO_SIZE = 0x5123
_TAG_UDP = 0x0D9

#: Time slack when counting events up to the end of the run (float periods).
_EPS = 1e-9


@dataclass
class ParetoArrivals:
    """The arrivals of one Pareto flow stream: times after the stream's start, sizes."""

    after_ms: np.ndarray  # [N] float64, non-decreasing
    size_pkts: np.ndarray  # [N] int64, >= 1


@dataclass
class Draws:
    """The draws of one run (``draw``)."""

    rng_run: int
    start_offset_ms: np.ndarray  # [F] int64
    moves_m: np.ndarray  # [K, U] float64 (K = 0 without random mobility)
    mobility_period_s: float
    pareto: list[ParetoArrivals] = field(default_factory=list)
    udp_periods_s: list[np.ndarray] = field(default_factory=list)  # per source: on, off, ...


def pareto_streams(spec: Any) -> list[list[int]]:
    """The scenario's Pareto flow streams: each a list of flow indices (its slots), in order.

    Flows with ``traffic: pareto`` and the same ue, cca, delay and ``pareto_*`` values are one
    stream; streams are numbered by their first flow.
    """
    groups: dict[tuple, list[int]] = {}
    for i, f in enumerate(spec.flows):
        if f.traffic == "pareto":
            key = (
                f.ue, f.cca, f.delay_ms, f.pareto_shape, f.pareto_mean_pkts,
                f.pareto_cutoff_pkts, f.pareto_iat_ms,
            )  # fmt: skip
            groups.setdefault(key, []).append(i)
    return list(groups.values())


def pareto_stream_start_s(spec: Any, slots: list[int], attach_s: float) -> float:
    """When a stream's arrivals begin: its earliest slot's start, no earlier than the attach."""
    return max(min(spec.flows[i].start_s for i in slots), attach_s)


def _rng(rng_run: int, tag: int, index: int) -> np.random.Generator:
    return np.random.default_rng([int(rng_run), tag, int(index)])


def _pareto_arrivals(spec: Any, slots: list[int], k: int, rng_run: int) -> ParetoArrivals:
    f = spec.flows[slots[0]]
    # The arrivals from the stream's start to the end of the run (a later start, the UE's
    # attach, leaves the last ones unused).
    horizon_ms = max((spec.sim_time_s - pareto_stream_start_s(spec, slots, 0.0)) * 1e3, 0.0)
    rng = _rng(rng_run, _TAG_PARETO, k)
    sizes = ParetoSizes(f.pareto_shape, f.pareto_mean_pkts, f.pareto_cutoff_pkts)
    times: list[np.ndarray] = []
    t = 0.0
    chunk = int(min(max(horizon_ms / f.pareto_iat_ms * 1.2, 16), 1_000_000))
    while t <= horizon_ms:
        gaps = rng.exponential(f.pareto_iat_ms, chunk)
        c = t + np.cumsum(gaps)
        times.append(c)
        t = float(c[-1])
    after = np.concatenate(times) if times else np.zeros(0)
    after = after[after <= horizon_ms]
    u = _rng(rng_run, _TAG_PARETO_SIZE, k).random(after.size)
    pkts = np.maximum(np.rint(sizes.continuous(u)), 1.0).astype(np.int64)
    return ParetoArrivals(after, pkts)


def udp_periods_per_source(spec: Any) -> int:
    """ON and OFF periods drawn per UDP source: enough to cover the run but for a tail below 1e-9.

    A fixed count (from the scenario alone), so that the fast model's table has one size for
    every seed: ``n`` ON/OFF cycles of mean length ``c`` reach the run's ``H`` seconds unless
    their sum falls more than 8 standard deviations below its mean. Past the drawn periods (not
    reached in practice) both backends use the means.
    """
    if spec.udp_sources == 0 or spec.udp_periods != "exponential":
        return 0
    horizon = max(spec.sim_time_s - spec.udp_start_s, 0.0)
    cycles = horizon / (spec.udp_on_s + spec.udp_off_s)
    return 2 * int(math.ceil(cycles + 8.0 * math.sqrt(cycles) + 16.0))


def _udp_periods(spec: Any, k: int, rng_run: int) -> np.ndarray:
    """Alternating ON and OFF durations (s) of UDP source ``k`` (``udp_periods_per_source``)."""
    n = udp_periods_per_source(spec)
    means = np.where(np.arange(n) % 2 == 0, spec.udp_on_s, spec.udp_off_s)
    # As both simulators take an exponential period: at least 1 us.
    return np.maximum(_rng(rng_run, _TAG_UDP, k).exponential(1.0, n) * means, 1e-6)


def num_moves(spec: Any) -> int:
    """Random distance changes in a run (at ``k * mobility_period_s`` up to its end)."""
    ch = spec.channel
    if ch.mobility != "random":
        return 0
    return int(math.floor(spec.sim_time_s / ch.mobility_period_s + _EPS))


def draw(spec: Any, rng_run: int) -> Draws:
    """The draws of a run of ``spec`` with this ``RngRun`` (same arguments, same arrays).

    ns-3 runs take ``RngRun >= 1``; the fast model's cells take any seed in ``[0, 2**63)``.
    """
    rng_run = int(rng_run)
    if not 0 <= rng_run < 2**63:
        raise SpecError(f"rng_run={rng_run!r}: allowed [0, 2**63) (ns-3: [1, 2147483647])")
    nf, nu = len(spec.flows), spec.num_ues
    u = _rng(rng_run, _TAG_START, 0).random(nf)
    offsets = np.floor(u * START_OFFSET_MS).astype(np.int64)
    offsets[[i for i, f in enumerate(spec.flows) if f.traffic == "pareto"]] = 0
    k = num_moves(spec)
    ch = spec.channel
    moves = np.zeros((k, nu))
    for ue in range(nu if k else 0):
        moves[:, ue] = _rng(rng_run, _TAG_MOVE, ue).uniform(ch.min_distance_m, ch.max_distance_m, k)
    return Draws(
        rng_run=rng_run,
        start_offset_ms=offsets,
        moves_m=moves,
        mobility_period_s=float(ch.mobility_period_s),
        pareto=[
            _pareto_arrivals(spec, slots, i, rng_run)
            for i, slots in enumerate(pareto_streams(spec))
        ],
        udp_periods_s=[_udp_periods(spec, i, rng_run) for i in range(spec.udp_sources)]
        if spec.udp_periods == "exponential"
        else [],
    )


# -- the file the ns-3 program reads (--draws) ---------------------------------------------------


def _floats(values: np.ndarray) -> str:
    return " ".join(repr(float(v)) for v in values)


def render_draws(d: Draws) -> str:
    """The text of a draws file (``DRAWS_FILE_MAGIC``; format in docs/scenario-contract.md)."""
    lines = [DRAWS_FILE_MAGIC, f"# rng_run: {d.rng_run}"]
    offsets = " ".join(map(str, d.start_offset_ms.tolist()))
    lines.append(f"flows {d.start_offset_ms.size} {offsets}".rstrip())
    k, nu = d.moves_m.shape
    lines.append(f"moves {k} {nu} {d.mobility_period_s!r}")
    for ue in range(nu if k else 0):
        lines.append(f"ue {ue} {_floats(d.moves_m[:, ue])}")
    lines.append(f"streams {len(d.pareto)}")
    for i, s in enumerate(d.pareto):
        lines.append(f"stream {i} {s.after_ms.size}")
        lines.extend(f"{float(a)!r} {int(n)}" for a, n in zip(s.after_ms, s.size_pkts, strict=True))
    lines.append(f"udp {len(d.udp_periods_s)}")
    for i, p in enumerate(d.udp_periods_s):
        lines.append(f"source {i} {p.size} {_floats(p)}".rstrip())
    return "\n".join(lines) + "\nend\n"


def write_draws_file(d: Draws, path: str | Path) -> Path:
    """Write the draws file the ns-3 program reads with ``--draws``; returns its path."""
    path = Path(path)
    path.write_text(render_draws(d))
    return path


def read_draws_file(path: str | Path) -> Draws:
    """Read a draws file back (``SpecError`` naming the path on a malformed one)."""
    path = Path(path)
    tokens = path.read_text().split("\n")
    if not tokens or tokens[0].strip() != DRAWS_FILE_MAGIC:
        raise SpecError(f"{path}: not a draws file (first line is not {DRAWS_FILE_MAGIC!r})")
    rng_run = int(tokens[1].split(":")[1])
    words = " ".join(t for t in tokens[2:] if not t.startswith("#")).split()
    pos = 0

    def take(n: int = 1) -> list[str]:
        nonlocal pos
        out = words[pos : pos + n]
        if len(out) < n:
            raise SpecError(f"{path}: ends early")
        pos += n
        return out

    def expect(word: str) -> None:
        got = take()[0]
        if got != word:
            raise SpecError(f"{path}: expected {word!r}, found {got!r}")

    expect("flows")
    nf = int(take()[0])
    offsets = np.array([int(x) for x in take(nf)], dtype=np.int64)
    expect("moves")
    k, nu, period = int(take()[0]), int(take()[0]), float(take()[0])
    moves = np.zeros((k, nu))
    for ue in range(nu if k else 0):
        expect("ue")
        take()
        moves[:, ue] = [float(x) for x in take(k)]
    expect("streams")
    pareto = []
    for _ in range(int(take()[0])):
        expect("stream")
        n = int(take(2)[1])
        vals = take(2 * n)
        pareto.append(
            ParetoArrivals(
                np.array([float(x) for x in vals[0::2]]),
                np.array([int(x) for x in vals[1::2]], dtype=np.int64),
            )
        )
    expect("udp")
    udp = []
    for _ in range(int(take()[0])):
        expect("source")
        n = int(take(2)[1])
        udp.append(np.array([float(x) for x in take(n)]))
    expect("end")
    return Draws(rng_run, offsets, moves, period, pareto, udp)
