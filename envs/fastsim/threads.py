"""A batch's cells spread over threads, each thread running the serial kernel on its own slice.

The batched entry points (``driver.step_batch``, ``single.env_step``) take the slice of cells
``[b0, b1)`` they advance and release the GIL (``nogil``), so the threads of a pool run them side
by side on disjoint cells. Threads reuse the serial kernels' compilation: a ``parallel=True``
(``prange``) twin of each entry point would be compiled on its own, the whole cell model
optimised again for it (minutes per entry point on a 2-core machine).

The pool has ``numba.get_num_threads()`` threads (``NUMBA_NUM_THREADS``), is made on first use,
shared by the batches of a process, and dropped in a forked child (its threads do not survive
the fork).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numba

_pool: ThreadPoolExecutor | None = None


def _drop_pool() -> None:
    """Forget the parent's pool in a forked child: its threads are not there."""
    global _pool
    _pool = None


os.register_at_fork(after_in_child=_drop_pool)


def _shared_pool() -> ThreadPoolExecutor:
    """The process's pool (made on first use)."""
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(
            max_workers=max(numba.get_num_threads() - 1, 1), thread_name_prefix="cellgym-cells"
        )
    return _pool


def slices(batch: int, parts: int) -> list[tuple[int, int]]:
    """``[b0, b1)`` ranges cutting ``batch`` cells into ``parts`` contiguous slices.

    The slices' sizes differ by one at most; never more slices than cells.
    """
    if batch < 1 or parts < 1:
        raise ValueError(f"batch={batch!r}, parts={parts!r}: allowed [1, inf) each")
    parts = min(parts, batch)
    q, r = divmod(batch, parts)
    out, b0 = [], 0
    for i in range(parts):
        b1 = b0 + q + (1 if i < r else 0)
        out.append((b0, b1))
        b0 = b1
    return out


def over_cells(kernel: Callable[..., Any], batch: int, threads: int) -> Callable[..., None]:
    """``kernel(b0, b1, *args)`` over every cell: one call, or one per slice on ``threads`` threads.

    The calling thread runs the first slice; the others go to the shared pool, and an exception
    in any slice is raised once every slice has ended.
    """
    parts = slices(batch, threads)
    if len(parts) == 1:
        return lambda *args: kernel(0, batch, *args)
    first, rest = parts[0], parts[1:]

    def run(*args: Any) -> None:
        pool = _shared_pool()
        futures = [pool.submit(kernel, b0, b1, *args) for b0, b1 in rest]
        error: BaseException | None = None
        try:
            kernel(first[0], first[1], *args)
        except BaseException as e:  # noqa: BLE001  (raised below, once the slices have ended)
            error = e
        for f in futures:
            e = f.exception()
            error = error or e
        if error is not None:
            raise error

    return run
