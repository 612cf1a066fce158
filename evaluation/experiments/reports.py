"""The committed reports: where each lives, what it is made from, and regenerating the stale ones.

Every report under ``docs/`` is the output of one experiment command, and records its provenance
(``cellgym.provenance``: the commit, the arguments and a digest of its declared inputs). This
module is the one list of those reports, in the order they are best regenerated (the LTE
calibration fills the ns-3 run cache that the uplink-BSR table reuses).

    python -m evaluation.experiments.reports                  # each report: current or stale
    python -m evaluation.experiments.reports --regenerate     # rerun the stale ones, in order
    python -m evaluation.experiments.reports --regenerate --only docs/calibration/nr --dry-run

A report is regenerated with the arguments its committed provenance records, so the command that
made it is the command that remakes it; a report not committed yet (``optional``) is made with
its default arguments only when named with ``--only`` or ``--missing``.

**Stale means its behaviour changed.** A report records a behaviour fingerprint beside its inputs
digest (``evaluation.experiments.behaviour``: its plan, short probe runs of it on both backends,
its own modules' syntax). While no input file's content differs from the record, it is current
without running anything; when some do, its probes run, and it stays current if they record
what they recorded when it was made (a refactor, a comment, a docstring), and is stale, naming the
probes that moved and its command, if not. A report made by ``--regenerate`` gets its fingerprint
at once; ``--fingerprint`` stamps the reports whose inputs are unchanged since they were made
(the only time a fingerprint can be trusted to describe the report), and records, for a report
found current by behaviour on a changed tree, that tree's inputs digest (``verified_at``), so the
checks of that tree run nothing.
``tests/evaluation/test_provenance.py`` fails on any stale report.

    python -m evaluation.experiments.reports --fingerprint    # stamp, or verify after an edit

Before re-publishing a leaderboard, ``--regenerate`` writes into the benchmark's run cache every
published run whose controller and task have no probe that moved (``evaluation.benchmark.reuse``),
so that a fresh machine reruns only what changed.
"""

from __future__ import annotations

import argparse
import importlib
import json
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cellgym.paths import REPO_ROOT
from cellgym.processes import die_with_parent, reap, signal_group
from cellgym.provenance import file_digests, git_state, inputs_digest, staleness
from evaluation.experiments import behaviour, inputs


def _indent_of(text: str) -> int | None:
    """The indent a JSON file was written with (``None``: one line)."""
    lines = text.splitlines()
    if len(lines) < 2:
        return None
    return len(lines[1]) - len(lines[1].lstrip(" "))


def provenance_of(path: Path) -> dict[str, Any]:
    """The provenance record in a report's JSON (a calibration table keeps it under ``meta``)."""
    data = json.loads(Path(path).read_text())
    if "provenance" in data:
        return data["provenance"]
    return data["meta"]["provenance"]


