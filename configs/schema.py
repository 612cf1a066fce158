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
from cellgym.seeding import check_seed
from cellgym.vocab import (
    ACTION_MODES,
    ALGORITHMS,
    BACKENDS,
    FEATURE_SETS,
    SpecError,
    check_above,
    check_choice,
    check_max_change,
    check_range,
)


@dataclass
class EvaluateConfig:
    """``evaluate.py``: controllers x scenarios x seeds, in parallel, into one tidy table.

    Attributes:
        scenario: The cell (config group ``scenario``) when ``scenarios`` is empty.
        scenarios: Scenario config names (``configs/scenario/<name>.yaml``) to evaluate on; empty:
            just ``scenario``.
        reward: Reward weights and delay budget (config group ``reward``); the budget also sets
            ``hol_budget_compliance``.
        controllers: Controllers for the scenarios' ``agent`` flow: names of the controller
            registry ``cellgym.controllers`` (ns-3 TCPs, ``xrc``, baseline policies), or trained
            checkpoints (a run directory, a model ``.zip``, or ``<algo>:<path>`` such as
            ``ppo:runs/<dir>``).
        seeds: Seeds; each maps to an ns-3 ``RngRun``. The same for every controller.
        backend: Simulator backend (config group ``backend``: ``backend=fast`` or ``ns3``); only
            its ``name`` is used (evaluation runs one simulation per job, see ``jobs``).
        jobs: Simulations run at a time (worker processes); at least 1.
        sim_time_s: When set, overrides every scenario's ``sim_time_s`` (quick runs).
        from_s: Measure only steps ending after this time (leave out a warm-up), in seconds.
        deterministic: Trained policies act with their mean action.
        confidence: Level of the confidence intervals in the report, in (0, 1).
        out_dir: Where results go (``results.parquet``, ``summary.csv``, ``report.md``, plots).
        timeout_s: Longest wait for one simulator step.
        max_change: The environment's largest per-step change factor (baseline policies; trained
            checkpoints use the value they were trained with).
        action_mode: ``cwnd`` or ``rate`` (as ``max_change``).
    """

    scenario: ScenarioSpec = MISSING
    scenarios: list[str] = field(default_factory=list)
    reward: RewardSpec = field(default_factory=RewardSpec)
    controllers: list[str] = field(default_factory=lambda: ["explicit_rate"])
    seeds: list[int] = field(default_factory=lambda: [1])
    backend: BackendConfig = field(default_factory=lambda: BackendConfig())
    jobs: int = 2
    sim_time_s: float | None = None
    from_s: float = 0.0
    deterministic: bool = True
    confidence: float = 0.95
    out_dir: str = MISSING
    timeout_s: float = 60.0
    max_change: float = 2.0
    action_mode: str = "cwnd"


LOGGERS: tuple[str, ...] = ("none", "tensorboard", "wandb")
WANDB_MODES: tuple[str, ...] = ("auto", "online", "offline", "disabled")
FINAL_MODELS: tuple[str, ...] = ("last", "best")
#: The policy's input (``agents.features``): raw observations, or raw plus XRC-style ratios.
START_METHODS: tuple[str, ...] = ("forkserver", "spawn", "fork")


