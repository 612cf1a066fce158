"""Several learned flows in one cell: does parameter-shared self-play learn to share fairly?

    .venv/bin/python -m evaluation.experiments.multi_agent --out docs/multi-agent

For each N (``--n``, default 2, 4, 8) the command trains one PPO policy shared by the N agent
flows of ``configs/scenario/multi_agent<N>.yaml`` (N UEs at 100 m, one bulk flow each) on the
fast backend (``train.py experiment=default``'s hyperparameters, ``--timesteps`` environment
steps counted over all flows), then runs, on each backend of ``--backends`` and each seed, the
N flows under: the learned policy (every flow), XRC's native sender, XRC's policy and CUBIC.
Per run it measures, from the first second on (``cellgym.metrics``, ``cellgym.zeus``):

- utilization of the cell (delivered over the UEs' capacity);
- fairness among the N flows: Jain's index over rolling windows of k x RTT (Zeus's short term,
  k = 1, 2, 5, 10, 20, and long term, the k that fit in the run), and over 1 s windows;
- the share of HoL-delay samples within the 10 ms budget, and the mean reward per step (each
  flow's environment reward, ``cellgym.reward``, averaged over flows: the same for every
  controller);
- the spread of the flows' throughputs (min and max over flows, Mbit/s).

It writes ``numbers.json`` (every run's numbers and the provenance: ``cellgym.provenance``),
``report.md`` (tables with means and 95 % confidence intervals over seeds, and the answer the
numbers give) and ``fairness.png`` under ``--out``; trained models go to ``--work``.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cellgym.fields import FLOW
from cellgym.metrics import compute_metrics, mean_ci, measure
from cellgym.paths import REPO_ROOT
from cellgym.provenance import markdown_line, record
from cellgym.reward import RewardSpec, fairness_groups, reward_terms
from cellgym.scenario import ScenarioSpec, load_scenario
from cellgym.vocab import BACKENDS
from cellgym.zeus import zeus_fairness
from evaluation.experiments import inputs
from evaluation.workers import map_jobs

log = logging.getLogger(__name__)

COMMAND = "python -m evaluation.experiments.multi_agent"
#: The files the report's numbers depend on (``evaluation.experiments.inputs``).
INPUTS: tuple[str, ...] = inputs.MULTI_AGENT
LEARNED = "ppo_shared"
CONTROLLERS: tuple[str, ...] = (LEARNED, "xrc", "xrc_policy", "cubic")
FROM_S = 1.0


def scenario(n: int, sim_time_s: float) -> ScenarioSpec:
    """``configs/scenario/multi_agent<n>.yaml``, ``sim_time_s`` long."""
    return load_scenario(f"multi_agent{n}").replace(sim_time_s=sim_time_s)


def train_shared(n: int, timesteps: int, seed: int, run_dir: Path) -> Path:
    """Train one PPO policy for the N agent flows (fast backend); return the run directory.

    ``train.py experiment=default``'s configuration and training stack (``agents.factory``: the
    batched multi-agent vector, ``VecNormalize``, the SB3 model), without its periodic and final
    evaluations: the run directory gets ``model.zip``, ``vecnormalize.pkl`` and
    ``.hydra/config.yaml``, what ``evaluation.resolve`` loads a checkpoint from.
    """
    import torch
    from omegaconf import OmegaConf
    from stable_baselines3.common.utils import set_random_seed

    from agents.factory import make_model, make_vec_env
    from configs.schema import compose_train, validate_train

    overrides = [
        "experiment=default",
        # The PPO recipe of the one-scenario job this report was made with: a single batch of
        # 16 cells of the scenario and minibatches of 256 (the main job trains on a mixture).
        "mixture.scenarios=[]",
        "mixture.variants=[]",
        "eval_scenarios=[]",
        "backend.n_envs=16",
        "agent.kwargs.batch_size=256",
        f"scenario=multi_agent{n}",
        f"total_timesteps={timesteps}",
        f"seed={seed}",
        f"run_dir={run_dir}",
        "agent.name=" + LEARNED,
    ]
    cfg = compose_train(overrides)
    typed = validate_train(cfg)
    (run_dir / ".hydra").mkdir(parents=True, exist_ok=True)
    OmegaConf.save(cfg, run_dir / ".hydra" / "config.yaml", resolve=True)
    torch.set_num_threads(1)
    set_random_seed(seed)
    venv = make_vec_env(typed, seed)
    try:
        model = make_model(typed, venv, seed)
        model.learn(total_timesteps=typed.total_timesteps)
        model.save(run_dir / "model.zip")
        venv.save(str(run_dir / "vecnormalize.pkl"))
    finally:
        venv.close()
    return run_dir


def _jain_rolling(rec: Any, spec: ScenarioSpec) -> dict[str, float]:
    m = measure(rec, FROM_S)
    rx = m.flows[:, :, FLOW["rx_bytes"]]
    active = m.flows[:, :, FLOW["active"]] > 0
    rtt = m.flows[:, :, FLOW["rtt_min_ms"]]
    rtt_s = float(np.median(rtt[rtt > 0])) / 1000.0 if np.any(rtt > 0) else 0.04
    fair = zeus_fairness(rx, active, m.step_s, rtt_s)
    return {"jain_short": fair["short"], "jain_long": fair["long"], "rtt_s": rtt_s}


def run_one(job: dict[str, Any]) -> dict[str, Any]:
    """One run: N flows under one controller on one backend and seed; its measured numbers."""
    from evaluation.resolve import load_checkpoint_policy, resolve_checkpoint
    from evaluation.rollouts import run_controller

    spec = scenario(job["n"], job["sim_time_s"])
    reward = RewardSpec()
    policy = None
    if job["controller"] == LEARNED:
        policy = load_checkpoint_policy(resolve_checkpoint(job["model"], label=LEARNED))
    t0 = time.monotonic()
    rec = run_controller(
        spec, job["controller"], job["seed"], reward, backend=job["backend"], policy=policy
    )
    m = compute_metrics(rec, reward.delay_budget_ms, from_s=FROM_S)
    # Every controller's reward the same way: each flow's environment reward per step (the
    # function the agents were trained on), averaged over the flows and the measured steps.
    flow_ue = np.array([f.ue for f in rec.spec.flows])
    ccas = [f.cca for f in rec.spec.flows]
    step_s = spec.step_ms / 1000.0
    per_step = [
        np.mean(
            [
                reward_terms(rec.flows[i], rec.ues[i], flow_ue, f, step_s, reward,
                             fairness_groups(ccas, f))["reward"]
                for f in range(len(ccas))
            ]
        )
        for i in range(1, len(rec.times))
        if rec.times[i] > FROM_S
    ]  # fmt: skip
    tput = [f["throughput_mbps"] for f in m["flows"]]
    return {
        **{k: job[k] for k in ("n", "controller", "backend", "seed")},
        "utilization": m["utilization"],
        "jain_1s": m["jain_fairness"],
        **_jain_rolling(rec, spec),
        "hol_within_budget": m["hol_budget_compliance"],
        "hol_p90_ms": m["hol_delay_ms"]["p90"],
        "mean_reward": float(np.mean(per_step)),
        "flow_mbps_min": float(min(tput)),
        "flow_mbps_max": float(max(tput)),
        "cell_mbps": float(sum(tput)),
        "wall_s": time.monotonic() - t0,
    }


def _init_worker() -> None:
    import torch

    torch.set_num_threads(1)


def summarise(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean and 95 % CI half-width over seeds per (N, backend, controller)."""
    keys = sorted({(r["n"], r["backend"], r["controller"]) for r in runs})
    order = {c: i for i, c in enumerate(CONTROLLERS)}
    keys.sort(key=lambda k: (k[0], k[1], order.get(k[2], 99)))
    metrics = (
        "utilization",
        "jain_short",
        "jain_long",
        "jain_1s",
        "hol_within_budget",
        "mean_reward",
        "flow_mbps_min",
        "flow_mbps_max",
    )
    rows = []
    for n, backend, controller in keys:
        sel = [
            r for r in runs if (r["n"], r["backend"], r["controller"]) == (n, backend, controller)
        ]
        row: dict[str, Any] = {"n": n, "backend": backend, "controller": controller}
        for m in metrics:
            vals = [r[m] for r in sel if r[m] is not None]
            mean, half, count = mean_ci(vals)
            row[m] = mean
            row[m + "_ci"] = half
        row["seeds"] = len(sel)
        rows.append(row)
    return rows


