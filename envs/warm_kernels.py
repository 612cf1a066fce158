"""Compile the fast simulator's kernels into numba's on-disk cache ahead of use.

A cold compile of the step kernel takes minutes (4 to 7 on these 2-core machines), once per
version of the sources (``_numba_cache``). ``make setup`` runs ``python -m envs.warm_kernels`` so
that training, evaluation and the tests start from a warm cache: the serial entry points (a batch
of cells and the vector environment, LTE and NR). The threaded ones (``parallel=True``, chosen by
default only with at least ``PARALLEL_MIN_THREADS`` threads) compile separately, as long again:
``--parallel`` adds them. A marker file per set in the cache directory makes a second call return
at once.

>>> python -m envs.warm_kernels               # compile what is missing (serial entry points)
>>> python -m envs.warm_kernels --parallel    # also the threaded ones
>>> python -m envs.warm_kernels --check       # exit 1 when the cache is cold
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from envs.fastsim import _numba_cache


def _marker(parallel: bool) -> Path:
    """Written into the cache directory once a set of entry points has compiled."""
    return _numba_cache.cache_dir() / ("warm-parallel" if parallel else "warm-serial")


def _exercise(parallel: bool) -> None:
    """Reset and step an LTE and an NR cell through the batch and the vector-env entry points."""
    from cellgym.scenario import ScenarioSpec
    from envs.fastsim.params import FastSimParams
    from envs.fastsim.sim import FastCellBatch
    from envs.fastsim.vector_env import make_fast_vec_env

    for cell in ({"type": "lte"}, {"type": "nr"}):
        spec = {"cell": cell, "flows": [{"cca": "agent"}, {"cca": "cubic"}], "sim_time_s": 1.0}
        batch = FastCellBatch(FastSimParams.from_spec(ScenarioSpec(**spec)), 2, parallel=parallel)
        batch.reset(np.arange(2))
        batch.step()
        env = make_fast_vec_env(spec, num_envs=2, seed=0, parallel=parallel)
        env.reset(seed=0)
        env.step(np.ones((2, 1), dtype=np.float32))
        env.close()


def is_warm(parallel: bool = False) -> bool:
    """Whether the serial (or threaded) entry points are in the cache for these sources."""
    return _marker(parallel).is_file()


def warm(parallel: bool = False) -> float:
    """Compile one set of entry points; returns the wall seconds it took."""
    t0 = time.monotonic()
    _exercise(parallel)
    path = _marker(parallel)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_numba_cache.sources_digest() + "\n")
    return time.monotonic() - t0


def main(argv: list[str] | None = None) -> int:
    """Compile the cold sets (``--check``: only report); 0 on success."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report whether the cache is warm")
    ap.add_argument("--parallel", action="store_true", help="also the threaded entry points")
    args = ap.parse_args(argv)
    sets = [False, True] if args.parallel else [False]
    cold = [p for p in sets if not is_warm(p)]
    if args.check:
        if cold:
            print("the fast simulator's kernel cache is cold", file=sys.stderr)
        return 1 if cold else 0
    for parallel in cold:
        kind = "threaded" if parallel else "serial"
        print(f"[setup] compiling the fast simulator's {kind} kernels (minutes, once per version)")
        print(f"[setup] {kind} kernels compiled in {warm(parallel):.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
