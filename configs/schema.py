"""Structured-config schemas: a typo or a wrongly typed value fails at start, naming the field.

Each group's YAML options start with ``defaults: [base_<group>]``. The scenario and reward schemas
are the very dataclasses the code uses (``cellgym.scenario.ScenarioSpec``,
``cellgym.reward.RewardSpec``), so a scenario is defined once; their ranges are checked when the
config is turned into them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING

from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec


@dataclass
class EvaluateConfig:
    """``evaluate.py``: controllers x seeds on one scenario.

    Attributes:
        scenario: The cell (config group ``scenario``).
        reward: Reward weights and delay budget (config group ``reward``); the budget also sets
            ``hol_budget_compliance``.
        controllers: Controllers for the scenario's ``agent`` flow: ns-3 TCP names or baseline
            policy names (``baselines.POLICIES``).
        seeds: Seeds; each maps to an ns-3 ``RngRun``.
        backend: Simulator backend.
        out_dir: Where results go (``<out_dir>/<controller>/seed<k>/``).
        timeout_s: Longest wait for one simulator step.
        max_change: The environment's largest per-step change factor (policies only).
        action_mode: ``cwnd`` or ``rate`` (policies only).
    """

    scenario: ScenarioSpec = MISSING
    reward: RewardSpec = field(default_factory=RewardSpec)
    controllers: list[str] = field(default_factory=lambda: ["explicit_rate"])
    seeds: list[int] = field(default_factory=lambda: [1])
    backend: str = "ns3"
    out_dir: str = MISSING
    timeout_s: float = 60.0
    max_change: float = 2.0
    action_mode: str = "cwnd"


def register_configs() -> None:
    """Store the schemas as ``base_<group>`` in Hydra's ConfigStore."""
    cs = ConfigStore.instance()
    cs.store(name="base_evaluate", node=EvaluateConfig)
    cs.store(group="scenario", name="base_scenario", node=ScenarioSpec)
    cs.store(group="reward", name="base_reward", node=RewardSpec)


def to_dict(cfg: Any) -> dict[str, Any]:
    """A resolved plain-dict copy of a config node (for JSON, W&B or dataclass construction)."""
    from omegaconf import OmegaConf

    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]