def _fmt(v: float, half: float, digits: int = 3) -> str:
    if v is None or not math.isfinite(v):
        return "–"
    if half is None or not math.isfinite(half):
        return f"{v:.{digits}f}"
    return f"{v:.{digits}f} ± {half:.{digits}f}"


def findings(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Sentences that answer the experiment's question from the numbers."""
    out = []
    by = {(r["n"], r["backend"], r["controller"]): r for r in rows}
    for n, backend in sorted({(r["n"], r["backend"]) for r in rows}):
        learned = by.get((n, backend, LEARNED))
        if learned is None:
            continue
        others = [by[(n, backend, c)] for c in CONTROLLERS[1:] if (n, backend, c) in by]
        if not others:
            continue
        best = max(others, key=lambda r: r["jain_short"])
        verdict = "at or above" if learned["jain_short"] >= best["jain_short"] - 0.01 else "below"
        out.append(
            f"N = {n}, {backend}: the learned flows' short-term Jain index is "
            f"{learned['jain_short']:.3f} ({verdict} the fairest hand-designed controller, "
            f"{best['controller']}, {best['jain_short']:.3f}); utilization "
            f"{learned['utilization']:.3f} against XRC's "
            f"{by.get((n, backend, 'xrc'), {}).get('utilization', float('nan')):.3f}; HoL "
            f"within budget {learned['hol_within_budget']:.2f}; the flows get "
            f"{learned['flow_mbps_min']:.1f}-{learned['flow_mbps_max']:.1f} Mbit/s."
        )
    return out


def report(numbers: dict[str, Any]) -> str:
    """``report.md`` from ``numbers.json``."""
    rows = numbers["summary"]
    lines = [
        "# Several learned flows in one cell",
        "",
        f"Generated by `{numbers['provenance']['command']}`. For each N, one PPO policy is "
        f"trained for the N agent flows of `configs/scenario/multi_agent<N>.yaml` (N UEs at "
        f"100 m, one bulk flow each, 10 MHz) on the fast backend with parameter sharing "
        f"({numbers['timesteps']} environment steps over all flows, training seed "
        f"{numbers['train_seed']}, `experiment=default`'s hyperparameters), then the N flows run "
        f"under each controller for {numbers['sim_time_s']:g} s on seeds {numbers['seeds']}, "
        f"measured from t = {FROM_S:g} s. Jain short / long: Zeus's rolling windows of k x RTT "
        "(k = 1-20 / 50-3000, the k that fit in the run); Jain 1 s: mean over 1 s windows. "
        "Means ± 95 % confidence half-widths over seeds.",
        "",
        "| N | backend | controller | utilization | Jain short | Jain long | Jain 1 s | "
        "HoL within budget | reward/step | flow Mbit/s (min-max) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']} | {r['backend']} | {r['controller']} | "
            f"{_fmt(r['utilization'], r['utilization_ci'])} | "
            f"{_fmt(r['jain_short'], r['jain_short_ci'])} | "
            f"{_fmt(r['jain_long'], r['jain_long_ci'])} | "
            f"{_fmt(r['jain_1s'], r['jain_1s_ci'])} | "
            f"{_fmt(r['hol_within_budget'], r['hol_within_budget_ci'], 2)} | "
            f"{_fmt(r['mean_reward'], r['mean_reward_ci'])} | "
            f"{r['flow_mbps_min']:.1f}-{r['flow_mbps_max']:.1f} |"
        )
    lines += ["", "## What the numbers say", ""]
    lines += [f"- {s}" for s in findings(rows)]
    lines += [
        "",
        "![Jain short-term and utilization against N](fairness.png)",
        "",
        f"Training: {numbers['train_wall_s']:.0f} s; runs: {numbers['runs_wall_s']:.0f} s "
        f"({len(numbers['runs'])} runs, --jobs {numbers['jobs']}).",
        "",
        markdown_line(numbers["provenance"]),
        "",
    ]
    return "\n".join(lines)


def plot(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """Jain short-term and utilization against N, one line per controller and backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for (controller, backend), style in zip(
        sorted({(r["controller"], r["backend"]) for r in rows}),
        ["-o", "--o", "-s", "--s", "-^", "--^", "-v", "--v"],
        strict=False,
    ):
        sel = sorted(
            (r for r in rows if (r["controller"], r["backend"]) == (controller, backend)),
            key=lambda r: r["n"],
        )
        ns = [r["n"] for r in sel]
        for ax, key in zip(axes, ("jain_short", "utilization"), strict=True):
            ax.errorbar(
                ns,
                [r[key] for r in sel],
                yerr=[0 if not math.isfinite(r[key + "_ci"]) else r[key + "_ci"] for r in sel],
                fmt=style,
                label=f"{controller} ({backend})",
                capsize=3,
            )
    axes[0].set_ylabel("Jain's index, short term (k x RTT windows)")
    axes[1].set_ylabel("utilization")
    for ax in axes:
        ax.set_xlabel("flows N")
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Command-line entry point (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--n", type=int, nargs="+", default=[2, 4, 8], choices=[2, 4, 8])
    p.add_argument("--timesteps", type=int, default=200_000)
    p.add_argument("--train-seed", type=int, default=0)
    p.add_argument("--seeds", type=int, default=3, help="evaluation seeds 101, 102, ...")
    p.add_argument("--sim-time-s", type=float, default=10.0)
    p.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", type=Path, default=REPO_ROOT / "docs" / "multi-agent")
    p.add_argument("--work", type=Path, default=REPO_ROOT / "runs" / "multi-agent")
    args = p.parse_args(argv)
    for name, value, low in (("--timesteps", args.timesteps, 1), ("--seeds", args.seeds, 1),
                             ("--jobs", args.jobs, 1)):  # fmt: skip
        if value < low:
            p.error(f"{name}={value} is out of range: allowed [{low}, inf]")
    if not 2.0 <= args.sim_time_s <= 600.0:
        p.error(f"--sim-time-s={args.sim_time_s:g} is out of range: allowed [2, 600]")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    argv_list = list(sys.argv[1:] if argv is None else argv)
    seeds = [101 + i for i in range(args.seeds)]
    t0 = time.monotonic()
    models = {}
    for n in args.n:
        log.info("training the shared policy for N = %d", n)
        models[n] = train_shared(n, args.timesteps, args.train_seed, args.work / f"n{n}")
    train_wall = time.monotonic() - t0
    jobs = [
        {"n": n, "controller": c, "backend": b, "seed": s, "sim_time_s": args.sim_time_s,
         "model": os.fspath(models[n])}
        for n in args.n for b in args.backends for c in CONTROLLERS for s in seeds
    ]  # fmt: skip
    t1 = time.monotonic()
    runs = map_jobs(
        run_one, jobs, args.jobs, initializer=_init_worker,
        name=lambda j: f"N = {j['n']} {j['controller']} {j['backend']} seed {j['seed']}",
    )  # fmt: skip
    runs_wall = time.monotonic() - t1
    rows = summarise(runs)
    numbers = {
        "timesteps": args.timesteps,
        "train_seed": args.train_seed,
        "seeds": seeds,
        "sim_time_s": args.sim_time_s,
        "jobs": args.jobs,
        "train_wall_s": train_wall,
        "runs_wall_s": runs_wall,
        "runs": runs,
        "summary": rows,
        "provenance": record(COMMAND, argv_list, INPUTS, REPO_ROOT),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "numbers.json").write_text(json.dumps(numbers, indent=1, default=float) + "\n")
    plot(rows, args.out / "fairness.png")
    (args.out / "report.md").write_text(report(numbers))
    print(report(numbers))
    return numbers


if __name__ == "__main__":
    main()
