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

import dataclasses
import math
import numbers
from typing import Any

#: Simulator backends: ns-3 through the bridge, and the compiled fast model.
BACKENDS: tuple[str, ...] = ("ns3", "fast")

#: What the agent's action sets: the congestion window, or the pacing rate (window follows).
ACTION_MODES: tuple[str, ...] = ("cwnd", "rate")
#: ``max_change``, the largest factor by which one step changes the window or rate: (low, high].
MAX_CHANGE_RANGE: tuple[float, float] = (1.0, 100.0)

#: Training algorithms by class name (Stable-Baselines3, RecurrentPPO from sb3-contrib, and
#: FastPPO: ``learners.ppo`` over the fast backend's cells as arrays, saved as an SB3 PPO model).
ALGORITHMS: tuple[str, ...] = ("PPO", "A2C", "SAC", "TD3", "RecurrentPPO", "FastPPO")
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
    "fastppo": "FastPPO",
    "fast_ppo": "FastPPO",
}
#: SB3 PPO's ``agent.kwargs`` that FastPPO (``learners.run``) implements, under SB3's names.
FAST_PPO_SB3_KWARGS: tuple[str, ...] = (
    "n_steps",
    "batch_size",
    "n_epochs",
    "learning_rate",
    "gamma",
    "gae_lambda",
    "clip_range",
    "ent_coef",
    "vf_coef",
    "max_grad_norm",
    "normalize_advantage",
    "target_kl",
)
#: ``agent.kwargs`` of FastPPO: ``FAST_PPO_SB3_KWARGS``, its torch thread counts and
#: ``cells_scale`` (every batch of cells that many times larger).
FAST_PPO_KWARGS: tuple[str, ...] = (
    *FAST_PPO_SB3_KWARGS,
    "torch_threads",
    "update_threads",
    "cells_scale",
)

#: Observation feature sets a learned policy sees: the raw observation, or XRC-style derived
#: features (``agents/features.py``).
FEATURE_SETS: tuple[str, ...] = ("raw", "derived")

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
#: Router-assisted congestion controls with an explicit-feedback header (docs/explicit-feedback.md):
#: XCP (window, per-packet feedback), RCP (one rate per bottleneck) and XCP-r (XCP's router, the
#: receiver computes the window: docs/xcp-r.md).
EXPLICIT_CCAS: tuple[str, ...] = ("xcp", "rcp", "xcpr")
#: Congestion controls that run natively in the simulator: ns-3's TCPs, CellGym's XRC sender and
#: the router-assisted ones.
#: Endpoint-measured explicit rate (docs/pbe-cc.md): PBE-CC's UE reads the cell's allocations.
PBE_CCAS: tuple[str, ...] = ("pbecc",)
NATIVE_CCAS: tuple[str, ...] = (*NS3_TCPS, "xrc", *EXPLICIT_CCAS, *PBE_CCAS)
#: Native congestion controls only the fast backend runs (ns-3 refuses them by field): none now.
FAST_ONLY_CCAS: tuple[str, ...] = ()
#: The value of ``FlowSpec.cca`` for the flow a Python policy drives.
AGENT_CCA = "agent"
#: Every value of ``FlowSpec.cca``.
CCAS: tuple[str, ...] = (*NATIVE_CCAS, AGENT_CCA)

#: Traffic of a flow: backlogged, ON/OFF video, or a finite transfer.
TRAFFIC_TYPES: tuple[str, ...] = ("bulk", "video", "short", "pareto")
#: ``ScenarioSpec.udp_periods``: the ON/OFF UDP sources' periods (fixed, or exponential draws).
UDP_PERIODS: tuple[str, ...] = ("fixed", "exponential")

