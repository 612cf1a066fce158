"""The fast model's layout: one module per part, one per congestion control, codes defined once."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from cellgym import controllers, vocab
from envs.fastsim import _numba_cache, codes

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "envs" / "fastsim"
MODULES = sorted(p for p in PKG.rglob("*.py") if "__pycache__" not in p.parts)
SENDERS = ("newreno", "cubic", "bbr", "xrc", "agent", "xcp", "rcp", "xcpr", "pbecc")
MAX_LINES = 600


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_one_sender_module_per_congestion_control():
    for name in SENDERS:
        assert (PKG / "senders" / f"{name}.py").is_file(), name
    # And the test-only entries' models (tests/test_controller_recipe.py).
    test_only = {controllers.ALL_CONTROLLERS[n].fast_model for n in controllers.TEST_ONLY_NATIVE}
    assert set(codes.SENDER_MODEL_CODES) == set(SENDERS) | test_only
    assert len(set(codes.SENDER_MODEL_CODES.values())) == len(SENDERS) + len(test_only)
    # The registry's fast code paths are these modules.
    for c in controllers.ALL_CONTROLLERS.values():
        if "fast" in c.backends and c.kind == "native":
            assert c.code["fast"] == f"envs/fastsim/senders/{c.fast_model}.py"
            assert (ROOT / c.code["fast"]).is_file()


def test_controller_to_sender_model_comes_from_the_registry():
    fast = controllers.names(kind="native", backend="fast", include_test_only=True)
    assert set(codes.FAST_CCAS) == {*fast, vocab.AGENT_CCA}
    for name in fast:
        model = controllers.ALL_CONTROLLERS[name].fast_model
        assert codes.cca_code(name) == codes.SENDER_MODEL_CODES[model]
    assert codes.cca_code("linuxreno") == codes.cca_code("veno") == codes.CCA_NEWRENO
    assert codes.cca_code(vocab.AGENT_CCA) == codes.CCA_AGENT
    with pytest.raises(vocab.SpecError, match=r"flows\[2\]\.cca='illinois' is not modelled"):
        codes.cca_code("illinois", "flows[2].cca")


def test_integer_codes_are_defined_once():
    names = {n for n in dir(codes) if n.isupper() and isinstance(getattr(codes, n), int | float)}
    names |= {n for n in dir(codes) if n.endswith("_CODES")}
    repeats = []
    for path in MODULES:
        if path.name == "codes.py":
            continue
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            for t in targets:
                if isinstance(t, ast.Name) and t.id in names:
                    repeats.append(f"{_rel(path)}:{node.lineno} defines {t.id}")
    assert not repeats, "\n".join(repeats)


def test_sender_model_branches_live_in_the_dispatch():
    # Adding a congestion control: its module, its code in codes.py, its branch in dispatch.py.
    allowed = {PKG / "codes.py", PKG / "senders" / "dispatch.py"}
    sites = []
    for path in MODULES:
        if path in allowed:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Name) and node.id.startswith("CCA_"):
                sites.append(f"{_rel(path)}:{node.lineno} uses {node.id}")
    assert not sites, "\n".join(sites)


def test_modules_are_short():
    lines = {_rel(p): len(p.read_text().splitlines()) for p in MODULES}
    long = {p: n for p, n in lines.items() if n > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_numba_cache_key_covers_every_kernel_module():
    sources = set(_numba_cache.SOURCES)
    kernels = [p for p in MODULES if "@njit" in p.read_text()]
    assert len(kernels) >= 15
    missing = [_rel(p) for p in kernels if p not in sources]
    assert not missing, f"kernel modules outside the cache key: {missing}"
