"""The fast simulator: the same LTE cell as the ns-3 backend, as a compiled, batched model.

- ``FastSimParams``: frozen parameters built from a ``ScenarioSpec`` (plus model knobs).
- ``FastCellBatch``: B cells advanced in lockstep by the numba kernel (``core``).
- ``FastSession``: the ``Session`` of ``open_session(..., backend="fast")``.
- ``FastVecEnv`` / ``make_fast_vec_env``: a Gymnasium ``VectorEnv`` over B cells, and
  ``FastSb3VecEnv`` for Stable-Baselines3.
"""

from envs.fastsim._numba_cache import kernel_cache_dir

# The kernels' modules, imported with numba's cache pointed at a directory of their sources'
# digest (``_numba_cache``): an edit to any of them can never load stale machine code.
with kernel_cache_dir():
    from envs.fastsim import core, single  # noqa: F401
    from envs.fastsim.params import FastSimParams
    from envs.fastsim.session import FastSession
    from envs.fastsim.sim import FastCellBatch

__all__ = ["FastCellBatch", "FastSession", "FastSimParams"]
