"""The scenario program's option ranges and defaults (C++) equal the scenario spec's (Python).

A value the Python side accepts must not fail in the simulator, and one it refuses must not be a
value the simulator was built to take: each ``--option`` the spec renders from a field
(``f"--name={self.field...}"``) has the same [low, high] in ``check_range`` and in the program's
``doubleOpt``/``uintOpt``/``Parse*`` call. Bounds given by another option (``maxDistance`` from
``minDistance``) are compared on their fixed side only. Each option's default in the program's
option table (what ``--PrintHelp`` lists, and what a run of the program alone takes) is the
default of the field it is rendered from.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Python constants used as bounds.
CONSTANTS = {"MAX_TIME_S": 1e6, "_MAX_TIME_S": 1e6}


def _number(text: str) -> float | None:
    """A literal bound (C++ ``1'000`` and ``ULL``, Python ``1_000``); None for an expression."""
    t = text.strip().replace("'", "").replace("_", "")
    t = re.sub(r"(ULL|UL|U|L)$", "", t)
    if t in CONSTANTS:
        return CONSTANTS[t]
    try:
        return float(t)
    except ValueError:
        return None


def cpp_ranges() -> dict[str, tuple[float | None, float | None]]:
    """``{option: (low, high)}`` from the program's option checks."""
    text = "".join(p.read_text() for p in sorted((ROOT / "ns3-scenarios").rglob("*.cc")))
    out = {}
    for name, lo, hi in re.findall(
        r'(?:double|uint|int)Opt\("(\w+)",\s*([^,()]+),\s*([^)]+)\)', text
    ):
        out[name] = (_number(lo), _number(hi))
    for name, lo, hi in re.findall(
        r'Parse(?:Uint|Double)\("(\w+)",\s*opt\["\w+"\],\s*([^,()]+),\s*([^)]+)\)', text
    ):
        out[name] = (_number(lo), _number(hi))
    return out


def _option_of_fields() -> dict[str, str]:
    """``{field: option}``: each spec field the spec renders as ``--option={self.field}``."""
    option_of: dict[str, str] = {}
    for path in sorted((ROOT / "cellgym").glob("*.py")):
        for option, fld in re.findall(
            r"--(\w+)=\{(?:\w+\()?(?:self|spec)\.(\w+)", path.read_text()
        ):
            option_of[fld] = option
    return option_of


def _on_both_sides(cpp: dict, py: dict, at_least: int) -> list[str]:
    """The options both parsers found (at least ``at_least``: a broken parser finds few)."""
    both = sorted(cpp.keys() & py.keys())
    assert len(both) >= at_least, f"the parsers found too few options on both sides: {both}"
    return both


def python_ranges() -> dict[str, tuple[float | None, float | None]]:
    """``{option: (low, high)}`` from the spec's ``check_range`` of the field it renders."""
    option_of = _option_of_fields()
    ranges: dict[str, tuple[float | None, float | None]] = {}
    for path in sorted((ROOT / "cellgym").glob("*.py")):
        text = path.read_text()
        for fld, lo, hi in re.findall(
            r'check_range\(\s*f?"[^"]*?(\w+)(?:\[[^\]]*\])?",\s*[^,]+,\s*([^,]+),\s*([^,)]+)\)',
            text,
        ):
            ranges[fld] = (_number(lo), _number(hi))
    return {option_of[f]: r for f, r in ranges.items() if f in option_of}


def test_every_option_checked_on_both_sides_has_the_same_range() -> None:
    cpp, py = cpp_ranges(), python_ranges()
    differ = []
    for name in _on_both_sides(cpp, py, 24):
        for side, (c, p) in zip(
            ("low", "high"), zip(cpp[name], py[name], strict=True), strict=True
        ):
            if c is not None and p is not None and c != p:
                differ.append(f"--{name} {side}: C++ {c:g}, Python {p:g}")
    assert not differ, "\n".join(differ)


def cpp_defaults() -> dict[str, str]:
    """``{option: default}`` from the program's option table (``--PrintHelp``'s defaults)."""
    text = (ROOT / "ns3-scenarios" / "helper" / "cellgym-scenario-options.cc").read_text()
    return dict(re.findall(r'\{\s*"(\w+)",\s*"([^"]*)",', text))


def python_defaults() -> dict[str, object]:
    """``{option: default}`` of the spec field each option is rendered from (one default only)."""
    import dataclasses

    from cellgym import cell_spec, path_extras, router_spec, scenario

    option_of = _option_of_fields()
    found: dict[str, set] = {}
    for module in (scenario, cell_spec, router_spec, path_extras):
        for obj in vars(module).values():
            if isinstance(obj, type) and dataclasses.is_dataclass(obj):
                for f in dataclasses.fields(obj):
                    if f.default is not dataclasses.MISSING and f.name in option_of:
                        found.setdefault(f.name, set()).add(f.default)
    return {option_of[n]: next(iter(d)) for n, d in found.items() if len(d) == 1}


def test_every_option_rendered_from_a_field_has_the_fields_default() -> None:
    """The program run alone (``--PrintHelp``'s defaults) is the scenario a spec's defaults give."""
    cpp, py = cpp_defaults(), python_defaults()
    differ = []
    for name in _on_both_sides(cpp, py, 35):
        c, p = cpp[name], py[name]
        same = float(c) == float(p) if isinstance(p, int | float) else c == str(p)
        if not same:
            differ.append(f"--{name}: C++ {c!r}, Python {p!r}")
    assert not differ, "\n".join(differ)
