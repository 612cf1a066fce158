"""The offline dataset: every policy's trajectories on a split of a suite, in Minari's format.

``python -m evaluation.benchmark dataset --suite v1 --split train --backend fast`` runs each
controller on every task and seed of the split, exactly as ``score`` runs it (the suite's reward
and ``policy_settings``, ``LteCellEnv`` or, with several agent flows, ``MultiFlowCellEnv``, reset
with the run's seed), and writes one Minari episode per agent flow and run
(``docs/benchmark.md``, "The offline dataset"):

- ``observations`` ``[n + 1, 11]`` float32: the environment's observation (``envs.contract``),
  the reset's first, then each step's;
- ``actions`` ``[n, 1]`` float32: the policy's action, clipped to the action space ``[-1, 1]``
  as the environment clips it;
- ``rewards``, ``terminations``, ``truncations`` ``[n]``: as the environment returned them;
- ``infos``, one row per observation: ``t`` (s), ``flows`` and ``ues`` (the cell's records
  of that instant, ``cellgym.fields``' columns, NaN-padded to the dataset's largest cell),
  ``capacity_mbps`` (the agent's UE) and each reward term (``cellgym.reward.TERMS``; NaN in the
  first row).

Each episode's metadata names its task, seed, controller, agent flow, action mode, ``max_change``
and the full scenario, so ``episode_env`` rebuilds the environment it ran in; the dataset's
metadata holds the provenance (commit, suite, split, backend, controllers, seeds). Only policies
are recorded: a native sender (CUBIC, BBR, XRC's sender, ...) acts per ACK inside the simulator,
never through the action space, so it has no actions to record.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cellgym import controllers
from cellgym.fields import FLOW_FIELDS, UE_FIELDS
from cellgym.paths import REPO_ROOT
from cellgym.provenance import record
from cellgym.reward import TERMS
from cellgym.scenario import ScenarioSpec
from cellgym.vocab import SpecError
from envs.contract import OBS_FIELDS, action_space, observation_space
from evaluation.benchmark.cache import code_digest, run_inputs
from evaluation.benchmark.entrants import Entrant
from evaluation.benchmark.metrics import reward_spec
from evaluation.benchmark.recorder import STEP_TIMEOUT_S, DatasetJob, plan, record_run
from evaluation.benchmark.suite import Suite

#: The dataset's layout version (``metadata["cellgym"]["format"]``).
DATASET_FORMAT = 1
#: The command, for the provenance.
COMMAND = "python -m evaluation.benchmark dataset"


def dataset_id(suite: str, split: str, backend: str) -> str:
    """The default Minari id of a suite's split on a backend: ``cellgym/v1-train-fast-v0``."""
    return f"cellgym/{suite}-{split}-{backend}-v0"


def default_controllers(backend: str) -> list[str]:
    """The registry's policies that run on ``backend`` (the controllers recorded by default)."""
    return controllers.names(kind="policy", backend=backend)


def check_recordable(entrants: Sequence[Entrant]) -> None:
    """Refuse a controller without actions in the environment's action space.

    Raises:
        SpecError: Naming the controller: a native sender or the computed optimum.
    """
    policies = ", ".join(controllers.names(kind="policy"))
    for i, e in enumerate(entrants):
        if e.computed or e.kind == "native":
            what = (
                "is computed, never run"
                if e.computed
                else (
                    "is a native sender: it acts per ACK inside the simulator, not through the "
                    "environment's action space, so it has no actions to record"
                )
            )
            raise SpecError(
                f"--controllers[{i}]={e.text!r} {what}; record a policy instead ({policies}, a "
                "trained checkpoint or a module:Class)"
            )


@contextmanager
def _datasets_root(root: Path) -> Iterator[None]:
    """Minari's ``MINARI_DATASETS_PATH`` set to ``root`` for the block."""
    before = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(root)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = before


def default_root() -> Path:
    """Minari's local store: ``$MINARI_DATASETS_PATH``, else ``~/.minari/datasets``."""
    env = os.environ.get("MINARI_DATASETS_PATH")
    return Path(env) if env else Path.home() / ".minari" / "datasets"


def _failed(job: DatasetJob, error: str) -> str:
    return error


def _safe_record(job: DatasetJob) -> list[dict[str, Any]] | str:
    """``record_run``, its exception turned into the error line (never raised)."""
    try:
        return record_run(job)
    except Exception as exc:  # isolate the failure to this run
        return f"{type(exc).__name__}: {exc}"


def dataset_path(root: Path, name: str) -> Path:
    """The folder of dataset ``name`` under ``root``."""
    return Path(root) / name


def check_dataset_id(name: str) -> None:
    """Raise ``SpecError`` for an id Minari does not accept (``namespace/name-vN``)."""
    from minari.dataset.minari_dataset import parse_dataset_id

    try:
        parse_dataset_id(name)
    except ValueError:
        raise SpecError(
            f"--id={name!r} is not a Minari dataset id: write namespace/name-v<version>, e.g. "
            "cellgym/v1-train-fast-v0"
        ) from None


