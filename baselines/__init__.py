"""Hand-designed controllers, as policies with the same interface as learned ones.

Which policies exist, and which classes implement them, is the controller registry's to say
(``cellgym.controllers``: the entries of kind ``policy``); this package holds their code.
"""

from __future__ import annotations

from typing import Any

from baselines.base import BaselinePolicy
from cellgym import controllers
from cellgym.vocab import SpecError

#: Policy name -> ``module:Class``, from the registry.
POLICIES: dict[str, str] = {
    name: controllers.CONTROLLERS[name].entry_point for name in controllers.names(kind="policy")
}

#: True when a name runs natively in the simulator (ns-3's TCPs, XRC's sender).
is_native = controllers.is_native


def make_policy(name: str, **env_params: Any) -> BaselinePolicy:
    """Instantiate the baseline policy registered as ``name``.

    Args:
        name: A policy of the registry (a key of ``POLICIES``).
        **env_params: Environment facts (``max_change``, ``step_ms``, ...); each is passed on only
            to policies whose constructor takes it.

    Raises:
        SpecError: ``name`` is not a policy of the registry.
    """
    if name not in POLICIES:
        raise SpecError(f"policy {name!r} is unknown: choose one of {', '.join(POLICIES)}")
    import importlib
    import inspect

    module, cls_name = POLICIES[name].split(":")
    cls = getattr(importlib.import_module(module), cls_name)
    accepted = inspect.signature(cls).parameters
    return cls(**{k: v for k, v in env_params.items() if k in accepted})


__all__ = ["POLICIES", "BaselinePolicy", "is_native", "make_policy"]