#: Cell types (``ScenarioSpec.cell.type``): ns-3's LTE module, or 5G NR (5G-LENA).
#: The radio cells (the controllers' default ``cells``); ``wired`` is a dumbbell's last hop.
RADIO_CELL_TYPES: tuple[str, ...] = ("lte", "nr")
CELL_TYPES: tuple[str, ...] = (*RADIO_CELL_TYPES, "wired")
#: Queue disciplines of the wired bottleneck (``ScenarioSpec.bottleneck_queue``).
BOTTLENECK_QUEUES: tuple[str, ...] = ("droptail", "red")
#: Congestion controls a ``pareto`` flow stream may use (``cellgym.workload``).
PARETO_CCAS: tuple[str, ...] = ("newreno", "cubic", "xcp", "rcp")
#: LTE bandwidths in resource blocks (5, 10, 15, 20 MHz).
LTE_BANDWIDTHS_RBS: tuple[int, ...] = (25, 50, 75, 100)

#: NR numerologies mu (subcarrier spacing 15 * 2**mu kHz, slot 1 / 2**mu ms).
NR_NUMEROLOGIES: tuple[int, ...] = (0, 1, 2, 3)
#: NR frequency ranges (TS 38.104): carrier frequency bounds in GHz.
NR_FREQUENCY_RANGES_GHZ: dict[str, tuple[float, float]] = {
    "FR1": (0.41, 7.125),
    "FR2": (24.25, 52.6),
}
#: Lowest NR carrier CellGym accepts: TR 38.901's path-loss models hold from 0.5 GHz.
NR_MIN_FREQUENCY_GHZ = 0.5
#: Channel bandwidths in MHz allowed per frequency range and numerology (TS 38.101-1/-2).
NR_BANDWIDTHS_MHZ: dict[tuple[str, int], tuple[float, float]] = {
    ("FR1", 0): (5.0, 50.0),
    ("FR1", 1): (5.0, 100.0),
    ("FR1", 2): (10.0, 100.0),
    ("FR2", 2): (50.0, 200.0),
    ("FR2", 3): (50.0, 400.0),
}
#: TR 38.901 deployment scenarios: urban micro street canyon, urban macro, rural macro.
NR_PROPAGATION_SCENARIOS: tuple[str, ...] = ("umi", "uma", "rma")
#: TR 38.901 line-of-sight condition: its distance-dependent probability, or always LOS / NLOS.
NR_LOS_CONDITIONS: tuple[str, ...] = ("probabilistic", "los", "nlos")
#: NR MAC schedulers: proportional fair and round robin (5G-LENA's OFDMA variants).
NR_SCHEDULERS: tuple[str, ...] = ("pf", "rr")
#: NR MCS tables of TS 38.214 (table 5.1.3.1-1: up to 64QAM; 5.1.3.1-2: up to 256QAM).
NR_MCS_TABLES: tuple[str, ...] = ("64qam", "256qam")


def nr_frequency_range(frequency_ghz: float) -> str | None:
    """``FR1`` or ``FR2`` for a carrier frequency in GHz, or None outside both."""
    for name, (low, high) in NR_FREQUENCY_RANGES_GHZ.items():
        if low <= frequency_ghz <= high:
            return name
    return None


#: Channel sources (``ScenarioSpec.channel.source``): distance with a path-loss model, or a
#: capacity trace (``cellgym.traces``, docs/traces.md): a Mahimahi file, an Irish 5G dataset CSV
#: (per-slot synthesis), or a seeded synthetic generator.
CHANNEL_SOURCES: tuple[str, ...] = ("distance", "mahimahi", "irish5g", "synthetic")
#: The channel sources that replay a capacity series.
TRACE_SOURCES: tuple[str, ...] = ("mahimahi", "irish5g", "synthetic")
#: Generators of the ``synthetic`` source (``channel.generator``).
TRACE_GENERATORS: tuple[str, ...] = ("markov_blockage", "steps", "random_walk")
#: The Zeus paper's buffer regimes, in bandwidth-delay products (``scenario.buffer_bdp``).
ZEUS_BUFFER_BDPS: tuple[float, ...] = (1.0, 5.0, 10.0, math.inf)
#: Mobility of the ``distance`` channel: fixed distances, or random moves every period.
MOBILITY_MODES: tuple[str, ...] = ("static", "random")


