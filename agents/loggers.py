"""Loggers of a run: SB3's CSV (always), TensorBoard, and Weights & Biases through TensorBoard.

W&B receives the training scalars by patching TensorBoard's writer
(``wandb.tensorboard.patch(root_logdir=...)``), so every scalar SB3 writes to
``<run_dir>/tensorboard`` also reaches the W&B run. Without an API key or without network the run
is offline: its files stay in ``<run_dir>/wandb/offline-run-*`` for ``wandb sync`` to upload.
"""

from __future__ import annotations

import csv
import logging
import os
import secrets
import socket
from pathlib import Path
from typing import Any

from stable_baselines3.common.logger import (
    CSVOutputFormat,
    KVWriter,
    Logger,
    TensorBoardOutputFormat,
)

from configs.schema import LoggerConfig

log = logging.getLogger(__name__)


class ResumableCSVOutputFormat(CSVOutputFormat):
    """SB3's CSV writer that keeps the rows of an earlier run up to ``keep_until`` steps.

    Args:
        filename: The CSV file.
        keep_until: Keep earlier rows whose ``time/total_timesteps`` is at most this; ``None``
            starts a new file.
    """

    def __init__(self, filename: str, keep_until: int | None = None) -> None:
        header: list[str] = []
        rows: list[dict[str, str]] = []
        if keep_until is not None and Path(filename).is_file():
            with open(filename, newline="") as f:
                reader = csv.DictReader(f)
                header = list(reader.fieldnames or [])
                for row in reader:
                    steps = row.get("time/total_timesteps") or ""
                    if steps and float(steps) > keep_until:
                        continue
                    rows.append(row)
        super().__init__(filename)
        if header:
            writer = csv.DictWriter(self.file, fieldnames=header, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
            self.file.flush()
            self.keys = header


def wandb_mode(cfg: LoggerConfig) -> str:
    """``online`` or ``offline``: ``auto`` is online only with an API key and a reachable server."""
    if cfg.mode != "auto":
        return cfg.mode
    if os.environ.get("WANDB_MODE") in ("offline", "dryrun", "disabled"):
        return "disabled" if os.environ["WANDB_MODE"] == "disabled" else "offline"
    if not os.environ.get("WANDB_API_KEY"):
        return "offline"
    host = os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai").split("//")[-1].split("/")[0]
    try:
        socket.create_connection((host.split(":")[0], 443), timeout=3).close()
    except OSError:
        log.warning("W&B server %s unreachable: logging offline", host)
        return "offline"
    return "online"


class RunLoggers:
    """The SB3 logger of a run and, with ``logger=wandb``, its W&B run.

    Args:
        cfg: The ``logger`` group.
        run_dir: The run directory.
        config: The composed config as a plain dict (W&B's run config).
        resume_from: Steps already done when resuming (keeps ``progress.csv`` rows up to there).
    """

    def __init__(
        self,
        cfg: LoggerConfig,
        run_dir: Path,
        config: dict[str, Any],
        resume_from: int | None = None,
    ) -> None:
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.wandb_run: Any = None
        formats: list[KVWriter] = [
            ResumableCSVOutputFormat(str(self.run_dir / "progress.csv"), keep_until=resume_from)
        ]
        if cfg.name in ("tensorboard", "wandb"):
            tb_dir = self.run_dir / "tensorboard"
            tb_dir.mkdir(parents=True, exist_ok=True)
            if cfg.name == "wandb":
                self._init_wandb(tb_dir, config)
            formats.append(TensorBoardOutputFormat(str(tb_dir)))
        self.sb3 = Logger(str(self.run_dir), formats)

    def _init_wandb(self, tb_dir: Path, config: dict[str, Any]) -> None:
        import wandb

        mode = wandb_mode(self.cfg)
        id_file = self.run_dir / "wandb_id.txt"
        run_id = id_file.read_text().strip() if id_file.is_file() else secrets.token_hex(4)
        id_file.write_text(run_id + "\n")
        wandb.tensorboard.patch(root_logdir=str(tb_dir), pytorch=True)
        self.wandb_run = wandb.init(
            project=self.cfg.project,
            entity=self.cfg.entity,
            group=self.cfg.group,
            tags=list(self.cfg.tags),
            name=self.run_dir.name,
            id=run_id,
            resume="allow",
            dir=str(self.run_dir),
            mode=mode,
            config=config,
        )
        log.info("W&B run %s (%s) in %s", run_id, mode, self.run_dir / "wandb")

    def log_final(
        self,
        summary: dict[str, dict[str, float]],
        table: Any = None,
        plots: list[Path] | None = None,
    ) -> None:
        """Send the final evaluation to W&B: metrics per controller, the table, the plots."""
        if self.wandb_run is None:
            return
        import wandb

        flat = {
            f"final/{controller}/{key}": value
            for controller, row in summary.items()
            for key, value in row.items()
        }
        payload: dict[str, Any] = dict(flat)
        if table is not None:
            payload["final/comparison"] = wandb.Table(dataframe=table)
        for path in plots or []:
            payload[f"plots/{Path(path).stem}"] = wandb.Image(str(path))
        self.wandb_run.log(payload)
        self.wandb_run.summary.update(flat)

    def close(self) -> None:
        """Flush and close the writers; finish the W&B run and undo the TensorBoard patch."""
        self.sb3.close()
        if self.wandb_run is not None:
            import wandb

            self.wandb_run.finish()
            wandb.tensorboard.unpatch()
            self.wandb_run = None
