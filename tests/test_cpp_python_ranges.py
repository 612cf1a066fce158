"""The scenario program's option ranges (C++) equal the scenario spec's checks (Python).

A value the Python side accepts must not fail in the simulator, and one it refuses must not be a
value the simulator was built to take: each ``--option`` the spec renders from a field
(``f"--name={self.field...}"``) has the same [low, high] in ``check_range`` and in the program's
``doubleOpt``/``uintOpt``/``Parse*`` call. Bounds given by another option (``maxDistance`` from
``minDistance``) are compared on their fixed side only.
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


def python_ranges() -> dict[str, tuple[float | None, float | None]]:
    """``{option: (low, high)}`` from the spec's ``check_range`` of the field it renders."""
    option_of: dict[str, str] = {}
    ranges: dict[str, tuple[float | None, float | None]] = {}
    for path in sorted((ROOT / "cellgym").glob("*.py")):
        text = path.read_text()
        for option, fld in re.findall(r"--(\w+)=\{(?:\w+\()?(?:self|spec)\.(\w+)", text):
            option_of[fld] = option
        for fld, lo, hi in re.findall(
            r'check_range\(\s*f?"[^"]*?(\w+)(?:\[[^\]]*\])?",\s*[^,]+,\s*([^,]+),\s*([^,)]+)\)',
            text,
        ):
            ranges[fld] = (_number(lo), _number(hi))
    return {option_of[f]: r for f, r in ranges.items() if f in option_of}


def test_every_option_checked_on_both_sides_has_the_same_range() -> None:
    cpp, py = cpp_ranges(), python_ranges()
    both = sorted(cpp.keys() & py.keys())
    assert len(both) >= 24, f"the parsers found too few options on both sides: {both}"
    differ = []
    for name in both:
        for side, (c, p) in zip(
            ("low", "high"), zip(cpp[name], py[name], strict=True), strict=True
        ):
            if c is not None and p is not None and c != p:
                differ.append(f"--{name} {side}: C++ {c:g}, Python {p:g}")
    assert not differ, "\n".join(differ)
