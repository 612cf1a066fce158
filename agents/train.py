"""Train a Stable-Baselines3 agent on a CellGym scenario, then evaluate it beside baselines.

``train(cfg)`` does the work on a composed config (tests call it directly); ``main()`` is the Hydra
entry point behind ``python train.py``; ``python train.py resume=<run_dir> [overrides]`` continues
a killed run from its latest checkpoint, in the same directory, with the same seed.

The run directory receives:

- ``.hydra/`` (the composed config), ``command.txt`` (one line per invocation), ``seed.txt``;
- ``progress.csv`` (SB3's CSV logger, always on), ``tensorboard/`` or ``wandb/`` with the
  ``logger`` group;
- ``checkpoints/`` (model, ``VecNormalize`` statistics, replay buffer for off-policy agents,
  ``latest.json``), ``model.zip`` + ``vecnormalize.pkl`` (the end of training),
  ``best_model.zip`` + ``best_vecnormalize.pkl`` (best periodic evaluation);
- ``eval_history.csv``: one row per periodic evaluation and controller (policy and XRC, same
  scenario and seeds);
- ``evaluation/``: the final comparison of the trained policy with the baselines on
  ``eval_backend`` and ``eval_seeds`` (``summary.json``, ``summary.csv``, ``comparison.txt``).
"""

from __future__ import annotations

import json
import logging
import pickle
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from configs.schema import TrainConfig, register_configs, to_dict, validate_train

log = logging.getLogger(__name__)
register_configs()

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


def _load_policy(cfg: TrainConfig, run_dir: Path, model: Any, venv: Any) -> tuple[Any, str]:
    """The policy of the final evaluation: the best periodic one or the last one."""
    from agents.factory import NormalizedPolicy, algo_class

    best = run_dir / "best_model.zip"
    if cfg.final_model == "best" and best.is_file():
        best_model = algo_class(cfg.agent.algo).load(str(best), device="cpu")
        stats = run_dir / "best_vecnormalize.pkl"
        best_norm = pickle.loads(stats.read_bytes()) if stats.is_file() else None
        return NormalizedPolicy(best_model, best_norm, cfg.features), "best"
    return NormalizedPolicy(model, venv, cfg.features), "last"


