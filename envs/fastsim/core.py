"""The compiled cell model's entry points (``driver``), for importers of the one-module kernel.

The model lives in one module per part (docs/fastsim.md, "Code map"): ``channel``, ``mac``,
``rlc``, ``receiver``, ``enb_agents/xrc.py``, the senders in ``senders/`` (one module per
congestion control, dispatched in ``senders/dispatch.py``), ``app``, and the driver that runs
them TTI by TTI (``driver``). The integer codes are in ``codes``.
"""

from __future__ import annotations

from envs.fastsim.driver import reset_batch, reset_cell, step_batch, step_cell

__all__ = ["reset_batch", "reset_cell", "step_batch", "step_cell"]
