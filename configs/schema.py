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


@dataclass
class AgentConfig:
    """A Stable-Baselines3 algorithm.

    Attributes:
        name: Label for run directories and reports.
        algo: Class name in ``stable_baselines3`` (PPO, A2C, SAC, TD3).
        net_arch: Hidden layer sizes of the policy and value networks.
        kwargs: Constructor arguments passed unchanged.
    """

    name: str = MISSING
    algo: str = MISSING
    net_arch: list[int] = field(default_factory=lambda: [64, 64])
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass
class TrainConfig:
    """``train.py``: train an SB3 agent on a scenario, then evaluate it beside baselines.

    Attributes:
        scenario: The cell (config group ``scenario``); it needs exactly one ``agent`` flow.
        reward: Reward weights and budget (config group ``reward``).
        agent: The algorithm (config group ``agent``).
        seed: The run's seed; ``null`` draws one and records it.
        total_timesteps: Environment steps of training (over all environments).
        n_envs: Environments in parallel (one simulator process each on the ns-3 backend).
        backend: Simulator backend.
        max_change: The environment's largest per-step change factor.
        action_mode: ``cwnd`` or ``rate``.
        eval_seeds: Seeds of the evaluation episodes (the same for every controller).
        eval_baselines: Controllers evaluated beside the trained policy.
        run_dir: Where the run's files go.
        timeout_s: Longest wait for one simulator step.
    """

    scenario: ScenarioSpec = MISSING
    reward: RewardSpec = field(default_factory=RewardSpec)
    agent: AgentConfig = MISSING
    seed: int | None = None
    total_timesteps: int = 5000
    n_envs: int = 2
    backend: str = "ns3"
    max_change: float = 2.0
    action_mode: str = "cwnd"
    eval_seeds: list[int] = field(default_factory=lambda: [101])
    eval_baselines: list[str] = field(default_factory=lambda: ["xrc_policy", "cubic"])
    run_dir: str = MISSING
    timeout_s: float = 60.0


def register_configs() -> None:
    """Store the schemas as ``base_<group>`` in Hydra's ConfigStore."""
    cs = ConfigStore.instance()
    cs.store(name="base_evaluate", node=EvaluateConfig)
    cs.store(name="base_train", node=TrainConfig)
    cs.store(group="agent", name="base_agent", node=AgentConfig)
    cs.store(group="scenario", name="base_scenario", node=ScenarioSpec)
    cs.store(group="reward", name="base_reward", node=RewardSpec)


def to_dict(cfg: Any) -> dict[str, Any]:
    """A resolved plain-dict copy of a config node (for JSON, W&B or dataclass construction)."""
    from omegaconf import OmegaConf

    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]
