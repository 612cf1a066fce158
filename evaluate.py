"""Evaluate controllers on a scenario: ``python evaluate.py [overrides]``.

See configs/evaluate.yaml for the options.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import hydra
from omegaconf import DictConfig

from configs.schema import register_configs

log = logging.getLogger("evaluate")
register_configs()


def evaluate(cfg: DictConfig) -> list[dict]:
    """Run every controller x seed, write their records and metrics, return the metrics."""
    from cellgym.evaluation import run_controller
    from cellgym.metrics import compute_metrics
    from cellgym.report import comparison_table
    from cellgym.reward import RewardSpec
    from cellgym.scenario import ScenarioSpec
    from configs.schema import to_dict

    spec = ScenarioSpec.from_config(cfg.scenario)
    reward = RewardSpec(**to_dict(cfg.reward))
    out = Path(cfg.out_dir)
    results = []
    for controller in cfg.controllers:
        for seed in cfg.seeds:
            log.info("running %s on %s, seed %d", controller, spec.name, seed)
            rec = run_controller(
                spec,
                controller,
                seed,
                reward,
                cfg.backend,
                cfg.timeout_s,
                cfg.max_change,
                cfg.action_mode,
            )
            metrics = compute_metrics(rec, delay_budget_ms=reward.delay_budget_ms)
            run_dir = out / controller / f"seed{seed}"
            run_dir.mkdir(parents=True, exist_ok=True)
            (run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2))
            rec.flows_frame().to_csv(run_dir / "timeseries_flows.csv", index=False)
            rec.ues_frame().to_csv(run_dir / "timeseries_ues.csv", index=False)
            results.append(metrics)
    (out / "summary.json").write_text(json.dumps(results, indent=2))
    table = comparison_table(results)
    (out / "comparison.txt").write_text(table + "\n")
    print(table)
    print(f"\nresults: {out.resolve()}")
    return results


@hydra.main(config_path="configs", config_name="evaluate", version_base="1.3")
def main(cfg: DictConfig) -> None:
    """Hydra entry point."""
    evaluate(cfg)


if __name__ == "__main__":
    main()
