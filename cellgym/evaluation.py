"""Run controllers on scenarios and record every step; one code path for all controllers.

A controller takes the scenario's ``agent`` flow:

- an ns-3 TCP by name (``cubic``, ``newreno``, ...) or ``xrc`` replaces the flow's congestion
  control and runs natively in the simulator (``run_native``);
- a policy (a baseline from ``baselines``, a trained checkpoint, anything with SB3's ``predict``)
  drives the flow through ``LteCellEnv``, exactly as in training (``run_policy``). Learned
  policies and the XRC policy go through this same loop.

``run_controller`` runs one controller by name. ``evaluate_many`` runs controllers x scenarios x
seeds, several simulations at a time, and returns tidy tables (``Evaluation``: ``results``,
``flows``, ``timeseries``) for ``cellgym.report``::

    from cellgym.evaluation import evaluate_many
    from cellgym.report import write_report

    results, flows, ts = evaluate_many(
        ["xrc_policy", "cubic", "ppo:runs/<dir>"], ["vs_cubic"], [1, 2, 3], backend="fast", jobs=2
    )
    write_report(results, "out/", flows=flows, timeseries=ts)
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from cellgym.fields import FLOW, UE
from cellgym.metrics import EpisodeRecords, compute_metrics
from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec
from cellgym.seeding import rng_run_for_seed
from cellgym.vocab import NATIVE_CCAS

log = logging.getLogger(__name__)

#: ``predict(obs, state, episode_start, deterministic) -> (action, state)``, as in SB3.
Predictor = Any


def with_native_agent(spec: ScenarioSpec, cca: str) -> ScenarioSpec:
    """A copy of ``spec`` whose ``agent`` flows run ns-3's ``cca`` instead."""
    if cca not in NATIVE_CCAS:
        raise ValueError(f"controller {cca!r} is not native: choose one of {NATIVE_CCAS}")
    flows = [
        dataclasses.replace(f, cca=cca) if f.cca == "agent" else dataclasses.replace(f)
        for f in spec.flows
    ]
    return dataclasses.replace(spec, flows=flows)


def run_native(
    spec: ScenarioSpec,
    cca: str,
    seed: int,
    backend: str = "ns3",
    timeout_s: float = 60.0,
    on_step: Callable[[float], None] | None = None,
) -> EpisodeRecords:
    """Run ``spec`` with its agent flow(s) under ns-3's ``cca``; return the step records."""
    from envs.session import open_session

    native = with_native_agent(spec, cca) if spec.agent_flows else spec
    rec = EpisodeRecords(spec=native, controller=cca, seed=seed)
    session = open_session(native, rng_run_for_seed(seed), backend=backend, timeout_s=timeout_s)
    try:
        raw = session.start()
        rec.append(raw.t, raw.flows, raw.ues)
        empty = np.zeros((0, 2))
        while not raw.done:
            raw = session.step(empty)
            rec.append(raw.t, raw.flows, raw.ues)
            if on_step is not None:
                on_step(raw.t)
    finally:
        session.close()
    return rec


def run_policy(
    spec: ScenarioSpec,
    policy: Predictor,
    seed: int,
    label: str,
    reward: RewardSpec | None = None,
    backend: str = "ns3",
    env_kwargs: dict[str, Any] | None = None,
    deterministic: bool = True,
    on_step: Callable[[float], None] | None = None,
) -> EpisodeRecords:
    """Drive the scenario's agent flow with ``policy`` through ``LteCellEnv``; return records."""
    from envs.lte_cell import LteCellEnv

    env = LteCellEnv(scenario=spec, reward=reward, backend=backend, **(env_kwargs or {}))
    rec = EpisodeRecords(spec=spec, controller=label, seed=seed)
    try:
        obs, info = env.reset(seed=seed)
        rec.append(info["t"], info["flows"], info["ues"])
        if hasattr(policy, "reset"):
            policy.reset()
        state, start, done = None, np.array([True]), False
        while not done:
            action, state = policy.predict(
                obs, state=state, episode_start=start, deterministic=deterministic
            )
            start = np.array([False])
            obs, r, terminated, truncated, info = env.step(action)
            rec.append(info["t"], info["flows"], info["ues"], r)
            done = terminated or truncated
            if on_step is not None:
                on_step(info["t"])
    finally:
        env.close()
    return rec


