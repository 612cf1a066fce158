"""The Python stays readable: no function longer than ``FUNCTION_LINES`` lines.

The rule ``tests/test_cpp_layout.py`` holds for the ns-3 module's C++, for every git-tracked
``.py`` file (the generated protobuf modules, ``GENERATED``, excepted). A function's length runs
from its ``def`` line (decorators excluded) to its last line (``ast``'s ``lineno`` to
``end_lineno``, so its docstring and comments count); a function nested in another is measured on
its own too. The functions that still exceed are listed below by ``path::qualname``, each with why
it is allowed; an entry that no longer exceeds, or no longer exists, must leave the list.
"""

from __future__ import annotations

import ast
import subprocess
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FUNCTION_LINES = 80
#: Generated modules, outside the rule.
GENERATED: tuple[str, ...] = ("cellgym/proto/*_pb2.py",)

#: Modules whose syntax is hashed into committed reports' behaviour fingerprints
#: (``evaluation.experiments.behaviour``'s recipe): splitting a function makes the report stale.
RECIPE = "recipe of the committed reports: split when they are next regenerated"
#: Compiled kernels of the fast simulator: a split changes what numba inlines and compiles.
NUMBA = "numba kernel: a split must be measured with bench/fast_backend.py first"

#: Functions over FUNCTION_LINES, by ``path::qualname``: why each one is allowed.
FUNCTION_ALLOW: dict[str, str] = {
    "envs/fastsim/senders/ack.py::_sender_acks": NUMBA,
    "envs/fastsim/senders/bbr.py::_bbr_on_ack": NUMBA,
    "envs/fastsim/senders/send.py::_sender_send": NUMBA,
    "envs/fastsim/single.py::_env_cell": NUMBA,
    "evaluation/benchmark/suite.py::build_suite": RECIPE,
    "evaluation/experiments/calibrate.py::main": RECIPE,
    "evaluation/experiments/xcpr_paper.py::main": RECIPE,
    "evaluation/experiments/xrc_paper.py::analyse": RECIPE,
    "evaluation/experiments/xrc_paper.py::plot": RECIPE,
    "evaluation/pool.py::evaluate_many": RECIPE,
    "evaluation/report.py::write_report": RECIPE,
    "workflows/train.py::train": RECIPE,
}


@dataclass(frozen=True)
class Function:
    """A function definition found in a module's syntax tree."""

    path: str  #: relative to the repository root
    name: str  #: its qualified name (``Class.method``, ``outer.<locals>.inner``)
    first: int  #: line of its ``def`` (1-based; decorators excluded)
    last: int  #: its last line

    @property
    def lines(self) -> int:
        """Lines from its ``def`` to its last line."""
        return self.last - self.first + 1

    @property
    def key(self) -> str:
        """``path::qualname``, its key in ``FUNCTION_ALLOW``."""
        return f"{self.path}::{self.name}"


def functions(source: str, path: str = "<string>") -> list[Function]:
    """Every function and method defined in ``source``, nested ones included."""
    found: list[Function] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                found.append(Function(path, name, child.lineno, child.end_lineno or child.lineno))
                visit(child, f"{name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source, path), "")
    return found


def _sources() -> list[str]:
    """The git-tracked ``.py`` files, relative to the root, less the generated ones."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.py"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    paths = (p for p in out.split("\0") if p and (ROOT / p).is_file())
    return sorted(p for p in paths if not any(fnmatch(p, g) for g in GENERATED))


SOURCES = _sources()

SAMPLE = '''\
import functools


@functools.cache
def outer(x):
    """Doc."""

    def inner(y):
        return y

    return inner(x)


class Box:
    @property
    def size(self):
        return 1

    async def fill(
        self,
    ):
        pass
'''


def test_the_measurement_runs_from_def_to_last_line():
    found = {f.name: (f.first, f.lines) for f in functions(SAMPLE)}
    assert found == {
        "outer": (5, 7),  # the decorator excluded, the docstring and the nested def included
        "outer.<locals>.inner": (8, 2),
        "Box.size": (16, 2),
        "Box.fill": (19, 4),  # from the def line, its parameter list over several lines
    }


def test_the_sources_are_the_tracked_modules():
    assert "tests/test_python_layout.py" in SOURCES
    assert "cellgym/controllers.py" in SOURCES
    assert not any(p.endswith("_pb2.py") for p in SOURCES)
    assert not any(p.startswith(".venv/") for p in SOURCES)


@pytest.mark.parametrize("path", SOURCES)
def test_function_length(path):
    long = []
    for f in functions((ROOT / path).read_text(), path):
        if f.key in FUNCTION_ALLOW:
            assert f.lines > FUNCTION_LINES, (
                f"{f.path}:{f.first} {f.name} has {f.lines} lines now: drop it from FUNCTION_ALLOW"
            )
        elif f.lines > FUNCTION_LINES:
            long.append(f"{f.path}:{f.first} {f.name} ({f.lines} lines)")
    assert not long, f"functions over {FUNCTION_LINES} lines:\n" + "\n".join(long)


def test_allow_list_names_existing_functions_with_a_reason():
    for key, reason in FUNCTION_ALLOW.items():
        assert reason.strip(), f"{key}: say why it is allowed"
        path, name = key.split("::")
        assert path in SOURCES, f"{key}: no tracked module {path}: drop it from FUNCTION_ALLOW"
        names = {f.name for f in functions((ROOT / path).read_text(), path)}
        assert name in names, f"{key}: no function {name} in {path}: drop it from FUNCTION_ALLOW"
