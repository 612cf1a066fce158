"""Evaluate controllers x scenarios x seeds in parallel: ``python evaluate.py [overrides]``.

The root ``evaluate.py`` calls ``main`` here.

See configs/evaluate.yaml for the options. For example::

    python evaluate.py 'controllers=[xrc_policy,cubic,ppo:runs/<dir>]' 'seeds=[1,2,3]'
        'scenarios=[vs_cubic,fluctuating]' jobs=2

writes to ``out_dir`` the tables ``results.parquet``/``results.csv`` (one row per controller,
scenario and seed), ``flows.parquet`` (per flow), ``timeseries.parquet`` (per step),
``summary.csv`` (mean and 95 % t confidence interval per controller and scenario),
``report.md``, ``comparison.txt`` and the plots (throughput-delay scatter, delay CDFs, time
series); then prints the comparison table and the paths of the plots.

A controller may also be the user's own policy class, ``module:Class`` or ``path/to/file.py:Class``
(``evaluation.user_policies`` says what the class may declare); it runs in the worker pool like
the registry's baselines. ``python evaluate.py --help`` lists the controllers, scenarios and main
options.

Exit status: 0 when every run finished, 1 when some failed (they are listed; the others are still
reported; when every run failed, the first failure is named), 2 for an invalid config (before any
simulation), 143 on SIGTERM (the worker processes and their simulators are stopped first).
"""

from __future__ import annotations

import logging
import math
import os
import sys
from pathlib import Path
from typing import Any

import hydra
from omegaconf import DictConfig, OmegaConf

from cellgym.vocab import (
    ACTION_MODES,
    BACKENDS,
    SpecError,
    check_above,
    check_choice,
    check_max_change,
    check_range,
)
from configs.schema import register_configs

log = logging.getLogger("evaluate")
register_configs()


def _help(tool: str) -> str:
    from workflows import cli_help

    return cli_help.evaluate_help() if tool == "evaluate" else ""


OmegaConf.register_new_resolver("cellgym_help", _help, replace=True)


def resolve_scenario(text: str, where: str) -> Any:
    """``load_scenario`` of a config name or YAML path; an unknown one names both forms."""
    from cellgym.scenario import SCENARIO_CONFIGS, load_scenario, scenario_names

    path = Path(text)
    if path.suffix in (".yaml", ".yml"):
        if not path.is_file():
            raise SpecError(f"{where}={text!r}: no scenario file at {path.resolve()}")
    elif not (SCENARIO_CONFIGS / f"{text}.yaml").is_file():
        raise SpecError(
            f"{where}={text!r} is unknown: give a scenario YAML file (path/to/scenario.yaml) or "
            f"a config name: {', '.join(scenario_names())}"
        )
    return load_scenario(path)


def resolve_controllers(names: Any, backend: str) -> list[Any]:
    """Each controller of the list: a registry name, a checkpoint or a user's policy class."""
    from evaluation.resolve import resolve_controller
    from evaluation.user_policies import is_class_ref, resolve_user_policy

    if os.getcwd() not in sys.path:  # module:Class of the user's working directory (and workers)
        sys.path.insert(1, os.getcwd())
    return [
        resolve_user_policy(str(c), f"controllers[{i}]")
        if is_class_ref(str(c))
        else resolve_controller(str(c), f"controllers[{i}]", backend=backend)
        for i, c in enumerate(names)
    ]


def backend_fast_params(cfg: DictConfig, backend: str) -> dict[str, Any]:
    """``backend.fast_params``, checked for ``backend`` (``SpecError`` names the field)."""
    from configs.schema import to_dict
    from envs.fast_params import check_fast_params

    node = cfg.backend
    raw = {} if isinstance(node, str) else to_dict(node).get("fast_params") or {}
    try:
        return check_fast_params(raw, backend)
    except SpecError as exc:
        raise SpecError(str(exc).replace("fast_params", "backend.fast_params", 1)) from None


