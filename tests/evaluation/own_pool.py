"""A script with its own pool, as the studies still listed in ``tests/test_architecture.py``
(``STUDY_POOLS``) make theirs: ``python -m tests.evaluation.own_pool <method>``, two workers
waiting an hour (``pool_jobs.wait_an_hour``) in a ``multiprocessing.Pool`` of that start method
(``fork``: a ``ProcessPoolExecutor``, as the FCT study's)."""

from __future__ import annotations

import multiprocessing as mp
import sys
from concurrent.futures import ProcessPoolExecutor

import cellgym.processes  # noqa: F401 - every CellGym entry point imports it
from tests.evaluation.pool_jobs import wait_an_hour

if __name__ == "__main__":
    method = sys.argv[1]
    if method == "fork":
        with ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as ex:
            list(ex.map(wait_an_hour, [0, 1]))
    else:
        with mp.get_context(method).Pool(2) as pool:
            pool.map(wait_an_hour, [0, 1])