def final_evaluation(
    cfg: TrainConfig, policy: Any, run_dir: Path
) -> tuple[list[dict[str, Any]], dict[str, dict[str, float]], Any]:
    """Evaluate the policy and ``eval_baselines`` on ``eval_backend`` and ``eval_seeds``.

    Writes ``evaluation/summary.json`` (per controller and seed), ``summary.csv`` (means over
    seeds) and ``comparison.txt``; prints the table.

    Returns:
        The per-run metrics, the per-controller means and the means as a DataFrame.
    """
    import pandas as pd

    from agents.callbacks import evaluate_controller, summarize
    from cellgym.report import comparison_table

    eval_dir = run_dir / "evaluation"
    eval_dir.mkdir(exist_ok=True)
    flow = cfg.scenario.agent_flows[0]
    results: list[dict[str, Any]] = []
    means: dict[str, dict[str, float]] = {}
    for controller in [cfg.agent.name, *cfg.eval_baselines]:
        t0 = time.monotonic()
        runs = evaluate_controller(
            cfg.scenario,
            controller,
            cfg.eval_seeds,
            cfg.reward,
            cfg.eval_backend,
            cfg.timeout_s,
            cfg.max_change,
            cfg.action_mode,
            policy=policy if controller == cfg.agent.name else None,
        )
        log.info(
            "evaluated %s on %s in %.1f s", controller, cfg.eval_backend, time.monotonic() - t0
        )
        results.extend(runs)
        means[controller] = summarize(runs, flow)
    (eval_dir / "summary.json").write_text(json.dumps(results, indent=2) + "\n")
    frame = pd.DataFrame([{"controller": c, **row} for c, row in means.items()])
    frame.insert(1, "backend", cfg.eval_backend)
    frame.to_csv(eval_dir / "summary.csv", index=False)
    table = comparison_table(results)
    (eval_dir / "comparison.txt").write_text(table + "\n")
    return results, means, frame


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

    from agents.callbacks import (
        PeriodicEvalCallback,
        ProgressBarCallback,
        ResumableCheckpointCallback,
        latest_checkpoint,
        truncate_eval_history,
    )
    from agents.factory import env_kwargs, load_model, make_model, make_vec_env
    from agents.loggers import RunLoggers

    # With simulators in subprocesses (or the numba batch), more torch threads only compete.
    torch.set_num_threads(1)
    if cfg.resume is not None and Path(cfg.resume).resolve() != Path(cfg.run_dir).resolve():
        cfg = resume_config(cfg.resume)
    typed = validate_train(cfg)
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
    log.info("seed %d, run directory %s", seed, run_dir)
    set_random_seed(seed)

    ckpt = latest_checkpoint(run_dir / "checkpoints") if resuming else None
    if resuming and ckpt is None:
        log.warning("resume=%s: no checkpoint yet, starting from the beginning", run_dir)
    done = int(ckpt["timesteps"]) if ckpt else 0
    if ckpt:
        truncate_eval_history(run_dir / "eval_history.csv", done)
    # A resumed run's environments continue from new episode seeds, not the first ones again.
    venv = make_vec_env(typed, seed + done, ckpt.get("vecnormalize") if ckpt else None)
    loggers = RunLoggers(typed.logger, run_dir, to_dict(cfg), resume_from=done if ckpt else None)
    try:
        if ckpt:
            model = load_model(typed, ckpt["model"], venv, ckpt.get("replay_buffer"))
            log.info("resuming %s at %d of %d steps", run_dir, done, typed.total_timesteps)
        else:
            model = make_model(typed, venv, seed)
        model.set_logger(loggers.sb3)
        ekw = {**env_kwargs(typed), "timeout_s": typed.timeout_s}
        evaluator = PeriodicEvalCallback(
            typed.scenario,
            typed.reward,
            typed.agent.name,
            typed.eval.seeds,
            typed.eval.baselines,
            typed.eval.backend or typed.backend.name,
            typed.eval.freq,
            run_dir,
            ekw,
            deterministic=typed.eval.deterministic,
            features=typed.features,
        )
        if ckpt and "eval_state" in ckpt:
            evaluator.load_state(ckpt["eval_state"])
        callbacks: list[Any] = [
            evaluator,
            ResumableCheckpointCallback(
                run_dir / "checkpoints", typed.checkpoint_freq, typed.agent.name, evaluator
            ),
        ]
        show_bar = typed.progress_bar if typed.progress_bar is not None else _is_tty()
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
        log.info(
            "trained %d steps in %.1f s (%.0f steps/s)",
            model.num_timesteps - done,
            train_s,
            (model.num_timesteps - done) / max(train_s, 1e-9),
        )
        model.save(run_dir / "model.zip")
        venv.save(str(run_dir / "vecnormalize.pkl"))
        venv.training = False

        policy, which = _load_policy(typed, run_dir, model, venv)
        log.info("final evaluation of the %s model on %s", which, typed.eval_backend)
        results, means, frame = final_evaluation(typed, policy, run_dir)
        plots: list[Path] = []
        loggers.log_final(means, frame, plots)
    finally:
        venv.close()
        loggers.close()

    table = (run_dir / "evaluation" / "comparison.txt").read_text()
    print(table)
    print(f"evaluation ({which} model, {typed.eval_backend}, seeds {list(typed.eval_seeds)}):")
    for controller, row in means.items():
        print(
            f"  {controller:>16}: reward {row['reward_mean']:.4f}  "
            f"utilization {row['utilization']:.3f}  HoL p90 {row['hol_delay_ms_p90']:.1f} ms"
        )
    for path in plots:
        print(f"plot: {path.resolve()}")
    print(f"run directory: {run_dir.resolve()}")
    return {
        "seed": seed,
        "run_dir": str(run_dir),
        "results": results,
        "means": means,
        "timesteps": int(model.num_timesteps),
        "scenario": asdict(typed.scenario)["name"],
    }


def _resume_args(argv: list[str]) -> tuple[str, list[str]] | None:
    """``(run_dir, other overrides)`` when the command line asks to resume a run."""
    for i, arg in enumerate(argv):
        if arg.startswith("resume=") and arg != "resume=null":
            return arg.split("=", 1)[1], argv[:i] + argv[i + 1 :]
    return None


def main() -> float | None:
    """Hydra entry point: ``python train.py [overrides]`` or ``python train.py resume=<run_dir>``.

    Returns the trained policy's mean reward in the final evaluation (the objective of Hydra
    sweepers such as Optuna).
    """
    resume = _resume_args(sys.argv[1:])
    if resume is not None:
        # Resuming bypasses Hydra's composition: the run's saved config is the source of truth,
        # and Hydra would otherwise open a new output directory.
        logging.basicConfig(
            level=logging.INFO, format="[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"
        )
        out = train(resume_config(*resume))
        return out["means"][next(iter(out["means"]))]["reward_mean"]

    import hydra

    @hydra.main(config_path="../configs", config_name="train", version_base="1.3")
    def _main(cfg: Any) -> float:
        out = train(cfg)
        return float(out["means"][cfg.agent.name]["reward_mean"])

    return _main()
