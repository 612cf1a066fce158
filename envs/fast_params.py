"""``fast_params``: overrides of the fast simulator's model knobs where users build environments.

The twin's model knobs (``envs.fastsim.params.FastSimParams``: the uplink model, air-interface
delays, HARQ, the scheduler, ...) are fields with calibrated defaults. The environments
(``LteCellEnv``, ``MultiFlowCellEnv``), ``gymnasium.make`` and ``evaluation.evaluate_many`` take
them as ``fast_params``, a mapping of field overrides, e.g. ``{"uplink": "bsr"}``. It is checked
at construction, before any simulation: an unknown field is named with the allowed ones, a
value of the wrong type or outside its range is named with the range, and the ns-3 backend
refuses any override (its model is ns-3's own; it cannot honour them). The fast vector
environment takes the same overrides as a built model:
``make_fast_vec_env(scenario, n, params=fast_sim_params(scenario, fast_params))``.

>>> check_fast_params({"uplink": "bsr"}, "fast")
{'uplink': 'bsr'}
>>> check_fast_params({"uplink": "bsr"}, "ns3")
Traceback (most recent call last):
...
cellgym.vocab.SpecError: fast_params={'uplink': 'bsr'}: the ns3 backend cannot honour the fast \
simulator's model knobs (FastSimParams): use backend='fast' or leave fast_params out
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from cellgym.vocab import SpecError, check_choice, check_range, check_type

__all__ = ["check_fast_params", "fast_param_names"]

_FINITE = (-math.inf, math.inf)

#: Closed ranges ``(low, high)`` of the numeric knobs that ``FastSimParams`` itself does not
#: range-check (its HARQ/NR ranges, ``envs.fastsim.knobs.HARQ_NR_RANGES``, are added at use).
#: ``_FINITE``: any finite number. Upper ends that depend on the model's sizes are filled in by
#: ``_ranges``.
_RANGES: dict[str, tuple[float, float]] = {
    "air_dl_ms": (0, math.inf),
    "air_ul_ms": (0, math.inf),
    "ul_period_ms": (1, math.inf),
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
    "start_jitter_ms": (0, math.inf),
    "enb_power_dbm": _FINITE,
    "noise_figure_db": _FINITE,
    "nr_mcs_offset_db": _FINITE,
    "nr_tx_power_dbm": _FINITE,
    "nr_noise_figure_db": _FINITE,
    "nr_beam_gain_fr1_db": _FINITE,
    "nr_beam_gain_fr2_db": _FINITE,
}

#: Fixed lengths of the tuple-valued knobs.
_LENGTHS: dict[str, int] = {"cqi_thresholds_db": 15, "nr_nlos_loss_db": 3}


def _fields() -> dict[str, str]:
    """``FastSimParams``' overridable fields (all but ``spec``) and their annotations."""
    from envs.fastsim.params import FastSimParams

    return {f.name: str(f.type) for f in dataclasses.fields(FastSimParams) if f.name != "spec"}


def fast_param_names() -> tuple[str, ...]:
    """The fields ``fast_params`` may set, in ``FastSimParams``' order."""
    return tuple(_fields())


def _choices() -> dict[str, tuple[str, ...]]:
    from envs.fastsim.params import RECOVERY_MODELS, SCHEDULERS, UPLINK_MODELS

    return {"uplink": UPLINK_MODELS, "scheduler": SCHEDULERS, "recovery": RECOVERY_MODELS}


def _ranges() -> dict[str, Any]:
    """Every numeric knob's range: closed ``(low, high)``, ``"[0, 1)"`` or a list of values."""
    from cellgym.fields import SEGMENT_BYTES
    from envs.fastsim.knobs import HARQ_NR_RANGES
    from envs.fastsim.params import LOST_SLOTS, MAX_UL_GRANT_MS

    return {
        **_RANGES,
        "ul_grant_ms": (0, MAX_UL_GRANT_MS),
        "rcv_buf_bytes": (2 * SEGMENT_BYTES, (LOST_SLOTS - 1) * SEGMENT_BYTES),
        "harq_bler": "[0, 1)",
        **HARQ_NR_RANGES,
    }