class SpecError(ValueError):
    """A value outside its allowed range (a config field, an argument); the message names it."""


def _fmt(x: float) -> str:
    """A bound as people write it: ``0.001``, ``100``, ``4294967295`` (no exponent for integers)."""
    if isinstance(x, numbers.Integral) or (float(x).is_integer() and abs(x) < 1e18):
        return str(int(x))
    return f"{x:g}"


def check_range(name: str, value: float, low: float, high: float = math.inf) -> None:
    """Raise ``SpecError`` unless ``low <= value <= high`` (NaN fails)."""
    if not (low <= value <= high) or (isinstance(value, float) and math.isnan(value)):
        upper = "inf)" if math.isinf(high) else f"{_fmt(high)}]"
        raise SpecError(f"{name}={value!r} is out of range: allowed [{_fmt(low)}, {upper}")


def check_above(name: str, value: float, low: float, high: float = math.inf) -> None:
    """Raise ``SpecError`` unless ``low < value <= high`` (NaN fails)."""
    if not (low < value <= high) or (isinstance(value, float) and math.isnan(value)):
        upper = "inf)" if math.isinf(high) else f"{_fmt(high)}]"
        raise SpecError(f"{name}={value!r} is out of range: allowed ({_fmt(low)}, {upper}")


def check_choice(name: str, value: Any, allowed: tuple[Any, ...]) -> None:
    """Raise ``SpecError`` unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        raise SpecError(
            f"{name}={value!r} is not allowed: choose one of {', '.join(map(str, allowed))}"
        )


def check_max_change(value: float, name: str = "max_change") -> None:
    """The one range check of ``max_change``: (1, 100]."""
    check_above(name, value, *MAX_CHANGE_RANGE)


_TYPE_WORDS = {"int": "an integer", "float": "a number", "str": "a string", "bool": "true or false"}
_PLURAL_WORDS = {"int": "integers", "float": "numbers", "str": "strings", "bool": "booleans"}


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "int":
        return isinstance(value, numbers.Integral)
    if kind == "float":
        return isinstance(value, numbers.Real)
    if kind == "str":
        return isinstance(value, str)
    return True  # nested specs and other types check themselves


def check_type(name: str, value: Any, annotation: str) -> None:
    """Raise ``SpecError`` unless ``value`` fits ``annotation``.

    Annotations: ``int``, ``float``, ``str``, ``bool``, ``list[...]`` of those, each with an
    optional ``| None``. Integers are accepted for floats; booleans are never numbers; numeric
    strings are not numbers.
    """
    kind = annotation.replace(" ", "")
    if kind.endswith("|None"):
        if value is None:
            return
        kind = kind[: -len("|None")]
    if kind.startswith("list[") and kind.endswith("]"):
        inner = kind[5:-1]
        if not isinstance(value, list | tuple):
            word = _PLURAL_WORDS.get(inner, inner)
            raise SpecError(f"{name}={value!r} is not a list: give a list of {word}")
        for i, item in enumerate(value):
            check_type(f"{name}[{i}]", item, inner)
        return
    if not _type_ok(value, kind):
        word = _TYPE_WORDS.get(kind, kind)
        raise SpecError(f"{name}={value!r} is a {type(value).__name__}: give {word}")


def check_keys(where: str, data: Any, known: set[str] | frozenset[str]) -> None:
    """Raise ``SpecError`` naming ``where`` for keys of the mapping ``data`` outside ``known``.

    Keys of any type are reported (sorted by their ``repr``: ``1`` and ``"a"`` do not compare).
    """
    unknown = sorted(set(data) - set(known), key=repr)
    if unknown:
        raise SpecError(f"{where} has unknown field(s) {unknown}: allowed {sorted(known)}")


def check_field_types(obj: Any, where: str) -> None:
    """``check_type`` on every field of the dataclass ``obj``, named ``where.<field>``."""
    for f in dataclasses.fields(obj):
        check_type(f"{where}.{f.name}", getattr(obj, f.name), str(f.type))
