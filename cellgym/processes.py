"""Child processes started from inside another framework's worker.

joblib's loky workers (Hydra's joblib launcher) set the process-wide start method to ``loky``.
A ``multiprocessing`` child started from there with ``forkserver`` or ``spawn`` is told to use
that same start method, and fails with ``ValueError: cannot find context for 'loky'`` because loky
is not registered in the child. Before starting our own children, set a standard method again.
"""

from __future__ import annotations

import multiprocessing as mp

#: The start methods the standard library knows.
STANDARD_START_METHODS: tuple[str, ...] = ("fork", "spawn", "forkserver")


def use_standard_start_method(method: str = "forkserver") -> None:
    """Make ``method`` the process-wide start method if a foreign one (``loky``) is set."""
    current = mp.get_start_method(allow_none=True)
    if current is not None and current not in STANDARD_START_METHODS:
        if method not in mp.get_all_start_methods():
            method = "spawn"
        mp.set_start_method(method, force=True)