def run_controller(
    spec: ScenarioSpec,
    controller: str,
    seed: int,
    reward: RewardSpec,
    backend: str = "ns3",
    timeout_s: float = 60.0,
    max_change: float = 2.0,
    action_mode: str = "cwnd",
    policy: Predictor | None = None,
) -> EpisodeRecords:
    """Run one controller by name: native in the simulator, or a policy through the env.

    Args:
        spec: The scenario; the controller takes its ``agent`` flow.
        controller: An ns-3 TCP or ``xrc`` (native), a baseline policy name
            (``baselines.POLICIES``), or the label of ``policy``.
        seed: The run's seed.
        reward: Reward weights and budget (policies only; also the XRC policy's budget).
        backend: Simulator backend.
        timeout_s: Longest wait for one simulator step.
        max_change: The environment's largest per-step change factor (policies only).
        action_mode: ``cwnd`` or ``rate`` (policies only).
        policy: A trained policy to run under the label ``controller``.
    """
    from baselines import is_native, make_policy

    if policy is None and is_native(controller):
        return run_native(spec, controller, seed, backend, timeout_s)
    if policy is None:
        policy = make_policy(
            controller,
            max_change=max_change,
            step_ms=spec.step_ms,
            budget_ms=reward.delay_budget_ms,
        )
    env_kwargs = {"timeout_s": timeout_s, "max_change": max_change, "action_mode": action_mode}
    return run_policy(spec, policy, seed, controller, reward, backend, env_kwargs)


# --------------------------------------------------------------------------------------------
# Many controllers x scenarios x seeds, in parallel, into tidy tables.
# --------------------------------------------------------------------------------------------

#: Algorithm prefixes of ``<algo>:<path>`` controller specs, mapped to SB3 / sb3-contrib classes.
CHECKPOINT_ALGOS: dict[str, str] = {
    "ppo": "PPO",
    "a2c": "A2C",
    "sac": "SAC",
    "td3": "TD3",
    "recurrentppo": "RecurrentPPO",
    "recurrent_ppo": "RecurrentPPO",
}

#: Columns of the results table, in order (one row per controller, scenario and seed).
RESULT_COLUMNS: tuple[str, ...] = (
    "controller",
    "kind",
    "scenario",
    "seed",
    "backend",
    "status",
    "error",
    "wall_s",
    "duration_s",
    "steps",
    "utilization",
    "throughput_mbps",
    "cell_throughput_mbps",
    "jain_fairness",
    "hol_delay_ms_p50",
    "hol_delay_ms_p90",
    "hol_delay_ms_p95",
    "hol_delay_ms_p99",
    "queueing_delay_ms_p50",
    "queueing_delay_ms_p90",
    "queueing_delay_ms_p95",
    "queueing_delay_ms_p99",
    "hol_budget_compliance",
    "delay_budget_ms",
    "short_flows",
    "short_flows_done",
    "fct_s_p50",
    "fct_s_p95",
    "losses",
    "mean_reward",
)

#: Columns of the per-flow table (one row per flow of each run).
FLOW_COLUMNS: tuple[str, ...] = (
    "controller",
    "scenario",
    "seed",
    "flow",
    "cca",
    "agent",
    "ue",
    "traffic",
    "throughput_mbps",
    "rx_bytes",
    "rtt_ms_p50",
    "rtt_ms_p90",
    "rtt_ms_p99",
    "queueing_delay_ms_p50",
    "queueing_delay_ms_p90",
    "queueing_delay_ms_p99",
    "losses",
    "loss_events",
    "retx_segments",
    "fct_s",
)

#: Columns of the per-step time series (one row per step and flow of each run).
TIMESERIES_COLUMNS: tuple[str, ...] = (
    "controller",
    "scenario",
    "seed",
    "t",
    "flow",
    "cca",
    "agent",
    "ue",
    "active",
    "throughput_mbps",
    "cwnd_bytes",
    "pacing_rate_mbps",
    "rtt_ms",
    "queueing_delay_ms",
    "hol_ms",
    "capacity_mbps",
    "reward",
)

KINDS: tuple[str, ...] = ("native", "baseline", "trained", "policy")


@dataclass(frozen=True)
class ControllerSpec:
    """What to run for one controller: a picklable description, never a live model.

    Attributes:
        label: Name in the tables and plots.
        kind: ``native`` (an ns-3 TCP or XRC's sender, in the simulator), ``baseline`` (a policy
            of ``baselines.POLICIES``), ``trained`` (an SB3 checkpoint, loaded where it runs) or
            ``policy`` (an object given in ``evaluate_many(policies=...)``; runs in-process).
        name: The native/baseline name, or the model file of a trained checkpoint.
        algo: SB3 class name of a trained checkpoint (``PPO``, ``SAC``, ...).
        vecnormalize: ``VecNormalize`` statistics saved with the checkpoint (``None``: none).
        features: The feature set the checkpoint was trained on (``agents.features``).
        max_change: The checkpoint's training ``max_change`` (``None``: the evaluation's).
        action_mode: The checkpoint's training ``action_mode`` (``None``: the evaluation's).
    """

    label: str
    kind: str
    name: str
    algo: str | None = None
    vecnormalize: str | None = None
    features: str = "raw"
    max_change: float | None = None
    action_mode: str | None = None


def _run_config(model: Path) -> dict[str, Any]:
    """The training config saved next to ``model`` (``.hydra/config.yaml`` up to two levels up)."""
    for folder in (model.parent, model.parent.parent, model.parent.parent.parent):
        path = folder / ".hydra" / "config.yaml"
        if path.is_file():
            from omegaconf import OmegaConf

            data = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
            return data if isinstance(data, dict) else {}
    return {}


