"""Seeds: one user seed per run, mapped to ns-3's ``RngRun`` the same way everywhere."""

from __future__ import annotations

import numpy as np
from gymnasium.utils.seeding import np_random

MAX_RNG_RUN = 2**31 - 1


def draw_rng_run(rng: np.random.Generator) -> int:
    """Draw an ns-3 ``RngRun`` (>= 1) from a generator (the environment's ``np_random``)."""
    return int(rng.integers(1, MAX_RNG_RUN))


def rng_run_for_seed(seed: int) -> int:
    """The ``RngRun`` of the first episode after ``env.reset(seed=seed)``."""
    return draw_rng_run(np_random(seed)[0])
