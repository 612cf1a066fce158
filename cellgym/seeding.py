"""Seeds: one user seed per run, mapped to ns-3's ``RngRun`` the same way everywhere."""

from __future__ import annotations

import numpy as np
from gymnasium.utils.seeding import np_random

from cellgym.vocab import check_range, check_type

MAX_RNG_RUN = 2**31 - 1
#: Allowed user seeds (numpy's seed sequence takes non-negative integers).
MAX_SEED = 2**32 - 1


def check_seed(name: str, seed: object) -> None:
    """Raise ``SpecError`` naming ``name`` unless ``seed`` is an integer in ``[0, MAX_SEED]``."""
    check_type(name, seed, "int")
    check_range(name, seed, 0, MAX_SEED)  # type: ignore[arg-type]


def draw_rng_run(rng: np.random.Generator) -> int:
    """Draw an ns-3 ``RngRun`` (>= 1) from a generator (the environment's ``np_random``)."""
    return int(rng.integers(1, MAX_RNG_RUN))


def rng_run_for_seed(seed: int) -> int:
    """The ``RngRun`` of the first episode after ``env.reset(seed=seed)``."""
    return draw_rng_run(np_random(seed)[0])