def _vecnormalize_for(model: Path) -> Path | None:
    """The statistics saved beside ``model`` by ``agents.train`` (final, best or a checkpoint)."""
    stem = model.stem
    candidates = [model.with_name("vecnormalize.pkl")]
    if stem == "best_model":
        candidates.insert(0, model.with_name("best_vecnormalize.pkl"))
    if stem.endswith("_steps"):  # checkpoints/<prefix>_<n>_steps.zip
        prefix, _, rest = stem.rpartition("_")[0].rpartition("_")
        candidates.insert(0, model.with_name(f"{prefix}_vecnormalize_{rest}_steps.pkl"))
    for path in candidates:
        if path.is_file():
            return path
    return None


def resolve_checkpoint(
    path: str | Path, algo: str | None = None, label: str | None = None
) -> ControllerSpec:
    """Describe a trained checkpoint: a run directory (its ``model.zip``) or a model file.

    The algorithm, feature set, ``max_change`` and ``action_mode`` come from the run's saved
    config (``.hydra/config.yaml``) when there is one; ``algo`` overrides the algorithm.

    Args:
        path: A run directory of ``train.py`` or a ``.zip`` saved by SB3.
        algo: SB3 class name or prefix (``ppo``, ``SAC``, ...); required without a saved config.
        label: Name in the tables; default: the run's agent name, else the algorithm in lower case.

    Raises:
        FileNotFoundError: No model at ``path``.
        ValueError: The algorithm is unknown or cannot be found out.
    """
    p = Path(path)
    model = p / "model.zip" if p.is_dir() else p
    if not model.is_file():
        raise FileNotFoundError(
            f"controller {str(path)!r}: no trained model at {model} "
            "(give a run directory holding model.zip, or a .zip file)"
        )
    cfg = _run_config(model)
    agent = cfg.get("agent") if isinstance(cfg.get("agent"), dict) else {}
    if algo is not None:
        key = algo.lower()
        if key not in CHECKPOINT_ALGOS and algo not in CHECKPOINT_ALGOS.values():
            raise ValueError(
                f"controller {str(path)!r}: algorithm {algo!r} is unknown: "
                f"choose one of {', '.join(sorted(set(CHECKPOINT_ALGOS)))}"
            )
        algo_cls = CHECKPOINT_ALGOS.get(key, algo)
    elif agent.get("algo"):
        algo_cls = str(agent["algo"])
    else:
        raise ValueError(
            f"controller {str(path)!r}: no saved config says which algorithm trained it: "
            f"write it as <algo>:<path>, <algo> one of {', '.join(sorted(set(CHECKPOINT_ALGOS)))}"
        )
    stats = _vecnormalize_for(model)
    if stats is None and cfg.get("norm_obs", False):
        log.warning(
            "controller %s: trained with normalised observations but no VecNormalize statistics "
            "found beside %s; the policy will see raw observations",
            path,
            model,
        )
    return ControllerSpec(
        label=label or str(agent.get("name") or algo_cls.lower()),
        kind="trained",
        name=str(model.resolve()),
        algo=algo_cls,
        vecnormalize=str(stats.resolve()) if stats is not None else None,
        features=str(cfg.get("features", "raw")),
        max_change=float(cfg["max_change"]) if "max_change" in cfg else None,
        action_mode=str(cfg["action_mode"]) if "action_mode" in cfg else None,
    )


def _looks_like_path(text: str) -> bool:
    return "/" in text or text.endswith(".zip") or Path(text).exists()


def resolve_controller(
    text: str | ControllerSpec,
    field_name: str = "controllers",
    policies: Mapping[str, Any] | None = None,
) -> ControllerSpec:
    """Parse one controller of a list: a native TCP, a baseline policy or a trained checkpoint.

    Accepted forms: an ns-3 TCP or ``xrc`` (``cellgym.scenario.NATIVE_CCAS``); a baseline policy
    name (``baselines.POLICIES``); a key of ``policies``; a run directory or ``.zip`` path; or
    ``<algo>:<path>`` (e.g. ``ppo:runs/x``) naming the algorithm of a checkpoint.

    Args:
        text: The controller as written in the config.
        field_name: The config field, for error messages (e.g. ``controllers[2]``).
        policies: Labels of in-process policies (their values are not used here).

    Raises:
        ValueError: Naming ``field_name`` and the allowed values, for an unknown controller.
        FileNotFoundError: For a checkpoint path that holds no model.
    """
    from baselines import POLICIES

    if isinstance(text, ControllerSpec):
        return text
    text = str(text).strip()
    if policies and text in policies:
        value = policies[text]
        if isinstance(value, (str, Path)):
            return resolve_controller_path(value, label=text, field_name=field_name)
        return ControllerSpec(label=text, kind="policy", name=text)
    if text in NATIVE_CCAS:
        return ControllerSpec(label=text, kind="native", name=text)
    if text in POLICIES:
        return ControllerSpec(label=text, kind="baseline", name=text)
    return resolve_controller_path(text, field_name=field_name)