def backend_name(cfg: DictConfig) -> str:
    """The simulator: ``backend.name`` of the ``backend`` group (or a plain string)."""
    backend = cfg.backend
    return str(backend if isinstance(backend, str) else backend.name)


def validate(cfg: DictConfig) -> dict[str, Any]:
    """Check every option before any simulation; return the resolved arguments of the run.

    Returns:
        ``controllers`` (``ControllerSpec`` list), ``scenarios`` (``ScenarioSpec`` list),
        ``reward`` (``RewardSpec``) and the plain options.

    Raises:
        SpecError: Naming the first invalid field and its allowed values or range.
    """
    from cellgym.metrics import check_confidence
    from cellgym.reward import RewardSpec
    from cellgym.scenario import ScenarioSpec
    from cellgym.seeding import check_seed
    from configs.schema import check_known_keys, to_dict

    def check(ok: bool, message: str) -> None:
        if not ok:
            raise SpecError(message)

    check_known_keys(cfg)
    backend = backend_name(cfg)
    check_choice("backend.name", backend, BACKENDS)
    fast_params = backend_fast_params(cfg, backend)
    check_range("jobs", cfg.jobs, 1)
    check_confidence(cfg.confidence)
    check_range("from_s", cfg.from_s, 0.0)
    if cfg.sim_time_s is not None:
        check_above("sim_time_s", cfg.sim_time_s, cfg.from_s)
    check_above("timeout_s", cfg.timeout_s, 0.0)
    check_max_change(cfg.max_change)
    check_choice("action_mode", cfg.action_mode, ACTION_MODES)
    check(len(cfg.controllers) > 0, "controllers is empty: give at least one controller")
    check(len(cfg.seeds) > 0, "seeds is empty: give at least one seed")
    check(len(set(cfg.seeds)) == len(cfg.seeds), f"seeds={list(cfg.seeds)} holds a seed twice")
    for i, seed in enumerate(cfg.seeds):
        check_seed(f"seeds[{i}]", seed)
    try:
        controllers = resolve_controllers(cfg.controllers, backend)
        if cfg.scenarios:
            scenarios = [
                resolve_scenario(str(s), f"scenarios[{i}]") for i, s in enumerate(cfg.scenarios)
            ]
        else:
            scenarios = [ScenarioSpec.from_config(cfg.scenario)]
        reward = RewardSpec.from_config(to_dict(cfg.reward))
    except SpecError:
        raise
    except (ValueError, FileNotFoundError) as exc:  # e.g. a checkpoint path with no model
        raise SpecError(str(exc)) from None
    for i, spec in enumerate(scenarios):
        where = f"scenarios[{i}]" if cfg.scenarios else "scenario"
        check(bool(spec.agent_flows), f"{where}={spec.name!r} has no agent flow to control")
        check(
            cfg.from_s < (cfg.sim_time_s or spec.sim_time_s),
            f"from_s={cfg.from_s:g} is out of range for {where}={spec.name!r}: "
            f"allowed [0, {cfg.sim_time_s or spec.sim_time_s:g})",
        )
    return {
        "controllers": controllers,
        "scenarios": scenarios,
        "reward": reward,
        "seeds": [int(s) for s in cfg.seeds],
        "backend": backend,
        "fast_params": fast_params,
    }


