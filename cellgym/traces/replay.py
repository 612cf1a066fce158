"""Measuring a replay: the bytes a saturating flow delivered per window, against the capacity.

A flow that keeps a link's buffer backlogged delivers the link's capacity; its per-step records
(``rx_bytes`` of TCP payload) give the IP bytes the link carried in each window, which
``replay_error`` compares with ``capacity_per_window`` of the series the link replayed.
"""

from __future__ import annotations

import numpy as np

from cellgym.fields import SEGMENT_BYTES
from cellgym.traces.series import MTU_BYTES


def delivered_per_window(rx_bytes: np.ndarray, step_s: float, window_s: float) -> np.ndarray:
    """IP bytes (1500 per 1448-byte segment) delivered in each whole window of ``window_s``.

    ``rx_bytes[i]`` is the payload received in step ``i``, which covers ``[i, i + 1) * step_s``
    (the records after the episode's first observation); a trailing part window is dropped.
    """
    per = int(round(window_s / step_s))
    if per < 1 or abs(per * step_s - window_s) > 1e-9:
        raise ValueError(f"window_s={window_s!r} is not a whole number of steps of {step_s!r} s")
    ip = np.asarray(rx_bytes, dtype=np.float64) * (MTU_BYTES / SEGMENT_BYTES)
    n = ip.size // per
    return ip[: n * per].reshape(n, per).sum(axis=1)


def looped_windows(capacity: np.ndarray, n: int) -> np.ndarray:
    """The first ``n`` windows of a looped per-window capacity (``capacity_per_window``)."""
    return np.asarray(capacity, dtype=np.float64)[np.arange(n) % len(capacity)]
