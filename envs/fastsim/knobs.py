"""Knob checks shared by the fast model's parameter sets: ranges by table, knobs from mappings.

``FastSimParams`` (its HARQ and NR knobs), ``router_params.RouterKnobs`` and
``pbe_params.PbeKnobs`` check their values here, so each message has one form:
``fastsim.<name>=<value>: allowed <range>`` and ``fastsim.<section>.<key> is not a knob``.

>>> from dataclasses import dataclass
>>> @dataclass
... class K:
...     a: float = 0.5
>>> check_knob_ranges(K(a=2.0), {"a": (0, 1)}, "fastsim.k")
Traceback (most recent call last):
...
cellgym.vocab.SpecError: fastsim.k.a=2.0: allowed [0, 1]
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from cellgym.vocab import SpecError

#: Ranges of ``FastSimParams``' HARQ and NR knobs: ``(low, high)`` closed, ``"[0, 1)"``, or a
#: list of the allowed values.
HARQ_NR_RANGES: dict[str, Any] = {
    "harq_rtt_ttis": (1, math.inf),
    "harq_max_tx": (1, 8),
    "harq_bler_retx": "[0, 1)",
    "nr_bler_target": "[0, 1)",
    "nr_harq_rtt_slots": (1, 64),
    "nr_shannon_alpha": (0.1, 1.0),
    "nr_ctrl_symbols": (0, 3),
    "nr_dmrs_re": [6, 12, 18, 24, 36, 48],
    "nr_xoverhead": [0, 6, 12, 18],
    "nr_layers": (1, 4),
    "nr_block_loss_db": (0, math.inf),
    "nr_blocked_mean_ms": (1, math.inf),
    "nr_clear_mean_ms": (1, math.inf),
    "nr_air_dl_ms": (0, math.inf),
    "nr_air_ul_ms": (0, math.inf),
    "nr_ul_period_ms": (1, math.inf),
}


def check_knob_ranges(obj: Any, ranges: Mapping[str, Any], where: str) -> None:
    """Raise ``SpecError`` naming ``<where>.<name>`` for the first value outside its range.

    A range is ``(low, high)`` (closed; NaN fails), ``"[0, 1)"``, or a list of allowed values.
    """
    for name, allowed in ranges.items():
        v = getattr(obj, name)
        if isinstance(allowed, tuple):
            lo, hi = allowed
            ok = lo <= v <= hi
            text = f"[{lo:g}, " + ("inf)" if hi == math.inf else f"{hi:g}]")
        elif allowed == "[0, 1)":
            ok, text = 0.0 <= v < 1.0, allowed
        else:
            ok, text = v in allowed, "one of " + ", ".join(map(str, allowed))
        if not ok:
            raise SpecError(f"{where}.{name}={v!r}: allowed {text}")


def knobs_from(cls: type, value: Any, where: str) -> Any:
    """``value`` (an instance of ``cls``, a mapping of its fields, or None) as a ``cls``."""
    if isinstance(value, cls):
        return value
    value = dict(value or {})
    known = {f.name for f in fields(cls)}
    for key in value:
        if key not in known:
            raise SpecError(f"{where}.{key} is not a knob: choose from {sorted(known)}")
    return cls(**value)