def generate(
    suite: Suite,
    split: str,
    backend: str,
    entrants: Sequence[Entrant],
    root: Path,
    name: str,
    workers: int = 1,
    force: bool = False,
    args: Sequence[str] = (),
    progress: bool = True,
) -> dict[str, Any]:
    """Record every run of ``plan`` and write the Minari dataset ``name`` under ``root``.

    Episodes are written in the plan's order as soon as every earlier run has finished (a failed
    run is left out and reported). The dataset's ``metadata["cellgym"]`` holds the provenance
    and ``complete`` (False until the last run is written).

    Returns:
        ``{"id", "path", "episodes", "steps", "runs", "failed": [(job label, error)],
        "wall_s", "size_bytes"}``.

    Raises:
        SpecError: The dataset exists and ``force`` is not given.
    """
    check_recordable(entrants)
    check_dataset_id(name)
    root = Path(root).resolve()  # Minari joins a relative root onto itself
    path = dataset_path(root, name)
    _clear_existing(path, name, force)
    jobs = plan(suite, split, backend, entrants)
    prov = record(
        COMMAND, list(args), (*run_inputs(backend), "evaluation/benchmark/*.py"), REPO_ROOT
    )
    cellgym_meta = _initial_metadata(suite, split, backend, entrants, jobs, prov)
    t0 = time.monotonic()
    data = _create_empty(root, name, suite, split, backend, entrants, prov)
    data.storage.update_metadata({"cellgym": cellgym_meta})
    state, failed = _record_all(data, jobs, workers, backend, progress)
    wall = time.monotonic() - t0
    cellgym_meta.update(complete=not failed, wall_s=wall, failed=[list(f) for f in failed])
    data.storage.update_metadata({"cellgym": cellgym_meta})
    return {
        "id": name,
        "root": str(root),
        "path": str(path),
        "episodes": state["episodes"],
        "steps": state["steps"],
        "runs": len(jobs),
        "failed": failed,
        "wall_s": wall,
        "size_bytes": folder_size(path),
    }


def _clear_existing(path: Path, name: str, force: bool) -> None:
    """Make way for the dataset at ``path``: delete an existing one if ``force``.

    Raises:
        SpecError: The dataset exists and ``force`` is not given.
    """
    if path.exists():
        if not force:
            raise SpecError(
                f"--id={name!r} exists at {path}: delete it, pass another --id or --force"
            )
        shutil.rmtree(path)


def _initial_metadata(
    suite: Suite,
    split: str,
    backend: str,
    entrants: Sequence[Entrant],
    jobs: Sequence[DatasetJob],
    prov: dict[str, Any],
) -> dict[str, Any]:
    """The dataset's ``metadata["cellgym"]`` before its first run: ``complete`` False."""
    return {
        "format": DATASET_FORMAT,
        "complete": False,
        "suite": suite.name,
        "suite_version": suite.version,
        "suite_sha256": suite.digest(),
        "split": split,
        "backend": backend,
        "seeds": list(suite.seeds[split]),
        "tasks": [t.name for t in suite.tasks_of(split)],
        "controllers": [
            {"label": e.label, "text": e.text, "kind": e.kind, "identity": e.identity}
            for e in entrants
        ],
        "delay_budget_ms": suite.delay_budget_ms,
        "obs_fields": list(OBS_FIELDS),
        "flow_fields": list(FLOW_FIELDS),
        "ue_fields": list(UE_FIELDS),
        "reward_terms": list(TERMS),
        "max_flows": jobs[0].max_flows if jobs else 0,
        "max_ues": jobs[0].max_ues if jobs else 0,
        "code_digest": code_digest(backend),
        "commit": prov["commit"],
        "dirty": prov["dirty"],
        "provenance": prov,
    }


def _create_empty(
    root: Path,
    name: str,
    suite: Suite,
    split: str,
    backend: str,
    entrants: Sequence[Entrant],
    prov: dict[str, Any],
) -> Any:
    """A new, empty Minari dataset ``name`` under ``root``, with its description."""
    import minari

    with _datasets_root(root), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Minari's notes on absent optional fields
        return minari.create_dataset_from_buffers(
            name,
            [],
            observation_space=observation_space(),
            action_space=action_space(),
            algorithm_name=", ".join(e.label for e in entrants),
            author="CellGym",
            code_permalink=f"git commit {prov['commit'] or 'unknown'}",
            description=(
                f"CellGym Bench suite {suite.name}, {split} split, {backend} backend: each of "
                f"{len(entrants)} controllers on every task and seed (docs/benchmark.md, "
                "'The offline dataset')"
            ),
            data_format="arrow",
        )


