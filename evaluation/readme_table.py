"""The README's result table, rendered from a main-job run's evaluation (never copied by hand).

    .venv/bin/python -m evaluation.readme_table runs/main/ppo/<time>           # rewrite README.md
    .venv/bin/python -m evaluation.readme_table runs/main/ppo/<time> --print   # only print it

Reads the run's ``evaluation/summary.csv`` (per controller and scenario: the mean reward per step
and its 95 % t half-width over the seeds) and ``evaluation/aggregate.csv`` (rliable's mean and
IQM over every run with stratified bootstrap intervals, and the probability of improvement over
the reference controller), and writes the table between the README's ``main-job-results``
markers, with a line naming the run, its commit (``git`` at the run's time, from the run's
``.hydra`` folder when present) and the command. Scenarios of the run's evaluation that are not
in its training mixture are marked "(held out)".

The paragraph between the ``main-job-timing`` markers says how long that run took, from its own
files: ``progress.csv`` (training steps and seconds, SB3's ``time/`` keys), ``train.log`` (the
time stamps of its first and last lines, the final evaluation's seconds) and ``seed.txt``.

Provenance: the run's ``provenance.json`` (``workflows.train``: the commit and the digests of
the main job's inputs when training began) goes with the table into ``docs/main-job/numbers.json``
and a line under it, with the command that remakes it; a run made from other code than the
tree's (an input changed since) is refused, since the table would name code that did not make
it. ``evaluation.experiments.reports`` lists the table as stale once the code's behaviour moves
(its study: ``behaviour_studies._main_job``), and ``tests/evaluation/test_provenance.py`` fails.

The run's trained policy goes with them into ``docs/main-job/policy/`` (``model.zip``, its
``vecnormalize.pkl`` and the run's ``.hydra/config.yaml``: a run directory that
``evaluation.resolve`` loads), its files' digests into ``numbers.json``; so the leaderboards and the
transfer report name the main job's policy by a path every clone has (``runs/`` is not committed),
and ``tests/evaluation/test_readme_table.py`` checks that the committed policy is the one recorded.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from cellgym.paths import REPO_ROOT
from cellgym.provenance import changed_inputs, markdown_line, record

BEGIN = "<!-- main-job-results:begin -->"
END = "<!-- main-job-results:end -->"
TIMING_BEGIN = "<!-- main-job-timing:begin -->"
TIMING_END = "<!-- main-job-timing:end -->"
#: Where the table's numbers and provenance are committed (a report of
#: ``evaluation.experiments.reports``).
NUMBERS = REPO_ROOT / "docs" / "main-job" / "numbers.json"
#: The run's files that make its policy loadable elsewhere, copied into ``POLICY``.
POLICY_FILES: tuple[str, ...] = ("model.zip", "vecnormalize.pkl", ".hydra/config.yaml")
#: Where the main job's trained policy is committed (a run directory for ``evaluation.resolve``).
POLICY = NUMBERS.parent / "policy"
#: A training run's provenance file (``record_run``).
RUN_PROVENANCE = "provenance.json"
#: Column titles of the registry's controllers; a trained policy is named by its algorithm.
TITLES = {
    "xrc": "XRC (native)",
    "xrc_policy": "XRC policy",
    "cubic": "CUBIC",
    "bbr": "BBR",
    "ppo": "PPO",
    "sac": "SAC",
}
REFERENCE_TITLE = "XRC policy"


def _title(controller: str) -> str:
    return TITLES.get(controller.split(":")[0].lower(), controller)


def _interval(value: float, low: float, high: float, digits: int) -> str:
    """``v [lo, hi]``, or ``v`` alone when the interval is a point (every run equal)."""
    if any(isinstance(x, float) and math.isnan(x) for x in (value, low, high)):
        return "–"
    v = f"{value:.{digits}f}"
    if f"{low:.{digits}f}" == v == f"{high:.{digits}f}":
        return v
    return f"{v} [{low:.{digits}f}, {high:.{digits}f}]"


def _training_scenarios(run: Path) -> set[str]:
    """The scenarios of the run's training mixture (its composed config), if recorded."""
    config = run / ".hydra" / "config.yaml"
    if not config.is_file():
        return set()
    cfg = yaml.safe_load(config.read_text()) or {}
    mixture = (cfg.get("mixture") or {}).get("scenarios") or []
    return {str(s.get("scenario")) for s in mixture if isinstance(s, dict)}


