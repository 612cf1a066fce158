"""Training callbacks: periodic evaluation beside the baselines, resumable checkpoints, progress.

- ``PeriodicEvalCallback`` runs the current policy and the baselines (XRC) on the same evaluation
  scenario and seeds through the evaluate function it is given (``workflows.train`` gives it
  ``evaluation.pool.evaluate_many``, the code path of the final evaluation, in this process; this
  package never imports ``evaluation``), logs both to the SB3 logger (CSV, TensorBoard, W&B),
  appends one row per (timesteps, controller) to ``eval_history.csv`` (means over seeds from
  ``cellgym.metrics.aggregate``) and keeps the best model.
- ``ResumableCheckpointCallback`` saves, between rollouts (after the update, never inside a
  rollout), model, ``VecNormalize`` statistics, the replay buffer (off-policy), the random
  generators and the evaluation state, then points ``checkpoints/latest.json`` at them; the
  pointer is written last and atomically, so a run killed mid-save resumes from the previous one.
- ``ProgressBarCallback`` shows steps/s, the mean reward per step of recent training episodes and
  the last evaluation of the policy beside XRC.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import pickle
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback

from agents.factory import NormalizedPolicy
from cellgym.metrics import aggregate
from cellgym.vocab import OFF_POLICY_ALGORITHMS

log = logging.getLogger(__name__)

#: Columns of ``eval_history.csv`` (one row per evaluation and controller, means over seeds of
#: the evaluation results columns of the same names, ``evaluation.records.RESULT_COLUMNS``;
#: ``reward_mean`` is the mean of ``mean_reward``, ``reward_std`` its standard deviation over
#: seeds).
EVAL_COLUMNS: tuple[str, ...] = (
    "timesteps",
    "controller",
    "n_seeds",
    "reward_mean",
    "reward_std",
    "utilization",
    "jain_fairness",
    "hol_budget_compliance",
    "hol_delay_ms_p50",
    "hol_delay_ms_p90",
    "hol_delay_ms_p99",
    "queueing_delay_ms_p50",
    "queueing_delay_ms_p90",
    "throughput_mbps",
    "wall_time_s",
    "hol_delay_ms_p95",
    "queueing_delay_ms_p95",
    "queueing_delay_ms_p99",
)
_MEANS: tuple[str, ...] = tuple(
    c
    for c in EVAL_COLUMNS
    if c not in ("timesteps", "controller", "n_seeds", "wall_time_s")
    and not c.startswith("reward_")
)


#: ``evaluate(controller, policy) -> results``: run ``controller`` (a baseline name, or the label
#: of ``policy``) on the evaluation scenario and seeds; one results row per seed
#: (``evaluation.records.RESULT_COLUMNS``).
EvaluateFn = Callable[[str, Any], Any]


def history_row(results: Any) -> dict[str, Any]:
    """One controller's ``eval_history.csv`` row: means over seeds of its results rows.

    Args:
        results: The evaluation results of one controller (one row per seed).

    Raises:
        RuntimeError: When a run failed (naming the controller, the seed and the error).
    """
    failed = results[results["status"] != "ok"]
    if len(failed):
        r = failed.iloc[0]
        raise RuntimeError(
            f"evaluation of {r['controller']} on seed {r['seed']} failed: {r['error']}"
        )
    means = aggregate(results, ["mean_reward", *_MEANS], by=["controller"]).iloc[0]
    rewards = results["mean_reward"].astype(float).to_numpy()
    row: dict[str, Any] = {
        "n_seeds": len(results),
        "reward_mean": float(means["mean_reward_mean"]),
        "reward_std": float(np.nanstd(rewards)) if np.isfinite(rewards).any() else float("nan"),
    }
    for col in _MEANS:
        row[col] = float(means[f"{col}_mean"])
    return row


def read_eval_history(path: Path) -> list[dict[str, str]]:
    """Rows of ``eval_history.csv`` (empty when the file does not exist)."""
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def best_evaluation(path: Path, label: str) -> tuple[int, dict[str, float]] | None:
    """The steps and the mean rewards by controller of the evaluation where ``label`` was best.

    Args:
        path: ``eval_history.csv``.
        label: The policy's controller name.
    """
    rows = read_eval_history(path)
    mine = [r for r in rows if r["controller"] == label and np.isfinite(float(r["reward_mean"]))]
    if not mine:
        return None
    best = max(mine, key=lambda r: float(r["reward_mean"]))
    steps = int(float(best["timesteps"]))
    return steps, {
        r["controller"]: float(r["reward_mean"])
        for r in rows
        if int(float(r["timesteps"])) == steps
    }


def truncate_eval_history(path: Path, timesteps: int) -> None:
    """Drop the rows after ``timesteps`` (evaluations a killed run made after its checkpoint)."""
    rows = [r for r in read_eval_history(path) if int(float(r["timesteps"])) <= timesteps]
    if not path.is_file():
        return
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(EVAL_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)


class PeriodicEvalCallback(BaseCallback):
    """Every ``freq`` steps, evaluate the policy and the baselines on the same scenario and seeds.

    Args:
        evaluate: ``evaluate(controller, policy)`` returns the results rows (one per seed) of
            ``controller`` on the evaluation scenario and seeds; ``policy`` is the current
            policy for the policy's label, ``None`` for a baseline.
        label: The policy's name in reports (``cfg.agent.name``).
        baselines: Baseline controllers (``xrc_policy``, ...); deterministic given the seed, so
            each is run once and its row repeated at every evaluation.
        freq: Evaluation period in environment steps (over all environments).
        run_dir: Receives ``eval_history.csv``, ``best_model.zip`` and
            ``best_vecnormalize.pkl``.
        deterministic: Evaluate the policy's mean action.
        features: The policy's feature set (``agents.features``).
    """

    def __init__(
        self,
        evaluate: EvaluateFn,
        label: str,
        baselines: Sequence[str],
        freq: int,
        run_dir: Path,
        deterministic: bool = True,
        features: str = "raw",
    ) -> None:
        super().__init__()
        self.evaluate_fn = evaluate
        self.features = features
        self.label = label
        self.baselines = list(baselines)
        self.freq = int(freq)
        self.run_dir = Path(run_dir)
        self.deterministic = deterministic
        self.history_path = self.run_dir / "eval_history.csv"
        self.best_reward = -np.inf
        self.last_eval_timesteps = -1
        self.last: dict[str, dict[str, float]] = {}
        self._baseline_rows: dict[str, dict[str, float]] = {}
        self._t0 = time.monotonic()

    # -- state for resume ----------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps: the best reward and the last evaluation."""
        return {
            "best_reward": None if not np.isfinite(self.best_reward) else self.best_reward,
            "last_eval_timesteps": self.last_eval_timesteps,
        }

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore ``state()`` from a checkpoint."""
        best = state.get("best_reward")
        self.best_reward = -np.inf if best is None else float(best)
        self.last_eval_timesteps = int(state.get("last_eval_timesteps", -1))

    # -- SB3 hooks -----------------------------------------------------------------------------
    def _on_step(self) -> bool:
        if self.freq > 0 and self.num_timesteps // self.freq > max(self.last_eval_timesteps, 0) // (
            self.freq
        ):
            self.evaluate()
        return True

    def _on_training_end(self) -> None:
        if self.freq > 0 and self.last_eval_timesteps != self.num_timesteps:
            self.evaluate()

    # -- evaluation ----------------------------------------------------------------------------
    def _run(self, controller: str, policy: Any = None) -> dict[str, float]:
        return history_row(self.evaluate_fn(controller, policy))

    def current_policy(self) -> Any:
        """The policy to evaluate now: the model behind its observation normalisation."""
        venv = self.model.get_vec_normalize_env()
        return NormalizedPolicy(self.model, venv, self.features, self.deterministic)

    def save_best(self) -> None:
        """Keep the current model as ``best_model.zip`` (and ``best_vecnormalize.pkl``)."""
        self.model.save(self.run_dir / "best_model.zip")
        venv = self.model.get_vec_normalize_env()
        if venv is not None:
            venv.save(str(self.run_dir / "best_vecnormalize.pkl"))

    def evaluate(self) -> dict[str, dict[str, float]]:
        """Evaluate now; log, append to ``eval_history.csv``, keep the best model."""
        rows = {self.label: self._run(self.label, self.current_policy())}
        for name in self.baselines:
            if name not in self._baseline_rows:
                self._baseline_rows[name] = self._run(name)
            rows[name] = self._baseline_rows[name]
        wall = time.monotonic() - self._t0
        for name, row in rows.items():
            row["wall_time_s"] = wall
            for key in ("reward_mean", "utilization", "jain_fairness", "hol_delay_ms_p90"):
                self.logger.record(f"eval/{name}/{key}", row[key])
        if self.baselines:
            ref = rows[self.baselines[0]]["reward_mean"]
            self.logger.record(
                f"eval/{self.label}_minus_{self.baselines[0]}",
                rows[self.label]["reward_mean"] - ref,
            )
        # The row's step, so that a resumed run can drop the rows logged after its checkpoint.
        self.logger.record("time/total_timesteps", self.num_timesteps, exclude="tensorboard")
        self.logger.dump(self.num_timesteps)
        self._append(rows)
        self.last = rows
        self.last_eval_timesteps = self.num_timesteps
        score = rows[self.label]["reward_mean"]
        if np.isfinite(score) and score > self.best_reward:
            self.best_reward = score
            self.save_best()
            log.info("new best model at %d steps: reward %.4f", self.num_timesteps, score)
        return rows

    def _append(self, rows: dict[str, dict[str, float]]) -> None:
        new = not self.history_path.is_file()
        with self.history_path.open("a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(EVAL_COLUMNS))
            if new:
                writer.writeheader()
            for name, row in rows.items():
                writer.writerow({"timesteps": self.num_timesteps, "controller": name, **row})


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


class ResumableCheckpointCallback(BaseCallback):
    """Checkpoint at update boundaries, with what a resumed run needs to equal an unbroken one.

    A checkpoint is written when the algorithm has trained on every step it counts: at the start
    of a rollout (SB3 calls ``on_rollout_start`` after the previous rollout's ``train()``) and at
    the end of training, never inside a rollout. For on-policy algorithms (PPO, A2C,
    RecurrentPPO) ``freq`` is rounded up to whole rollouts (``n_steps x n_envs``); for off-policy
    ones to whole ``train_freq`` periods (in steps). A checkpoint is also written at the end of
    training (when ``freq > 0``), so a run given a larger ``total_timesteps`` continues from there.

    Files in ``save_dir``: ``<prefix>_<steps>_steps.zip``, ``<prefix>_vecnormalize_<steps>_steps
    .pkl``, ``<prefix>_replay_buffer_<steps>_steps.pkl`` (off-policy; only the latest is kept
    unless ``keep_replay_buffers``), ``<prefix>_state_<steps>_steps.pkl`` (the random generators
    of torch, NumPy, ``random`` and the action space, and ``VecNormalize``'s running returns) and
    ``latest.json`` (steps, SB3 iterations, the file names, the evaluation state).

    Args:
        save_dir: The checkpoint folder.
        freq: Period in environment steps (over all environments); 0: never.
        prefix: File name prefix (the agent's name).
        eval_callback: Its ``state()`` goes into the checkpoint.
        keep_replay_buffers: Keep every checkpoint's replay buffer (each holds the whole buffer,
            megabytes); default: only the latest one.
        iterations: SB3 iterations (rollouts) done before this ``learn`` call (a resumed run).
    """

    def __init__(
        self,
        save_dir: Path,
        freq: int,
        prefix: str,
        eval_callback: PeriodicEvalCallback | None = None,
        keep_replay_buffers: bool = False,
        iterations: int = 0,
    ) -> None:
        super().__init__()
        self.save_dir = Path(save_dir)
        self.freq = int(freq)
        self.prefix = prefix
        self.eval_callback = eval_callback
        self.keep_replay_buffers = keep_replay_buffers
        self.iterations = int(iterations)
        self.period = self.freq
        self._last_bucket = 0
        self._last_saved = -1

    def _on_training_start(self) -> None:
        self.save_dir.mkdir(parents=True, exist_ok=True)
        unit = rollout_steps(self.model)
        if self.freq > 0 and unit > 0:
            self.period = -(-self.freq // unit) * unit
            if self.period != self.freq:
                log.info(
                    "checkpoint_freq=%d rounded up to %d steps (whole rollouts of %d steps)",
                    self.freq,
                    self.period,
                    unit,
                )
        if self.period > 0:
            self._last_bucket = self.num_timesteps // self.period
        self._last_saved = self.num_timesteps

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        self.iterations += 1

    def _on_rollout_start(self) -> None:
        # The previous rollout has been trained on: a consistent point to save.
        if self.period > 0 and self.num_timesteps // self.period > self._last_bucket:
            self._last_bucket = self.num_timesteps // self.period
            self.save()

    def _on_training_end(self) -> None:
        if self.period > 0 and self.num_timesteps > self._last_saved:
            self._last_bucket = self.num_timesteps // self.period
            self.save()

    def save(self) -> dict[str, Any]:
        """Write one checkpoint and point ``latest.json`` at it."""
        steps = self.num_timesteps
        model = self.save_dir / f"{self.prefix}_{steps}_steps.zip"
        self.model.save(model)
        entry: dict[str, Any] = {
            "timesteps": steps,
            "iterations": self.iterations,
            "model": model.name,
        }
        venv = self.model.get_vec_normalize_env()
        if venv is not None:
            path = self.save_dir / f"{self.prefix}_vecnormalize_{steps}_steps.pkl"
            venv.save(str(path))
            entry["vecnormalize"] = path.name
        buffer = None
        if type(self.model).__name__ in OFF_POLICY_ALGORITHMS:
            buffer = self.save_dir / f"{self.prefix}_replay_buffer_{steps}_steps.pkl"
            self.model.save_replay_buffer(str(buffer))
            entry["replay_buffer"] = buffer.name
        state = self.save_dir / f"{self.prefix}_state_{steps}_steps.pkl"
        state.write_bytes(pickle.dumps(training_state(self.model)))
        entry["state"] = state.name
        if self.eval_callback is not None:
            entry["eval_state"] = self.eval_callback.state()
        _atomic_write(self.save_dir / "latest.json", json.dumps(entry, indent=2) + "\n")
        if buffer is not None and not self.keep_replay_buffers:
            for old in self.save_dir.glob(f"{self.prefix}_replay_buffer_*_steps.pkl"):
                if old != buffer:
                    old.unlink(missing_ok=True)
        self._last_saved = steps
        log.info("checkpoint at %d steps (%d iterations)", steps, self.iterations)
        return entry


def rollout_steps(model: Any) -> int:
    """Environment steps between two updates of ``model`` (over all environments); 0: unknown.

    On-policy: ``n_steps x n_envs``; off-policy: ``train_freq`` steps x ``n_envs`` (0 when
    ``train_freq`` counts episodes).
    """
    n_envs = int(getattr(model, "n_envs", 1) or 1)
    if type(model).__name__ in OFF_POLICY_ALGORITHMS:
        train_freq = getattr(model, "train_freq", None)
        unit = getattr(getattr(train_freq, "unit", None), "value", "step")
        return int(train_freq.frequency) * n_envs if train_freq and unit == "step" else 0
    n_steps = getattr(model, "n_steps", None)
    return int(n_steps) * n_envs if n_steps else 0


def training_state(model: Any) -> dict[str, Any]:
    """The random generators and running sums a resumed run restores (``restore_training``)."""
    import random

    import torch

    space_rng = getattr(model.action_space, "_np_random", None)
    venv = model.get_vec_normalize_env()
    return {
        "torch": torch.get_rng_state(),
        "numpy": np.random.get_state(),
        "random": random.getstate(),
        "action_space": None if space_rng is None else space_rng.bit_generator.state,
        "vecnormalize_returns": None if venv is None else np.array(venv.returns, copy=True),
    }


def restore_training(model: Any, entry: dict[str, Any]) -> None:
    """Continue ``model`` (loaded from the checkpoint ``entry``) where its run stopped.

    Restores the random generators and ``VecNormalize``'s running returns saved with the
    checkpoint (``load`` re-seeds them from the run's seed), starts the environments' episodes
    without counting their first observation twice in the normalisation statistics (the saved
    ones already hold it), and numbers SB3's iterations (``time/iterations``) on from the
    checkpoint's. With a checkpoint at an episode boundary of environments that restart
    identically, the resumed run trains exactly as the unbroken run would have.
    """
    import random

    import torch

    venv = model.get_vec_normalize_env()
    if venv is not None:
        raw = venv.venv.reset()
        venv.old_obs = raw
        model._last_obs = venv.normalize_obs(raw)
        model._last_original_obs = raw
    else:
        model._last_obs = model.env.reset()
    model._last_episode_starts = np.ones((model.env.num_envs,), dtype=bool)
    path = entry.get("state")
    if path is not None and Path(path).is_file():
        state = pickle.loads(Path(path).read_bytes())
        torch.set_rng_state(state["torch"])
        np.random.set_state(state["numpy"])
        random.setstate(state["random"])
        space_rng = getattr(model.action_space, "_np_random", None)
        if state.get("action_space") is not None:
            if space_rng is None:
                model.action_space.seed(0)
                space_rng = model.action_space.np_random
            space_rng.bit_generator.state = state["action_space"]
        returns = state.get("vecnormalize_returns")
        if venv is not None and returns is not None and len(returns) == venv.num_envs:
            venv.returns = np.array(returns, copy=True)
    offset = int(entry.get("iterations", 0))
    if offset and type(model).__name__ not in OFF_POLICY_ALGORITHMS:
        dump = model.dump_logs

        def dump_logs(iteration: int = 0) -> None:
            dump(iteration + offset if iteration > 0 else iteration)

        model.dump_logs = dump_logs


def latest_checkpoint(save_dir: Path) -> dict[str, Any] | None:
    """The entry of ``latest.json`` with absolute paths, or ``None`` when there is none."""
    pointer = Path(save_dir) / "latest.json"
    if not pointer.is_file():
        return None
    entry = json.loads(pointer.read_text())
    for key in ("model", "vecnormalize", "replay_buffer", "state"):
        if key in entry:
            entry[key] = Path(save_dir) / entry[key]
    return entry


class ProgressBarCallback(BaseCallback):
    """A tqdm bar over the training steps: steps/s, reward per step, last evaluation vs XRC.

    Args:
        total_timesteps: The run's target (the bar's total).
        eval_callback: Source of the last evaluation's figures.
        baseline: The baseline shown beside the policy.
    """

    def __init__(
        self,
        total_timesteps: int,
        eval_callback: PeriodicEvalCallback | None = None,
        baseline: str = "xrc_policy",
    ) -> None:
        super().__init__()
        self.total_timesteps = total_timesteps
        self.eval_callback = eval_callback
        self.baseline = baseline
        self.bar: Any = None
        self._last_post = 0.0

    def _on_training_start(self) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(
            total=self.total_timesteps,
            initial=self.num_timesteps,
            unit="step",
            unit_scale=True,
            dynamic_ncols=True,
            desc="train",
        )

    def _on_step(self) -> bool:
        assert self.bar is not None
        self.bar.update(self.num_timesteps - self.bar.n)
        now = time.monotonic()
        if now - self._last_post > 0.5:
            self._last_post = now
            self.bar.set_postfix_str(self.postfix(), refresh=False)
        return True

    def postfix(self) -> str:
        """``rew/step`` of recent episodes, then ``eval <policy> vs <baseline>``."""
        parts = []
        infos = list(self.model.ep_info_buffer or [])
        if infos:
            per_step = np.mean([i["r"] / max(i["l"], 1) for i in infos])
            parts.append(f"rew/step {per_step:.3f}")
        ev = self.eval_callback
        if ev is not None and ev.last:
            mine = ev.last[ev.label]["reward_mean"]
            text = f"eval {mine:.3f}"
            if self.baseline in ev.last:
                text += f" vs {self.baseline} {ev.last[self.baseline]['reward_mean']:.3f}"
            parts.append(text)
        return ", ".join(parts)

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.update(self.num_timesteps - self.bar.n)
            self.bar.set_postfix_str(self.postfix())
            self.bar.close()