def resolve_controller_path(
    text: str | Path, label: str | None = None, field_name: str = "controllers"
) -> ControllerSpec:
    """``resolve_checkpoint`` of ``[<algo>:]<path>``; an error names the field and the choices."""
    from baselines import POLICIES

    text = str(text)
    algo, sep, rest = text.partition(":")
    if sep and algo.lower() in CHECKPOINT_ALGOS:
        return resolve_checkpoint(rest, algo=algo, label=label)
    if _looks_like_path(text):
        return resolve_checkpoint(text, label=label)
    raise ValueError(
        f"{field_name}={text!r} is not a known controller: choose an ns-3 TCP or XRC "
        f"({', '.join(NATIVE_CCAS)}), a baseline policy ({', '.join(POLICIES)}), "
        "a run directory or model .zip, or <algo>:<path> with <algo> one of "
        f"{', '.join(sorted(set(CHECKPOINT_ALGOS)))}"
    )


def load_checkpoint_policy(spec: ControllerSpec, deterministic: bool | None = None) -> Predictor:
    """Load a trained checkpoint as a policy: the model behind its saved ``VecNormalize``.

    Uses ``agents.factory.NormalizedPolicy``, the wrapper training evaluates with, so the model sees
    the observations (features and normalisation) it was trained on.
    """
    import pickle

    from agents.factory import NormalizedPolicy, algo_class

    if spec.kind != "trained" or spec.algo is None:
        raise ValueError(f"controller {spec.label!r} is not a trained checkpoint")
    model = algo_class(spec.algo).load(spec.name, device="cpu")
    stats = None
    if spec.vecnormalize is not None:
        stats = pickle.loads(Path(spec.vecnormalize).read_bytes())
        stats.training = False
    return NormalizedPolicy(model, stats, spec.features, deterministic=deterministic)


def load_scenario(name: str | Path | Mapping[str, Any] | ScenarioSpec) -> ScenarioSpec:
    """A scenario by config name (``configs/scenario/<name>.yaml``), YAML path, mapping or spec."""
    if isinstance(name, ScenarioSpec):
        return name
    if isinstance(name, Mapping):
        return ScenarioSpec.from_config(name)
    from omegaconf import OmegaConf

    from cellgym.paths import REPO_ROOT

    path = Path(name)
    if path.suffix not in (".yaml", ".yml"):
        path = REPO_ROOT / "configs" / "scenario" / f"{name}.yaml"
    if not path.is_file():
        folder = REPO_ROOT / "configs" / "scenario"
        names = sorted(p.stem for p in folder.glob("*.yaml"))
        raise ValueError(f"scenario {str(name)!r} is unknown: choose one of {', '.join(names)}")
    data = OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    assert isinstance(data, dict)
    data.pop("defaults", None)
    return ScenarioSpec.from_config(data)


@dataclass(frozen=True)
class EvalJob:
    """One simulation: a controller on a scenario with a seed (picklable; runs in any process).

    Attributes:
        controller: What drives the scenario's agent flow.
        scenario: The cell.
        seed: The run's seed.
        reward: Reward weights and budget (also for the native controllers' post-hoc reward).
        backend: Simulator backend.
        timeout_s: Longest wait for one simulator step.
        max_change: The environment's largest per-step change factor (policies only).
        action_mode: ``cwnd`` or ``rate`` (policies only).
        deterministic: Trained policies act with their mean action.
        from_s: Measure only steps ending after this time.
    """

    controller: ControllerSpec
    scenario: ScenarioSpec
    seed: int
    reward: RewardSpec
    backend: str = "ns3"
    timeout_s: float = 60.0
    max_change: float = 2.0
    action_mode: str = "cwnd"
    deterministic: bool = True
    from_s: float = 0.0


def _pct(values: np.ndarray, p: float) -> float:
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float(np.percentile(v, p)) if v.size else float("nan")


def _none_to_nan(x: Any) -> float:
    return float("nan") if x is None else float(x)


