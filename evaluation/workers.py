"""CellGym's process pool: the evaluation loop, the behaviour probes and the studies' workers.

Pools of worker processes are made by ``worker_pool`` (the evaluation loop's
``evaluation.pool.pool_map`` builds on it) or by ``map_jobs`` (the behaviour probes'), with the
same guarantees everywhere. Six studies still make their own (``tests/test_architecture.py``'s
``STUDY_POOLS``: each module is part of its report's fingerprint, so each moves here when its
report is next regenerated); their workers die with them through ``cellgym.processes``.

- One start method, chosen in one place (``pool_context``): ``forkserver`` where the platform has
  it (the server imports ``__main__`` and the modules the pool names in ``preload``), else
  ``spawn``; a foreign process-wide method (joblib's ``loky``) is replaced first.
- No worker outlives the process that started the pool. Each worker asks the kernel for SIGKILL
  when its parent ends and watches the caller's pid (under ``forkserver`` its parent is the fork
  server, which a killed caller leaves behind); on any exception in the caller (Ctrl-C, or
  SIGTERM, turned into ``SystemExit(143)`` while the pool runs) the workers are terminated before
  it propagates.
- ``map_jobs`` returns the results in the order of its items, whatever order they finish in, and
  a job that raises (or whose worker dies) raises ``JobFailed`` in the caller, naming the job.
- With ``jobs == 1``, ``map_jobs`` runs the jobs in the calling process unless the study asks
  for a worker (``in_process=False``).

A study's own worker setup (``torch.set_num_threads(1)`` in the multi-agent study) is its
``initializer``, run in each worker after the pool's own. A script that starts a pool needs the
usual ``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import multiprocessing.util
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from cellgym.processes import die_with_parent, end_with, use_standard_start_method
from cellgym.vocab import SpecError

T = TypeVar("T")
R = TypeVar("R")


class JobFailed(RuntimeError):
    """A job of ``map_jobs`` raised, or its worker process died; the error is its ``__cause__``.

    Attributes:
        job: The job's name (``map_jobs``'s ``name`` of the item).
    """

    def __init__(self, job: str, error: str) -> None:
        super().__init__(f"job {job} failed: {error}")
        self.job = job


def pool_context(preload: Sequence[str] = ()) -> Any:
    """The project's start method: ``forkserver``, preloading ``__main__`` and ``preload``.

    ``spawn`` where the platform has no ``forkserver``. The preload takes effect only if this
    process's fork server is not running yet.
    """
    use_standard_start_method()
    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["__main__", *preload])
    return ctx


def _worker_init(
    caller: int | None = None,
    caller_temp_dir: str | None = None,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
) -> None:
    """Tie the worker's life to the caller's, then run the pool's own ``initializer``.

    Args:
        caller: The process that runs the pool: the worker ends when it does, whatever kills it.
        caller_temp_dir: The caller's ``multiprocessing`` temporary folder, removed by the
            workers when the caller has ended without removing it.
        initializer: The pool's own setup of each worker, called as ``initializer(*initargs)``.
        initargs: Its arguments.
    """
    die_with_parent()  # the direct parent (the fork server, or the caller under spawn)
    if caller is not None:
        end_with(caller, caller_temp_dir)
    if initializer is not None:
        initializer(*initargs)


def _raise_on_sigterm(signum: int, frame: Any) -> None:
    """SIGTERM as an exception, so that the pool is torn down on the way out (exit 143)."""
    raise SystemExit(128 + signum)


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Terminate the pool's workers now (their simulators die with them) and wait for them."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for p in procs:
        if p.is_alive():
            p.terminate()
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + 5.0
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(1.0)


@contextlib.contextmanager
def worker_pool(
    workers: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    preload: Sequence[str] = (),
) -> Iterator[ProcessPoolExecutor]:
    """A ``ProcessPoolExecutor`` of ``workers`` processes with this module's guarantees.

    On leaving normally the pool is shut down after its last job; on any exception (SIGTERM
    becomes ``SystemExit(143)`` inside the block when no other handler is set) its workers are
    terminated before the exception propagates.

    Args:
        workers: Worker processes.
        initializer: Each worker's own setup, called as ``initializer(*initargs)`` (picklable).
        initargs: Its arguments.
        preload: Modules the fork server imports once, so that each worker starts warm.
    """
    on_term = threading.current_thread() is threading.main_thread() and (
        signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    )
    if on_term:
        signal.signal(signal.SIGTERM, _raise_on_sigterm)
    try:
        pool = ProcessPoolExecutor(
            workers,
            mp_context=pool_context(preload),
            initializer=_worker_init,
            initargs=(
                os.getpid(),
                multiprocessing.util.get_temp_dir(),
                initializer,
                tuple(initargs),
            ),
        )
        try:
            yield pool
        except BaseException:
            _stop_workers(pool)
            raise
        else:
            pool.shutdown(wait=True)
    finally:
        if on_term:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _describe(item: Any) -> str:
    text = repr(item)
    return text if len(text) <= 200 else text[:197] + "..."


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def map_jobs(
    fn: Callable[[T], R],
    items: Iterable[T],
    jobs: int,
    *,
    name: Callable[[T], str] = _describe,
    in_process: bool = True,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
    on_result: Callable[[T, R], None] | None = None,
) -> list[R]:
    """``[fn(item) for item in items]``, ``jobs`` worker processes at a time.

    Args:
        fn: The job, a picklable (module-level) function of one item.
        items: The jobs' arguments (picklable).
        jobs: Worker processes at most (no more than there are items).
        name: Names an item in ``JobFailed`` (default: its ``repr``).
        in_process: With ``jobs == 1``, run the jobs here, one after another, instead of in a
            worker process.
        initializer: Each worker's own setup (``worker_pool``); not called for jobs run here.
        initargs: Its arguments.
        on_result: Called here as ``on_result(item, result)`` as each job finishes (in the order
            they finish; progress logs).

    Returns:
        The results, in the order of ``items``.

    Raises:
        SpecError: ``jobs < 1``.
        JobFailed: A job raised (its exception is the ``__cause__``) or its worker died; the
            other workers are stopped first.
    """
    if jobs < 1:
        raise SpecError(f"jobs={jobs!r} is out of range: allowed [1, inf)")
    items = list(items)
    if in_process and jobs == 1:
        results = []
        for item in items:
            try:
                result = fn(item)
            except Exception as exc:
                raise JobFailed(name(item), _error(exc)) from exc
            if on_result is not None:
                on_result(item, result)
            results.append(result)
        return results
    if not items:
        return []
    with worker_pool(min(jobs, len(items)), initializer, initargs) as pool:
        futures: list[Future[R]] = [pool.submit(fn, item) for item in items]
        index = {fut: k for k, fut in enumerate(futures)}
        pending: set[Future[R]] = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=index.__getitem__):
                item = items[index[fut]]
                try:
                    result = fut.result()
                except BrokenProcessPool as exc:
                    died = f"a worker process died while it was queued or running ({exc})"
                    raise JobFailed(name(item), died) from exc
                except Exception as exc:
                    raise JobFailed(name(item), _error(exc)) from exc
                if on_result is not None:
                    on_result(item, result)
        return [fut.result() for fut in futures]