def _check_value(name: str, value: Any, annotation: str, ranges: Mapping[str, Any]) -> Any:
    """Check one knob's type and range; return it as ``FastSimParams`` holds it."""
    where = f"fast_params.{name}"
    if name in _LENGTHS:  # a tuple of numbers
        check_type(where, value, "list[float]")
        if len(value) != _LENGTHS[name]:
            raise SpecError(f"{where} has {len(value)} values: give {_LENGTHS[name]}")
        for i, v in enumerate(value):
            check_range(f"{where}[{i}]", v, *_FINITE)
            if math.isinf(v):
                raise SpecError(f"{where}[{i}]={v!r} is out of range: allowed a finite number")
        return tuple(float(v) for v in value)
    if name in ("explicit", "pbe"):  # a nested knob set: its own class checks the keys
        if (
            value is not None
            and not isinstance(value, Mapping)
            and not dataclasses.is_dataclass(value)
        ):
            raise SpecError(f"{where}={value!r} is a {type(value).__name__}: give a mapping")
        if name == "pbe" and value is not None:
            from envs.fastsim.pbe_params import pbe_knobs

            pbe_knobs(value)
        return value
    check_type(where, value, annotation)
    if value is None:
        return value
    choices = _choices()
    if name in choices:
        check_choice(where, value, choices[name])
        return value
    allowed = ranges.get(name)
    if isinstance(allowed, tuple):
        check_range(where, value, *allowed)
        if allowed == _FINITE and math.isinf(value):
            raise SpecError(f"{where}={value!r} is out of range: allowed a finite number")
    elif allowed == "[0, 1)":
        if not 0.0 <= value < 1.0:
            raise SpecError(f"{where}={value!r} is out of range: allowed [0, 1)")
    elif allowed is not None and value not in allowed:
        raise SpecError(
            f"{where}={value!r} is not allowed: choose one of {', '.join(map(str, allowed))}"
        )
    return value


def check_fast_params(fast_params: Mapping[str, Any] | None, backend: str) -> dict[str, Any]:
    """Validate ``fast_params`` for ``backend``; return it as a plain dict (empty for ``None``).

    Raises:
        SpecError: ``fast_params`` is not a mapping; it sets anything on a backend other than
            ``fast``; a key is not a ``FastSimParams`` field (the allowed ones are listed); a
            value has the wrong type or lies outside its range (the range is given).
    """
    if fast_params is None:
        return {}
    if not isinstance(fast_params, Mapping):
        raise SpecError(
            f"fast_params={fast_params!r} is a {type(fast_params).__name__}: give a mapping of "
            'FastSimParams fields to values, e.g. {"uplink": "bsr"}'
        )
    out = dict(fast_params)
    if not out:
        return out
    if backend != "fast":
        raise SpecError(
            f"fast_params={out!r}: the {backend} backend cannot honour the fast simulator's "
            "model knobs (FastSimParams): use backend='fast' or leave fast_params out"
        )
    known = _fields()
    unknown = sorted((k for k in out if k not in known), key=repr)
    if unknown:
        raise SpecError(
            f"fast_params.{unknown[0]} is not a FastSimParams field: choose from "
            + ", ".join(known)
        )
    ranges = _ranges()
    return {k: _check_value(k, v, known[k], ranges) for k, v in out.items()}


def fast_sim_params(spec: Any, fast_params: Mapping[str, Any] | None) -> Any:
    """``FastSimParams`` of ``spec`` with the (checked) overrides; ``SpecError`` names a field.

    The model's own cross-field checks run here (``FastSimParams.__post_init__``).
    """
    from envs.fastsim.params import FastSimParams

    return FastSimParams.from_spec(spec, **check_fast_params(fast_params, "fast"))