def step_frame(rec: EpisodeRecords, agent_flows: Sequence[int] = ()) -> pd.DataFrame:
    """Per-step, per-flow quantities of one episode for plots and delay distributions.

    Columns (``TIMESERIES_COLUMNS`` without the run's keys): ``t``, ``flow``, ``cca``, ``agent``
    (the flow is driven by the controller under test), ``ue``, ``active``, ``throughput_mbps``
    (bytes received in the step), ``cwnd_bytes``, ``pacing_rate_mbps``, ``rtt_ms`` (mean RTT of
    the step, NaN without samples), ``queueing_delay_ms`` (mean minus minimum RTT, NaN without
    samples), ``hol_ms`` and ``capacity_mbps`` of the flow's UE, and ``reward``. The observation
    at t = 0 is left out.
    """
    spec = rec.spec
    step_s = spec.step_ms / 1000.0
    keep = np.array(rec.times) > 0
    times = np.array(rec.times)[keep]
    flows = np.stack(rec.flows)[keep] if rec.flows else np.zeros((0, len(spec.flows), len(FLOW)))
    ues = np.stack(rec.ues)[keep] if rec.ues else np.zeros((0, spec.num_ues, len(UE)))
    rewards = np.array(rec.rewards)[keep]
    n_t, n_f = flows.shape[0], len(spec.flows)
    flow_ue = np.array([f.ue for f in spec.flows], dtype=int)
    samples = flows[:, :, FLOW["rtt_samples"]] > 0
    rtt = np.where(samples, flows[:, :, FLOW["rtt_mean_ms"]], np.nan)
    agent = np.zeros(n_f, dtype=bool)
    agent[list(agent_flows)] = True
    return pd.DataFrame(
        {
            "t": np.repeat(times, n_f),
            "flow": np.tile(np.arange(n_f), n_t),
            "cca": np.tile(np.array([f.cca for f in spec.flows], dtype=object), n_t),
            "agent": np.tile(agent, n_t),
            "ue": np.tile(flow_ue, n_t),
            "active": (flows[:, :, FLOW["active"]] > 0).reshape(-1),
            "throughput_mbps": (flows[:, :, FLOW["rx_bytes"]] * 8e-6 / step_s).reshape(-1),
            "cwnd_bytes": flows[:, :, FLOW["cwnd_bytes"]].reshape(-1),
            "pacing_rate_mbps": flows[:, :, FLOW["pacing_rate_mbps"]].reshape(-1),
            "rtt_ms": rtt.reshape(-1),
            "queueing_delay_ms": (rtt - flows[:, :, FLOW["rtt_min_ms"]]).reshape(-1),
            "hol_ms": ues[:, flow_ue, UE["hol_ms"]].reshape(-1),
            "capacity_mbps": ues[:, flow_ue, UE["capacity_mbps"]].reshape(-1),
            "reward": np.repeat(rewards, n_f),
        }
    )


def _posthoc_rewards(rec: EpisodeRecords, flow: int, reward: RewardSpec) -> None:
    """Fill a native run's rewards with the environment's reward of ``flow`` (same function)."""
    from cellgym.reward import reward_terms

    flow_ue = np.array([f.ue for f in rec.spec.flows])
    step_s = rec.spec.step_ms / 1000.0
    for i in range(1, len(rec.times)):
        terms = reward_terms(rec.flows[i], rec.ues[i], flow_ue, flow, step_s, reward)
        rec.rewards[i] = terms["reward"]


def records_to_rows(
    rec: EpisodeRecords,
    job: EvalJob,
    wall_s: float = float("nan"),
) -> tuple[dict[str, Any], list[dict[str, Any]], pd.DataFrame]:
    """The results row, the per-flow rows and the time series of one finished run.

    ``throughput_mbps`` is the mean over the agent flows (those the controller drives) of each
    flow's bytes received over its active time; ``cell_throughput_mbps`` all flows' bytes over the
    measured time. Delay percentiles follow ``cellgym.metrics`` (HoL of UEs with an active flow,
    queueing delay of active flows with RTT samples), with p95 added. FCT percentiles are over the
    ``short`` flows that completed (NaN without any). ``mean_reward`` is the environment's reward of
    the (first) agent flow per step; native controllers get it computed from their records with the
    same function (``cellgym.reward.reward_terms``).
    """
    spec = job.scenario
    agent_flows = spec.agent_flows
    if agent_flows and not np.isfinite(np.array(rec.rewards[1:], dtype=float)).any():
        _posthoc_rewards(rec, agent_flows[0], job.reward)
    m = compute_metrics(rec, delay_budget_ms=job.reward.delay_budget_ms, from_s=job.from_s)
    ts = step_frame(rec, agent_flows)
    measured = ts[ts["t"] > job.from_s]
    hol = measured[measured["active"]].drop_duplicates(["t", "ue"])["hol_ms"].to_numpy()
    qd = measured.loc[measured["active"], "queueing_delay_ms"].to_numpy()
    key = {"controller": job.controller.label, "scenario": spec.name, "seed": int(job.seed)}
    flow_rows = []
    for f in m["flows"]:
        row = {**key, "flow": f["flow"], "cca": f["cca"], "agent": f["flow"] in agent_flows}
        row.update({"ue": f["ue"], "traffic": f["traffic"]})
        row.update({"throughput_mbps": f["throughput_mbps"], "rx_bytes": f["rx_bytes"]})
        for q in ("p50", "p90", "p99"):
            row[f"rtt_ms_{q}"] = _none_to_nan(f["rtt_ms"][q])
        for q in ("p50", "p90", "p99"):
            row[f"queueing_delay_ms_{q}"] = _none_to_nan(f["queueing_delay_ms"][q])
        row.update({k: f[k] for k in ("losses", "loss_events", "retx_segments")})
        row["fct_s"] = _none_to_nan(f["fct_s"])
        flow_rows.append(row)
    short = [f for f in m["flows"] if f["traffic"] == "short"]
    fcts = np.array([f["fct_s"] for f in short if f["fct_s"] is not None], dtype=np.float64)
    agent_tput = [m["flows"][i]["throughput_mbps"] for i in agent_flows]
    measured_s = max(m["duration_s"] - job.from_s, 1e-9)
    row = {
        **key,
        "kind": job.controller.kind,
        "backend": job.backend,
        "status": "ok",
        "error": "",
        "wall_s": float(wall_s),
        "duration_s": m["duration_s"],
        "steps": m["steps"],
        "utilization": _none_to_nan(m["utilization"]),
        "throughput_mbps": float(np.mean(agent_tput)) if agent_tput else float("nan"),
        "cell_throughput_mbps": float(sum(f["rx_bytes"] for f in m["flows"]) * 8e-6 / measured_s),
        "jain_fairness": m["jain_fairness"],
        "hol_budget_compliance": _none_to_nan(m["hol_budget_compliance"]),
        "delay_budget_ms": m["delay_budget_ms"],
        "short_flows": len(short),
        "short_flows_done": int(fcts.size),
        "fct_s_p50": _pct(fcts, 50),
        "fct_s_p95": _pct(fcts, 95),
        "losses": int(sum(f["losses"] for f in m["flows"])),
        "mean_reward": _none_to_nan(m["mean_reward"]),
    }
    for q in (50, 90, 95, 99):
        row[f"hol_delay_ms_p{q}"] = _pct(hol, q)
        row[f"queueing_delay_ms_p{q}"] = _pct(qd, q)
    ts.insert(0, "seed", int(job.seed))
    ts.insert(0, "scenario", spec.name)
    ts.insert(0, "controller", job.controller.label)
    return {c: row.get(c) for c in RESULT_COLUMNS}, flow_rows, ts


