"""Evaluation: run controllers on scenarios and seeds, and report what they did.

- ``evaluation.rollouts``: one controller on one scenario and seed (``run_native``,
  ``run_policy``, ``run_controller``), the loop training uses;
- ``evaluation.resolve``: what a controller name means (the registry ``cellgym.controllers``,
  trained checkpoints) and loading checkpoints as policies;
- ``evaluation.records``: one finished run as rows of the tidy tables;
- ``evaluation.pool``: ``evaluate_many``, controllers x scenarios x seeds in worker processes;
- ``evaluation.workers``: the process pool (``map_jobs``) of that loop, the behaviour probes and
  the studies (the XRC-reproduction study still keeps its own until its report is next
  regenerated);
- ``evaluation.report`` and ``evaluation.plots``: summaries over seeds, ``report.md``, figures;
- ``evaluation.runs``: loaders of finished runs and evaluations (the notebooks use them);
- ``evaluation.experiments``: the calibration against ns-3 and the XRC paper's experiments.

Every number comes from ``cellgym.metrics``. The common entry points are importable from here::

    from evaluation import evaluate_many, summarize, write_report
"""

from evaluation.plots import plot_delay_cdf, plot_throughput_delay, plot_timeseries
from evaluation.pool import Evaluation, evaluate_many
from evaluation.report import summarize, summary_table, write_report
from evaluation.resolve import ControllerSpec, resolve_controller
from evaluation.rollouts import run_controller, run_native, run_policy

__all__ = [
    "ControllerSpec",
    "Evaluation",
    "evaluate_many",
    "plot_delay_cdf",
    "plot_throughput_delay",
    "plot_timeseries",
    "resolve_controller",
    "run_controller",
    "run_native",
    "run_policy",
    "summarize",
    "summary_table",
    "write_report",
]