@dataclass
class AgentConfig:
    """A Stable-Baselines3 (or sb3-contrib) algorithm, or ``learners.ppo`` (``FastPPO``).

    Attributes:
        name: Label for run directories and reports.
        algo: Class name: PPO, A2C, SAC, TD3 (``stable_baselines3``), RecurrentPPO
            (``sb3_contrib``) or FastPPO (``learners.ppo``: PPO over the fast backend's cells
            as arrays, saved as an SB3 PPO model; ``learners.run.check_config`` says what it
            refuses).
        policy: Policy class name (``MlpPolicy``; ``MlpLstmPolicy`` for RecurrentPPO).
        net_arch: Hidden layer sizes of the policy and value networks.
        policy_kwargs: Further policy constructor arguments (``net_arch`` is set from above).
        kwargs: Constructor arguments passed unchanged (FastPPO: ``cellgym.vocab.FAST_PPO_KWARGS``).
    """

    name: str = MISSING
    algo: str = MISSING
    policy: str = "MlpPolicy"
    net_arch: list[int] = field(default_factory=lambda: [64, 64])
    policy_kwargs: dict[str, Any] = field(default_factory=dict)
    kwargs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Validate the fields."""
        check_choice("agent.algo", self.algo, ALGORITHMS)
        for i, width in enumerate(self.net_arch):
            check_range(f"agent.net_arch[{i}]", width, 1)
        if self.algo == "RecurrentPPO" and "Lstm" not in self.policy:
            raise SpecError(f"agent.policy={self.policy!r}: RecurrentPPO needs MlpLstmPolicy")


@dataclass
class BackendConfig:
    """The simulator that training runs on.

    Attributes:
        name: ``ns3`` (one simulator process per environment, ``SubprocVecEnv``) or ``fast``
            (the numba cell model, all environments in one batch).
        n_envs: Environments stepped in parallel.
        start_method: ``multiprocessing`` start method of the ns-3 backend's workers.
        fast_params: ``backend=fast`` only: ``FastSimParams`` fields to override in every cell
            (``envs.fast_params``), e.g. ``{uplink: bsr}``; a mixture's ``variants`` apply on
            top. Checked when the run is validated; refused on ns-3.
    """

    name: str = "ns3"
    n_envs: int = 2
    start_method: str = "forkserver"
    fast_params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Validate the fields."""
        check_choice("backend.name", self.name, BACKENDS)
        check_range("backend.n_envs", self.n_envs, 1)
        check_choice("backend.start_method", self.start_method, START_METHODS)


@dataclass
class LoggerConfig:
    """Where training scalars go besides ``progress.csv`` (always written).

    Attributes:
        name: ``none``, ``tensorboard`` (``<run_dir>/tensorboard``) or ``wandb`` (Weights & Biases,
            through the TensorBoard events; files in ``<run_dir>/wandb``).
        project: W&B project.
        entity: W&B entity (team or user); ``null``: the default one.
        group: W&B group (e.g. a sweep's name).
        tags: W&B tags.
        mode: W&B mode; ``auto`` runs offline when ``WANDB_API_KEY`` is unset or
            ``WANDB_MODE=offline`` (``wandb sync <run_dir>/wandb/offline-run-*`` uploads later).
    """

    name: str = "none"
    project: str = "cellgym"
    entity: str | None = None
    group: str | None = None
    tags: list[str] = field(default_factory=list)
    mode: str = "auto"

    def __post_init__(self) -> None:
        """Validate the fields."""
        check_choice("logger.name", self.name, LOGGERS)
        check_choice("logger.mode", self.mode, WANDB_MODES)


@dataclass
class MixtureEntry:
    """One scenario of the training distribution: one batch of fast cells.

    Attributes:
        scenario: Scenario config name (``configs/scenario/<name>.yaml``, e.g. ``fluctuating``,
            ``traces/steps``); exactly one ``agent`` flow.
        n_envs: Cells of this scenario in every batch (one batch per model variant of
            ``mixture.variants``).
        overrides: Scenario fields to change (``ScenarioSpec.replace``), e.g. ``{sim_time_s: 20,
            channel: {trace_offset_s: 100}}``.
    """

    scenario: str = MISSING
    n_envs: int = 4
    overrides: dict[str, Any] = field(default_factory=dict)


@dataclass
class MixtureConfig:
    """Training on a distribution of scenarios and fast-model variants (fast backend only).

    The training vector env concatenates one batch of fast cells per scenario entry and model
    variant (``agents.mixture``); SB3 sees one ``VecEnv`` of all their cells.

    Attributes:
        scenarios: The training scenarios; empty: ``scenario`` alone (the usual single batch).
        variants: Domain randomisation over the fast model's parameters: each variant maps
            ``envs.fastsim.params.FastSimParams`` fields to values, and every scenario entry
            gets one batch per variant, e.g. ``[{uplink: periodic}, {uplink: bsr}]`` (``{}``:
            the calibrated model). Empty: the calibrated model only.
    """

    scenarios: list[MixtureEntry] = field(default_factory=list)
    variants: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class EvalScenario:
    """A scenario of an evaluation: a config name and optional field overrides.

    Attributes:
        scenario: Scenario config name (``configs/scenario/<name>.yaml``).
        overrides: Scenario fields to change (``ScenarioSpec.replace``).
    """

    scenario: str = MISSING
    overrides: dict[str, Any] = field(default_factory=dict)


