"""Jobs for the tests of ``evaluation.workers`` (importable by the pool's worker processes).

Run as ``python -m tests.evaluation.pool_jobs``, it keeps two workers busy until it is killed
(``tests/evaluation/test_workers.py``'s kill tests).
"""

from __future__ import annotations

import os
import time

from evaluation.workers import map_jobs

FLAG = "CELLGYM_TEST_WORKER_FLAG"


def late_first(item: int) -> tuple[int, int]:
    """``(item, pid)`` after a sleep that makes the first items finish last."""
    time.sleep(0.3 * (4 - item))
    return item, os.getpid()


def fail_on_two(item: int) -> int:
    """``item``, or ``ValueError`` for 2."""
    if item == 2:
        raise ValueError("two is refused")
    return item


def die_on_one(item: int) -> int:
    """``item``, or the worker ends abruptly for 1 (as a segfault would)."""
    if item == 1:
        os._exit(3)
    return item


def set_flag(value: str) -> None:
    """An initializer: sets ``FLAG`` in the worker's environment."""
    os.environ[FLAG] = value


def read_flag(item: int) -> str | None:
    """The worker's ``FLAG``."""
    return os.environ.get(FLAG)


def wait_an_hour(item: int) -> int:
    """Waits an hour (the kill tests end it sooner), as a worker waits for its simulator.

    Once waiting, it leaves a file named by its pid in the folder ``$CELLGYM_TEST_READY``.
    """
    ready = os.environ.get("CELLGYM_TEST_READY")
    if ready:
        with open(os.path.join(ready, str(os.getpid())), "w"):
            pass
    time.sleep(3600)
    return item


if __name__ == "__main__":
    map_jobs(wait_an_hour, [0, 1], 2)
