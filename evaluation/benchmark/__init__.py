"""CellGym Bench: versioned suites, held-out splits, normalised scores and a leaderboard.

- ``suite``: a suite's config (``configs/benchmark/v1.yaml``): tasks, splits, seeds, windows;
- ``entrants``: what ``--controllers`` may name, checked against the suite and backend;
- ``metrics``: one run's records -> its raw metrics and Zeus terms (what the cache keeps);
- ``cache``: the run cache, keyed by controller, task, seed, backend and the code's digest;
- ``runner``: the runs the cache lacks, in ``evaluation.pool``'s worker processes;
- ``scores``: Zeus application-class scores, normalised per task, and harm;
- ``aggregate``: rliable's IQM, mean, optimality gap, probability of improvement, profiles;
- ``leaderboard``, ``render``: the leaderboard's files, with provenance;
- ``publish``: every registry controller of a backend scored, then the leaderboard written (the
  committed reports ``docs/benchmark/ns3`` and ``docs/benchmark/fast``);
- ``dataset``, ``recorder``: the policies' trajectories as an offline dataset (Minari);
- ``cli``: ``python -m evaluation.benchmark tasks|score|leaderboard|publish|dataset``
  (docs/benchmark.md).
"""
