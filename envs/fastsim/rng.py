"""The kernels' random numbers: one counter-based generator (splitmix64) per cell.

Each cell's state is one ``uint64`` (``rng[b]``); nothing global is read, so a cell's draws
depend on its seed and its own history only (STYLE.md 3.5).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _rand(rng: np.ndarray, b: int) -> float:
    """Uniform [0, 1) from cell ``b``'s splitmix64 counter (advances it)."""
    z = rng[b] + np.uint64(0x9E3779B97F4A7C15)
    rng[b] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)
