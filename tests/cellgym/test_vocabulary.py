"""One vocabulary: names defined once, and the C++ program and the README agree with them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from cellgym import controllers, vocab
from cellgym.fields import FLOW_FIELDS, UE_FIELDS

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("cellgym", "envs", "agents", "baselines", "configs", "evaluation", "workflows")
#: The scenario program's step loop: its observation columns and record header.
STEP_LOOP = ROOT / "ns3-scenarios" / "helper" / "cellgym-step-loop.cc"
#: The congestion controls the sender app is created with (the C++ side of the registry).
CCA_TABLE = ROOT / "ns3-scenarios" / "model" / "cellgym-cca-table.cc"


def _cpp_string_array(source: str, name: str) -> tuple[str, ...]:
    match = re.search(rf"{name}\[\]\s*=\s*\{{(.*?)\}};", source, re.S)
    assert match, f"{name} not found"
    return tuple(re.findall(r'"([^"]+)"', match.group(1)))


def test_cpp_record_fields_match_python():
    source = STEP_LOOP.read_text()
    assert _cpp_string_array(source, "kFlowFieldNames") == FLOW_FIELDS
    assert _cpp_string_array(source, "kUeFieldNames") == UE_FIELDS
    header = (ROOT / "ns3-scenarios" / "model" / "cellgym-sender-app.h").read_text()
    assert f"kFlowFields = {len(FLOW_FIELDS)};" in header
    assert f"kUeFields = {len(UE_FIELDS)};" in source


def test_cpp_congestion_controls_match_the_registry():
    entries = re.findall(
        r'\{"(\w+)",\s*\{"(ns3::\w+)"(?:,\s*CcaPacing::(\w+))?\}\}', CCA_TABLE.read_text()
    )
    pairs = {name: type_id for name, type_id, _ in entries}
    # Only BBR always paces and only the agent's flows pace by command; every other sender paces
    # by its own rule (the explicit senders state it through CellGymExplicitSender).
    pacing = {name: how for name, _, how in entries if how}
    assert pacing == {"bbr": "ALWAYS", vocab.AGENT_CCA: "COMMANDED"}
    # Every native entry, the test-only ones too (tests/test_controller_recipe.py).
    want = {
        c.name: c.ns3_type
        for c in controllers.ALL_CONTROLLERS.values()
        if c.kind == "native" and "ns3" in c.backends
    }
    agent = pairs.pop(vocab.AGENT_CCA)
    assert agent == "ns3::CellGymAgentCongestionOps"
    assert pairs == want


def test_registry_entries_are_consistent():
    assert tuple(controllers.names(kind="native")) == vocab.NATIVE_CCAS
    for c in controllers.ALL_CONTROLLERS.values():
        assert c.kind in controllers.KINDS
        assert set(c.backends) <= set(vocab.BACKENDS) and c.backends
        for where, path in c.code.items():
            if where != "ns3" or path.startswith("ns3-scenarios/"):
                assert (ROOT / path).is_file(), f"{c.name}: {where} code {path} does not exist"
        if c.kind == "policy":
            module, _, cls = c.entry_point.partition(":")
            assert (ROOT / (module.replace(".", "/") + ".py")).is_file() and cls
        if "fast" in c.backends and c.kind == "native":
            assert c.fast_model in controllers.ALL_CONTROLLERS


def test_unknown_or_unsupported_controller_names_the_field():
    with pytest.raises(vocab.SpecError, match=r"controllers\[1\]='quic' is not a known"):
        controllers.get("quic", field_name="controllers[1]")
    with pytest.raises(vocab.SpecError, match="does not run on backend='fast'.*cubic"):
        controllers.get("illinois", backend="fast")


def test_readme_controller_table_is_the_registry():
    readme = (ROOT / "README.md").read_text()
    assert controllers.markdown_table() in readme, (
        "README's controller table differs from cellgym.controllers.markdown_table()"
    )


def _vocab_sets() -> dict[frozenset, str]:
    out = {}
    for name in dir(vocab):
        value = getattr(vocab, name)
        if name.isupper() and isinstance(value, tuple) and len(value) >= 2:
            if all(isinstance(v, str) for v in value):
                out[frozenset(value)] = name
    return out


def _modules():
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            if path.name.endswith("_pb2.py") or path == ROOT / "cellgym" / "vocab.py":
                continue
            yield path


def test_vocabulary_is_defined_once():
    sets = _vocab_sets()
    copies = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Tuple | ast.List | ast.Set) and len(node.elts) >= 2:
                if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts):
                    key = frozenset(e.value for e in node.elts)
                    if key in sets:
                        rel = path.relative_to(ROOT)
                        copies.append(f"{rel}:{node.lineno} repeats cellgym.vocab.{sets[key]}")
    assert not copies, "\n".join(copies)


def test_one_error_type_for_out_of_range_values():
    assert issubclass(vocab.SpecError, ValueError)
    from cellgym import scenario

    assert scenario.SpecError is vocab.SpecError