@dataclass
class EvalConfig:
    """Periodic evaluation during training: the policy and the baselines, same scenario and seeds.

    Attributes:
        freq: Evaluate every ``freq`` environment steps (over all environments); 0 disables.
        seeds: Seeds of the evaluation episodes.
        scenarios: Scenarios of the periodic evaluation (the best model is the best mean reward
            over all of them); empty: the training scenarios (``scenario``, or every
            ``mixture.scenarios`` entry with its overrides).
        backend: Simulator of the periodic evaluation; ``null``: the training backend.
        baselines: Baseline controllers evaluated beside the policy (their rows in
            ``eval_history.csv``); deterministic given the seed, so run once and reused.
        deterministic: Evaluate the policy's mean action.
    """

    freq: int = 10_000
    seeds: list[int] = field(default_factory=lambda: [101, 102, 103])
    scenarios: list[EvalScenario] = field(default_factory=list)
    backend: str | None = None
    baselines: list[str] = field(default_factory=lambda: ["xrc_policy"])
    deterministic: bool = True

    def __post_init__(self) -> None:
        """Validate the fields."""
        check_range("eval.freq", self.freq, 0)
        if self.backend is not None:
            check_choice("eval.backend", self.backend, BACKENDS)
        if self.freq > 0 and not self.seeds:
            raise SpecError("eval.seeds is empty: give at least one seed (or eval.freq=0)")
        for i, seed in enumerate(self.seeds):
            check_seed(f"eval.seeds[{i}]", seed)


