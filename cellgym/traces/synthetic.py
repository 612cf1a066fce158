"""Seeded synthetic capacity generators, for training distributions no measured trace covers.

Each generator has a parameter dataclass (the keys of ``channel.params``, with defaults) and
returns a ``CapacitySeries`` at the cell's slot; the same seed gives the same series.

- ``markov_blockage``: a two-state LOS/NLOS Markov chain for mmWave blockage, with exponential
  sojourn times (mean ``mean_los_s`` / ``mean_nlos_s``; per slot the chain leaves its state with
  probability ``slot / mean``), each state's rate (``los_mbps``, ``nlos_mbps``) times a log-normal
  AR(1) fading factor (``fading_sigma_db``, ``fading_corr_ms``).
- ``steps``: step changes between ``levels_mbps``, each held ``hold_s``, in the given order
  (``order: cycle``) or drawn uniformly at each change (``order: random``).
- ``random_walk``: the log-rate walks with Gaussian steps of ``sigma`` every ``step_s``,
  reflected into ``[min_mbps, max_mbps]``, held constant between steps.

>>> s = generate("steps", {"levels_mbps": [12.0, 24.0], "hold_s": 0.002, "duration_s": 0.004},
...              slot_s=0.001, seed=1)
>>> s.bytes.tolist()  # 12 Mbit/s = 1500 bytes per ms
[1500, 1500, 3000, 3000]
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cellgym.traces.series import CapacitySeries, integer_bytes
from cellgym.vocab import SpecError, check_choice, check_keys, check_range, check_type

#: Orders of the ``steps`` generator.
STEP_ORDERS: tuple[str, ...] = ("cycle", "random")
#: Longest synthetic series, in seconds (it loops beyond).
MAX_SYNTH_S = 3600.0


@dataclass(frozen=True)
class MarkovBlockageParams:
    """``markov_blockage``: mmWave LOS/NLOS blockage (rates in Mbit/s, times in s)."""

    los_mbps: float = 800.0
    nlos_mbps: float = 50.0
    mean_los_s: float = 2.0
    mean_nlos_s: float = 0.5
    fading_sigma_db: float = 2.0
    fading_corr_ms: float = 10.0
    duration_s: float = 60.0

    def check(self, where: str) -> None:
        """Raise ``SpecError`` naming ``where.<key>``."""
        check_range(f"{where}.los_mbps", self.los_mbps, 0.0, 1e5)
        check_range(f"{where}.nlos_mbps", self.nlos_mbps, 0.0, 1e5)
        check_range(f"{where}.mean_los_s", self.mean_los_s, 1e-3, MAX_SYNTH_S)
        check_range(f"{where}.mean_nlos_s", self.mean_nlos_s, 1e-3, MAX_SYNTH_S)
        check_range(f"{where}.fading_sigma_db", self.fading_sigma_db, 0.0, 30.0)
        check_range(f"{where}.fading_corr_ms", self.fading_corr_ms, 0.0, 1e6)
        check_range(f"{where}.duration_s", self.duration_s, 1e-3, MAX_SYNTH_S)


@dataclass(frozen=True)
class StepsParams:
    """``steps``: a level held ``hold_s`` seconds, then the next."""

    levels_mbps: list[float] = field(default_factory=lambda: [10.0, 50.0, 100.0])
    hold_s: float = 2.0
    order: str = "cycle"
    duration_s: float = 60.0

    def check(self, where: str) -> None:
        """Raise ``SpecError`` naming ``where.<key>``."""
        check_type(f"{where}.levels_mbps", self.levels_mbps, "list[float]")
        if not self.levels_mbps:
            raise SpecError(f"{where}.levels_mbps is empty: give at least one level")
        for i, v in enumerate(self.levels_mbps):
            check_range(f"{where}.levels_mbps[{i}]", v, 0.0, 1e5)
        check_range(f"{where}.hold_s", self.hold_s, 1e-3, MAX_SYNTH_S)
        check_choice(f"{where}.order", self.order, STEP_ORDERS)
        check_range(f"{where}.duration_s", self.duration_s, 1e-3, MAX_SYNTH_S)


@dataclass(frozen=True)
class RandomWalkParams:
    """``random_walk``: a reflected random walk of the log-rate."""

    start_mbps: float = 50.0
    min_mbps: float = 5.0
    max_mbps: float = 200.0
    sigma: float = 0.1
    step_s: float = 0.1
    duration_s: float = 60.0

    def check(self, where: str) -> None:
        """Raise ``SpecError`` naming ``where.<key>``."""
        check_range(f"{where}.min_mbps", self.min_mbps, 0.001, 1e5)
        check_range(f"{where}.max_mbps", self.max_mbps, self.min_mbps, 1e5)
        check_range(f"{where}.start_mbps", self.start_mbps, self.min_mbps, self.max_mbps)
        check_range(f"{where}.sigma", self.sigma, 0.0, 10.0)
        check_range(f"{where}.step_s", self.step_s, 1e-3, MAX_SYNTH_S)
        check_range(f"{where}.duration_s", self.duration_s, 1e-3, MAX_SYNTH_S)


#: Generator name -> its parameter class.
GENERATORS: dict[str, type] = {
    "markov_blockage": MarkovBlockageParams,
    "steps": StepsParams,
    "random_walk": RandomWalkParams,
}


def make_params(cls: type, params: dict[str, Any], where: str) -> Any:
    """``cls(**params)`` with unknown keys and wrong types named under ``where``."""
    fields = {f.name: str(f.type) for f in dataclasses.fields(cls)}
    check_keys(where, params, set(fields))
    for key, value in params.items():
        check_type(f"{where}.{key}", value, fields[key])
    obj = cls(**params)
    obj.check(where)
    return obj


def _rates_to_series(rates_mbps: np.ndarray, slot_s: float, name: str, p: Any, seed: int):
    params = tuple((k, str(v)) for k, v in dataclasses.asdict(p).items()) + (("seed", str(seed)),)
    return CapacitySeries(
        integer_bytes(rates_mbps * 1e6 / 8.0 * slot_s), slot_s, "synthetic", name, params
    )


def _fading_db(rng: np.random.Generator, n: int, sigma: float, corr_ms: float, slot_s: float):
    if sigma == 0:
        return np.zeros(n)
    from cellgym.traces.sources import _ar1

    rho = math.exp(-slot_s * 1000.0 / corr_ms) if corr_ms > 0 else 0.0
    return _ar1(rng, n, sigma, rho)


def markov_blockage(p: MarkovBlockageParams, slot_s: float, seed: int) -> CapacitySeries:
    """The LOS/NLOS blockage series (module docstring); starts in LOS."""
    rng = np.random.default_rng([seed, 0xB10C])
    n = max(1, int(round(p.duration_s / slot_s)))
    # Sojourns drawn in slots (geometric = exponential sampled per slot), alternating states.
    state = np.empty(n, dtype=bool)
    k, los = 0, True
    while k < n:
        mean = (p.mean_los_s if los else p.mean_nlos_s) / slot_s
        run = int(rng.geometric(min(1.0, 1.0 / max(mean, 1.0))))
        state[k : k + run] = los
        k += run
        los = not los
    base = np.where(state, p.los_mbps, p.nlos_mbps)
    fading = 10.0 ** (_fading_db(rng, n, p.fading_sigma_db, p.fading_corr_ms, slot_s) / 10.0)
    return _rates_to_series(base * fading, slot_s, "markov_blockage", p, seed)


def steps(p: StepsParams, slot_s: float, seed: int) -> CapacitySeries:
    """Step changes between levels (module docstring)."""
    rng = np.random.default_rng([seed, 0x57E9])
    n = max(1, int(round(p.duration_s / slot_s)))
    hold = max(1, int(round(p.hold_s / slot_s)))
    n_holds = -(-n // hold)
    levels = np.asarray(p.levels_mbps, dtype=np.float64)
    if p.order == "cycle":
        idx = np.arange(n_holds) % levels.size
    else:
        idx = rng.integers(0, levels.size, n_holds)
    rates = np.repeat(levels[idx], hold)[:n]
    return _rates_to_series(rates, slot_s, "steps", p, seed)


def random_walk(p: RandomWalkParams, slot_s: float, seed: int) -> CapacitySeries:
    """A reflected log-rate random walk (module docstring)."""
    rng = np.random.default_rng([seed, 0x3A1C])
    n = max(1, int(round(p.duration_s / slot_s)))
    hold = max(1, int(round(p.step_s / slot_s)))
    n_steps = -(-n // hold)
    lo, hi = math.log(p.min_mbps), math.log(p.max_mbps)
    x = np.empty(n_steps)
    x[0] = math.log(p.start_mbps)
    steps_ = rng.standard_normal(n_steps) * p.sigma
    for k in range(1, n_steps):
        u = x[k - 1] + steps_[k] - lo
        if hi > lo:  # fold into [0, hi - lo]: reflection at both walls
            u %= 2 * (hi - lo)
            u = u if u <= hi - lo else 2 * (hi - lo) - u
        x[k] = lo + min(max(u, 0.0), hi - lo)
    rates = np.repeat(np.exp(x), hold)[:n]
    return _rates_to_series(rates, slot_s, "random_walk", p, seed)


_FUNCS = {"markov_blockage": markov_blockage, "steps": steps, "random_walk": random_walk}


def generate(
    generator: str,
    params: dict[str, Any] | None = None,
    slot_s: float = 0.001,
    seed: int = 0,
    where: str = "params",
) -> CapacitySeries:
    """A synthetic series from a generator name and its parameters (``GENERATORS``)."""
    check_choice("generator", generator, tuple(GENERATORS))
    p = make_params(GENERATORS[generator], dict(params or {}), where)
    return _FUNCS[generator](p, slot_s, seed)
