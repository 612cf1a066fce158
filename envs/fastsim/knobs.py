"""Knob checks shared by the fast model's parameter sets: ranges by table, knobs from mappings.

``FastSimParams`` (every numeric knob, ``KNOB_RANGES``), ``router_params.RouterKnobs`` and
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

#: Any finite number (a knob without bounds that must still be a number: NaN and inf fail).
FINITE = (-math.inf, math.inf)

#: Ranges of ``FastSimParams``' numeric knobs: ``(low, high)`` closed (``FINITE``: any finite
#: number), ``"[0, 1)"``, or a list of the allowed values. The two whose upper end depends on
#: the model's sizes (``ul_grant_ms``, ``rcv_buf_bytes``) are added by ``params.knob_ranges``.
#: ``FastSimParams`` checks itself against this table, and ``envs.fast_params`` checks users'
#: overrides against it before building one: one table, one message form.
KNOB_RANGES: dict[str, Any] = {
    "air_dl_ms": (0, math.inf),
    "air_ul_ms": (0, math.inf),
    "ul_period_ms": (1, math.inf),
    "harq_bler": "[0, 1)",
    "delack_count": (1, math.inf),
    "delack_timeout_ms": (0, math.inf),
    "min_rto_ms": (1, math.inf),
    "init_cwnd_segs": (1, math.inf),
    "pf_tau_ttis": (1, math.inf),
    "xrc_budget_ms": (1e-3, math.inf),
    "xrc_ramp_rtts": (1e-3, math.inf),
    "xrc_unfair_rtts": (1e-3, math.inf),
    "xrc_unfair_alpha": (0, math.inf),
    "tb_overhead_bytes": (0, math.inf),
    "sdu_overhead_bytes": (0, math.inf),
    "attach_ms": (0, math.inf),
    "enb_power_dbm": FINITE,
    "noise_figure_db": FINITE,
    "harq_rtt_ttis": (1, math.inf),
    "ul_lead_ms": (0.0, 1.0),
    "harq_max_tx": (1, 8),
    "harq_bler_retx": "[0, 1)",
    "nr_bler_target": "[0, 1)",
    "nr_harq_rtt_slots": (1, 64),
    "nr_shannon_alpha": (0.1, 1.0),
    "nr_mcs_offset_db": FINITE,
    "nr_ctrl_symbols": (0, 3),
    "nr_dmrs_re": [6, 12, 18, 24, 36, 48],
    "nr_xoverhead": [0, 6, 12, 18],
    "nr_layers": (1, 4),
    "nr_tx_power_dbm": FINITE,
    "nr_noise_figure_db": FINITE,
    "nr_beam_gain_fr1_db": FINITE,
    "nr_beam_gain_fr2_db": FINITE,
    "nr_block_loss_db": (0, math.inf),
    "nr_blocked_mean_ms": (1, math.inf),
    "nr_clear_mean_ms": (1, math.inf),
    "nr_air_dl_ms": (0, math.inf),
    "nr_air_ul_ms": (0, math.inf),
    "nr_ul_period_ms": (1, math.inf),
}

#: Fixed lengths of the tuple-valued knobs (each value a finite number).
KNOB_LENGTHS: dict[str, int] = {"cqi_thresholds_db": 15, "nr_nlos_loss_db": 3}


def range_text(allowed: Any) -> str:
    """How a range of ``KNOB_RANGES`` reads in a message: ``[1, inf)``, ``a finite number``."""
    if allowed == FINITE:
        return "a finite number"
    if isinstance(allowed, tuple):
        lo, hi = allowed
        return f"[{lo:g}, " + ("inf)" if hi == math.inf else f"{hi:g}]")
    if allowed == "[0, 1)":
        return allowed
    return "one of " + ", ".join(map(str, allowed))


def in_range(v: Any, allowed: Any) -> bool:
    """Whether ``v`` lies in ``allowed`` (a ``KNOB_RANGES`` entry; NaN never does)."""
    if allowed == FINITE:
        return math.isfinite(v)
    if isinstance(allowed, tuple):
        return allowed[0] <= v <= allowed[1]
    if allowed == "[0, 1)":
        return 0.0 <= v < 1.0
    return v in allowed


def check_knob_ranges(obj: Any, ranges: Mapping[str, Any], where: str) -> None:
    """Raise ``SpecError`` naming ``<where>.<name>`` for the first value outside its range.

    A range is ``(low, high)`` (closed; NaN fails; ``FINITE``: any finite number), ``"[0, 1)"``,
    or a list of allowed values.
    """
    for name, allowed in ranges.items():
        v = getattr(obj, name)
        if not in_range(v, allowed):
            raise SpecError(f"{where}.{name}={v!r}: allowed {range_text(allowed)}")


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
