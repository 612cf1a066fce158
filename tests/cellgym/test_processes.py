"""Children started from a joblib (loky) worker: the foreign start method is replaced first."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_pool_started_inside_a_loky_worker_runs():
    # Inside joblib's loky worker the global start method is 'loky'; a forkserver child of ours
    # used to die with "cannot find context for 'loky'" (ns-3 training under hydra/launcher=local).
    code = textwrap.dedent(
        """
        from joblib import Parallel, delayed

        def job():
            import multiprocessing as mp
            from concurrent.futures import ProcessPoolExecutor
            from cellgym.processes import use_standard_start_method
            before = mp.get_start_method(allow_none=True)
            use_standard_start_method("forkserver")
            with ProcessPoolExecutor(1, mp_context=mp.get_context("forkserver")) as pool:
                return before, pool.submit(abs, -3).result()

        print(Parallel(n_jobs=2, backend="loky")(delayed(job)() for _ in range(2)))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "3)" in proc.stdout
