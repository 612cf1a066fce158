"""``--help`` of the command-line tools: what can be chosen, before Hydra's config dump.

Hydra's default help lists the config groups and the composed config; a user also needs the
controllers (the registry ``cellgym.controllers``, checkpoints, their own classes), the scenarios
and the options that matter. ``evaluate_help`` is the header of ``evaluate.py --help`` (through
the ``cellgym_help`` resolver in ``configs/evaluate.yaml``'s ``hydra.help``).
"""

from __future__ import annotations

import textwrap

from cellgym import controllers
from cellgym.vocab import ACTION_MODES, BACKENDS

_WIDTH = 100


def _wrapped(label: str, items: list[str]) -> str:
    body = ", ".join(items) if items else "(none)"
    return textwrap.fill(body, _WIDTH, initial_indent=f"  {label:<20}", subsequent_indent=" " * 22)


def controller_lines() -> list[str]:
    """The controllers by kind and backend, as indented lines."""
    lines = [
        _wrapped(f"native ({b})", controllers.names(kind="native", backend=b)) for b in BACKENDS
    ]
    lines.append(_wrapped("baseline policies", controllers.names(kind="policy")))
    lines.append(_wrapped("trained", ["a train.py run directory (its model.zip)", "a model .zip"]))
    lines.append(" " * 22 + "<algo>:<path>, e.g. ppo:runs/<dir>")
    lines.append(_wrapped("your own class", ["module:Class", "path/to/file.py:Class"]))
    lines.append(" " * 22 + "(see evaluation/user_policies.py; it runs in the worker pool)")
    return lines


def scenario_lines() -> list[str]:
    """The scenario config names, as indented lines."""
    from cellgym.scenario import scenario_names

    top = [n for n in scenario_names() if "/" not in n]
    groups = sorted({n.split("/")[0] for n in scenario_names() if "/" in n})
    return [
        _wrapped("configs/scenario/", top),
        _wrapped("subfolders", [f"{g}/<name>" for g in groups]),
        _wrapped("or a file", ["path/to/scenario.yaml"]),
    ]


def evaluate_help() -> str:
    """The header of ``evaluate.py --help``."""
    options = [
        ("controllers=[a,b]", "the controllers to compare (below)"),
        ("scenarios=[a,b]", "scenario names or YAML files (below); empty: scenario=<name>"),
        ("scenario=<name>", "the one scenario when scenarios is empty (default vs_cubic)"),
        ("seeds=[1,2,3]", "seeds, the same for every controller and scenario"),
        (f"backend={'|'.join(BACKENDS)}", "the simulator"),
        ("jobs=2", "simulations at a time (worker processes)"),
        ("sim_time_s=S", "override every scenario's duration (quick runs)"),
        ("from_s=S", "measure only after this warm-up"),
        (f"action_mode={'|'.join(ACTION_MODES)}", "what a baseline policy's action changes"),
        ("max_change=F", "largest per-step change factor of a policy's action"),
        ("out_dir=DIR", "where the tables, report.md and plots go"),
        ("confidence=0.95", "level of the confidence intervals"),
        ("timeout_s=S", "longest wait for one simulator step"),
    ]
    lines = [
        "evaluate.py: compare controllers on scenarios and seeds; a table with confidence",
        "intervals, report.md and plots in out_dir.",
        "",
        "Usage: python evaluate.py [key=value ...]",
        "  e.g. python evaluate.py 'controllers=[xrc_policy,cubic,my_policies.py:Mine]' \\",
        "         'scenarios=[vs_cubic,fluctuating]' 'seeds=[1,2,3]' backend=fast jobs=2",
        "",
        "Main options:",
        *(f"  {k:<28}{v}" for k, v in options),
        "",
        "Controllers:",
        *controller_lines(),
        "",
        "Scenarios:",
        *scenario_lines(),
        "",
        "Exit status: 0 every run finished; 1 some run failed (every run failed: the first",
        "failure is named); 2 an invalid config (before any simulation); 143 on SIGTERM (the",
        "worker processes and simulators are stopped first).",
    ]
    return "\n".join(lines) + "\n"
