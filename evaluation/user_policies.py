"""A user's own policy class as a controller: ``module:Class`` or ``path/to/file.py:Class``.

A policy class written outside CellGym needs no registration: any class whose instances have
Stable-Baselines3's ``predict(observation, state, episode_start, deterministic) -> (action,
state)`` (``baselines.base.BaselinePolicy`` gives one from an ``act(obs) -> float``) runs on the
environment's raw observation (``envs.contract.OBS``), exactly as the registry's baselines do.
``evaluation/example_policies.py`` holds two such classes. The class may declare:

- ``action_mode = "rate"`` (class attribute; default ``"cwnd"``): what its action changes;
- ``max_change`` (class attribute): the environment's largest per-step factor it was written for
  (default: the evaluation's);
- a ``name`` (class attribute): its label in the tables (default: the class name);
- constructor parameters among ``max_change``, ``step_ms``, ``budget_ms`` and ``action_mode``:
  each is passed the environment's value, as ``baselines.make_policy`` does for the baselines.

``resolve_user_policy`` checks the reference and the class in this process (before any
simulation) and returns a picklable ``ControllerSpec`` (kind ``policy``, ``name`` the reference);
``execute_user_job`` runs one job in any process: it imports the class there, builds the policy
for the job's scenario and reward, and runs it through ``evaluation.pool.execute_job`` (the loop
of ``evaluate.py`` and training).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import re
import sys
from pathlib import Path
from typing import Any

from cellgym.vocab import ACTION_MODES, ALGORITHM_PREFIXES, SpecError, check_choice
from evaluation.records import EvalJob
from evaluation.resolve import ControllerSpec

_MODULE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_CLASS = re.compile(r"^[A-Za-z_]\w*$")
#: Environment facts a user's constructor may take (as ``baselines.make_policy`` passes them).
ENV_PARAMS: tuple[str, ...] = ("max_change", "step_ms", "budget_ms", "action_mode")


def is_class_ref(text: str) -> bool:
    """Whether ``text`` names a policy class: ``module:Class`` or ``file.py:Class``.

    ``<algo>:<path>`` (``ppo:runs/x``) is a checkpoint, not a class.
    """
    left, sep, right = str(text).strip().rpartition(":")
    if not sep or not _CLASS.match(right) or left.lower() in ALGORITHM_PREFIXES:
        return False
    return left.endswith(".py") or bool(_MODULE.match(left))


def _module_from_file(path: Path) -> Any:
    """Import a ``.py`` file as a module of its own (once per process)."""
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem)
    name = f"cellgym_user_{stem}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SpecError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def load_policy_class(ref: str, field_name: str = "controllers") -> type:
    """The class ``ref`` names (``module:Class`` or ``file.py:Class``).

    Raises:
        SpecError: Naming ``field_name``: a file or module that is not there or fails to import,
            a missing class, or a class without ``predict``.
    """
    left, _, cls_name = str(ref).strip().rpartition(":")
    try:
        if left.endswith(".py"):
            path = Path(left).expanduser().resolve()
            if not path.is_file():
                raise SpecError(f"{field_name}={ref!r}: no file {path}")
            module = _module_from_file(path)
        else:
            module = importlib.import_module(left)
    except SpecError:
        raise
    except Exception as exc:  # the user's module may raise anything on import
        raise SpecError(f"{field_name}={ref!r}: importing {left!r} failed: {exc!r}") from exc
    cls = getattr(module, cls_name, None)
    if not inspect.isclass(cls):
        raise SpecError(f"{field_name}={ref!r}: {left!r} has no class {cls_name!r}")
    if not callable(getattr(cls, "predict", None)):
        raise SpecError(
            f"{field_name}={ref!r}: {cls_name} has no predict(observation, state, episode_start, "
            "deterministic) method (subclass baselines.base.BaselinePolicy and write act(obs))"
        )
    return cls


def resolve_user_policy(
    ref: str, field_name: str = "controllers", label: str | None = None
) -> ControllerSpec:
    """Check a user's policy class and describe it as a picklable ``ControllerSpec``.

    The spec's ``name`` is the reference, with a file's path made absolute (the workers import it
    again); ``action_mode`` and ``max_change`` come from the class's attributes.

    Raises:
        SpecError: As ``load_policy_class``, or an ``action_mode`` attribute outside
            ``ACTION_MODES``.
    """
    cls = load_policy_class(ref, field_name)
    left, _, cls_name = str(ref).strip().rpartition(":")
    if left.endswith(".py"):
        ref = f"{Path(left).expanduser().resolve()}:{cls_name}"
    mode = getattr(cls, "action_mode", None)
    if mode is not None and not isinstance(mode, str):
        mode = None  # an instance attribute set in __init__, not a class declaration
    if mode is not None:
        check_choice(f"{field_name} ({cls_name}.action_mode)", mode, ACTION_MODES)
    max_change = getattr(cls, "max_change", None)
    max_change = float(max_change) if isinstance(max_change, int | float) else None
    name = getattr(cls, "name", None)
    default = name if isinstance(name, str) and name and name != "baseline" else cls_name
    spec = ControllerSpec(
        label=label or default,
        kind="policy",
        name=str(ref),
        action_mode=mode,
        max_change=max_change,
    )
    try:  # a constructor that needs more than the environment's facts fails here, not in a run
        _instantiate(cls, spec, max_change=2.0, step_ms=20.0, budget_ms=10.0, action_mode="cwnd")
    except Exception as exc:
        raise SpecError(
            f"{field_name}={ref!r}: {cls_name}(...) failed with the environment's facts "
            f"({', '.join(ENV_PARAMS)} as keywords, each only if the constructor takes it): "
            f"{exc!r}"
        ) from exc
    return spec


def _instantiate(cls: type, spec: ControllerSpec, **facts: Any) -> Any:
    """``cls`` built with the facts its constructor takes (the spec's own mode and change win)."""
    if spec.max_change is not None:
        facts["max_change"] = spec.max_change
    if spec.action_mode is not None:
        facts["action_mode"] = spec.action_mode
    try:
        accepted = inspect.signature(cls).parameters
    except (TypeError, ValueError):  # a class whose signature cannot be read
        accepted = {}
    return cls(**{k: v for k, v in facts.items() if k in accepted})


def make_user_policy(spec: ControllerSpec, job: EvalJob) -> Any:
    """An instance of the spec's class for ``job``: its constructor gets the env facts it takes."""
    return _instantiate(
        load_policy_class(spec.name),
        spec,
        max_change=job.max_change,
        step_ms=job.scenario.step_ms,
        budget_ms=job.reward.delay_budget_ms,
        action_mode=job.action_mode,
    )


def execute_user_job(job: EvalJob) -> Any:
    """Run one job in this process (a pool worker or the caller): ``evaluation.pool.JobOutcome``.

    A ``policy``-kind controller is a user's class (``resolve_user_policy``), built here; every
    other kind runs as in ``evaluate.py``. An exception becomes a ``failed`` row, never raised.
    """
    from evaluation.pool import JobOutcome, execute_job
    from evaluation.records import failed_row

    policy = None
    if job.controller.kind == "policy":
        try:
            policy = make_user_policy(job.controller, job)
        except Exception as exc:  # isolate the failure to this job
            return JobOutcome(job, failed_row(job, exc))
    outcome = execute_job(job, policy)
    outcome.timeseries = None  # the transfer tables need the results row only
    outcome.flows = []
    return outcome