def evaluate(cfg: DictConfig) -> dict[str, Any]:
    """Run every controller x scenario x seed, write the tables, report and plots; print them.

    Returns:
        ``results``, ``flows``, ``timeseries`` (DataFrames), ``summary`` (``summarize``) and
        ``paths`` (the written files by key, see ``evaluation.report.write_report``).

    Raises:
        SpecError: For an invalid option, before any simulation.
    """
    from evaluation.pool import evaluate_many
    from evaluation.report import summarize, summary_table, write_report
    from evaluation.user_policies import make_user_policy

    args = validate(cfg)
    out = Path(cfg.out_dir)
    n = len(args["controllers"]) * len(args["scenarios"]) * len(args["seeds"])
    log.info(
        "%d runs (%d controllers x %d scenarios x %d seeds) on %s, %d at a time",
        n,
        len(args["controllers"]),
        len(args["scenarios"]),
        len(args["seeds"]),
        args["backend"],
        cfg.jobs,
    )
    results, flows, timeseries = evaluate_many(
        args["controllers"],
        args["scenarios"],
        args["seeds"],
        args["reward"],
        backend=args["backend"],
        jobs=int(cfg.jobs),
        timeout_s=float(cfg.timeout_s),
        max_change=float(cfg.max_change),
        action_mode=str(cfg.action_mode),
        deterministic=bool(cfg.deterministic),
        from_s=float(cfg.from_s),
        sim_time_s=None if cfg.sim_time_s is None else float(cfg.sim_time_s),
        make_policy=make_user_policy,
        fast_params=args["fast_params"] or None,
    )
    knobs = f" (fast model: {args['fast_params']})" if args["fast_params"] else ""
    notes = (
        f"Backend `{args['backend']}`{knobs}, seeds {args['seeds']}, reward budget "
        f"{args['reward'].delay_budget_ms:g} ms. Command: `python {' '.join(sys.argv)}`"
    )
    paths = write_report(
        results,
        out,
        flows=flows,
        timeseries=timeseries,
        confidence=float(cfg.confidence),
        notes=notes,
    )
    summary = summarize(results, confidence=float(cfg.confidence))
    table = summary_table(summary)
    (out / "comparison.txt").write_text(table + "\n")
    paths["comparison"] = out / "comparison.txt"

    _print_outcome(cfg, args, table, results, paths)
    return {
        "results": results,
        "flows": flows,
        "timeseries": timeseries,
        "summary": summary,
        "paths": paths,
    }


def _print_outcome(
    cfg: DictConfig, args: dict[str, Any], table: str, results: Any, paths: dict[str, Path]
) -> None:
    """Print the comparison table, the failed runs and the written files.

    When every run failed, the first failure is named on stderr too.

    Args:
        cfg: The evaluation config (its ``confidence``).
        args: ``validate``'s result (its ``seeds`` and ``backend``).
        table: The comparison table (``summary_table``).
        results: The results DataFrame, one row per run.
        paths: The written files by key (``write_report``'s, and ``comparison``).
    """
    pct = f"{cfg.confidence:.0%}".replace("%", " %")
    print(f"mean ± {pct} confidence interval over seeds {args['seeds']} ({args['backend']}):")
    print(table)
    failed = results[results["status"] != "ok"]
    for _, r in failed.iterrows():
        print(f"FAILED {r['controller']} / {r['scenario']} / seed {r['seed']}: {r['error']}")
    print()
    for path in paths.values():
        if path.suffix == ".png":
            print(f"plot: {path.resolve()}")
    print(f"report: {paths['report'].resolve()}")
    print(f"results: {paths['results'].resolve()}")
    if len(failed) == len(results):
        first = failed.iloc[0]
        print(
            f"evaluate.py: every run failed ({len(results)} of {len(results)}); the first, "
            f"{first['controller']} / {first['scenario']} / seed {first['seed']}: {first['error']}",
            file=sys.stderr,
        )


@hydra.main(config_path="../configs", config_name="evaluate", version_base="1.3")
def main(cfg: DictConfig) -> float:
    """Hydra entry point; exits 2 on an invalid config, 1 when some run failed.

    Returns the mean reward over all finished runs (an objective for Hydra sweepers).
    """
    try:
        out = evaluate(cfg)
    except SpecError as exc:
        print(f"evaluate.py: invalid config: {exc}", file=sys.stderr)
        sys.exit(2)
    results = out["results"]
    if (results["status"] != "ok").any():
        sys.exit(1)
    reward = results["mean_reward"].mean()
    return float(reward) if math.isfinite(reward) else float("nan")


if __name__ == "__main__":
    main()
