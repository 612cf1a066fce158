"""Controller resolution: what a name in ``controllers=[...]`` means, checked before any run.

A controller is a registry entry (``cellgym.controllers``: a native sender or a baseline policy),
a trained checkpoint (a ``train.py`` run directory, a ``model.zip``, or ``<algo>:<path>``), or the
label of a policy object given in-process. ``resolve_controller`` turns each into a picklable
``ControllerSpec``; a name that is unknown, or that the chosen backend cannot run, fails with a
``SpecError`` naming the field and the allowed values::

    controllers[2]='illinois' does not run on backend='fast': on fast choose one of ...
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cellgym import controllers
from cellgym.vocab import ALGORITHM_PREFIXES, ALGORITHMS, SpecError

log = logging.getLogger(__name__)

#: Kinds of ``ControllerSpec``.
KINDS: tuple[str, ...] = ("native", "baseline", "trained", "policy")

#: ``predict(obs, state, episode_start, deterministic) -> (action, state)``, as in SB3.
Predictor = Any


@dataclass(frozen=True)
class ControllerSpec:
    """What to run for one controller: a picklable description, never a live model.

    Attributes:
        label: Name in the tables and plots.
        kind: ``native`` (an ns-3 TCP or XRC's sender, in the simulator), ``baseline`` (a policy
            of the registry ``cellgym.controllers``), ``trained`` (an SB3 checkpoint, loaded where
            it runs) or ``policy`` (an object given in ``evaluate_many(policies=...)``; runs
            in-process).
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
    """The statistics saved beside ``model`` by training (final, best or a checkpoint)."""
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


def _prefixes() -> str:
    return ", ".join(sorted(ALGORITHM_PREFIXES))


def resolve_checkpoint(
    path: str | Path, algo: str | None = None, label: str | None = None
) -> ControllerSpec:
    """Describe a trained checkpoint: a run directory (its ``model.zip``) or a model file.

    A run directory means its last model, ``model.zip``, the model ``train.py`` evaluates at the
    end by default (``final_model=last``); name ``<run_dir>/best_model.zip`` for the best periodic
    evaluation's model (its ``best_vecnormalize.pkl`` is found beside it).

    The algorithm, feature set, ``max_change`` and ``action_mode`` come from the run's saved
    config (``.hydra/config.yaml``) when there is one; ``algo`` overrides the algorithm.

    Args:
        path: A run directory of ``train.py`` or a ``.zip`` saved by SB3.
        algo: SB3 class name or prefix (``ppo``, ``SAC``, ...); required without a saved config.
        label: Name in the tables; default: the run's agent name, else the algorithm in lower case.

    Raises:
        FileNotFoundError: No model at ``path``.
        SpecError: The algorithm is unknown or cannot be found out.
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
        if key not in ALGORITHM_PREFIXES and algo not in ALGORITHMS:
            raise SpecError(
                f"controller {str(path)!r}: algorithm {algo!r} is unknown: "
                f"choose one of {_prefixes()}"
            )
        algo_cls = ALGORITHM_PREFIXES.get(key, algo)
    elif agent.get("algo"):
        algo_cls = str(agent["algo"])
    else:
        raise SpecError(
            f"controller {str(path)!r}: no saved config says which algorithm trained it: "
            f"write it as <algo>:<path>, <algo> one of {_prefixes()}"
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
    backend: str | None = None,
) -> ControllerSpec:
    """Parse one controller of a list: a registry name, a trained checkpoint or a policy label.

    Accepted forms: a name of the registry ``cellgym.controllers`` (a native sender such as
    ``cubic`` or ``xrc``, or a baseline policy such as ``xrc_policy``); a key of ``policies``; a
    run directory or ``.zip`` path; or ``<algo>:<path>`` (e.g. ``ppo:runs/x``) naming the
    algorithm of a checkpoint.

    Args:
        text: The controller as written in the config.
        field_name: The config field, for error messages (e.g. ``controllers[2]``).
        policies: Labels of in-process policies (their values are not used here, except paths).
        backend: When given, a registry controller must run on it.

    Raises:
        SpecError: Naming ``field_name`` and the allowed values, for an unknown controller or
            one that ``backend`` cannot run.
        FileNotFoundError: For a checkpoint path that holds no model.
    """
    if isinstance(text, ControllerSpec):
        return text
    text = str(text).strip()
    if policies and text in policies:
        value = policies[text]
        if isinstance(value, (str, Path)):
            return resolve_controller_path(value, label=text, field_name=field_name)
        return ControllerSpec(label=text, kind="policy", name=text)
    if text in controllers.CONTROLLERS:
        entry = controllers.get(text, backend, field_name=field_name)
        kind = "native" if entry.kind == "native" else "baseline"
        return ControllerSpec(label=text, kind=kind, name=text)
    return resolve_controller_path(text, field_name=field_name, backend=backend)


def resolve_controller_path(
    text: str | Path,
    label: str | None = None,
    field_name: str = "controllers",
    backend: str | None = None,
) -> ControllerSpec:
    """``resolve_checkpoint`` of ``[<algo>:]<path>``; an error names the field and the choices."""
    text = str(text)
    algo, sep, rest = text.partition(":")
    if sep and algo.lower() in ALGORITHM_PREFIXES:
        return resolve_checkpoint(rest, algo=algo, label=label)
    if _looks_like_path(text):
        return resolve_checkpoint(text, label=label)
    native = controllers.names(kind="native", backend=backend)
    policy = controllers.names(kind="policy", backend=backend)
    where = f" on backend={backend!r}" if backend else ""
    raise SpecError(
        f"{field_name}={text!r} is not a known controller: choose a native sender{where} "
        f"({', '.join(native)}), a baseline policy ({', '.join(policy)}), "
        "a run directory or model .zip, or <algo>:<path> with <algo> one of "
        f"{_prefixes()}"
    )


def load_checkpoint_policy(spec: ControllerSpec, deterministic: bool | None = None) -> Predictor:
    """Load a trained checkpoint as a policy: the model behind its saved ``VecNormalize``.

    Uses ``agents.factory.NormalizedPolicy``, the wrapper training evaluates with, so the model sees
    the observations (features and normalisation) it was trained on.
    """
    import pickle

    from agents.factory import NormalizedPolicy, algo_class

    if spec.kind != "trained" or spec.algo is None:
        raise SpecError(f"controller {spec.label!r} is not a trained checkpoint")
    model = algo_class(spec.algo).load(spec.name, device="cpu")
    stats = None
    if spec.vecnormalize is not None:
        stats = pickle.loads(Path(spec.vecnormalize).read_bytes())
        stats.training = False
    return NormalizedPolicy(model, stats, spec.features, deterministic=deterministic)


def unique_labels(specs: list[ControllerSpec]) -> list[ControllerSpec]:
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
