"""Sim-to-real: one policy's reward on the fast model's uplink variants beside ns-3.

    .venv/bin/python -m evaluation.experiments.sim_to_real runs/main/ppo/<time> [<run> ...]

For each trained run (``train.py``'s run directory, its ``best_model.zip``) and XRC's policy,
on each single-flow scenario of the main job's final evaluation (``experiment=default``'s
``eval_scenarios``) and its seeds (``eval_seeds``), the mean reward per step on the fast backend
with the calibrated uplink (``uplink=periodic``) and with ns-3's buffer-status-report grants
(``uplink=bsr``), beside the run's ns-3 final evaluation (``<run>/evaluation/results.parquet``,
or ``--ns3 DIR``; same seeds). The fast runs step one batch of cells per scenario and uplink (cell
``i`` is the single environment of seed ``i``, ``envs.fastsim.vector_env``), so the whole table
takes seconds. ``docs/sim-to-real.md`` holds the measured tables.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tabulate import tabulate

from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec

UPLINKS: tuple[str, ...] = ("periodic", "bsr")


def fast_rewards(
    spec: ScenarioSpec,
    policies: list[Any],
    seeds: list[int],
    reward: RewardSpec,
    knobs: dict[str, Any],
    env_kwargs: dict[str, Any],
) -> np.ndarray:
    """Mean reward per step of each seed's cell, ``policies[i]`` driving cell ``i``."""
    from envs.fastsim.params import FastSimParams
    from envs.fastsim.vector_env import FastVecEnv

    env = FastVecEnv(
        spec,
        num_envs=len(seeds),
        reward=reward,
        params=FastSimParams.from_spec(spec, **knobs),
        **env_kwargs,
    )
    obs, _ = env.reset(seed=list(seeds))
    total = np.zeros(len(seeds))
    steps = 0
    done = np.zeros(len(seeds), dtype=bool)
    while not done.all():
        actions = np.stack(
            [
                np.asarray(p.predict(o, deterministic=True)[0]).reshape(1)
                for p, o in zip(policies, obs, strict=True)
            ]
        )
        obs, r, terminated, truncated, _ = env.step(actions)
        total += np.where(done, 0.0, r)
        steps += 1
        done |= terminated | truncated
    env.close()
    return total / steps


def _run_config(run: Path) -> Any:
    from configs.schema import compose_train, validate_train

    return validate_train(compose_train(["experiment=default", f"run_dir={run}"]))


def measure(run: Path, label: str, ns3_dir: Path | None = None) -> pd.DataFrame:
    """One row per controller x scenario: the fast rewards per uplink and ns-3's.

    Args:
        run: The run directory (``best_model.zip`` and its config).
        label: The trained policy's controller name.
        ns3_dir: The evaluation directory holding the ns-3 ``results.parquet`` (default
            ``<run>/evaluation``); only its ns-3 rows count.
    """
    from evaluation.resolve import load_checkpoint_policy, resolve_checkpoint
    from evaluation.rollouts import make_baseline

    typed = _run_config(run)
    seeds = list(typed.eval_seeds)
    ns3 = (ns3_dir or run / "evaluation") / "results.parquet"
    ns3_rows = pd.read_parquet(ns3) if ns3.is_file() else pd.DataFrame()
    if len(ns3_rows):
        ns3_rows = ns3_rows[(ns3_rows["backend"] == "ns3") & ns3_rows["seed"].isin(seeds)]
    ckpt = resolve_checkpoint(run / "best_model.zip", label=label)
    env_kwargs = {"max_change": typed.max_change, "action_mode": typed.action_mode}
    rows = []
    for spec in typed.final_scenarios():
        if len(spec.agent_flows) != 1:
            continue
        for name in (label, "xrc_policy"):
            row: dict[str, Any] = {"run": run.name, "controller": name, "scenario": spec.name}
            for uplink in UPLINKS:
                if name == label:
                    policies = [load_checkpoint_policy(ckpt) for _ in seeds]
                else:
                    policies = [
                        make_baseline(name, spec, typed.reward, typed.max_change) for _ in seeds
                    ]
                r = fast_rewards(
                    spec, policies, seeds, typed.reward, {"uplink": uplink}, env_kwargs
                )
                row[f"fast_{uplink}"] = float(np.mean(r))
            if len(ns3_rows):
                sel = ns3_rows[
                    (ns3_rows["controller"] == name)
                    & (ns3_rows["scenario"] == spec.name)
                    & (ns3_rows["status"] == "ok")
                ]
                row["ns3"] = float(sel["mean_reward"].mean()) if len(sel) else float("nan")
            rows.append(row)
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> None:
    """Print the table for each run directory given."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path, help="train.py run directories")
    ap.add_argument("--label", default="ppo", help="the trained policy's name in the tables")
    ap.add_argument(
        "--ns3",
        type=Path,
        action="append",
        default=[],
        help="evaluation directory with each run's ns-3 results, in the order of the runs "
        "(default: <run>/evaluation)",
    )
    args = ap.parse_args(argv)
    dirs = [*args.ns3, *[None] * (len(args.runs) - len(args.ns3))]
    table = pd.concat(
        [measure(run, args.label, d) for run, d in zip(args.runs, dirs, strict=True)],
        ignore_index=True,
    )
    mean = table.groupby(["run", "controller"], sort=False).mean(numeric_only=True).reset_index()
    mean["scenario"] = "mean"
    table = pd.concat([table, mean], ignore_index=True)
    cols = ["run", "controller", "scenario", *[f"fast_{u}" for u in UPLINKS]]
    if "ns3" in table.columns:
        cols.append("ns3")
    print(tabulate(table[cols], headers="keys", tablefmt="github", floatfmt=".3f", showindex=False))


if __name__ == "__main__":
    main()
