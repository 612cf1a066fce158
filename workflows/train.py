"""Train a Stable-Baselines3 agent on a CellGym scenario, then evaluate it beside baselines.

``agent.algo=FastPPO`` (``agent=fast_ppo``) trains with ``learners.ppo`` instead
(``learners.run.train``: the fast backend's cells stepped as arrays); its run directory holds the
same files (``model.zip`` and ``vecnormalize.pkl`` as an SB3 PPO export, checkpoints and the
best model likewise, plus ``policy.pt``), logged and evaluated the same way; ``resume=`` is
refused for it.

``train(cfg)`` does the work on a composed config (tests call it directly); ``main()`` is the Hydra
entry point behind ``python train.py``; ``python train.py resume=<run_dir> [overrides]`` continues
a killed run from its latest checkpoint, in the same directory, with the same seed.
Checkpoints fall between updates (``checkpoint_freq`` rounded up to whole rollouts), so a resumed
run makes the same number of updates and steps as an unbroken one and numbers its iterations on;
the random generators are restored too, but the environments start new episodes (seeded with the
steps done), so the final parameters equal the unbroken run's only where the episodes restart
identically (``tests/agents/test_resume_equivalence.py``).

The run directory receives:

- ``.hydra/`` (the composed config), ``command.txt`` (one line per invocation), ``seed.txt``;
- ``progress.csv`` (SB3's CSV logger, always on), ``tensorboard/`` or ``wandb/`` with the
  ``logger`` group;
- ``checkpoints/`` (model, ``VecNormalize`` statistics, replay buffer for off-policy agents,
  ``latest.json``), ``model.zip`` + ``vecnormalize.pkl`` (the end of training: the model of the
  final evaluation by default, ``final_model=last``, and the one ``evaluate.py`` loads for a run
  directory), ``best_model.zip`` + ``best_vecnormalize.pkl`` (best periodic evaluation; chosen
  with ``final_model=best`` here, or named as ``<run_dir>/best_model.zip`` to ``evaluate.py``);
- ``eval_history.csv``: one row per periodic evaluation and controller (policy and XRC, same
  scenario and seeds);
- ``evaluation/``: the final comparison of the trained policy with the baselines on
  ``eval_backend`` and ``eval_seeds`` (``evaluation.pool.evaluate_many`` and
  ``evaluation.report.write_report``: ``results.parquet``/``results.csv``, ``flows.parquet``,
  ``timeseries.parquet``, ``summary.csv``, ``report.md``, PNG plots; ``comparison.txt``).

The training pieces come from ``agents`` (factory, callbacks, loggers); this module wires them to
``evaluation``: the periodic evaluation callback gets ``periodic_evaluator``, an evaluate function
over ``evaluate_many`` (``agents`` never imports ``evaluation``).
"""

from __future__ import annotations

import logging
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import OmegaConf

from cellgym.metrics import group_means
from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec
from cellgym.vocab import SpecError
from configs.schema import TrainConfig, register_configs, to_dict, validate_train
from evaluation.readme_table import RUN_PROVENANCE, record_run

log = logging.getLogger(__name__)
register_configs()


def _help(tool: str) -> str:
    from workflows import cli_help  # imported on demand, as evaluate.py does

    return cli_help.train_help() if tool == "train" else ""


OmegaConf.register_new_resolver("cellgym_train_help", _help, replace=True)

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"


def _draw_seed() -> int:
    return int(np.random.SeedSequence().entropy % 2**31)


def _is_tty() -> bool:
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


def resume_config(run_dir: str | Path, overrides: list[str] | None = None) -> Any:
    """The saved config of ``run_dir`` (``.hydra/config.yaml``), set up to continue there.

    Args:
        run_dir: A run directory made by ``train``.
        overrides: ``key=value`` overrides applied on top (e.g. ``total_timesteps=200000`` to
            train further, ``progress_bar=false``).
    """
    from omegaconf import OmegaConf

    run_dir = Path(run_dir).resolve()
    saved = run_dir / ".hydra" / "config.yaml"
    if not saved.is_file():
        raise FileNotFoundError(f"resume={run_dir}: no saved config at {saved}")
    cfg = OmegaConf.merge(OmegaConf.structured(TrainConfig), OmegaConf.load(saved))
    for item in overrides or []:
        key, sep, _ = item.partition("=")
        if not sep:
            raise ValueError(f"override {item!r}: expected key=value")
        if key.lstrip("+~") in ("run_dir", "resume", "seed"):
            raise ValueError(f"override {item!r}: {key} is fixed when resuming")
    if overrides:
        cfg = OmegaConf.merge(cfg, OmegaConf.from_dotlist(list(overrides)))
    cfg.run_dir = str(run_dir)
    cfg.resume = str(run_dir)
    return cfg


