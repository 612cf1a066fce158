"""The layers hold (import-linter contracts in pyproject.toml): no upward imports, no cycles.

``workflows > evaluation > learners > agents > baselines > envs | configs > cellgym``: a package
imports only from its own layer or lower ones (``envs`` and ``configs`` not from each other), and
the modules of a package import each other without cycles. Lazy imports inside functions count too.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def test_import_contracts_are_kept():
    proc = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-5000:]
    assert "Contracts: 2 kept, 0 broken." in out, out[-3000:]


def test_the_core_imports_nothing_above_it():
    # The contract's bottom layer, checked directly too: cellgym/ names no upper package.
    upper = ("envs", "baselines", "agents", "configs", "evaluation", "learners", "workflows")
    offenders = []
    for path in sorted((ROOT / "cellgym").rglob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            words = line.split()
            if len(words) >= 2 and words[0] in ("import", "from"):
                if words[1].split(".")[0] in upper:
                    offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


#: The one module that makes process pools (and chooses their start method).
POOL_MODULE = Path("evaluation/workers.py")
#: What makes a pool of worker processes, or picks a start method for one.
POOL_MAKERS = frozenset(
    {"Pool", "ProcessPoolExecutor", "get_context", "set_start_method", "set_forkserver_preload"}
)


#: Studies that still make their own pool. Each one's module is part of its report's behaviour
#: fingerprint (its syntax: ``evaluation.experiments.behaviour``'s recipe), so moving it to
#: ``evaluation/workers.py`` makes the report stale: each moves when its report is next
#: regenerated. Their workers die with them all the same (``cellgym.processes`` makes every
#: ``multiprocessing`` worker die with its parent; ``tests/evaluation/test_workers.py`` kills the
#: calibration). An entry whose module no longer makes a pool must leave the list.
STUDY_POOLS = frozenset(Path(f"evaluation/experiments/{name}.py") for name in ("xrc_paper",))


def test_the_study_pools_still_listed_make_a_pool():
    assert all(_pool_makers(ROOT / path) for path in STUDY_POOLS)


def _pool_makers(path: Path) -> list[str]:
    """``line: name`` for each use of a pool maker in ``path`` (names, attributes, imports)."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in POOL_MAKERS:
            found.append(f"{node.lineno}: {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in POOL_MAKERS:
            found.append(f"{node.lineno}: .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
            ("multiprocessing", "concurrent.futures")
        ):
            names = [a.name for a in node.names if a.name in POOL_MAKERS]
            found += [f"{node.lineno}: import {name}" for name in names]
    return sorted(found, key=lambda hit: int(hit.split(":")[0]))


def test_only_the_pool_module_makes_process_pools():
    # Every study and the evaluation loop take their worker processes from evaluation/workers.py
    # (its guarantees: one start method, no worker outlives the caller, results in order, a
    # failing job named); cellgym/processes.py only resets a foreign start method.
    allowed = {POOL_MODULE, Path("cellgym/processes.py"), *STUDY_POOLS}
    offenders = []
    for package in ("cellgym", "envs", "baselines", "agents", "configs", "evaluation",
                    "learners", "workflows", "bench", "scripts"):  # fmt: skip
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT)
            if rel not in allowed:
                offenders += [f"{rel}:{hit}" for hit in _pool_makers(path)]
    offenders += [f"{p.name}:{hit}" for p in sorted(ROOT.glob("*.py")) for hit in _pool_makers(p)]
    assert not offenders, "\n".join(offenders)


def test_the_pool_check_sees_the_ways_to_make_a_pool(tmp_path):
    code = tmp_path / "study.py"
    code.write_text(
        "import multiprocessing as mp\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "mp.get_context('spawn').Pool(2)\n"
        "ProcessPoolExecutor(2)\n"
    )
    assert _pool_makers(code) == [
        "2: import ProcessPoolExecutor", "3: .Pool", "3: .get_context", "4: ProcessPoolExecutor"
    ]  # fmt: skip
