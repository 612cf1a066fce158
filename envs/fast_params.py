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
from collections.abc import Mapping, Sequence
from typing import Any

from cellgym.vocab import SpecError, check_choice, check_type

__all__ = ["check_fast_params", "fast_param_names", "parse_fast_params"]


def _fields() -> dict[str, str]:
    """``FastSimParams``' overridable fields (all but ``spec``) and their annotations."""
    from envs.fastsim.params import FastSimParams

    return {f.name: str(f.type) for f in dataclasses.fields(FastSimParams) if f.name != "spec"}


def fast_param_names() -> tuple[str, ...]:
    """The fields ``fast_params`` may set, in ``FastSimParams``' order."""
    return tuple(_fields())


def parse_fast_params(items: Sequence[str]) -> dict[str, Any]:
    """``["ul_period_ms=1", ...]`` -> ``{"ul_period_ms": 1}``, typed as the ``FastSimParams`` field.

    The command-line form of ``fast_params`` (``--fast-param KNOB=VALUE``); the values' ranges
    are checked where they are used (``check_fast_params``).

    Raises ``SpecError`` naming the item for a malformed one, an unknown knob or a bad value.
    """
    from envs.fastsim.params import FastSimParams

    kinds = _fields()
    out: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep:
            raise SpecError(f"--fast-param {item!r}: expected KNOB=VALUE")
        if name not in kinds:
            raise SpecError(f"--fast-param {name!r}: unknown knob; one of {', '.join(kinds)}")
        default = getattr(FastSimParams, name, None)
        text = text.strip()
        try:
            if kinds[name].startswith("str"):  # ``uplink``: a name, its default resolved later
                out[name] = text
            elif isinstance(default, bool):
                if text.lower() not in ("true", "false", "1", "0"):
                    raise ValueError
                out[name] = text.lower() in ("true", "1")
            elif isinstance(default, int) or default is None:
                out[name] = int(text)
            elif isinstance(default, float):
                out[name] = float(text)
            elif isinstance(default, tuple):
                out[name] = tuple(float(x) for x in text.split(","))
            else:
                out[name] = text
        except ValueError:
            kind = type(default).__name__ if default is not None else "int"
            raise SpecError(f"--fast-param {item!r}: {name} takes {kind} values") from None
    return out


def _choices() -> dict[str, tuple[str, ...]]:
    from envs.fastsim.params import RECOVERY_MODELS, SCHEDULERS, UPLINK_MODELS

    return {"uplink": UPLINK_MODELS, "scheduler": SCHEDULERS, "recovery": RECOVERY_MODELS}


def _check_value(name: str, value: Any, annotation: str, ranges: Mapping[str, Any]) -> Any:
    """Check one knob's type and range; return it as ``FastSimParams`` holds it."""
    from envs.fastsim.knobs import FINITE, KNOB_LENGTHS, in_range, range_text

    where = f"fast_params.{name}"
    if name in KNOB_LENGTHS:  # a tuple of numbers
        check_type(where, value, "list[float]")
        if len(value) != KNOB_LENGTHS[name]:
            raise SpecError(f"{where} has {len(value)} values: give {KNOB_LENGTHS[name]}")
        for i, v in enumerate(value):
            if not in_range(v, FINITE):
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
    if allowed is not None and not in_range(value, allowed):
        raise SpecError(f"{where}={value!r} is out of range: allowed {range_text(allowed)}")
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
    from envs.fastsim.params import knob_ranges

    ranges = knob_ranges()
    return {k: _check_value(k, v, known[k], ranges) for k, v in out.items()}


def fast_sim_params(spec: Any, fast_params: Mapping[str, Any] | None) -> Any:
    """``FastSimParams`` of ``spec`` with the (checked) overrides; ``SpecError`` names a field.

    The model's own cross-field checks run here (``FastSimParams.__post_init__``).
    """
    from envs.fastsim.params import FastSimParams

    return FastSimParams.from_spec(spec, **check_fast_params(fast_params, "fast"))