@dataclass(frozen=True)
class Report:
    """One committed report.

    Attributes:
        name: Its folder, relative to the repository root (``docs/calibration``).
        numbers: The JSON file holding its provenance, relative to the repository root.
        module: The experiment module whose ``python -m`` command writes it.
        inputs: Its declared input globs (``evaluation.experiments.inputs``).
        default_args: The arguments that make it when no committed provenance records them.
        optional: Whether the report may be absent (not committed yet).
        by_hand: Set for a report that ``--regenerate`` cannot remake (the README's main-job
            table: a training run first): what a person runs instead, printed in its place.
            ``module`` is still its behaviour study's.
    """

    name: str
    numbers: str
    module: str
    inputs: tuple[str, ...]
    default_args: tuple[str, ...]
    optional: bool = False
    by_hand: str = ""

    @property
    def path(self) -> Path:
        """The provenance JSON's absolute path."""
        return REPO_ROOT / self.numbers

    def exists(self) -> bool:
        """Whether the report is committed (its JSON exists)."""
        return self.path.is_file()

    def provenance(self) -> dict[str, Any]:
        """The committed provenance record (the report must exist)."""
        return provenance_of(self.path)

    def stale(self, jobs: int = 1) -> str:
        """``""`` when current, else what changed and the command (``"missing"`` when absent).

        Current when its inputs' content is as recorded (or as when its behaviour was last
        found unchanged, ``verify``); else, with a recorded behaviour fingerprint, when the
        fingerprint is unchanged (its probes run, ``jobs`` at a time).
        """
        if not self.exists():
            return "missing"
        prov = self.provenance()
        now = self._inputs_digest_now(prov)  # the inputs hashed once
        verified = prov.get("verified_at", {}).get("inputs_digest")
        if now == prov["inputs_digest"] or ("behaviour" in prov and now == verified):
            return ""
        if "behaviour" not in prov:
            return staleness(prov, REPO_ROOT, self.inputs)  # names the changed files
        return self._behaviour_diff(prov, jobs)

    def _inputs_digest_now(self, prov: dict[str, Any]) -> str:
        return inputs_digest(file_digests(self.inputs, REPO_ROOT), prov["args"])

    def _behaviour_diff(self, prov: dict[str, Any], jobs: int) -> str:
        now = behaviour.fingerprint(self.module, self.args(), jobs)
        diff = behaviour.differences(prov["behaviour"], now)
        if not diff:
            return ""
        commit = (prov.get("commit") or "unknown")[:12]
        return (
            f"its behaviour changed since it was made at commit {commit}: {'; '.join(diff)}; "
            f"regenerate it with `{prov['command']}`"
        )

    def stamp(self, jobs: int = 1) -> dict[str, Any]:
        """Record the report's behaviour fingerprint in its JSON; return the fingerprint.

        A report whose inputs are as recorded gets its fingerprint. One that already has a
        fingerprint and whose inputs changed is checked (its probes run): when it is current by
        behaviour, the inputs' digest now is recorded as ``verified_at`` (with the commit), so
        that later checks of the same tree need not run the probes again.

        Raises:
            ValueError: Its inputs changed and it has no fingerprint (this code's would not
                describe it), or its behaviour changed: regenerate it instead.
        """
        prov = self.provenance()
        by_bytes = staleness(prov, REPO_ROOT, self.inputs)
        if by_bytes and "behaviour" not in prov:
            raise ValueError(f"{self.name}: cannot fingerprint, {by_bytes}")
        if by_bytes:
            diff = self._behaviour_diff(prov, jobs)
            if diff:
                raise ValueError(f"{self.name}: {diff}")
            commit, _ = git_state(REPO_ROOT)
            update = {"verified_at": {"inputs_digest": self._inputs_digest_now(prov),
                                      "commit": commit}}  # fmt: skip
        else:
            update = {"behaviour": behaviour.fingerprint(self.module, self.args(), jobs)}
            update["verified_at"] = {}
        text = self.path.read_text()
        data = json.loads(text)
        target = data["provenance"] if "provenance" in data else data["meta"]["provenance"]
        target.update(update)
        if not target["verified_at"]:
            del target["verified_at"]
        self.path.write_text(json.dumps(data, indent=_indent_of(text)) + "\n")
        return target["behaviour"]

    def args(self) -> list[str]:
        """The arguments that remake it: the committed ones, else ``default_args``."""
        return list(self.provenance()["args"]) if self.exists() else list(self.default_args)

    def command(self) -> list[str]:
        """The command line (a list, run without a shell) that remakes it."""
        return [sys.executable, "-m", self.module, *self.args()]