@dataclass
class TrainConfig:
    """``train.py``: train an SB3 agent on a scenario, then evaluate it beside baselines.

    Attributes:
        scenario: The cell (config group ``scenario``); it needs exactly one ``agent`` flow.
            With ``mixture.scenarios`` set, training uses those instead and ``scenario`` only
            names the default evaluation scenario.
        mixture: A distribution of training scenarios and fast-model variants (fast backend).
        reward: Reward weights and budget (config group ``reward``).
        agent: The algorithm (config group ``agent``).
        backend: The training simulator and its parallelism (config group ``backend``).
        logger: TensorBoard / W&B (config group ``logger``).
        eval: Periodic evaluation beside the baselines (``eval_history.csv``, best model).
        seed: The run's seed; ``null`` draws one and records it in ``seed.txt``.
        total_timesteps: Environment steps of training (over all environments).
        max_change: The environment's largest per-step change factor.
        action_mode: ``cwnd`` or ``rate``.
        features: The policy's input: ``raw`` observations or ``derived`` (raw plus XRC-style
            ratios, ``agents.features``).
        norm_obs: Normalise observations (``VecNormalize``, saved with every checkpoint).
        norm_reward: Normalise rewards by the running return's scale.
        checkpoint_freq: Checkpoint every this many environment steps (0: never; the final model
            is still saved). Checkpoints are taken between updates, so the period is rounded up
            to whole rollouts (``n_steps x n_envs`` for PPO, A2C and RecurrentPPO, ``train_freq x
            n_envs`` for SAC and TD3), and one more is taken at the end of training. A run
            resumed from one (``resume=``) makes the same updates as an unbroken run.
        keep_replay_buffers: Keep the replay buffer of every checkpoint (off-policy agents; each
            file holds the whole buffer); default: only the latest checkpoint's.
        progress_bar: Show a progress bar; ``null``: only when stderr is a terminal.
        final_model: Model evaluated at the end: ``last`` (``model.zip``, the end of training; the
            model ``evaluate.py`` loads for a run directory, and the one that transferred
            better to ns-3) or ``best`` (``best_model.zip``, best periodic evaluation).
        eval_backend: Simulator of the final evaluation.
        eval_seeds: Seeds of the final evaluation (the same for every controller).
        eval_scenarios: Scenarios of the final evaluation (e.g. held-out traces); empty:
            ``scenario``.
        eval_baselines: Controllers evaluated beside the trained policy at the end.
        eval_jobs: Simulations of the final evaluation run at a time (worker processes).
        run_dir: Where the run's files go.
        resume: A run directory to continue from its latest checkpoint (its saved config is
            used; the other overrides on the command line apply on top).
        timeout_s: Longest wait for one simulator step.
    """

    scenario: ScenarioSpec = MISSING
    reward: RewardSpec = field(default_factory=RewardSpec)
    agent: AgentConfig = MISSING
    mixture: MixtureConfig = field(default_factory=MixtureConfig)
    backend: BackendConfig = field(default_factory=BackendConfig)
    logger: LoggerConfig = field(default_factory=LoggerConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    seed: int | None = None
    total_timesteps: int = 5000
    max_change: float = 2.0
    action_mode: str = "cwnd"
    features: str = "raw"
    norm_obs: bool = True
    norm_reward: bool = True
    checkpoint_freq: int = 10_000
    keep_replay_buffers: bool = False
    progress_bar: bool | None = None
    final_model: str = "last"
    eval_backend: str = "ns3"
    eval_seeds: list[int] = field(default_factory=lambda: [101])
    eval_scenarios: list[EvalScenario] = field(default_factory=list)
    eval_baselines: list[str] = field(default_factory=lambda: ["xrc_policy", "cubic"])
    eval_jobs: int = 1
    run_dir: str = MISSING
    resume: str | None = None
    timeout_s: float = 60.0

    def __post_init__(self) -> None:
        """Validate the top-level fields (the groups validate themselves)."""
        if self.seed is not None:
            check_seed("seed", self.seed)
        check_range("total_timesteps", self.total_timesteps, 1)
        check_max_change(self.max_change)
        check_choice("action_mode", self.action_mode, ACTION_MODES)
        check_choice("features", self.features, FEATURE_SETS)
        check_range("checkpoint_freq", self.checkpoint_freq, 0)
        check_choice("final_model", self.final_model, FINAL_MODELS)
        check_choice("eval_backend", self.eval_backend, BACKENDS)
        if not self.eval_seeds:
            raise SpecError("eval_seeds is empty: give at least one seed")
        for i, seed in enumerate(self.eval_seeds):
            check_seed(f"eval_seeds[{i}]", seed)
        check_range("eval_jobs", self.eval_jobs, 1)
        check_above("timeout_s", self.timeout_s, 0.0)
        self._check_scenario_lists()

    def _check_scenario_lists(self) -> None:
        """The mixture and evaluation scenarios: known names, valid overrides, one agent flow."""
        if self.mixture.scenarios and self.backend.name != "fast":
            raise SpecError(
                f"mixture.scenarios needs backend=fast (backend.name={self.backend.name!r}): "
                "each entry is a batch of fast cells"
            )
        if self.mixture.variants and not self.mixture.scenarios:
            raise SpecError("mixture.variants needs mixture.scenarios (at least one entry)")
        for i, entry in enumerate(self.mixture.scenarios):
            check_range(f"mixture.scenarios[{i}].n_envs", entry.n_envs, 1)
            scenario_from(entry, f"mixture.scenarios[{i}]", single_agent=True)
        for i, entry in enumerate(self.eval.scenarios):
            scenario_from(entry, f"eval.scenarios[{i}]", single_agent=True)
        for i, entry in enumerate(self.eval_scenarios):
            scenario_from(entry, f"eval_scenarios[{i}]", single_agent=False)

    def training_scenarios(self) -> list[ScenarioSpec]:
        """The scenarios training runs on: the mixture's entries, or ``scenario``."""
        if not self.mixture.scenarios:
            return [self.scenario]
        return [scenario_from(e, "mixture.scenarios") for e in self.mixture.scenarios]

    def periodic_scenarios(self) -> list[ScenarioSpec]:
        """The periodic evaluation's scenarios (``eval.scenarios``, else the training ones)."""
        if self.eval.scenarios:
            return [scenario_from(e, "eval.scenarios") for e in self.eval.scenarios]
        return self.training_scenarios()

    def final_scenarios(self) -> list[ScenarioSpec]:
        """The final evaluation's scenarios (``eval_scenarios``, else ``scenario``)."""
        if self.eval_scenarios:
            return [scenario_from(e, "eval_scenarios") for e in self.eval_scenarios]
        return [self.scenario]


def scenario_from(
    entry: MixtureEntry | EvalScenario, where: str, single_agent: bool = False
) -> ScenarioSpec:
    """The spec of a mixture or evaluation entry: its config with its overrides.

    Raises:
        SpecError: An unknown scenario name or a bad override, naming ``where`` (e.g.
            ``mixture.scenarios[2].scenario='nope' is unknown: choose one of ...``); with
            ``single_agent``, a scenario without exactly one ``agent`` flow.
    """
    from cellgym.scenario import load_scenario, scenario_names

    if entry.scenario not in scenario_names():
        raise SpecError(
            f"{where}.scenario={entry.scenario!r} is unknown: choose one of "
            f"{', '.join(scenario_names())}"
        )
    try:
        spec = load_scenario(entry.scenario, **dict(entry.overrides))
    except SpecError as exc:
        raise SpecError(f"{where}.overrides: {exc}") from exc
    except TypeError as exc:  # dataclasses.replace: a field the scenario does not have
        raise SpecError(f"{where}.overrides={dict(entry.overrides)!r}: {exc}") from exc
    if single_agent and len(spec.agent_flows) != 1:
        raise SpecError(
            f"{where}.scenario={entry.scenario!r} has {len(spec.agent_flows)} agent flows: "
            "training and its evaluation here need exactly one"
        )
    return spec


def register_configs() -> None:
    """Store the schemas as ``base_<group>`` in Hydra's ConfigStore."""
    cs = ConfigStore.instance()
    cs.store(name="base_evaluate", node=EvaluateConfig)
    cs.store(name="base_train", node=TrainConfig)
    cs.store(group="agent", name="base_agent", node=AgentConfig)
    cs.store(group="scenario", name="base_scenario", node=ScenarioSpec)
    cs.store(group="reward", name="base_reward", node=RewardSpec)
    cs.store(group="backend", name="base_backend", node=BackendConfig)
    cs.store(group="logger", name="base_logger", node=LoggerConfig)


def compose_train(overrides: list[str]) -> Any:
    """Compose ``configs/train.yaml`` with Hydra's ``overrides``, outside a Hydra application.

    The one place experiments and tests build a training config as ``train.py`` would.
    """
    import os
    from pathlib import Path

    from hydra import compose, initialize_config_dir

    register_configs()
    config_dir = os.fspath(Path(__file__).resolve().parent)
    with initialize_config_dir(config_dir=config_dir, version_base="1.3"):
        return compose("train", overrides=list(overrides))


def to_dict(cfg: Any) -> dict[str, Any]:
    """A resolved plain-dict copy of a config node (for JSON, W&B or dataclass construction)."""
    from omegaconf import OmegaConf

    return OmegaConf.to_container(cfg, resolve=True)  # type: ignore[return-value]


def check_known_keys(cfg: Any, where: str = "") -> None:
    """Raise ``SpecError`` for a key that is no field of its structured config.

    Hydra's ``+key=value`` adds keys even to typed nodes, and ``OmegaConf.to_object`` then sets
    them as stray attributes: ``+scenario.foo=1`` or ``+agent.n_stepz=8`` would run and land in
    the saved config. Free-form mappings (``agent.kwargs``, ``agent.policy_kwargs``) are not
    checked here; their consumers check them.
    """
    import dataclasses

    from omegaconf import DictConfig, ListConfig, OmegaConf

    if isinstance(cfg, DictConfig):
        kind = OmegaConf.get_type(cfg)
        if kind is not None and dataclasses.is_dataclass(kind):
            known = {f.name for f in dataclasses.fields(kind)}
            for key in cfg.keys():
                if key not in known:
                    name = f"{where}.{key}" if where else str(key)
                    raise SpecError(
                        f"{name} is not an option of {where or 'the config'}: allowed "
                        f"{', '.join(sorted(known))}"
                    )
        for key in cfg.keys():
            node = cfg._get_node(key)
            if isinstance(node, DictConfig | ListConfig):
                check_known_keys(node, f"{where}.{key}" if where else str(key))
    elif isinstance(cfg, ListConfig):
        for i, node in enumerate(cfg._iter_ex(resolve=False)):
            if isinstance(node, DictConfig | ListConfig):
                check_known_keys(node, f"{where}[{i}]")


def validate_train(cfg: Any) -> TrainConfig:
    """Build the typed ``TrainConfig`` from a composed config, checking every range.

    Raises:
        SpecError: Naming the first field whose value is out of range (e.g.
            ``backend.n_envs=0 is out of range: allowed [1, inf]``).
    """
    from omegaconf import OmegaConf

    check_known_keys(cfg)
    try:
        obj = OmegaConf.to_object(cfg)
    except SpecError:
        raise
    except Exception as exc:  # OmegaConf wraps the dataclasses' ValueError; surface it
        cause = exc.__cause__ or exc.__context__
        if isinstance(cause, ValueError):
            raise cause from exc
        raise
    if not isinstance(obj, TrainConfig):
        obj = TrainConfig(**obj)  # type: ignore[arg-type]
    return obj