def render(summary: pd.DataFrame, aggregate: pd.DataFrame, training: set[str]) -> str:
    """The markdown table: a row per scenario, then mean, IQM and P(improvement) over all runs."""
    controllers = list(dict.fromkeys(summary["controller"]))
    scenarios = list(dict.fromkeys(summary["scenario"]))
    # rliable's table counts runs per scenario ("runs") and scenarios ("tasks").
    per_task = aggregate["runs"] * (aggregate["tasks"] if "tasks" in aggregate else 1)
    runs = int(per_task.max()) if len(aggregate) else 0
    head = "| scenario | " + " | ".join(_title(c) for c in controllers) + " |"
    lines = [head, "|---" * (len(controllers) + 1) + "|"]
    cell = summary.set_index(["controller", "scenario"])
    for sc in scenarios:
        name = f"`{sc}`" + (" (held out)" if training and sc not in training else "")
        values = []
        for c in controllers:
            if (c, sc) not in cell.index:
                values.append("–")
                continue
            row = cell.loc[(c, sc)]
            values.append(f"{row['mean_reward_mean']:.3f} ± {row['mean_reward_ci']:.3f}")
        lines.append(f"| {name} | " + " | ".join(values) + " |")
    agg = aggregate.set_index("controller")

    def row(label: str, column: str, digits: int, reference_dash: bool = False) -> str:
        values = []
        for c in controllers:
            if c not in agg.index or (reference_dash and pd.isna(agg.loc[c, column])):
                values.append("–")
                continue
            a = agg.loc[c]
            values.append(_interval(a[column], a[f"{column}_low"], a[f"{column}_high"], digits))
        return f"| {label} | " + " | ".join(values) + " |"

    lines.append(row(f"all {runs} runs: mean [95 % bootstrap]", "mean", 3))
    lines.append(row(f"all {runs} runs: IQM [95 % bootstrap]", "iqm", 3))
    lines.append(row(f"P(run > {REFERENCE_TITLE}'s run)", "p_improve", 2, reference_dash=True))
    return "\n".join(lines)


def _log_seconds(line: str) -> float | None:
    """Seconds since the epoch of a ``[YYYY-mm-dd HH:MM:SS,mmm]`` log line (None if none)."""
    import datetime as dt

    m = re.match(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]", line)
    if m is None:
        return None
    t = dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")
    return t.timestamp() + int(m.group(2)) / 1000.0


def timing(run: Path) -> str:
    """The paragraph on the run's own timing (its files; an empty string without them)."""
    parts = []
    log = run / "train.log"
    lines = log.read_text().splitlines() if log.is_file() else []
    stamps = [t for t in map(_log_seconds, lines) if t is not None]
    seed = (run / "seed.txt").read_text().strip() if (run / "seed.txt").is_file() else "?"
    if len(stamps) >= 2:
        total = round(stamps[-1] - stamps[0])
        parts.append(
            f"Measured by that run (seed {seed}, its `train.log` from first to last line): "
            f"{total // 60} min {total % 60} s of wall time"
        )
    progress = run / "progress.csv"
    keys = ["time/total_timesteps", "time/time_elapsed"]
    prog = pd.read_csv(progress) if progress.is_file() else pd.DataFrame()
    if set(keys) <= set(prog.columns):
        prog = prog.dropna(subset=keys)  # evaluation rows carry no time
        if len(prog):
            steps = int(prog["time/total_timesteps"].iloc[-1])
            secs = float(prog["time/time_elapsed"].iloc[-1])
            parts.append(
                f"{secs:.0f} s of training ({steps:,} steps, about {steps / secs:,.0f} steps/s, "
                "the periodic evaluations included)"
            )
    evals = [re.search(r"final evaluation in ([\d.]+) s", ln) for ln in lines]
    evals = [m for m in evals if m]
    if evals:
        parts.append(
            f"then the ns-3 evaluation ({float(evals[-1].group(1)):.0f} s) with its report "
            "and plots"
        )
    return ", ".join(parts) + "." if parts else ""


def _where(run: Path) -> Path:
    try:
        return run.resolve().relative_to(REPO_ROOT)
    except ValueError:
        return run


def record_run(run_dir: Path) -> None:
    """Write a training run's ``RUN_PROVENANCE`` (``workflows.train``, when training begins).

    The commit and the digests of the main job's inputs (``inputs.MAIN_JOB``), its Hydra
    overrides (``.hydra/overrides.yaml``) as the arguments.
    """
    from evaluation.experiments.inputs import MAIN_JOB

    path = run_dir / ".hydra" / "overrides.yaml"
    overrides = [str(o) for o in (yaml.safe_load(path.read_text()) or [])] if path.is_file() else []
    prov = record("python train.py", overrides, MAIN_JOB, REPO_ROOT)
    (run_dir / RUN_PROVENANCE).write_text(json.dumps(prov, indent=1) + "\n")


def remake_command(run: Path) -> str:
    """What remakes the table: the main job, then this module on its run."""
    return f"make run, then python -m evaluation.readme_table {_where(run)}"