_CAL = "evaluation.experiments.calibrate"
#: Every committed report, in regeneration order.
REPORTS: tuple[Report, ...] = (
    Report(
        "docs/calibration",
        "docs/calibration/calibration.json",
        _CAL,
        inputs.CALIBRATION,
        ("--jobs", "2"),
    ),
    Report(
        "docs/calibration/uplink-periodic",
        "docs/calibration/uplink-periodic/calibration.json",
        _CAL,
        inputs.CALIBRATION,
        (
            "--fast-param",
            "uplink=periodic",
            "--out",
            "docs/calibration/uplink-periodic",
            "--jobs",
            "2",
        ),
    ),
    Report(
        "docs/calibration/nr",
        "docs/calibration/nr/calibration.json",
        _CAL,
        inputs.CALIBRATION,
        ("--scenarios", "nr", "--seeds", "9", "--sim-time-s", "20", "--jobs", "2"),
    ),
    Report(
        "docs/xrc-reproduction",
        "docs/xrc-reproduction/numbers.json",
        "evaluation.experiments.xrc_paper",
        inputs.XRC_PAPER,
        ("--seeds", "3", "--jobs", "2", "--out", "docs/xrc-reproduction"),
    ),
    Report(
        "docs/multi-agent",
        "docs/multi-agent/numbers.json",
        "evaluation.experiments.multi_agent",
        inputs.MULTI_AGENT,
        ("--jobs", "2", "--out", "docs/multi-agent"),
    ),
    Report(
        "docs/zeus",
        "docs/zeus/numbers.json",
        "evaluation.experiments.zeus",
        inputs.ZEUS,
        ("--backend", "both", "--out", "docs/zeus", "--jobs", "2"),
        optional=True,
    ),
    Report(
        "docs/explicit-cell",
        "docs/explicit-cell/numbers.json",
        "evaluation.experiments.explicit_cell",
        inputs.EXPLICIT_CELL,
        ("--seeds", "2", "--jobs", "2", "--out", "docs/explicit-cell"),
        optional=True,
    ),
    Report(
        "docs/xcp-r",
        "docs/xcp-r/numbers.json",
        "evaluation.experiments.xcpr_paper",
        inputs.XCPR_PAPER,
        ("--out", "docs/xcp-r", "--seeds", "10", "--jobs", "2"),
        optional=True,
    ),
    Report(
        "docs/xcp-rcp-fct",
        "docs/xcp-rcp-fct/numbers.json",
        "evaluation.experiments.fct_paper",
        inputs.FCT_PAPER,
        ("--out", "docs/xcp-rcp-fct", "--jobs", "3"),
        optional=True,
    ),
    Report(
        "docs/transfer",
        "docs/transfer/numbers.json",
        "evaluation.transfer",
        inputs.TRANSFER,
        ("--out", "docs/transfer", "--jobs", "2", "--sim-time-s", "10", "--seeds", "201-210"),
        optional=True,
    ),
    # The leaderboards: their arguments start with the subcommand. The committed ones record the
    # main job's checkpoint among --controllers; where its files are absent it is left out.
    Report(
        "docs/benchmark/ns3",
        "docs/benchmark/ns3/numbers.json",
        "evaluation.benchmark",
        inputs.BENCHMARK_NS3,
        (
            "publish",
            "--suite",
            "v1",
            "--backend",
            "ns3",
            "--jobs",
            "2",
            "--out",
            "docs/benchmark/ns3",
        ),
        optional=True,
    ),
    Report(
        "docs/main-job",
        "docs/main-job/numbers.json",
        "evaluation.readme_table",
        inputs.MAIN_JOB,
        ("experiment=default",),
        by_hand="make run, then python -m evaluation.readme_table <its run directory>",
    ),
    Report(
        "docs/benchmark/fast",
        "docs/benchmark/fast/numbers.json",
        "evaluation.benchmark",
        inputs.BENCHMARK_FAST,
        (
            "publish",
            "--suite",
            "v1",
            "--backend",
            "fast",
            "--jobs",
            "2",
            "--out",
            "docs/benchmark/fast",
        ),
        optional=True,
    ),
)


def by_name(name: str) -> Report:
    """The report whose folder is ``name``.

    Raises:
        ValueError: An unknown name, listing the known ones.
    """
    for r in REPORTS:
        if r.name == name.rstrip("/"):
            return r
    known = ", ".join(r.name for r in REPORTS)
    raise ValueError(f"--only={name!r} is not a committed report: choose from {known}")


def to_regenerate(
    only: Sequence[str] = (), all_: bool = False, missing: bool = False
) -> list[Report]:
    """The reports to remake: those named (``only``), or every stale one (``all_``: every one).

    A missing optional report is included only when named or with ``missing``.
    """
    chosen = [by_name(n) for n in only] if only else list(REPORTS)
    out = []
    for r in chosen:
        if not r.exists() and r.optional and not (only or missing):
            continue
        if only or all_ or r.stale():
            out.append(r)
    return out


