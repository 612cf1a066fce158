"""A benchmark suite as config: its tasks, splits, seeds, windows and scoring, checked on load.

A suite is a YAML file in ``configs/benchmark/`` (``v1.yaml``, the frozen benchmark; ``mini.yaml``,
the tests'), loaded by ``load_suite("v1")`` or a path. Each task is one scenario written in full
in the suite, with the split it belongs to (``train``, ``test`` or ``both``) and, for a trace
task, the window of its trace that its runs replay. Which trace files and windows are test is
the suite's ``trace_split``; everything else of the trace pool is train. ``Suite.runs(split)``
gives every (task, seed, scenario) of a split, the scenario already replaying the seed's window.

>>> s = load_suite("mini")
>>> [t.name for t in s.tasks_of("test")]
['cell/lte-static', 'competition/vs-cubic']
>>> s.tasks[1].terms
('thpt', 'inverse_delay', 'inter_fairness')
>>> offset_s((600.0, 786.0), 10.0, 1, 2)
776.0
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cellgym import controllers
from cellgym.paths import CONFIGS
from cellgym.scenario import ScenarioSpec
from cellgym.seeding import check_seed
from cellgym.vocab import (
    BACKENDS,
    TRACE_SOURCES,
    SpecError,
    check_choice,
    check_keys,
    check_range,
)
from cellgym.zeus import ZEUS_WEIGHTS

#: Where the suites live.
SUITES_DIR = CONFIGS / "benchmark"
#: Splits of a suite: the official score's and the one controllers may be tuned on.
SPLITS: tuple[str, ...] = ("test", "train")
#: A task's split: one of ``SPLITS``, or ``both`` (each split, with its own seeds).
TASK_SPLITS: tuple[str, ...] = (*SPLITS, "both")
#: The computed reference: the Zeus offline optimum (every score term 1).
OPTIMUM = "optimum"
#: The score terms, as ``cellgym.zeus`` names them.
TERMS: tuple[str, ...] = ("thpt", "inverse_delay", "intra_fairness", "inter_fairness")
#: Mahimahi and Irish 5G files (the trace sources a split can name; synthetic ones are seeded).
FILE_SOURCES: tuple[str, ...] = tuple(s for s in TRACE_SOURCES if s != "synthetic")

_SUITE_KEYS = {
    "version",
    "name",
    "frozen",
    "description",
    "backends",
    "official_backend",
    "seeds",
    "from_s",
    "delay_budget_ms",
    "score",
    "normalise",
    "references",
    "policy_settings",
    "trace_split",
    "tasks",
}
_TASK_KEYS = {"name", "group", "split", "tests", "scenario", "window_s", "competitor"}


def offset_s(window: tuple[float, float], duration_s: float, i: int, n: int) -> float:
    """Where the ``i``-th of ``n`` seeds starts replaying a trace window (evenly spread)."""
    start, end = window
    if n <= 1:
        return float(start)
    return float(start + i * (end - start - duration_s) / (n - 1))


@dataclass(frozen=True)
class Task:
    """One task of a suite.

    Attributes:
        name: Its name (``group/what``), also the scenario's name in the records.
        group: What it tests (``cell``, ``trace``, ``competition``, ``multi-ue``, ``wired``).
        split: ``train``, ``test`` or ``both``.
        tests: One line on what it tests.
        scenario: The scenario, replaying its trace from the window's start.
        window_s: A trace task's window ``[start, end)`` of its trace, in seconds.
        competitor: The flow whose fairness and harm are measured against the controller's.
    """

    name: str
    group: str
    split: str
    tests: str
    scenario: ScenarioSpec
    window_s: tuple[float, float] | None = None
    competitor: int | None = None

    @property
    def trace(self) -> str:
        """The trace file it replays (its channel's or its wired bottleneck's); ``""``: none."""
        if self.scenario.channel.source in FILE_SOURCES:
            return self.scenario.channel.trace
        return self.scenario.bottleneck_trace

    @property
    def terms(self) -> tuple[str, ...]:
        """The score terms it defines (two agent flows: IntraFair; a competitor: InterFair)."""
        out = ["thpt", "inverse_delay"]
        if len(self.scenario.agent_flows) >= 2:
            out.append("intra_fairness")
        if self.competitor is not None:
            out.append("inter_fairness")
        return tuple(out)

    @property
    def cell(self) -> str:
        """``lte``, ``nr-fr1`` or ``nr-fr2`` (FR2 above 7.125 GHz)."""
        c = self.scenario.cell
        if c.type != "nr":
            return c.type
        return "nr-fr2" if c.frequency_ghz > 7.125 else "nr-fr1"

    @property
    def channel(self) -> str:
        """``static``, ``mobile`` or ``trace``."""
        ch = self.scenario.channel
        if ch.source in TRACE_SOURCES or self.scenario.bottleneck_trace:
            return "trace"
        return "mobile" if ch.mobility == "random" else "static"

    def in_split(self, split: str) -> bool:
        """Whether it runs in ``split``."""
        return self.split in (split, "both")

    def spec_for(self, i: int, n: int) -> ScenarioSpec:
        """The scenario of the ``i``-th of ``n`` seeds: a channel trace from its window offset."""
        if self.window_s is None or self.scenario.channel.source not in FILE_SOURCES:
            return self.scenario
        start = offset_s(self.window_s, self.scenario.sim_time_s, i, n)
        return self.scenario.replace(channel={"trace_offset_s": start})


@dataclass(frozen=True)
class TraceWindow:
    """A file of the trace pool, whole (``window_s`` None) or a window of it, in seconds."""

    trace: str
    window_s: tuple[float, float] | None = None

    def overlaps(self, window: tuple[float, float]) -> bool:
        """Whether ``window`` shares time with this one."""
        return self.window_s is None or (
            window[0] < self.window_s[1] and self.window_s[0] < window[1]
        )

    def holds(self, window: tuple[float, float]) -> bool:
        """Whether ``window`` lies inside this one."""
        return self.window_s is None or (
            self.window_s[0] <= window[0] and window[1] <= self.window_s[1]
        )


@dataclass(frozen=True)
class Suite:
    """A benchmark suite (see ``configs/benchmark/v1.yaml`` for each field's meaning)."""

    name: str
    version: int
    frozen: bool
    description: str
    backends: tuple[str, ...]
    official_backend: str
    seeds: Mapping[str, tuple[int, ...]]
    from_s: float
    delay_budget_ms: float
    default_variant: str
    variants: tuple[str, ...]
    zero: str
    one: str
    min_span: float
    references: tuple[str, ...]
    policy_settings: Mapping[str, Mapping[str, Any]]
    test_traces: tuple[TraceWindow, ...]
    tasks: tuple[Task, ...]
    path: Path = field(default=Path(), compare=False)

    def tasks_of(self, split: str) -> list[Task]:
        """The tasks that run in ``split``."""
        check_choice("split", split, SPLITS)
        return [t for t in self.tasks if t.in_split(split)]

    def task(self, name: str) -> Task:
        """The task called ``name``."""
        for t in self.tasks:
            if t.name == name:
                return t
        names = [t.name for t in self.tasks]
        raise SpecError(f"task={name!r} is not in suite {self.name}: choose one of {names}")

    def runs(self, split: str) -> list[tuple[Task, int, ScenarioSpec]]:
        """Every (task, seed, scenario) of ``split``, in the suite's order."""
        seeds = self.seeds[split]
        n = len(seeds)
        return [(t, s, t.spec_for(i, n)) for t in self.tasks_of(split) for i, s in enumerate(seeds)]

    def trace_split(self, trace: str, window: tuple[float, float]) -> str:
        """``test`` when ``window`` of ``trace`` overlaps a test entry, else ``train``."""
        hit = [w for w in self.test_traces if w.trace == trace and w.overlaps(window)]
        return "test" if hit else "train"

    def digest(self) -> str:
        """SHA-256 of the suite file (its provenance)."""
        return hashlib.sha256(self.path.read_bytes().replace(b"\r\n", b"\n")).hexdigest()


def suite_names() -> list[str]:
    """The suites in ``configs/benchmark/``."""
    return sorted(p.stem for p in SUITES_DIR.glob("*.yaml"))


def load_suite(name: str | Path) -> Suite:
    """A suite by name (``v1``) or YAML path, checked.

    Raises:
        SpecError: Naming the field, for an unknown suite or any invalid field.
    """
    from omegaconf import OmegaConf

    path = Path(name)
    if path.suffix not in (".yaml", ".yml"):
        path = SUITES_DIR / f"{name}.yaml"
    if not path.is_file():
        raise SpecError(f"--suite={str(name)!r} is unknown: choose one of {suite_names()}")
    data = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    if not isinstance(data, dict):
        raise SpecError(f"suite file {path} does not hold a mapping")
    return build_suite(data, path)


def _pair(where: str, value: Any) -> tuple[float, float]:
    if not isinstance(value, Sequence) or len(value) != 2:
        raise SpecError(f"{where}={value!r} is not a window: give [start_s, end_s]")
    start, end = (float(v) for v in value)
    check_range(f"{where}[0]", start, 0.0, 1e6)
    check_range(f"{where}[1]", end, start, 1e6)
    return start, end


def _task(i: int, data: Mapping[str, Any], from_s: float) -> Task:
    where = f"tasks[{i}]"
    if not isinstance(data, Mapping):
        raise SpecError(f"{where}={data!r} is not a mapping: give the task's fields")
    check_keys(where, data, _TASK_KEYS)
    for key in ("name", "group", "split", "scenario"):
        if key not in data:
            raise SpecError(f"{where}.{key} is missing")
    name = str(data["name"])
    check_choice(f"{where}.split", data["split"], TASK_SPLITS)
    scenario = dict(data["scenario"])
    scenario.setdefault("name", name)
    try:
        spec = ScenarioSpec.from_config(scenario)
    except SpecError as exc:
        raise SpecError(f"{where} ({name}): {exc}") from None
    if not spec.agent_flows:
        raise SpecError(f"{where}.scenario ({name}) has no agent flow for a controller to drive")
    if not from_s < spec.sim_time_s:
        raise SpecError(f"{where}.scenario.sim_time_s={spec.sim_time_s:g} is not above from_s")
    competitor = data.get("competitor")
    if competitor is not None:
        check_range(f"{where}.competitor", competitor, 0, len(spec.flows) - 1)
        if competitor in spec.agent_flows:
            raise SpecError(f"{where}.competitor={competitor} is an agent flow: name another")
    window = None if data.get("window_s") is None else _pair(f"{where}.window_s", data["window_s"])
    task = Task(name, str(data["group"]), str(data["split"]), str(data.get("tests", "")), spec,
                window, competitor)  # fmt: skip
    if task.trace and window is None:
        raise SpecError(f"{where}.window_s is missing: {name} replays {task.trace}")
    if not task.trace and window is not None:
        raise SpecError(f"{where}.window_s is set but {name} replays no trace file")
    if window is not None and window[1] - window[0] < spec.sim_time_s:
        raise SpecError(f"{where}.window_s={list(window)} is shorter than sim_time_s")
    if spec.bottleneck_trace and window != (0.0, spec.sim_time_s):
        raise SpecError(
            f"{where}.window_s={list(window or ())}: a wired bottleneck's trace replays from its "
            f"start, give [0, {spec.sim_time_s:g}]"
        )
    if spec.bottleneck_trace and spec.channel.source in FILE_SOURCES:
        raise SpecError(f"{where}: replays two trace files (channel and bottleneck): give one")
    if task.trace and task.split == "both":
        raise SpecError(f"{where}.split=both: a trace task belongs to train or test, not both")
    return task


def build_suite(data: Mapping[str, Any], path: Path = Path()) -> Suite:
    """A suite from its mapping (``load_suite``'s check of every field)."""
    check_keys("suite", data, _SUITE_KEYS)
    for key in ("version", "name", "seeds", "tasks"):
        if key not in data:
            raise SpecError(f"suite.{key} is missing")
    check_range("suite.version", data["version"], 1)
    backends = tuple(data.get("backends") or BACKENDS)
    for b in backends:
        check_choice("suite.backends", b, BACKENDS)
    seeds = {}
    for split in SPLITS:
        values = list((data["seeds"] or {}).get(split) or [])
        if not values:
            raise SpecError(f"suite.seeds.{split} is empty: give at least one seed")
        for j, s in enumerate(values):
            check_seed(f"suite.seeds.{split}[{j}]", s)
        seeds[split] = tuple(int(s) for s in values)
    repeated = any(len(set(v)) < len(v) for v in seeds.values())
    if repeated or set(seeds["test"]) & set(seeds["train"]):
        raise SpecError(f"suite.seeds={seeds}: every seed once, train and test disjoint")
    from_s = float(data.get("from_s", 0.0))
    check_range("suite.from_s", from_s, 0.0, 1e6)
    score = dict(data.get("score") or {})
    variants = tuple(score.get("variants") or ZEUS_WEIGHTS)
    for v in variants:
        check_choice("suite.score.variants", v, tuple(ZEUS_WEIGHTS))
    default = str(score.get("default", variants[0]))
    check_choice("suite.score.default", default, variants)
    norm = dict(data.get("normalise") or {})
    zero, one = str(norm.get("zero", "cubic")), str(norm.get("one", OPTIMUM))
    references = tuple(data.get("references") or (zero,))
    for where, name in (("normalise.zero", zero), ("normalise.one", one)):
        if name == OPTIMUM:
            continue
        controllers.get(name, field_name=f"suite.{where}")
        if name not in references:
            raise SpecError(f"suite.{where}={name!r} must be among suite.references")
    if zero == one:
        raise SpecError(f"suite.normalise: zero and one are both {zero!r}")
    settings = {str(k): dict(v) for k, v in (data.get("policy_settings") or {}).items()}
    for name, kv in settings.items():
        controllers.get(name, field_name="suite.policy_settings")
        check_keys(f"suite.policy_settings.{name}", kv, {"action_mode", "max_change"})
    tests = []
    for j, e in enumerate((data.get("trace_split") or {}).get("test") or []):
        where = f"suite.trace_split.test[{j}]"
        check_keys(where, e, {"trace", "window_s"})
        win = None if e.get("window_s") is None else _pair(f"{where}.window_s", e["window_s"])
        tests.append(TraceWindow(str(e["trace"]), win))
    tasks = [_task(i, t, from_s) for i, t in enumerate(data["tasks"] or [])]
    if not tasks:
        raise SpecError("suite.tasks is empty: give at least one task")
    names = [t.name for t in tasks]
    if len(set(names)) < len(names):
        raise SpecError(f"suite.tasks: a name is given twice: {names}")
    suite = Suite(
        name=str(data["name"]),
        version=int(data["version"]),
        frozen=bool(data.get("frozen", False)),
        description=str(data.get("description", "")),
        backends=backends,
        official_backend=str(data.get("official_backend", backends[0])),
        seeds=seeds,
        from_s=from_s,
        delay_budget_ms=float(data.get("delay_budget_ms", 10.0)),
        default_variant=default,
        variants=variants,
        zero=zero,
        one=one,
        min_span=float(norm.get("min_span", 0.02)),
        references=references,
        policy_settings=settings,
        test_traces=tuple(tests),
        tasks=tuple(tasks),
        path=Path(path),
    )
    check_choice("suite.official_backend", suite.official_backend, backends)
    for i, t in enumerate(tasks):
        if t.window_s is None:
            continue
        side = suite.trace_split(t.trace, t.window_s)
        inside = any(w.trace == t.trace and w.holds(t.window_s) for w in suite.test_traces)
        if side != t.split or (side == "test" and not inside):
            where = "test" if inside else "partly test" if side == "test" else "train"
            raise SpecError(
                f"tasks[{i}] ({t.name}) is split={t.split} but replays {t.trace} in "
                f"{list(t.window_s)}, which is {where} in suite.trace_split: a task's trace "
                "window lies wholly in its own split"
            )
    for split in SPLITS:
        if not suite.tasks_of(split):
            raise SpecError(f"suite.tasks: no task runs in the {split} split")
    return suite
