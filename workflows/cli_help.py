"""``--help`` of the command-line tools: what can be chosen, before Hydra's config dump.

Hydra's default help lists the config groups and the composed config; a user also needs the
controllers (the registry ``cellgym.controllers``, checkpoints, their own classes), the scenarios
and the options that matter. ``evaluate_help`` is the header of ``evaluate.py --help`` (through
the ``cellgym_help`` resolver in ``configs/evaluate.yaml``'s ``hydra.help``).
"""

from __future__ import annotations

import textwrap

from cellgym import controllers
from cellgym.vocab import ACTION_MODES, ALGORITHMS, BACKENDS

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
    lines.append(
        _wrapped(
            "trained",
            [
                "a train.py run directory (its last model, model.zip)",
                "a model .zip (e.g. <run>/best_model.zip)",
            ],
        )
    )
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


def train_help() -> str:
    """The header of ``train.py --help``."""
    from pathlib import Path

    configs = Path(__file__).resolve().parent.parent / "configs"

    def options_of(group: str) -> list[str]:
        return sorted(p.stem for p in (configs / group).glob("*.yaml"))

    options = [
        ("agent=<name>", f"the algorithm: {', '.join(options_of('agent'))}"),
        ("scenario=<name>", "the training cell (below); also the final evaluation's"),
        (f"backend={'|'.join(BACKENDS)}", "the training simulator; backend.n_envs=N cells"),
        ("reward=<name>", f"reward weights: {', '.join(options_of('reward'))}"),
        ("logger=<name>", f"besides progress.csv: {', '.join(options_of('logger'))}"),
        ("experiment=<name>", f"a tuned recipe: {', '.join(options_of('experiment'))}"),
        ("total_timesteps=N", "environment steps of training (over all cells)"),
        ("seed=N", "the run's seed (null: drawn, kept in seed.txt)"),
        ("agent.kwargs.<arg>=V", f"constructor arguments of {', '.join(ALGORITHMS)}"),
        ("agent=fast_ppo", "PPO over the fast cells as arrays (learners.ppo; backend=fast)"),
        ("checkpoint_freq=N", "steps between checkpoints (rounded up to whole rollouts)"),
        ("keep_replay_buffers=B", "keep every checkpoint's replay buffer (default: the latest)"),
        ("resume=<run_dir>", "continue a stopped run from its latest checkpoint"),
        ("eval.freq=N", "steps between periodic evaluations beside eval.baselines"),
        ("final_model=last|best", "model of the final evaluation (default last: model.zip)"),
        ("eval_backend=ns3|fast", "simulator of the final evaluation"),
        ("eval_seeds=[..]", "seeds of the final evaluation"),
        ("eval_baselines=[..]", "controllers compared with the policy at the end (below)"),
    ]
    lines = [
        "train.py: train a Stable-Baselines3 agent (or learners.ppo, agent=fast_ppo) on a CellGym",
        "scenario, then compare it with baselines; everything goes into one run directory.",
        "",
        "Usage: python train.py [key=value ...]    python train.py resume=<run_dir> [key=value]",
        "  e.g. python train.py agent=sac backend=fast scenario=fluctuating total_timesteps=20000",
        "",
        "Main options:",
        *(
            textwrap.fill(v, _WIDTH, initial_indent=f"  {k:<28}", subsequent_indent=" " * 30)
            for k, v in options
        ),
        "",
        "The run directory's model: model.zip is the last model (evaluated at the end by",
        "default, and what evaluate.py loads for a run directory); best_model.zip is the best",
        "periodic evaluation's (final_model=best, or controllers=[<run>/best_model.zip]).",
        "",
        "Baselines (eval_baselines, eval.baselines):",
        *controller_lines(),
        "",
        "Scenarios:",
        *scenario_lines(),
        "",
        "Exit status: 0 trained and evaluated; 1 a failure while training or evaluating; 2 an",
        "invalid config (one line naming the field and its allowed values, before any training).",
    ]
    return "\n".join(lines) + "\n"