def run_command(cmd: Sequence[str], cwd: Path = REPO_ROOT, grace_s: float = 5.0) -> int:
    """Run one report's command; return its exit status.

    The command runs in its own process group, which dies with this process: SIGTERM or SIGINT
    here ends the whole group (the experiment, its pool workers and, through their
    ``PR_SET_PDEATHSIG``, their simulators; SIGKILL after ``grace_s``) and then exits with
    128 + the signal, and the kernel kills the child if this process is killed outright.
    """
    proc = subprocess.Popen(list(cmd), cwd=cwd, start_new_session=True, preexec_fn=die_with_parent)
    stopped: list[tuple[int, float]] = []

    def stop(signum: int, _frame: object) -> None:
        # No waiting here: the handler may interrupt proc.wait, which holds the Popen's lock.
        stopped.append((signum, time.monotonic()))
        signal_group(proc.pid, signal.SIGTERM)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        while True:
            try:
                rc = proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                if stopped and time.monotonic() - stopped[0][1] > grace_s:
                    signal_group(proc.pid, signal.SIGKILL)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        reap(proc, grace_s=grace_s)
    if stopped:
        # The group's other members (pool workers) may outlive the leader by a moment.
        signal_group(proc.pid, signal.SIGKILL)
        raise SystemExit(128 + stopped[0][0])
    return rc


def main(argv: Sequence[str] | None = None) -> int:
    """List the reports' staleness, or regenerate them; return the exit status."""
    ap = argparse.ArgumentParser(
        prog="python -m evaluation.experiments.reports",
        description="List the committed reports' staleness, or regenerate the stale ones.",
    )
    ap.add_argument("--regenerate", action="store_true", help="rerun the stale reports, in order")
    ap.add_argument("--all", action="store_true", help="with --regenerate: every report")
    ap.add_argument("--missing", action="store_true", help="also make optional absent reports")
    ap.add_argument("--only", nargs="+", default=[], metavar="NAME", help="these reports only")
    ap.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    ap.add_argument(
        "--fingerprint",
        action="store_true",
        help="record the behaviour fingerprint of the reports whose inputs are unchanged",
    )
    ap.add_argument("--jobs", type=int, default=1, help="probe runs at a time")
    args = ap.parse_args(argv)
    try:
        todo = to_regenerate(args.only, args.all, args.missing)
    except ValueError as exc:
        ap.error(str(exc))
    if args.fingerprint:
        return _stamp_all([by_name(n) for n in args.only] if args.only else REPORTS, args.jobs)
    if not args.regenerate:
        for r in REPORTS:
            state = r.stale(args.jobs)
            print(f"{r.name}: {'current' if not state else state}")
        return 0
    failed = []
    for r in todo:
        if r.by_hand:
            print(f"[reports] {r.name}: not remade here: {r.by_hand}", flush=True)
            if not args.dry_run:
                failed.append(r.name)
            continue
        cmd = r.command()
        print(f"[reports] {r.name}: {' '.join(cmd[1:])}", flush=True)
        if args.dry_run:
            continue
        t0 = time.monotonic()
        if r.module == "evaluation.benchmark":
            print(f"[reports] {r.name}: {_take_over(r, args.jobs)}", flush=True)
        rc = run_command(cmd)
        print(f"[reports] {r.name}: exit {rc} after {time.monotonic() - t0:.0f} s", flush=True)
        if rc != 0:
            failed.append(r.name)
        elif _stamp_all([r], args.jobs) != 0:
            failed.append(r.name)
    if failed:
        print(f"[reports] failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _take_over(report: Report, jobs: int) -> str:
    """Seed the run cache with a leaderboard's unchanged published runs; say what happened.

    ``evaluation.benchmark.reuse``: re-publishing it then reruns only the controllers and tasks
    whose behaviour moved.
    """
    # By name: evaluation.benchmark reads this package's input lists (a static import would make
    # a cycle between the two packages).
    reuse = importlib.import_module("evaluation.benchmark.reuse")
    cache = importlib.import_module("evaluation.benchmark.cache")
    account = reuse.take_over(report.args(), report.path.parent, cache.RunCache(), jobs)
    return reuse.describe(account)


def _stamp_all(reports: Sequence[Report], jobs: int) -> int:
    """Fingerprint each report (``Report.stamp``); 1 when one could not be, else 0."""
    failed = 0
    for r in reports:
        if not r.exists():
            continue
        t0 = time.monotonic()
        try:
            fp = r.stamp(jobs)
        except ValueError as exc:
            print(f"[reports] {exc}", file=sys.stderr, flush=True)
            failed = 1
            continue
        print(
            f"[reports] {r.name}: behaviour {fp['digest'][:16]} ({len(fp['probes'])} probes, "
            f"{time.monotonic() - t0:.0f} s)",
            flush=True,
        )
    return failed


if __name__ == "__main__":
    sys.exit(main())
