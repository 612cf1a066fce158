"""Hand-designed controllers, as policies with the same interface as learned ones."""

from __future__ import annotations

from typing import Any

from baselines.base import BaselinePolicy
from cellgym.scenario import NS3_TCPS

POLICIES: dict[str, str] = {
    "explicit_rate": "baselines.explicit_rate:ExplicitRatePolicy",
}


def make_policy(name: str, **kwargs: Any) -> BaselinePolicy:
    """Instantiate the baseline policy registered as ``name``."""
    if name not in POLICIES:
        raise ValueError(f"policy {name!r} is unknown: choose one of {', '.join(POLICIES)}")
    module, cls = POLICIES[name].split(":")
    import importlib

    return getattr(importlib.import_module(module), cls)(**kwargs)


def is_native(name: str) -> bool:
    """True when ``name`` is one of ns-3's own TCPs (run natively, not through the policy loop)."""
    return name in NS3_TCPS


__all__ = ["BaselinePolicy", "POLICIES", "is_native", "make_policy"]