def _record_all(
    data: Any, jobs: Sequence[DatasetJob], workers: int, backend: str, progress: bool
) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Record every job and append its episodes to ``data`` in the plan's order.

    Returns:
        The counts (``{"next", "episodes", "steps"}``) and the failed runs as
        ``(job label, error)``.
    """
    from tqdm import tqdm

    done: dict[int, list[dict[str, Any]] | str] = {}
    failed: list[tuple[str, str]] = []
    state = {"next": 0, "episodes": 0, "steps": 0}
    bar = tqdm(total=len(jobs), unit="run", desc=f"dataset {backend}", disable=not progress or None)

    def flush() -> None:
        while state["next"] in done:
            job = jobs[state["next"]]
            result = done.pop(state["next"])
            state["next"] += 1
            if isinstance(result, str):
                failed.append((f"{job.entrant.label} / {job.task} / seed {job.seed}", result))
                continue
            _write(data, result, state)

    def finish(job: DatasetJob, result: list[dict[str, Any]] | str) -> None:
        done[job.index] = result
        bar.set_postfix_str(f"{job.entrant.label} / {job.task} / seed {job.seed}", refresh=False)
        bar.update()
        flush()

    try:
        _run(jobs, workers, finish)
    finally:
        bar.close()
    return state, failed


def _run(
    jobs: Sequence[DatasetJob],
    workers: int,
    finish: Callable[[DatasetJob, list[dict[str, Any]] | str], None],
) -> None:
    """Record every job, ``workers`` at a time (``evaluation.pool``'s worker processes)."""
    if not jobs:
        return
    if workers <= 1:
        for job in jobs:
            finish(job, _safe_record(job))
        return
    from evaluation.pool import _warm_up, pool_map

    _warm_up(jobs[0].backend, jobs[0].scenario)
    # In the plan's order (not the longest first, as ``score`` does): each result is written as
    # soon as the earlier ones are, so few wait in memory.
    lost = pool_map(
        list(jobs),
        lambda ex, job: ex.submit(_safe_record, job),
        finish,
        _failed,
        min(workers, len(jobs)),
    )
    for job in lost:  # a worker died: each of its jobs again, alone
        pool_map([job], lambda ex, j: ex.submit(_safe_record, j), finish, _failed, 1, True)


def _write(data: Any, episodes: list[dict[str, Any]], state: dict[str, int]) -> None:
    """Append a run's episodes to the Minari dataset ``data`` with their metadata."""
    from minari.data_collector import EpisodeBuffer

    first = data.storage.total_episodes
    buffers = [
        EpisodeBuffer(
            id=first + k,
            seed=ep["seed"],
            observations=ep["observations"],
            actions=ep["actions"],
            rewards=ep["rewards"],
            terminations=ep["terminations"],
            truncations=ep["truncations"],
            infos=ep["infos"],
        )
        for k, ep in enumerate(episodes)
    ]
    data.update_dataset_from_buffer(buffers)
    ids = [first + k for k in range(len(episodes))]
    data.storage.update_episode_metadata([ep["metadata"] for ep in episodes], ids)
    state["episodes"] += len(episodes)
    state["steps"] += sum(len(ep["rewards"]) for ep in episodes)


def folder_size(path: Path) -> int:
    """The bytes of every file under ``path``."""
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def episode_metadata(data: Any, index: int) -> dict[str, Any]:
    """The CellGym metadata of episode ``index`` of a loaded dataset (task, seed, scenario...)."""
    return next(iter(data.storage.get_episode_metadata([int(data.episode_indices[index])])))


def episode_env(data: Any, index: int) -> tuple[Any, int]:
    """The environment episode ``index`` ran in, and the seed to ``reset`` it with.

    A single-agent episode gives ``LteCellEnv``; an episode of a task with several agent flows
    gives ``MultiFlowCellEnv`` (its agent is ``flow_<agent_flow>``), whose other agents' actions
    are in the run's other episodes.
    """
    meta = episode_metadata(data, index)
    kwargs = {
        "scenario": ScenarioSpec.from_config(meta["scenario"]),
        "reward": reward_spec(meta["delay_budget_ms"]),
        "backend": meta["backend"],
        "action_mode": meta["action_mode"],
        "max_change": meta["max_change"],
        "timeout_s": STEP_TIMEOUT_S,
    }
    if meta["num_agents"] > 1:
        from envs.multi_flow import MultiFlowCellEnv

        return MultiFlowCellEnv(**kwargs), int(meta["seed"])
    from envs.lte_cell import LteCellEnv

    return LteCellEnv(**kwargs), int(meta["seed"])


def describe(result: dict[str, Any]) -> str:
    """The command's closing lines: what was written, its size and time, how to load it."""
    size = result["size_bytes"] / 2**20
    lines = [
        f"wrote {result['episodes']} episodes ({result['steps']} steps) of {result['runs']} runs "
        f"to {result['path']}: {size:.1f} MiB in {result['wall_s']:.1f} s",
        f'load: MINARI_DATASETS_PATH={result["root"]} python -c "import minari; '
        f'd = minari.load_dataset({result["id"]!r})"',
    ]
    for where, error in result["failed"]:
        lines.append(f"FAILED {where}: {error}")
    return "\n".join(lines)


def metadata_json(data: Any) -> dict[str, Any]:
    """The dataset's ``cellgym`` metadata (provenance) as a dict."""
    meta = data.storage.metadata.get("cellgym", {})
    return json.loads(json.dumps(meta)) if meta else {}


__all__ = [
    "DATASET_FORMAT",
    "DatasetJob",
    "check_recordable",
    "dataset_id",
    "default_controllers",
    "describe",
    "episode_env",
    "episode_metadata",
    "generate",
    "plan",
    "record_run",
]