def _save_config(cfg: Any, run_dir: Path) -> None:
    """Keep the composed config where Hydra does, when ``train`` was called without Hydra."""
    from omegaconf import OmegaConf

    path = run_dir / ".hydra" / "config.yaml"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        OmegaConf.save(cfg, path, resolve=True)


def _final_model(cfg: TrainConfig, run_dir: Path) -> tuple[Path, str]:
    """The model of the final evaluation: ``model.zip`` or, on request, ``best_model.zip``.

    The last one is the default and what ``evaluate.py`` loads for a run directory; with
    ``final_model=best``, the best periodic one when there is one.
    """
    best = run_dir / "best_model.zip"
    if cfg.final_model == "best" and best.is_file():
        return best, "best"
    return run_dir / "model.zip", "last"


#: Per-controller means that ``train`` returns and prints (``evaluation.records`` columns).
MEAN_COLUMNS: dict[str, str] = {
    "reward_mean": "mean_reward",
    "utilization": "utilization",
    "throughput_mbps": "throughput_mbps",
    "jain_fairness": "jain_fairness",
    "hol_delay_ms_p90": "hol_delay_ms_p90",
    "hol_delay_ms_p95": "hol_delay_ms_p95",
    "queueing_delay_ms_p95": "queueing_delay_ms_p95",
    "hol_budget_compliance": "hol_budget_compliance",
}


def final_evaluation(
    cfg: TrainConfig, model_path: Path, run_dir: Path, notes: str = ""
) -> tuple[Any, dict[str, dict[str, float]], Any, dict[str, Path]]:
    """Evaluate the trained model and ``eval_baselines`` on ``eval_backend`` and ``eval_seeds``.

    Runs ``evaluation.pool.evaluate_many`` (``eval_jobs`` simulations at a time; the policy
    goes through ``run_policy`` exactly like the baselines) and ``evaluation.report.write_report``
    into ``<run_dir>/evaluation/``: ``results.parquet``/``results.csv`` (one row per controller
    and seed), ``flows.parquet``, ``timeseries.parquet``, ``summary.csv`` (mean and 95 % CI per
    controller), ``report.md``, the PNG plots, and ``comparison.txt`` (the summary as text).

    Returns:
        The results table, the per-controller means (``MEAN_COLUMNS``), the summary table and
        the written paths.
    """
    from evaluation.pool import evaluate_many
    from evaluation.report import rliable_section, summarize, summary_table, write_report

    eval_dir = run_dir / "evaluation"
    label = cfg.agent.name
    scenarios = cfg.final_scenarios()
    results, flows, timeseries = evaluate_many(
        [label, *cfg.eval_baselines],
        scenarios,
        list(cfg.eval_seeds),
        reward=cfg.reward,
        backend=cfg.eval_backend,
        jobs=cfg.eval_jobs,
        policies={label: str(model_path)},
        timeout_s=cfg.timeout_s,
        max_change=cfg.max_change,
        action_mode=cfg.action_mode,
    )
    paths = write_report(
        results,
        eval_dir,
        flows=flows,
        timeseries=timeseries,
        title=f"{label} vs {', '.join(cfg.eval_baselines)} on "
        + ", ".join(s.name for s in scenarios),
        notes=notes,
    )
    summary = summarize(results)
    table = summary_table(summary)
    if len(scenarios) > 1:
        _, aggregates = rliable_section(results)
        table += "\n\n" + aggregates.strip()
    (eval_dir / "comparison.txt").write_text(table + "\n")
    paths["comparison"] = eval_dir / "comparison.txt"
    by_column = group_means(results, list(MEAN_COLUMNS.values()))
    means = {
        controller: {key: row[col] for key, col in MEAN_COLUMNS.items()}
        for controller, row in by_column.items()
    }
    failed = results[results["status"] != "ok"]
    if len(failed):
        for _, r in failed.iterrows():
            log.error(
                "final evaluation of %s, seed %s failed: %s", r["controller"], r["seed"], r["error"]
            )
    return results, means, summary, paths


