"""CellGym's vocabulary: every name set that more than one part of the project uses, defined once.

Backends, action modes, training algorithms, congestion controls, traffic types, cell types and
channel sources live here, with the one error type for a value outside its allowed range
(``SpecError``) and the checks that raise it. Everything else imports these names; nothing
re-declares them (``tests/cellgym/test_vocab.py`` looks for copies).

>>> check_choice("backend", "fast", BACKENDS)
>>> check_choice("backend", "gpu", BACKENDS)
Traceback (most recent call last):
...
cellgym.vocab.SpecError: backend='gpu' is not allowed: choose one of ns3, fast
"""

from __future__ import annotations

import math
from typing import Any

#: Simulator backends: ns-3 through the bridge, and the compiled fast model.
BACKENDS: tuple[str, ...] = ("ns3", "fast")

#: What the agent's action sets: the congestion window, or the pacing rate (window follows).
ACTION_MODES: tuple[str, ...] = ("cwnd", "rate")
#: ``max_change``, the largest factor by which one step changes the window or rate: (low, high].
MAX_CHANGE_RANGE: tuple[float, float] = (1.0, 100.0)

#: Training algorithms by class name (Stable-Baselines3, and RecurrentPPO from sb3-contrib).
ALGORITHMS: tuple[str, ...] = ("PPO", "A2C", "SAC", "TD3", "RecurrentPPO")
#: The off-policy ones (a replay buffer is saved with their checkpoints).
OFF_POLICY_ALGORITHMS: tuple[str, ...] = ("SAC", "TD3")
#: ``<algo>:<path>`` prefixes of checkpoint controller names, mapped to the class names.
ALGORITHM_PREFIXES: dict[str, str] = {
    "ppo": "PPO",
    "a2c": "A2C",
    "sac": "SAC",
    "td3": "TD3",
    "recurrentppo": "RecurrentPPO",
    "recurrent_ppo": "RecurrentPPO",
}

#: ns-3's own TCP congestion controls, by the names the scenario program accepts.
NS3_TCPS: tuple[str, ...] = (
    "cubic",
    "newreno",
    "linuxreno",
    "bbr",
    "illinois",
    "veno",
    "vegas",
    "bic",
    "htcp",
    "hybla",
    "highspeed",
    "scalable",
    "westwoodplus",
    "yeah",
    "lp",
    "ledbat",
    "dctcp",
)
#: Congestion controls that run natively in the simulator: ns-3's TCPs and CellGym's XRC sender.
NATIVE_CCAS: tuple[str, ...] = (*NS3_TCPS, "xrc")
#: The value of ``FlowSpec.cca`` for the flow a Python policy drives.
AGENT_CCA = "agent"
#: Every value of ``FlowSpec.cca``.
CCAS: tuple[str, ...] = (*NATIVE_CCAS, AGENT_CCA)

#: Traffic of a flow: backlogged, ON/OFF video, or a finite transfer.
TRAFFIC_TYPES: tuple[str, ...] = ("bulk", "video", "short")

#: Cell types (``ScenarioSpec.cell.type``).
CELL_TYPES: tuple[str, ...] = ("lte",)
#: LTE bandwidths in resource blocks (5, 10, 15, 20 MHz).
LTE_BANDWIDTHS_RBS: tuple[int, ...] = (25, 50, 75, 100)

#: Channel sources (``ScenarioSpec.channel.source``): distance with a path-loss model.
CHANNEL_SOURCES: tuple[str, ...] = ("distance",)
#: Mobility of the ``distance`` channel: fixed distances, or random moves every period.
MOBILITY_MODES: tuple[str, ...] = ("static", "random")


class SpecError(ValueError):
    """A value outside its allowed range (a config field, an argument); the message names it."""


def check_range(name: str, value: float, low: float, high: float = math.inf) -> None:
    """Raise ``SpecError`` unless ``low <= value <= high`` (NaN fails)."""
    if not (low <= value <= high) or (isinstance(value, float) and math.isnan(value)):
        upper = "inf" if math.isinf(high) else f"{high:g}"
        raise SpecError(f"{name}={value!r} is out of range: allowed [{low:g}, {upper}]")


def check_above(name: str, value: float, low: float, high: float = math.inf) -> None:
    """Raise ``SpecError`` unless ``low < value <= high`` (NaN fails)."""
    if not (low < value <= high) or (isinstance(value, float) and math.isnan(value)):
        upper = "inf)" if math.isinf(high) else f"{high:g}]"
        raise SpecError(f"{name}={value!r} is out of range: allowed ({low:g}, {upper}")


def check_choice(name: str, value: Any, allowed: tuple[Any, ...]) -> None:
    """Raise ``SpecError`` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise SpecError(
            f"{name}={value!r} is not allowed: choose one of {', '.join(map(str, allowed))}"
        )


def check_max_change(value: float, name: str = "max_change") -> None:
    """The one range check of ``max_change``: (1, 100]."""
    check_above(name, value, *MAX_CHANGE_RANGE)
