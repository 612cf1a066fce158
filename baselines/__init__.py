"""Hand-designed controllers, as policies with the same interface as learned ones."""

from __future__ import annotations

from typing import Any

from baselines.base import BaselinePolicy
from cellgym.vocab import NATIVE_CCAS

POLICIES: dict[str, str] = {
    "explicit_rate": "baselines.explicit_rate:ExplicitRatePolicy",
    "xrc_policy": "baselines.xrc:XrcPolicy",
}


def make_policy(name: str, **env_params: Any) -> BaselinePolicy:
    """Instantiate the baseline policy registered as ``name``.

    Args:
        name: A key of ``POLICIES``.
        **env_params: Environment facts (``max_change``, ``step_ms``, ...); each is passed on only
            to policies whose constructor takes it.
    """
    if name not in POLICIES:
        raise ValueError(f"policy {name!r} is unknown: choose one of {', '.join(POLICIES)}")
    import importlib
    import inspect

    module, cls_name = POLICIES[name].split(":")
    cls = getattr(importlib.import_module(module), cls_name)
    accepted = inspect.signature(cls).parameters
    return cls(**{k: v for k, v in env_params.items() if k in accepted})


def is_native(name: str) -> bool:
    """True when ``name`` runs natively in the simulator (ns-3's TCPs, XRC's sender)."""
    return name in NATIVE_CCAS


__all__ = ["BaselinePolicy", "POLICIES", "is_native", "make_policy"]