def periodic_evaluator(
    specs: ScenarioSpec | list[ScenarioSpec],
    seeds: list[int],
    reward: RewardSpec,
    backend: str,
    env_kwargs: dict[str, Any],
    deterministic: bool = True,
) -> Any:
    """The evaluate function of ``agents.callbacks.PeriodicEvalCallback``.

    ``evaluate(controller, policy)`` runs ``controller`` (a baseline name, or the label of the
    in-process ``policy``) on every scenario of ``specs`` and ``seeds`` through ``evaluate_many``
    in this process (the final evaluation's code path: policies through ``run_policy``, native
    controllers through ``run_native`` with their reward computed from the same records) and
    returns its results (one row per scenario and seed).
    """
    from evaluation.pool import evaluate_many

    scenarios = list(specs) if isinstance(specs, list | tuple) else [specs]

    def evaluate(controller: str, policy: Any = None) -> Any:
        # One line per job is right for the final evaluation, noise every few thousand steps.
        quiet = logging.getLogger("evaluation.pool")
        level = quiet.level
        quiet.setLevel(logging.WARNING)
        try:
            return evaluate_many(
                [controller],
                scenarios,
                list(seeds),
                reward=reward,
                backend=backend,
                jobs=1,
                policies={controller: policy} if policy is not None else None,
                timeout_s=env_kwargs.get("timeout_s", 60.0),
                max_change=env_kwargs.get("max_change", 2.0),
                action_mode=env_kwargs.get("action_mode", "cwnd"),
                deterministic=deterministic,
                keep_timeseries=False,
            ).results
        finally:
            quiet.setLevel(level)

    return evaluate


def validate(cfg: Any) -> TrainConfig:
    """The typed config, every field checked, ``agent.kwargs`` against the algorithm's constructor.

    Raises:
        SpecError: Naming the first invalid field and its allowed range or choices.
    """
    from agents.factory import check_agent_kwargs
    from envs.fast_params import check_fast_params

    typed = validate_train(cfg)
    check_agent_kwargs(typed.agent.algo, dict(typed.agent.kwargs))
    where = "backend.fast_params"
    try:
        check_fast_params(dict(typed.backend.fast_params), typed.backend.name)
    except SpecError as exc:
        raise SpecError(str(exc).replace("fast_params", where, 1)) from None
    if typed.agent.algo == "FastPPO":
        from learners.run import check_config

        check_config(typed)
    return typed


def _learn_sb3(
    typed: TrainConfig,
    seed: int,
    run_dir: Path,
    loggers: Any,
    evaluate: Any,
    show_bar: bool,
    ckpt: dict[str, Any] | None,
) -> tuple[int, float]:
    """Train an SB3 agent (from ``ckpt`` when resuming); save ``model.zip`` and its statistics.

    Returns:
        The model's steps and the seconds of ``learn``.
    """
    from agents.callbacks import (
        PeriodicEvalCallback,
        ProgressBarCallback,
        ResumableCheckpointCallback,
        restore_training,
    )
    from agents.factory import load_model, make_model, make_vec_env

    done = int(ckpt["timesteps"]) if ckpt else 0
    venv = None
    try:
        venv = make_vec_env(typed, seed + done, ckpt.get("vecnormalize") if ckpt else None)
        if ckpt:
            model = load_model(typed, ckpt["model"], venv, ckpt.get("replay_buffer"))
            restore_training(model, ckpt)
            log.info("resuming %s at %d of %d steps", run_dir, done, typed.total_timesteps)
        else:
            model = make_model(typed, venv, seed)
        model.set_logger(loggers.sb3)
        evaluator = PeriodicEvalCallback(
            evaluate,
            typed.agent.name,
            typed.eval.baselines,
            typed.eval.freq,
            run_dir,
            deterministic=typed.eval.deterministic,
            features=typed.features,
        )
        if ckpt and "eval_state" in ckpt:
            evaluator.load_state(ckpt["eval_state"])
        callbacks: list[Any] = [
            evaluator,
            ResumableCheckpointCallback(
                run_dir / "checkpoints",
                typed.checkpoint_freq,
                typed.agent.name,
                evaluator,
                keep_replay_buffers=typed.keep_replay_buffers,
                iterations=int(ckpt.get("iterations", 0)) if ckpt else 0,
            ),
        ]
        if show_bar:
            baseline = typed.eval.baselines[0] if typed.eval.baselines else ""
            callbacks.append(ProgressBarCallback(typed.total_timesteps, evaluator, baseline))
        remaining = typed.total_timesteps - model.num_timesteps
        t0 = time.monotonic()
        if remaining > 0:
            model.learn(
                total_timesteps=remaining,
                callback=callbacks,
                reset_num_timesteps=not ckpt,
                progress_bar=False,
            )
        train_s = time.monotonic() - t0
        model.save(run_dir / "model.zip")
        venv.save(str(run_dir / "vecnormalize.pkl"))
    finally:
        if venv is not None:
            venv.close()
    return int(model.num_timesteps), train_s