_POLICY_CACHE: dict[tuple[ControllerSpec, bool], Predictor] = {}


def run_job(job: EvalJob, policy: Predictor | None = None) -> EpisodeRecords:
    """Run one job and return its records (``run_native`` or ``run_policy``, as in training).

    Args:
        job: The job.
        policy: The policy of a ``policy``-kind controller (in-process only).
    """
    c = job.controller
    spec = job.scenario
    if c.kind == "native":
        return run_native(spec, c.name, job.seed, job.backend, job.timeout_s)
    max_change = c.max_change if c.max_change is not None else job.max_change
    action_mode = c.action_mode if c.action_mode is not None else job.action_mode
    if c.kind == "baseline":
        from baselines import make_policy

        policy = make_policy(
            c.name,
            max_change=max_change,
            step_ms=spec.step_ms,
            budget_ms=job.reward.delay_budget_ms,
        )
    elif c.kind == "trained":
        cache_key = (c, job.deterministic)
        if cache_key not in _POLICY_CACHE:
            _POLICY_CACHE[cache_key] = load_checkpoint_policy(c)
        policy = _POLICY_CACHE[cache_key]
    elif policy is None:
        raise ValueError(f"controller {c.label!r}: a policy object is needed to run it")
    env_kwargs = {"timeout_s": job.timeout_s, "max_change": max_change, "action_mode": action_mode}
    return run_policy(
        spec,
        policy,
        job.seed,
        c.label,
        job.reward,
        job.backend,
        env_kwargs,
        deterministic=job.deterministic,
    )


@dataclass
class JobOutcome:
    """What a job sends back: its rows, or its error."""

    job: EvalJob
    row: dict[str, Any]
    flows: list[dict[str, Any]] = field(default_factory=list)
    timeseries: pd.DataFrame | None = None


def failed_row(job: EvalJob, error: BaseException | str, wall_s: float = float("nan")) -> dict:
    """The results row of a job that did not finish: ``status == "failed"``, NaN metrics."""
    row: dict[str, Any] = {c: float("nan") for c in RESULT_COLUMNS}
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    row.update(
        {
            "controller": job.controller.label,
            "kind": job.controller.kind,
            "scenario": job.scenario.name,
            "seed": int(job.seed),
            "backend": job.backend,
            "status": "failed",
            "error": text,
            "wall_s": float(wall_s),
            "steps": 0,
            "short_flows": 0,
            "short_flows_done": 0,
            "losses": 0,
        }
    )
    return row


def execute_job(job: EvalJob, policy: Predictor | None = None) -> JobOutcome:
    """Run a job and summarise it; an exception becomes a ``failed`` row (never raised)."""
    t0 = time.monotonic()
    try:
        rec = run_job(job, policy)
        row, flows, ts = records_to_rows(rec, job, time.monotonic() - t0)
        return JobOutcome(job, row, flows, ts)
    except Exception as exc:  # isolate the failure to this job
        log.debug("job failed", exc_info=True)
        return JobOutcome(job, failed_row(job, exc, time.monotonic() - t0))


