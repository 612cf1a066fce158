"""Load finished runs for analysis (the notebooks in ``notebooks/`` use these helpers).

A *run directory* is what ``python train.py`` writes (see ``workflows.train``):
``.hydra/config.yaml``, ``seed.txt``, ``progress.csv`` (SB3's CSV logger), ``eval_history.csv``
(periodic evaluation of the policy and the baselines), ``evaluation/`` (the final comparison)
and, with ``logger=wandb``, ``wandb/offline-run-*/run-*.wandb`` (offline W&B files). A sweep
(``--multirun``) puts one run directory per job under its sweep directory.

An *evaluation directory* is what ``python evaluate.py`` writes (``results.parquet``: one row per
controller x scenario x seed; ``summary.csv``; ``flows.parquet``; ``timeseries.parquet``) or a
run's ``evaluation/`` folder (``summary.json``: one metrics record per controller and seed).
``load_results`` reads either into the same tidy table.

Everything here reads files only: no simulator, no training code.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

RUN_DIR_ENV = "CELLGYM_RUN_DIR"
EVAL_DIR_ENV = "CELLGYM_EVAL_DIR"
RUNS_ROOT = Path("runs")

# Percentile dictionaries of a metrics record, flattened to "<name>_<pct>" columns.
_PERCENTILE_FIELDS = ("hol_delay_ms", "queueing_delay_ms", "rtt_ms")
# Flow fields averaged over a run's agent flows (or all flows) into the tidy table.
_FLOW_FIELDS = ("throughput_mbps", "fct_s", "losses", "loss_events", "retx_segments")


def is_run_dir(path: str | Path) -> bool:
    """Whether ``path`` looks like a training run directory (config or training log present)."""
    p = Path(path)
    return p.is_dir() and (
        (p / ".hydra" / "config.yaml").is_file()
        and ((p / "seed.txt").is_file() or (p / "progress.csv").is_file())
    )


def find_run_dirs(root: str | Path = RUNS_ROOT) -> list[Path]:
    """Every run directory under ``root`` (``root`` itself included), oldest first.

    Args:
        root: A run directory, a sweep directory or a tree of them (default ``runs/``).

    Returns:
        The run directories, sorted by the modification time of their ``.hydra/config.yaml``
        (so ``[-1]`` is the newest); empty when there is none.
    """
    root = Path(root)
    if not root.exists():
        return []
    found = {
        p.parent.parent for p in root.rglob(".hydra/config.yaml") if is_run_dir(p.parent.parent)
    }
    return sorted(found, key=lambda p: ((p / ".hydra" / "config.yaml").stat().st_mtime, str(p)))


def resolve_run_dirs(value: str | Path | None = None, root: str | Path = RUNS_ROOT) -> list[Path]:
    """The run directories a notebook should load.

    Args:
        value: Run or sweep directories separated by ``os.pathsep`` (``:``) or commas; ``None``
            or empty: ``$CELLGYM_RUN_DIR``, else the newest run under ``root``.
        root: Where to look for the newest run.

    Raises:
        FileNotFoundError: When nothing is found.
    """
    value = value or os.environ.get(RUN_DIR_ENV, "")
    if str(value).strip():
        dirs: list[Path] = []
        for part in str(value).replace(",", os.pathsep).split(os.pathsep):
            if part.strip():
                found = find_run_dirs(Path(part.strip()).expanduser())
                if not found:
                    raise FileNotFoundError(f"no run directory at or under {part.strip()!r}")
                dirs.extend(found)
        return dirs
    found = find_run_dirs(root)
    if not found:
        raise FileNotFoundError(
            f"no run directory under {Path(root).resolve()}: train one (python train.py) or set "
            f"{RUN_DIR_ENV}"
        )
    return [found[-1]]


def run_label(run_dir: str | Path) -> str:
    """A short name for a run in legends: agent, scenario and seed when known, else the path."""
    run_dir = Path(run_dir)
    try:
        cfg = load_config(run_dir)
    except (FileNotFoundError, ValueError):
        return run_dir.name
    agent = (cfg.get("agent") or {}).get("name", "?")
    scenario = (cfg.get("scenario") or {}).get("name", "?")
    seed = load_seed(run_dir)
    return f"{agent}/{scenario}/seed{seed}" if seed is not None else f"{agent}/{scenario}"


def load_config(run_dir: str | Path) -> dict[str, Any]:
    """The composed config of a run (``.hydra/config.yaml``) as a plain dict."""
    from omegaconf import OmegaConf

    path = Path(run_dir) / ".hydra" / "config.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"no config at {path}")
    cfg = OmegaConf.to_container(OmegaConf.load(path), resolve=False)
    if not isinstance(cfg, dict):
        raise ValueError(f"{path}: not a mapping")
    return cfg  # type: ignore[return-value]


def load_overrides(run_dir: str | Path) -> list[str]:
    """The command-line overrides of a run (``.hydra/overrides.yaml``); empty when absent."""
    from omegaconf import OmegaConf

    path = Path(run_dir) / ".hydra" / "overrides.yaml"
    if not path.is_file():
        return []
    return [str(x) for x in OmegaConf.to_container(OmegaConf.load(path)) or []]  # type: ignore[union-attr]


def load_seed(run_dir: str | Path) -> int | None:
    """The seed recorded in ``seed.txt`` (``None`` when absent)."""
    path = Path(run_dir) / "seed.txt"
    return int(path.read_text().strip()) if path.is_file() else None


def load_progress(run_dir: str | Path) -> pd.DataFrame:
    """SB3's ``progress.csv``, one row per logger dump, sorted by ``time/total_timesteps``.

    Rows written by the periodic evaluation (``eval/*`` columns) and by the training updates
    (``train/*``, ``rollout/*``, ``time/*``) share the file; columns absent in a row are NaN.
    Returns an empty frame when the file is missing or empty.
    """
    path = Path(run_dir) / "progress.csv"
    if not path.is_file() or path.stat().st_size == 0:
        return pd.DataFrame()
    frame = pd.read_csv(path)
    if "time/total_timesteps" in frame:
        frame = frame.sort_values("time/total_timesteps", kind="stable").reset_index(drop=True)
    return frame


def load_eval_history(run_dir: str | Path) -> pd.DataFrame:
    """``eval_history.csv``: one row per periodic evaluation and controller.

    Columns include ``timesteps``, ``controller``, ``reward_mean``, ``utilization`` and the delay
    percentiles. Returns an empty frame when the run had no periodic evaluation.
    """
    path = Path(run_dir) / "eval_history.csv"
    if not path.is_file() or path.stat().st_size == 0:
        return pd.DataFrame()
    return pd.read_csv(path).sort_values(["timesteps", "controller"], kind="stable")


def _flatten_record(rec: dict[str, Any], flows: str = "agent") -> dict[str, Any]:
    """One metrics record (``cellgym.metrics.compute_metrics``) as a flat row."""
    row: dict[str, Any] = {}
    for key, value in rec.items():
        if key == "flows":
            continue
        if isinstance(value, dict):
            for sub, v in value.items():
                row[f"{key}_{sub}"] = v
        else:
            row[key] = value
    if "mean_reward" in row and "reward_mean" not in row:
        row["reward_mean"] = row["mean_reward"]
    flow_list = rec.get("flows") or []
    chosen = [f for f in flow_list if f.get("cca") == flows] or flow_list
    for name in _FLOW_FIELDS:
        values = [float(f[name]) for f in chosen if f.get(name) is not None]
        if values and name not in row:
            # Throughput adds up over the agent's flows; the others are per-flow averages.
            row[name] = sum(values) if name == "throughput_mbps" else sum(values) / len(values)
    for name in ("rtt_ms",):
        for pct in ("p50", "p90", "p99"):
            values = [f[name][pct] for f in chosen if isinstance(f.get(name), dict)]
            if values:
                row.setdefault(f"{name}_{pct}", float(sum(values)) / len(values))
    return row


def load_results(eval_dir: str | Path) -> pd.DataFrame:
    """The tidy results of an evaluation: one row per controller x scenario x seed.

    Reads ``results.parquet`` when present (``evaluate.py``), else ``summary.json`` (a list of
    metrics records, as in a run's ``evaluation/`` folder or older evaluations) flattened to the
    same columns: ``controller``, ``scenario``, ``seed``, ``utilization``, ``jain_fairness``,
    ``mean_reward`` (also as ``reward_mean``), ``hol_delay_ms_p50/p90/p99``,
    ``queueing_delay_ms_p50/...``, ``throughput_mbps`` (summed over the agent flows),
    ``rtt_ms_p50/...``, ``fct_s``, ...

    Raises:
        FileNotFoundError: When neither file exists.
    """
    eval_dir = Path(eval_dir)
    parquet = eval_dir / "results.parquet"
    summary = eval_dir / "summary.json"
    if parquet.is_file():
        frame = pd.read_parquet(parquet)
    elif summary.is_file():
        records = json.loads(summary.read_text())
        if isinstance(records, dict):
            records = list(records.values())
        frame = pd.DataFrame([_flatten_record(r) for r in records])
    else:
        raise FileNotFoundError(f"{eval_dir}: no results.parquet or summary.json")
    if "mean_reward" in frame and "reward_mean" not in frame:
        frame["reward_mean"] = frame["mean_reward"]
    return frame


def final_rewards(run_dir: str | Path) -> pd.Series:
    """Mean reward per controller (over the seeds) in a run's final evaluation (``evaluation/``).

    For the trained policy (labelled with the agent's name, e.g. ``ppo``) this is the objective
    that ``train.py``'s Hydra main returns to sweepers such as Optuna (the same aggregator,
    ``cellgym.metrics.group_means``, over the successful runs).
    """
    from cellgym.metrics import group_means

    results = load_results(Path(run_dir) / "evaluation")
    if "status" in results:
        results = results[results["status"].eq("ok")]
    means = group_means(results, ["reward_mean"])
    series = pd.Series({c: m["reward_mean"] for c, m in means.items()}, name="reward_mean")
    return series.rename_axis("controller")


def load_summary(eval_dir: str | Path) -> pd.DataFrame:
    """``summary.csv`` of an evaluation (per-controller means); empty when absent."""
    path = Path(eval_dir) / "summary.csv"
    return pd.read_csv(path) if path.is_file() else pd.DataFrame()


def is_eval_dir(path: str | Path) -> bool:
    """Whether ``path`` holds evaluation results (``results.parquet`` or ``summary.json``)."""
    p = Path(path)
    return (p / "results.parquet").is_file() or (p / "summary.json").is_file()


def find_eval_dirs(root: str | Path = ".") -> list[Path]:
    """Evaluation directories at or under ``root``, oldest first (by their results' mtime)."""
    root = Path(root)
    if not root.exists():
        return []
    found = {p.parent for p in root.rglob("results.parquet")}
    found |= {
        p.parent for p in root.rglob("summary.json") if not (p.parent / "results.parquet").is_file()
    }

    def mtime(p: Path) -> float:
        f = p / "results.parquet"
        return (f if f.is_file() else p / "summary.json").stat().st_mtime

    return sorted(found, key=lambda p: (mtime(p), str(p)))


def resolve_eval_dir(
    value: str | Path | None = None, roots: Iterable[str | Path] = ("outputs", "runs")
) -> Path:
    """The evaluation directory a notebook should load.

    Args:
        value: An evaluation directory or a run directory (its ``evaluation/`` is used);
            ``None`` or empty: ``$CELLGYM_EVAL_DIR``, else the newest evaluation under ``roots``
            (``outputs/evaluate/...`` of ``evaluate.py``, ``runs/.../evaluation``).
        roots: Where to look for the newest evaluation.

    Raises:
        FileNotFoundError: When nothing is found.
    """
    value = value or os.environ.get(EVAL_DIR_ENV, "")
    if str(value).strip():
        path = Path(str(value).strip()).expanduser()
        if is_eval_dir(path):
            return path
        if is_eval_dir(path / "evaluation"):
            return path / "evaluation"
        found = find_eval_dirs(path)
        if found:
            return found[-1]
        raise FileNotFoundError(f"no evaluation results at or under {path}")
    found = [d for r in roots for d in find_eval_dirs(r)]
    if not found:
        raise FileNotFoundError(
            f"no evaluation under {', '.join(map(str, roots))}: run python evaluate.py or set "
            f"{EVAL_DIR_ENV}"
        )
    return max(found, key=lambda p: max(f.stat().st_mtime for f in p.iterdir()))


def load_timeseries(eval_dir: str | Path) -> pd.DataFrame:
    """The per-step time series of every run of an evaluation (``controller``, ``seed``, ...).

    Reads ``timeseries.parquet`` (``evaluate.py``: one row per step and flow, with ``t``,
    ``flow``, ``agent``, ``active``, ``throughput_mbps``, ``hol_ms``, ``queueing_delay_ms``, ...)
    or, in older layouts, ``<controller>/seed<k>/timeseries_flows.csv``. Empty when there are
    none (a training run's ``evaluation/`` keeps no time series).
    """
    eval_dir = Path(eval_dir)
    parquet = eval_dir / "timeseries.parquet"
    if parquet.is_file():
        return pd.read_parquet(parquet)
    frames = []
    for path in sorted(eval_dir.glob("*/seed*/timeseries_flows.csv")):
        frame = pd.read_csv(path)
        frame.insert(0, "seed", int(path.parent.name.removeprefix("seed")))
        frame.insert(0, "controller", path.parent.parent.name)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def load_flows(eval_dir: str | Path) -> pd.DataFrame:
    """``flows.parquet`` of an evaluation (one row per flow of each run); empty when absent."""
    path = Path(eval_dir) / "flows.parquet"
    return pd.read_parquet(path) if path.is_file() else pd.DataFrame()


# --- offline W&B files -------------------------------------------------------------------------

_WANDB_BLOCK = 32768
_WANDB_HEADER = 7  # ":W&B", magic 0xBEE1 (little endian), version byte
_RECORD_HEADER = 7  # crc32c (4), length (2), type (1)
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4


def _wandb_records(path: Path) -> list[bytes]:
    """The raw records of a ``run-*.wandb`` file (LevelDB log layout: 32 KiB blocks)."""
    data = path.read_bytes()
    if data[:4] != b":W&B":
        raise ValueError(f"{path}: not a W&B run file")
    records: list[bytes] = []
    pending = b""
    pos = _WANDB_HEADER
    while pos + _RECORD_HEADER <= len(data):
        left = _WANDB_BLOCK - pos % _WANDB_BLOCK
        if left < _RECORD_HEADER:  # block trailer padding
            pos += left
            continue
        _, length, kind = struct.unpack("<IHB", data[pos : pos + _RECORD_HEADER])
        pos += _RECORD_HEADER
        chunk = data[pos : pos + length]
        pos += length
        if kind == _FULL:
            records.append(chunk)
        elif kind == _FIRST:
            pending = chunk
        elif kind == _MIDDLE:
            pending += chunk
        elif kind == _LAST:
            records.append(pending + chunk)
            pending = b""
        elif kind == 0 and length == 0:  # zero padding at the end of a block
            pos += _WANDB_BLOCK - pos % _WANDB_BLOCK if pos % _WANDB_BLOCK else 0
        else:
            break  # a torn tail (the run was killed while writing)
    return records


def _item_key(item: Any) -> str:
    return item.key or ".".join(item.nested_key)


def _json_value(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return text


def load_wandb_offline(run_dir: str | Path) -> dict[str, Any] | None:
    """Read the newest offline W&B run under ``<run_dir>/wandb`` without the W&B server.

    Parses the run's ``run-<id>.wandb`` file (protobuf records of ``wandb.proto``).

    Returns:
        ``None`` when the run has no W&B files; else a dict with ``id``, ``project``, ``path``
        (the offline run folder, for ``wandb sync``), ``config`` (dict), ``summary`` (dict of
        the last value of every key) and ``history`` (a DataFrame, one row per logged step).
    """
    root = Path(run_dir) / "wandb"
    files = sorted(root.glob("*run-*/run-*.wandb"), key=lambda p: p.stat().st_mtime)
    if not files:
        return None
    from wandb.proto import wandb_internal_pb2 as pb

    path = files[-1]
    out: dict[str, Any] = {
        "id": path.stem.removeprefix("run-"),
        "project": None,
        "path": path.parent,
        "config": {},
        "summary": {},
        "history": pd.DataFrame(),
    }
    rows: list[dict[str, Any]] = []
    for raw in _wandb_records(path):
        rec = pb.Record()
        try:
            rec.ParseFromString(raw)
        except Exception:  # noqa: BLE001 - a damaged record ends the readable part
            break
        kind = rec.WhichOneof("record_type")
        if kind == "run":
            out["project"] = rec.run.project or None
            for item in rec.run.config.update:
                out["config"][_item_key(item)] = _json_value(item.value_json)
        elif kind == "config":
            for item in rec.config.update:
                out["config"][_item_key(item)] = _json_value(item.value_json)
        elif kind == "history":
            rows.append({_item_key(i): _json_value(i.value_json) for i in rec.history.item})
        elif kind == "summary":
            for item in rec.summary.update:
                out["summary"][_item_key(item)] = _json_value(item.value_json)
    out["config"].pop("_wandb", None)
    if rows:
        history = pd.DataFrame(rows)
        numeric = [
            c
            for c in history
            if history[c].map(lambda v: v is None or isinstance(v, int | float)).all()
        ]
        history = history[numeric].apply(pd.to_numeric, errors="coerce")
        if "_step" in history:
            history = history.sort_values("_step", kind="stable").reset_index(drop=True)
        out["history"] = history
    return out
