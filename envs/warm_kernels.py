"""Compile the fast simulator's kernels into numba's on-disk cache ahead of use.

A cold compile takes minutes (4 to 7 on these 2-core machines), once per version of the sources
(``_numba_cache``). ``make setup`` runs ``python -m envs.warm_kernels`` so that training,
evaluation and the tests start from a warm cache: the entry points of a batch of cells and of the
vector environment, LTE and NR. A batch spread over threads (``parallel=True``) runs the same
entry points on slices of its cells (``envs.fastsim.threads``): nothing more to compile. A marker
file in the cache directory makes a second call return at once.

>>> python -m envs.warm_kernels               # compile what is missing
>>> python -m envs.warm_kernels --check       # exit 1 when the cache is cold
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from envs.fastsim import _numba_cache


def _marker() -> Path:
    """Written into the cache directory once the entry points have compiled."""
    return _numba_cache.cache_dir() / "warm"


def _exercise() -> None:
    """Reset and step an LTE and an NR cell through the batch and the vector-env entry points."""
    from cellgym.scenario import ScenarioSpec
    from envs.fastsim.params import FastSimParams
    from envs.fastsim.sim import FastCellBatch
    from envs.fastsim.vector_env import make_fast_vec_env

    for cell in ({"type": "lte"}, {"type": "nr"}):
        spec = {"cell": cell, "flows": [{"cca": "agent"}, {"cca": "cubic"}], "sim_time_s": 1.0}
        batch = FastCellBatch(FastSimParams.from_spec(ScenarioSpec(**spec)), 2)
        batch.reset(np.arange(2))
        batch.step()
        env = make_fast_vec_env(spec, num_envs=2, seed=0)
        env.reset(seed=0)
        env.step(np.ones((2, 1), dtype=np.float32))
        env.close()


def is_warm() -> bool:
    """Whether the entry points are in the cache for these sources."""
    return _marker().is_file()


def warm() -> float:
    """Compile the entry points; returns the wall seconds it took."""
    t0 = time.monotonic()
    _exercise()
    path = _marker()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_numba_cache.sources_digest() + "\n")
    return time.monotonic() - t0


def main(argv: list[str] | None = None) -> int:
    """Compile the kernels when the cache is cold (``--check``: only report); 0 on success."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report whether the cache is warm")
    args = ap.parse_args(argv)
    if args.check:
        if not is_warm():
            print("the fast simulator's kernel cache is cold", file=sys.stderr)
        return 0 if is_warm() else 1
    if not is_warm():
        print("[setup] compiling the fast simulator's kernels (minutes, once per version)")
        print(f"[setup] kernels compiled in {warm():.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