def _worker_init() -> None:
    """Keep each worker to one thread: the jobs are the parallelism."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")
    logging.basicConfig(level=logging.WARNING)


class Evaluation(NamedTuple):
    """The tidy outputs of ``evaluate_many`` (unpacks as ``results, flows, timeseries``).

    Attributes:
        results: One row per (controller, scenario, seed); ``RESULT_COLUMNS``. Failed jobs have
            ``status == "failed"``, their ``error``, and NaN metrics.
        flows: One row per flow of each successful run; ``FLOW_COLUMNS``.
        timeseries: One row per step and flow of each successful run; ``TIMESERIES_COLUMNS``
            (empty when ``keep_timeseries=False``).
    """

    results: pd.DataFrame
    flows: pd.DataFrame
    timeseries: pd.DataFrame


def evaluate_many(
    controllers: Sequence[str | ControllerSpec],
    scenarios: Sequence[str | ScenarioSpec | Mapping[str, Any]],
    seeds: Sequence[int],
    reward: RewardSpec | Mapping[str, Any] | None = None,
    backend: str = "ns3",
    jobs: int = 1,
    policies: Mapping[str, Predictor | str | Path] | None = None,
    timeout_s: float = 60.0,
    max_change: float = 2.0,
    action_mode: str = "cwnd",
    deterministic: bool = True,
    from_s: float = 0.0,
    sim_time_s: float | None = None,
    keep_timeseries: bool = True,
    on_done: Callable[[JobOutcome, int, int], None] | None = None,
) -> Evaluation:
    """Run every controller x scenario x seed, ``jobs`` simulations at a time; tidy tables back.

    Every job is its own simulation. Policies (baselines and trained checkpoints alike) run through
    ``run_policy``, the environment loop of training; native controllers through ``run_native``.
    Trained checkpoints travel to the workers as paths and are loaded there (once per worker);
    policy objects in ``policies`` run in this process. A job that raises is recorded as a
    ``failed`` row with its error; the others complete. A job whose worker process dies is run
    again in a process of its own, and recorded as failed if that dies too.

    With ``jobs > 1`` the workers are started with ``forkserver`` (``spawn`` where missing), so a
    script calling this needs the usual ``if __name__ == "__main__":`` guard.

    Args:
        controllers: Names (``resolve_controller``: ns-3 TCPs, ``xrc``, baseline policies, run
            directories, model paths, ``<algo>:<path>``, keys of ``policies``) or specs.
        scenarios: Scenario config names (``configs/scenario/<name>.yaml``), mappings or specs.
        seeds: Seeds; the same for every controller and scenario.
        reward: Reward weights and budget (default ``RewardSpec()``); the budget also sets
            ``hol_budget_compliance``.
        backend: ``ns3`` or ``fast``.
        jobs: Simulations at a time (worker processes when > 1).
        policies: Extra controllers by label: a policy object (SB3 ``predict``), run in this
            process, or a checkpoint path, loaded in the workers. Labels also go in
            ``controllers``; those missing there are appended.
        timeout_s: Longest wait for one simulator step.
        max_change: The environment's largest per-step change factor (baselines; checkpoints
            use the value they were trained with when their config says it).
        action_mode: ``cwnd`` or ``rate`` (as ``max_change``).
        deterministic: Trained policies act with their mean action.
        from_s: Measure only steps ending after this time (a warm-up).
        sim_time_s: When set, overrides every scenario's ``sim_time_s``.
        keep_timeseries: Return the per-step table (needed for CDF and time-series plots).
        on_done: Called as ``on_done(outcome, k, n)`` after each job (progress).

    Raises:
        ValueError: Before any simulation, for an unknown controller, scenario or backend, an
            empty list or ``jobs < 1``, naming the argument and the allowed values.
    """
    from envs.session import BACKENDS

    if backend not in BACKENDS:
        raise ValueError(
            f"backend={backend!r} is not available: choose one of {', '.join(BACKENDS)}"
        )
    if jobs < 1:
        raise ValueError(f"jobs={jobs!r} is out of range: allowed [1, inf)")
    for name, seq in (("controllers", controllers), ("scenarios", scenarios), ("seeds", seeds)):
        if not list(seq):
            raise ValueError(f"{name} is empty: give at least one")
    policies = dict(policies or {})
    names = list(controllers) + [p for p in policies if p not in list(controllers)]
    specs = [resolve_controller(c, f"controllers[{i}]", policies) for i, c in enumerate(names)]
    specs = _unique_labels(specs)
    cells = [load_scenario(s) for s in scenarios]
    if sim_time_s is not None:
        cells = [dataclasses.replace(s, sim_time_s=float(sim_time_s)) for s in cells]
    for s in cells:
        if not s.agent_flows:
            raise ValueError(f"scenario {s.name!r} has no agent flow for the controllers to drive")
    rew = reward if isinstance(reward, RewardSpec) else RewardSpec(**dict(reward or {}))
    all_jobs = [
        EvalJob(
            c, s, int(seed), rew, backend, timeout_s, max_change, action_mode, deterministic, from_s
        )
        for c in specs
        for s in cells
        for seed in seeds
    ]
    local = [i for i, j in enumerate(all_jobs) if j.controller.kind == "policy" or jobs == 1]
    remote = [i for i in range(len(all_jobs)) if i not in set(local)]
    outcomes: dict[int, JobOutcome] = {}
    n = len(all_jobs)

    def finish(i: int, outcome: JobOutcome) -> None:
        outcomes[i] = outcome
        r = outcome.row
        where = f"[{len(outcomes)}/{n}] {r['controller']} / {r['scenario']} / seed {r['seed']}"
        if r["status"] == "ok":
            log.info("%s: ok in %.1f s", where, r["wall_s"])
        else:
            log.warning("%s failed: %s", where, r["error"])
        if on_done is not None:
            on_done(outcome, len(outcomes), n)

    def run_local() -> None:
        for i in local:
            job = all_jobs[i]
            finish(i, execute_job(job, policies.get(job.controller.label)))

    if remote:
        workers = max(1, min(jobs - (1 if local else 0), len(remote)))
        _warm_up(backend, cells[0])
        broken = _run_pool(all_jobs, remote, workers, finish, run_local)
        # A worker that died (segfault, out of memory) breaks the whole pool: run each job it took
        # down again in a pool of its own, so only a job that kills its process fails.
        for i in broken:
            _run_pool(all_jobs, [i], 1, finish, None, last_try=True)
    else:
        run_local()

    ordered = [outcomes[i] for i in range(n)]
    results = pd.DataFrame([o.row for o in ordered], columns=list(RESULT_COLUMNS))
    results["seed"] = results["seed"].astype("int64")
    flows = pd.DataFrame([r for o in ordered for r in o.flows], columns=list(FLOW_COLUMNS))
    frames = [o.timeseries for o in ordered if o.timeseries is not None and keep_timeseries]
    ts = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame(columns=list(TIMESERIES_COLUMNS))
    )
    return Evaluation(results, flows, ts)


#: Modules the fork server imports once, so that each worker starts warm.
_PRELOAD: tuple[str, ...] = ("cellgym.evaluation", "envs.lte_cell", "envs.session", "baselines")


def _pool_context() -> Any:
    """``forkserver`` (workers forked from a server that imported ``_PRELOAD``), else ``spawn``."""
    import multiprocessing as mp

    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    # Takes effect only if the server is not running yet; '__main__' is the default preload.
    ctx.set_forkserver_preload(["__main__", *_PRELOAD])
    return ctx


def _warm_up(backend: str, scenario: ScenarioSpec) -> None:
    """Compile (or load) the fast simulator's kernels once here, before the workers need them.

    Numba caches the compiled kernels on disk: without this, each worker would compile them at
    the same time on a cold cache (about a minute of CPU each).
    """
    if backend != "fast":
        return
    t0 = time.monotonic()
    tiny = dataclasses.replace(scenario, sim_time_s=scenario.step_ms / 1000.0)
    try:
        run_native(tiny, "cubic", 0, backend)
    except Exception:  # the jobs will report it
        log.debug("warm-up of the fast backend failed", exc_info=True)
    log.debug("fast backend warm-up: %.1f s", time.monotonic() - t0)


def _run_pool(
    all_jobs: list[EvalJob],
    indices: list[int],
    workers: int,
    finish: Callable[[int, JobOutcome], None],
    meanwhile: Callable[[], None] | None,
    last_try: bool = False,
) -> list[int]:
    """Run ``all_jobs[indices]`` in a process pool; return the jobs lost to a dead worker."""
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    lost: list[int] = []
    with ProcessPoolExecutor(workers, mp_context=_pool_context(), initializer=_worker_init) as pool:
        futures = {pool.submit(execute_job, all_jobs[i]): i for i in indices}
        if meanwhile is not None:
            meanwhile()
        for fut in as_completed(futures):
            i = futures[fut]
            try:
                outcome = fut.result()
            except BrokenProcessPool as exc:
                if not last_try:
                    lost.append(i)
                    continue
                error = f"worker process died while running this job ({exc})"
                outcome = JobOutcome(all_jobs[i], failed_row(all_jobs[i], error))
            except Exception as exc:  # e.g. a result that cannot be sent back
                outcome = JobOutcome(all_jobs[i], failed_row(all_jobs[i], exc))
            finish(i, outcome)
    if lost:
        log.warning("a worker process died: running its %d job(s) again one by one", len(lost))
    return sorted(lost)


def _unique_labels(specs: list[ControllerSpec]) -> list[ControllerSpec]:
    """Make labels unique: a repeated label gets its model's run directory (or a number) added."""
    seen: dict[str, int] = {}
    for s in specs:
        seen[s.label] = seen.get(s.label, 0) + 1
    out, used = [], set()
    for s in specs:
        label = s.label
        if seen[label] > 1 and s.kind == "trained":
            model = Path(s.name)
            run = (
                model.parent.name if model.stem == "model" else f"{model.parent.name}/{model.stem}"
            )
            label = f"{label}@{run}"
        base, k = label, 2
        while label in used:
            label = f"{base}#{k}"
            k += 1
        used.add(label)
        out.append(dataclasses.replace(s, label=label))
    return out
