r"""The published leaderboard: every registry controller of a backend scored, then written.

    .venv/bin/python -m evaluation.benchmark publish --suite v1 --backend ns3 --jobs 2 \
        --controllers runs/main/ppo/<run> --out docs/benchmark/ns3

``publish`` is ``score`` then ``leaderboard`` for one fixed set of controllers:

- every controller of the registry (``cellgym.controllers``) that runs on the backend and on
  every cell type of the suite's tasks (``registry_controllers``: those that run on every backend
  first, then the backend's own, each in the registry's order; on ns-3 that adds ns-3's TCPs the
  fast model does not run);
- the extra ``--controllers`` (the main job's checkpoint, a policy class), checked as ``score``
  checks them;
- the suite's references, and the optimum (computed).

It runs what the run cache lacks, through ``score``'s machinery (``evaluation.benchmark.runner``:
the very runs and cache keys, so a second call runs nothing, and runs ``score`` made are reused),
then writes the leaderboard of exactly those controllers (``evaluation.benchmark.leaderboard``)
into ``--out``. Its provenance records ``publish`` and the call's arguments without ``--cache``
(a machine's folder), so ``python -m evaluation.experiments.reports --regenerate`` reruns the
same command: the committed reports ``docs/benchmark/ns3`` and ``docs/benchmark/fast``.
``numbers.json`` also keeps each controller's run time (``wall_s``: the sum of its runs' wall
times, as each run measured it when it was made) and this call's (``publish``).

A trained checkpoint whose model file is absent (the main job's ``runs/`` folder is git-ignored:
another clone, a machine without it) does not fail the call: it is left out, the leaderboard is
written without it, ``numbers.json``'s ``left_out`` names it with the reason and
``leaderboard.md`` says so in a line. Its argument stays recorded, so a machine that has the
checkpoint publishes it again. Any other controller that cannot run (an unknown name, a sender
the backend does not model, a class that does not import, a checkpoint without a saved
algorithm) fails before any simulation, as in ``score`` (exit status 2).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cellgym import controllers
from cellgym.vocab import BACKENDS, SpecError
from evaluation.benchmark import aggregate
from evaluation.benchmark.cache import RunCache
from evaluation.benchmark.entrants import resolve_entrants
from evaluation.benchmark.leaderboard import build, write_leaderboard
from evaluation.benchmark.runner import plan, preflight, run_missing, runs_frame
from evaluation.benchmark.suite import OPTIMUM, Suite
from evaluation.resolve import resolve_controller_path
from evaluation.user_policies import is_class_ref

#: The command whose provenance the published leaderboard records (its arguments start with
#: ``publish``: ``reports`` runs ``python -m evaluation.benchmark <args>``).
COMMAND = "python -m evaluation.benchmark"
SUBCOMMAND = "publish"


def registry_controllers(suite: Suite, backend: str) -> tuple[list[str], list[dict[str, str]]]:
    """The registry's controllers that ``backend`` runs on every task of ``suite``.

    Returns:
        The names (those of every backend first, then ``backend``'s own, in the registry's
        order), and those of ``backend`` left out, each ``{"controller", "reason"}`` (a
        controller that does not run on a cell type of the suite's tasks).
    """
    cells = sorted({t.scenario.cell.type for t in suite.tasks})
    mine = controllers.names(backend=backend)
    everywhere = [n for n in mine if set(BACKENDS) <= set(controllers.CONTROLLERS[n].backends)]
    names, left_out = [], []
    for n in [*everywhere, *(n for n in mine if n not in everywhere)]:
        lacking = [c for c in cells if c not in controllers.CONTROLLERS[n].cells]
        if lacking:
            reason = f"it does not run on {', '.join(lacking)} cells, which the suite's tasks use"
            left_out.append({"controller": n, "reason": reason})
        else:
            names.append(n)
    return names, left_out


def is_checkpoint(text: str) -> bool:
    """Whether ``text`` can only mean a trained checkpoint (a run directory, ``<algo>:<path>``).

    That is: it is no registry name, TypeId, policy class or the optimum.
    """
    text = str(text).strip()
    named = text in (OPTIMUM, *controllers.CONTROLLERS) or text.startswith("ns3::")
    return not named and not is_class_ref(text)


def absent_checkpoint(text: str) -> str | None:
    """Why ``text`` names a trained checkpoint whose model file is absent (``None``: it does not).

    A registry name, a TypeId, a policy class or the optimum is never one; nor is a name that is
    no path (resolving it names the error).
    """
    if not is_checkpoint(text):
        return None
    try:
        resolve_controller_path(text)
    except FileNotFoundError:
        return (
            "its trained checkpoint is absent on the machine that made this leaderboard (no "
            "model file at that path); a machine that has it publishes it with the same command"
        )
    except SpecError:
        return None  # not a checkpoint, or a broken one: resolving it names the error
    return None


def publish(
    suite: Suite,
    split: str,
    backend: str,
    extra: Sequence[str],
    cache: RunCache,
    out: Path,
    args: Sequence[str],
    workers: int = 1,
    reps: int = aggregate.REPS,
    progress: bool = True,
) -> dict[str, Any]:
    """Score the registry's controllers and ``extra`` on ``suite``/``split``, write the leaderboard.

    Args:
        suite: The suite.
        split: ``test`` (the official score) or ``train``.
        backend: ``ns3`` or ``fast``.
        extra: Controllers beyond the registry's (``--controllers``).
        cache: The run cache: only the runs it lacks run, and each is written there.
        out: The leaderboard's folder.
        args: The arguments recorded in the provenance (``publish`` first, no ``--cache``).
        workers: Simulations at a time.
        reps: Bootstrap resamples.
        progress: Show a progress bar.

    Returns:
        The leaderboard's numbers (``leaderboard.build``) with ``publish``: the controllers
        asked for, the runs, those run now and this call's wall time.

    Raises:
        SpecError: A controller or task the backend cannot run, before any simulation.
    """
    t0 = time.monotonic()
    names, left_out = registry_controllers(suite, backend)
    texts = []
    for text in [*names, *extra]:
        reason = absent_checkpoint(text)
        if reason is None:
            texts.append(text)
        else:
            left_out.append({"controller": text, "reason": reason})
    entrants = resolve_entrants(texts, suite, backend)
    entrants += resolve_entrants([OPTIMUM], suite, backend, with_references=False)
    jobs = plan(suite, split, backend, entrants)
    preflight(suite, split, backend, jobs, cache)
    fresh = run_missing(jobs, cache, workers, progress=progress)
    frame = runs_frame(suite, split, backend, entrants, cache, fresh)
    numbers = build(
        suite,
        split,
        backend,
        frame,
        args,
        reps,
        command=COMMAND,
        generated_by=f"{COMMAND} {SUBCOMMAND}",
        left_out=left_out,
    )
    numbers["publish"] = {
        "controllers": [*names, *extra],
        "runs": len(jobs),
        "run_now": len(fresh),
        "from_cache": len(jobs) - len(fresh),
        "wall_s": time.monotonic() - t0,
    }
    write_leaderboard(numbers, out)
    return numbers
