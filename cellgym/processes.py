"""Child processes: they never outlive their owner, and start from inside other frameworks.

Every simulator, experiment and pool worker CellGym starts goes through ``die_with_parent`` (in
the child between ``fork`` and ``exec``, ``preexec_fn``, or first thing in a worker) and ``reap``
(ends a child's process group, SIGTERM then SIGKILL, and waits for it). A ``multiprocessing``
worker also dies with the process that started it when that process made its own pool
(``workers_die_with_their_parent``, run when this module is imported).

joblib's loky workers (Hydra's joblib launcher) set the process-wide start method to ``loky``.
A ``multiprocessing`` child started from there with ``forkserver`` or ``spawn`` is told to use
that same start method, and fails with ``ValueError: cannot find context for 'loky'`` because loky
is not registered in the child. Before starting our own children, set a standard method again
(``use_standard_start_method``).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing as mp
import os
import select
import shutil
import signal
import subprocess
import threading
import time

#: The start methods the standard library knows.
STANDARD_START_METHODS: tuple[str, ...] = ("fork", "spawn", "forkserver")


def use_standard_start_method(method: str = "forkserver") -> None:
    """Make ``method`` the process-wide start method if a foreign one (``loky``) is set."""
    current = mp.get_start_method(allow_none=True)
    if current is not None and current not in STANDARD_START_METHODS:
        if method not in mp.get_all_start_methods():
            method = "spawn"
        mp.set_start_method(method, force=True)


#: Linux ``prctl`` option: the signal the kernel sends this process when its parent thread ends.
PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask the kernel to SIGKILL this process when its parent dies (Linux ``prctl``)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


def signal_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to a process group that may already be gone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def reap(proc: subprocess.Popen, grace_s: float = 1.0) -> None:
    """Terminate a process (and its group), escalating to SIGKILL, and reap it."""
    if proc.poll() is None:
        signal_group(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            signal_group(proc.pid, signal.SIGKILL)
            proc.wait()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: The processes this one ends with (``end_with``), each with the folders to remove first.
_ENDS_WITH: dict[int, list[str]] = {}
_ENDS_WITH_LOCK = threading.Lock()


def end_with(pid: int, temp_dir: str | None = None) -> None:
    """End this process as soon as process ``pid`` has ended (a daemon thread waits for it).

    A ``multiprocessing`` worker's parent under ``forkserver`` is the fork server, not the process
    that started the pool, and the server can outlive that process: the kernel's parent-death
    signal alone would leave a busy worker running after a SIGKILL of the caller. ``temp_dir``
    (the caller's ``pymp-*`` folder, which a killed caller cannot remove) is removed on the way
    out. Asking again for the same ``pid`` only adds its ``temp_dir``.
    """
    with _ENDS_WITH_LOCK:
        first = pid not in _ENDS_WITH
        folders = _ENDS_WITH.setdefault(pid, [])
        if temp_dir:
            folders.append(temp_dir)
    if not first:
        return

    def leave() -> None:
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
        os._exit(1)  # the simulators (children with a parent-death signal) follow

    def wait_for_it() -> None:
        try:
            fd = os.pidfd_open(pid)
        except (AttributeError, OSError):  # no pidfd (old kernel): poll instead
            while _alive(pid):
                time.sleep(0.5)
        else:
            select.select([fd], [], [])  # readable when the process has ended
        leave()

    if not _alive(pid):
        leave()
    threading.Thread(target=wait_for_it, name="cellgym-end-with", daemon=True).start()


def _in_a_worker() -> bool:
    """Whether this process is a ``multiprocessing`` worker.

    A spawned worker imports its parent's main module (and so this one) before
    ``parent_process()`` is set, but after its process name is (``SpawnPoolWorker-1``).
    """
    return mp.current_process().name != "MainProcess" or mp.parent_process() is not None


def workers_die_with_their_parent() -> None:
    """Make every ``multiprocessing`` worker that imports this module die with its parent.

    ``evaluation.workers`` gives its own workers that guarantee; a pool made elsewhere (a study's
    ``multiprocessing.Pool``, SB3's subprocess environments) gets it here: in a worker that
    imports this module (a ``spawn`` worker imports its modules afresh; a forked one may import it
    with its job) and, through ``os.register_at_fork``, in every child forked from a process that
    imported it (the ``fork`` method; the fork server's workers, which then end with the fork
    server, which ends with its caller). Without it, a study killed by SIGTERM or SIGKILL left its
    workers and their simulators running. Runs once, when this module is imported.
    """
    if _in_a_worker():
        die_with_parent()
        _watch_the_starter()
    os.register_at_fork(after_in_child=die_with_parent)


def _watch_the_starter() -> None:
    """End this worker when the process that started its pool ends (``end_with``).

    ``multiprocessing.parent_process()`` is that process; a spawned worker imports this module
    before it is set, so a daemon thread waits for it first.
    """

    def watch() -> None:
        while (parent := mp.parent_process()) is None:
            time.sleep(0.2)
        end_with(parent.pid)

    threading.Thread(target=watch, name="cellgym-watch-starter", daemon=True).start()


workers_die_with_their_parent()