def train(cfg: Any) -> dict[str, Any]:
    """Train, checkpoint, save and evaluate (see the module docstring for the files).

    Args:
        cfg: A composed ``train`` config (``configs/train.yaml``); with ``resume`` set to a run
            directory, the config saved there is used (see ``resume_config``).

    Returns:
        ``seed``, ``run_dir``, ``results`` (final metrics per controller and seed), ``means``
        (per controller, over seeds) and ``timesteps``.
    """
    import torch
    from stable_baselines3.common.utils import set_random_seed

    from agents.callbacks import best_evaluation, latest_checkpoint, truncate_eval_history
    from agents.factory import env_kwargs
    from agents.loggers import RunLoggers

    # With simulators in subprocesses (or the numba batch), more torch threads only compete.
    torch.set_num_threads(1)
    if cfg.resume is not None and Path(cfg.resume).resolve() != Path(cfg.run_dir).resolve():
        cfg = resume_config(cfg.resume)
    typed = validate(cfg)
    if typed.mixture.scenarios:
        from agents.mixture import mixture_batches

        mixture_batches(typed)  # every batch's fast model, checked before the run starts
    run_dir = Path(typed.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    _save_config(cfg, run_dir)
    resuming = typed.resume is not None
    seed_file = run_dir / "seed.txt"
    if resuming and seed_file.is_file():
        seed = int(seed_file.read_text())
    else:
        seed = typed.seed if typed.seed is not None else _draw_seed()
    seed_file.write_text(f"{seed}\n")
    with (run_dir / "command.txt").open("a" if resuming else "w") as f:
        f.write(" ".join(["python", *sys.argv]) + "\n")
    if not resuming or not (run_dir / RUN_PROVENANCE).is_file():
        record_run(run_dir)  # the code it is made with, for the README's table
    log.info("seed %d, run directory %s", seed, run_dir)
    set_random_seed(seed)

    ckpt = latest_checkpoint(run_dir / "checkpoints") if resuming else None
    if resuming and ckpt is None:
        log.warning("resume=%s: no checkpoint yet, starting from the beginning", run_dir)
    done = int(ckpt["timesteps"]) if ckpt else 0
    if ckpt:
        truncate_eval_history(run_dir / "eval_history.csv", done)
    # A resumed run's environments continue from new episode seeds, not the first ones again.
    loggers = RunLoggers(typed.logger, run_dir, to_dict(cfg), resume_from=done if ckpt else None)
    periodic_backend = typed.eval.backend or typed.backend.name
    evaluate = periodic_evaluator(
        typed.periodic_scenarios(),
        list(typed.eval.seeds),
        typed.reward,
        periodic_backend,
        {**env_kwargs(typed), "timeout_s": typed.timeout_s},
        deterministic=typed.eval.deterministic,
    )
    show_bar = typed.progress_bar if typed.progress_bar is not None else _is_tty()
    try:
        if typed.agent.algo == "FastPPO":  # learners.ppo: the fast cells stepped as arrays
            from learners.run import train as train_fast

            t0 = time.monotonic()
            timesteps = train_fast(
                typed, seed, run_dir, loggers.sb3, evaluate, progress_bar=show_bar
            )
            train_s = time.monotonic() - t0
        else:
            timesteps, train_s = _learn_sb3(typed, seed, run_dir, loggers, evaluate, show_bar, ckpt)
    except BaseException:
        loggers.close()
        raise
    log.info(
        "trained %d steps in %.1f s (%.0f steps/s)",
        timesteps - done,
        train_s,
        (timesteps - done) / max(train_s, 1e-9),
    )
    try:
        model_path, which = _final_model(typed, run_dir)
        log.info("final evaluation of the %s model on %s", which, typed.eval_backend)
        t0 = time.monotonic()
        trained_on = ""
        if typed.mixture.scenarios:
            names = ", ".join(f"`{s.name}`" for s in typed.training_scenarios())
            variants = list(typed.mixture.variants) or "none"
            trained_on = f" (scenarios {names}; fast-model variants {variants})"
        notes = (
            f"Trained {timesteps} steps of `{typed.agent.name}` on the "
            f"`{typed.backend.name}` backend{trained_on}; evaluated the {which} model on "
            f"`{typed.eval_backend}`, seeds {list(typed.eval_seeds)}. Run directory: `{run_dir}`."
        )
        results, means, summary, paths = final_evaluation(typed, model_path, run_dir, notes)
        eval_s = time.monotonic() - t0
        log.info("final evaluation in %.1f s", eval_s)
        plots = [p for k, p in paths.items() if p.suffix == ".png"]
        loggers.log_final(means, summary, plots)
    finally:
        loggers.close()

    print((run_dir / "evaluation" / "comparison.txt").read_text())
    print(
        f"final evaluation ({which} model, {typed.eval_backend} backend, "
        f"seeds {list(typed.eval_seeds)}):"
    )
    for controller, row in means.items():
        print(
            f"  {controller:>16}: reward {row['reward_mean']:.4f}  "
            f"utilization {row['utilization']:.3f}  HoL p95 {row['hol_delay_ms_p95']:.1f} ms"
        )
    best = best_evaluation(run_dir / "eval_history.csv", typed.agent.name)
    if best is not None:
        steps, rewards = best
        print(
            f"periodic evaluation ({periodic_backend} backend, seeds {list(typed.eval.seeds)}), "
            f"best at {steps} steps: "
            + ", ".join(f"{name} reward {value:.4f}" for name, value in rewards.items())
        )
    print(f"wall time: training {train_s:.0f} s, final evaluation {eval_s:.0f} s")
    print(f"report: {paths['report'].resolve()}")
    for path in plots:
        print(f"plot: {path.resolve()}")
    print(f"run directory: {run_dir.resolve()}")
    failed = results[results["status"] != "ok"]
    if (failed["controller"] == typed.agent.name).any():
        raise RuntimeError(
            f"the final evaluation of {typed.agent.name} failed: {failed['error'].iloc[0]}"
        )
    return {
        "seed": seed,
        "run_dir": str(run_dir),
        "results": results.to_dict("records"),
        "means": means,
        "timesteps": int(timesteps),
        "scenario": asdict(typed.scenario)["name"],
    }


def _resume_args(argv: list[str]) -> tuple[str, list[str]] | None:
    """``(run_dir, other overrides)`` when the command line asks to resume a run."""
    for i, arg in enumerate(argv):
        if arg.startswith("resume=") and arg != "resume=null":
            return arg.split("=", 1)[1], argv[:i] + argv[i + 1 :]
    return None


def _invalid(message: str) -> None:
    """One line on stderr and exit status 2, as ``evaluate.py`` does for an invalid config."""
    print(f"train.py: invalid config: {message}", file=sys.stderr)
    sys.exit(2)


def _flat_keys(node: Any, prefix: str = "") -> list[str]:
    from omegaconf import DictConfig

    keys = []
    if isinstance(node, DictConfig):
        for key in node.keys():
            path = f"{prefix}{key}"
            keys.append(path)
            keys.extend(_flat_keys(node._get_node(key), f"{path}."))
    return keys


def check_overrides(argv: list[str]) -> None:
    """Compose and validate ``argv`` as ``train.py`` would, turning any error into ``SpecError``.

    A key that is not in the config gets a "did you mean" naming the closest existing key
    (e.g. ``n_envs=4`` -> ``backend.n_envs``) instead of Hydra's ``+key`` advice; a group option
    that does not exist lists the group's options; a value of the wrong type names its field.
    """
    import difflib

    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    from configs.schema import compose_train

    groups = ("scenario", "reward", "agent", "backend", "logger", "experiment")
    selections = [a for a in argv if a.partition("=")[0].lstrip("+~") in groups]
    try:
        base = compose_train(selections)
    except (HydraException, OmegaConfBaseException) as exc:
        raise SpecError(_one_line(exc)) from None
    known = _flat_keys(base)
    for arg in argv:
        key, sep, _ = arg.partition("=")
        if not sep or key.startswith(("+", "~", "hydra.")) or key in groups or key in known:
            continue
        parent = key.rpartition(".")[0]
        if parent == "agent.kwargs":  # a constructor argument the agent's YAML does not set
            from agents.factory import check_agent_kwargs

            check_agent_kwargs(str(base.agent.algo), {key.rpartition(".")[2]: None})
            raise SpecError(
                f"{key} is an argument of {base.agent.algo} that agent={base.agent.name} does "
                f"not set: add it with +{arg}"
            )
        if parent and parent.split(".")[-1] in ("kwargs", "policy_kwargs", "overrides"):
            continue  # free-form mappings: checked by their consumers
        leaf = key.rpartition(".")[2]
        close = [k for k in known if k.rpartition(".")[2] == leaf] or difflib.get_close_matches(
            key, known, n=1, cutoff=0.75
        )
        hint = f"did you mean {close[0]}={arg.partition('=')[2]}?" if close else ""
        raise SpecError(
            f"{key} is not an option of train.py: "
            + (hint or "see python train.py --help (a new key needs +key=value)")
        )
    try:
        cfg = compose_train(argv)
        if OmegaConf.is_missing(cfg, "run_dir") or "${hydra" in str(
            OmegaConf.to_container(cfg)["run_dir"]
        ):
            cfg.run_dir = "."
        validate(cfg)
    except SpecError:
        raise
    except (HydraException, OmegaConfBaseException, ValueError, TypeError) as exc:
        raise SpecError(_one_line(exc)) from None


def _one_line(exc: BaseException) -> str:
    """Hydra's or OmegaConf's message on one line, with the option it is about."""
    import re

    text = str(exc).strip()
    missing = re.search(r"Could not find '([^/']+)/([^']+)'", text)
    if missing:
        group, option = missing.groups()
        options = [
            o for o in re.findall(r"^\t(\S+)$", text, flags=re.M) if not o.startswith("base_")
        ]
        return f"{group}={option!r} is unknown: choose one of {', '.join(options)}"
    inner: BaseException | None = exc
    while inner is not None and not getattr(inner, "full_key", None):
        inner = inner.__cause__ or inner.__context__
    if inner is not None:
        exc, text = inner, str(inner).strip()
    full_key = getattr(exc, "full_key", None)
    first = text.splitlines()[0] if text else type(exc).__name__
    return f"{full_key}: {first}" if full_key else first


def main() -> float | None:
    """Hydra entry point: ``python train.py [overrides]`` or ``python train.py resume=<run_dir>``.

    Exits with status 2 and one line naming the field and its allowed range or choices when the
    config is invalid (before any environment is built), as ``evaluate.py`` does.

    Returns the trained policy's mean reward in the final evaluation (the objective of Hydra
    sweepers such as Optuna).
    """
    argv = sys.argv[1:]
    resume = _resume_args(argv)
    if resume is not None:
        # Resuming bypasses Hydra's composition: the run's saved config is the source of truth,
        # and Hydra would otherwise open a new output directory.
        logging.basicConfig(
            level=logging.INFO, format="[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"
        )
        try:
            cfg = resume_config(*resume)
            validate(cfg)
        except (SpecError, ValueError, FileNotFoundError) as exc:
            _invalid(str(exc))
        out = train(cfg)
        return out["means"][next(iter(out["means"]))]["reward_mean"]

    if not any(a.startswith("-") for a in argv):  # --help, -m, --cfg: Hydra's own
        try:
            check_overrides(argv)
        except SpecError as exc:
            _invalid(str(exc))

    import hydra

    @hydra.main(config_path="../configs", config_name="train", version_base="1.3")
    def _main(cfg: Any) -> float:
        # A sweep's job raises (Hydra's launcher reports it beside the other jobs' results).
        out = train(cfg)
        return float(out["means"][cfg.agent.name]["reward_mean"])

    return _main()