def table_provenance(run: Path) -> dict[str, Any]:
    """The run's provenance for its table, its command the one that remakes the table.

    Raises:
        ValueError: The run records no provenance (made before runs did), or the tree's inputs
            differ from the run's (naming them): the table would name code that did not make it.
    """
    path = run / RUN_PROVENANCE
    if not path.is_file():
        raise ValueError(
            f"{run} has no {RUN_PROVENANCE} (made before runs recorded their code): run `make run`"
        )
    prov = json.loads(path.read_text())
    diff = changed_inputs(prov, REPO_ROOT)
    if any(diff.values()):
        parts = "; ".join(f"{k}: {', '.join(v[:5])}" for k, v in diff.items() if v)
        raise ValueError(
            f"{run} was made from other code than this tree's ({parts}): its table would not "
            "describe this code; run `make run` on this tree"
        )
    return {**prov, "command": remake_command(run), "run": str(_where(run))}


def block(run: Path, table: str, prov: dict[str, Any] | None = None) -> str:
    """The README block: the markers, the table and the lines saying where it came from."""
    source = (
        f"Generated by `python -m evaluation.readme_table {_where(run)}` from that run's "
        "`evaluation/summary.csv` and `evaluation/aggregate.csv`."
    )
    if prov is not None:
        source += "\n" + markdown_line(prov)
    return f"{BEGIN}\n{table}\n\n{source}\n{END}"


def numbers(
    summary: pd.DataFrame,
    aggregate: pd.DataFrame,
    prov: dict[str, Any],
    policy: dict[str, str] | None = None,
) -> str:
    """``docs/main-job/numbers.json``: the table's numbers, the run's provenance, its policy."""
    data = {
        "provenance": prov,
        "summary": json.loads(summary.to_json(orient="records")),
        "aggregate": json.loads(aggregate.to_json(orient="records")),
    }
    if policy is not None:
        data["policy"] = policy
    return json.dumps(data, indent=1) + "\n"


def policy_digests(folder: Path) -> dict[str, str]:
    """SHA-256 of each of ``POLICY_FILES`` in ``folder`` (a run, or the committed policy)."""
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in POLICY_FILES}


def copy_policy(run: Path, folder: Path = POLICY) -> dict[str, str]:
    """Copy the run's ``POLICY_FILES`` into ``folder`` (emptied first); their digests by name."""
    if folder.exists():
        shutil.rmtree(folder)
    for name in POLICY_FILES:
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(run / name, target)
    return policy_digests(folder)


def rewrite(readme: str, new_block: str, begin: str = BEGIN, end_marker: str = END) -> str:
    """``readme`` with the text between the markers (inclusive) replaced by ``new_block``."""
    start, end = readme.find(begin), readme.find(end_marker)
    if start < 0 or end < start:
        raise ValueError(f"README.md has no {begin} ... {end_marker} block")
    return readme[:start] + new_block + readme[end + len(end_marker) :]


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or ``--print``) the README's block from a run; 2 when its files are missing."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path, help="the main job's run directory (runs/main/ppo/<time>)")
    ap.add_argument("--readme", type=Path, default=REPO_ROOT / "README.md")
    ap.add_argument("--numbers", type=Path, default=NUMBERS, help="where the numbers go")
    ap.add_argument("--print", action="store_true", help="print the block, change nothing")
    args = ap.parse_args(argv)
    folder = args.run / "evaluation"
    missing = [p for p in ("summary.csv", "aggregate.csv") if not (folder / p).is_file()]
    missing += [p for p in POLICY_FILES if not (args.run / p).is_file()]
    if missing:
        print(f"readme_table: {args.run} has no {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        prov = table_provenance(args.run)
    except ValueError as exc:
        print(f"readme_table: {exc}", file=sys.stderr)
        return 2
    summary = pd.read_csv(folder / "summary.csv")
    aggregate = pd.read_csv(folder / "aggregate.csv")
    table = render(summary, aggregate, _training_scenarios(args.run))
    new_block = block(args.run, table, prov)
    timing_block = f"{TIMING_BEGIN}\n{timing(args.run)}\n{TIMING_END}"
    if args.print:
        print(timing_block)
        print(new_block)
        return 0
    text = rewrite(args.readme.read_text(), new_block)
    if TIMING_BEGIN in text:
        text = rewrite(text, timing_block, TIMING_BEGIN, TIMING_END)
    args.readme.write_text(text)
    args.numbers.parent.mkdir(parents=True, exist_ok=True)
    policy = copy_policy(args.run, args.numbers.parent / POLICY.name)
    args.numbers.write_text(numbers(summary, aggregate, prov, policy))
    print(f"readme_table: {args.readme}, {args.numbers} and the policy rewritten from {args.run}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
