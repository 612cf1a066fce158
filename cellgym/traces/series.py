"""The one capacity representation both backends consume: bytes deliverable per interval.

A ``CapacitySeries`` is an ``int64`` array of the bytes a link (a cell's UE, or a wired
bottleneck) can deliver in each interval of ``interval_s`` seconds (1 ms: LTE's TTI and
Mahimahi's resolution; an NR slot, ``1 / 2**mu`` ms), replayed from the start when it ends, with
its provenance (source, name, parameters and a digest of the bytes). The fast backend reads it per
TTI/slot (``at_interval(cell.slot_s)``); ns-3 reads the same series from a capacity file
(``write_capacity_file``, format in ``docs/traces.md``), or a wired Mahimahi link from
``write_mahimahi``. ``capacity_per_window`` gives the bytes per window (100 ms for the replay
check: both backends within 2 % per window) and ``replay_error`` the largest relative difference.

>>> s = CapacitySeries(np.array([1500, 0, 3000, 1500]), 0.001, source="array")
>>> s.mean_rate_bps  # 6000 bytes in 4 ms
12000000.0
>>> capacity_per_window(s, 0.002).tolist()
[1500.0, 4500.0]
>>> s.at_interval(0.002).bytes.tolist()
[1500, 4500]
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cellgym.vocab import SpecError, check_above

#: Bytes of one Mahimahi delivery opportunity (one MTU-sized packet).
MTU_BYTES = 1500
#: First line of a capacity file.
CAPACITY_FILE_MAGIC = "# cellgym-capacity v1"


def integer_bytes(values: np.ndarray) -> np.ndarray:
    """Non-negative float bytes per interval -> ``int64``, keeping every prefix sum within 1 byte.

    ``diff(round(cumsum))``: the rounding error never accumulates, so each second's (each
    window's) total stays as given.

    >>> integer_bytes(np.array([0.4, 0.4, 0.4])).tolist()
    [0, 1, 0]
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size and (not np.all(np.isfinite(v)) or v.min() < 0):
        raise SpecError("capacity bytes must be finite and non-negative")
    cum = np.rint(np.concatenate([[0.0], np.cumsum(v)]))
    return np.diff(cum).astype(np.int64)


@dataclass(frozen=True)
class CapacitySeries:
    """Bytes deliverable per interval, looped at its end.

    Attributes:
        bytes: ``int64 [N]`` bytes per interval (N >= 1, all >= 0).
        interval_s: Interval length in seconds (a whole number of microseconds).
        source: ``mahimahi``, ``irish5g``, ``synthetic`` or ``array`` (built from numbers).
        name: The trace file's name or the generator's.
        params: The synthesis or generator parameters that produced it (provenance), as
            ``(key, value)`` strings.
    """

    bytes: np.ndarray
    interval_s: float
    source: str = "array"
    name: str = ""
    params: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        """Check the array and the interval."""
        b = np.asarray(self.bytes)
        if b.ndim != 1 or b.size == 0:
            raise SpecError(f"capacity series needs a 1-D array of intervals: got shape {b.shape}")
        if not np.issubdtype(b.dtype, np.integer):
            b = integer_bytes(b)
        if b.min() < 0:
            raise SpecError("capacity series has negative bytes")
        check_above("interval_s", self.interval_s, 0.0, 3600.0)
        us = self.interval_s * 1e6
        if abs(us - round(us)) > 1e-6:
            raise SpecError(f"interval_s={self.interval_s!r} is not a whole number of microseconds")
        object.__setattr__(self, "bytes", b.astype(np.int64, copy=False))

    # -- summaries -------------------------------------------------------------------------------
    @property
    def interval_us(self) -> int:
        """The interval in microseconds."""
        return int(round(self.interval_s * 1e6))

    @property
    def n(self) -> int:
        """Number of intervals."""
        return int(self.bytes.size)

    @property
    def duration_s(self) -> float:
        """Length of one replay, in seconds."""
        return self.n * self.interval_s

    @property
    def total_bytes(self) -> int:
        """Bytes of one replay."""
        return int(self.bytes.sum())

    @property
    def mean_rate_bps(self) -> float:
        """Mean capacity in bit/s."""
        return self.total_bytes * 8.0 / self.duration_s

    @property
    def mean_mbps(self) -> float:
        """Mean capacity in Mbit/s."""
        return self.mean_rate_bps * 1e-6

    @property
    def digest(self) -> str:
        """``sha256:<hex>`` of the interval (µs) and the bytes: the series' identity."""
        h = hashlib.sha256(f"{self.interval_us}:".encode())
        h.update(self.bytes.astype("<i8").tobytes())
        return "sha256:" + h.hexdigest()

    def rates_mbps(self) -> np.ndarray:
        """Capacity of each interval in Mbit/s."""
        return self.bytes * 8e-6 / self.interval_s

    def describe(self) -> dict[str, object]:
        """Provenance for reports: source, name, parameters, interval, duration, mean, digest."""
        return {
            "source": self.source,
            "name": self.name,
            "params": dict(self.params),
            "interval_s": self.interval_s,
            "duration_s": self.duration_s,
            "mean_mbps": self.mean_mbps,
            "digest": self.digest,
        }

    # -- transforms ------------------------------------------------------------------------------
    def cumulative_bytes(self, t_s: np.ndarray | float) -> np.ndarray:
        """Bytes deliverable from 0 to each time ``t_s`` (looped; linear within an interval)."""
        t = np.asarray(t_s, dtype=np.float64) / self.interval_s
        cum = np.concatenate([[0], np.cumsum(self.bytes)]).astype(np.float64)
        loops, rest = np.divmod(t, self.n)
        return loops * cum[-1] + np.interp(rest, np.arange(self.n + 1), cum)

    def at_interval(self, interval_s: float) -> CapacitySeries:
        """The same capacity over intervals of ``interval_s`` (the fast model's TTI or slot).

        Bytes spread evenly within an interval; the result covers the whole intervals of one
        replay (a trailing part shorter than ``interval_s`` is dropped, so the loop stays whole).
        A multiple of ``interval_s`` sums intervals exactly.
        """
        if abs(interval_s - self.interval_s) < 1e-12:
            return self
        n = int(math.floor(self.duration_s / interval_s + 1e-9))
        if n < 1:
            raise SpecError(
                f"interval_s={interval_s!r} is longer than the series ({self.duration_s:g} s)"
            )
        edges = np.rint(self.cumulative_bytes(np.arange(n + 1) * interval_s))
        return CapacitySeries(
            np.diff(edges).astype(np.int64), interval_s, self.source, self.name, self.params
        )

    def rotated(self, offset_s: float) -> CapacitySeries:
        """The replay started ``offset_s`` into the series (whole intervals, looped)."""
        k = int(round(offset_s / self.interval_s)) % self.n
        return CapacitySeries(
            np.roll(self.bytes, -k), self.interval_s, self.source, self.name, self.params
        )

    def scaled(self, factor: float) -> CapacitySeries:
        """Every interval's bytes times ``factor`` (prefix sums kept within a byte)."""
        check_above("scale", factor, 0.0, 1e4)
        if factor == 1.0:
            return self
        return CapacitySeries(
            integer_bytes(self.bytes * factor), self.interval_s, self.source, self.name, self.params
        )

    def window(self, start_s: float, duration_s: float) -> np.ndarray:
        """``int64`` bytes of the intervals covering ``[start_s, start_s + duration_s)``, looped."""
        k0 = int(round(start_s / self.interval_s))
        n = int(math.ceil(duration_s / self.interval_s - 1e-9))
        return self.bytes[(k0 + np.arange(n)) % self.n]


def series_from_rates(
    rates_mbps: np.ndarray, interval_s: float, source: str = "array", name: str = ""
) -> CapacitySeries:
    """A series from capacities in Mbit/s per interval (e.g. a backend's per-step record)."""
    r = np.asarray(rates_mbps, dtype=np.float64)
    return CapacitySeries(integer_bytes(r * 1e6 / 8.0 * interval_s), interval_s, source, name)


def capacity_per_window(
    series: CapacitySeries, window_s: float = 0.1, duration_s: float | None = None
) -> np.ndarray:
    """Bytes deliverable in each window of ``window_s`` from t = 0 (float64, looped).

    ``duration_s`` defaults to one replay; a trailing part shorter than a window is left out.
    The replay check of both backends compares these per 100 ms window (``replay_error``).
    """
    check_above("window_s", window_s, 0.0)
    total = series.duration_s if duration_s is None else duration_s
    n = int(math.floor(total / window_s + 1e-9))
    return np.diff(series.cumulative_bytes(np.arange(n + 1) * window_s))


def replay_error(a: np.ndarray, b: np.ndarray) -> float:
    """Largest relative difference ``|a - b| / max(a, b)`` over windows (0 where both are 0)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    n = min(a.size, b.size)
    a, b = a[:n], b[:n]
    top = np.maximum(a, b)
    rel = np.where(top > 0, np.abs(a - b) / np.where(top > 0, top, 1.0), 0.0)
    return float(rel.max()) if n else 0.0


# ------------------------------------------------------------------------------------------------
# Files for the simulators
# ------------------------------------------------------------------------------------------------


def write_capacity_file(series: CapacitySeries, path: str | Path) -> Path:
    """Write the capacity file ns-3 reads: a header of ``# key: value`` lines, one integer a line.

    Line ``i`` after the header holds the bytes deliverable in interval ``i`` (``interval_us``
    microseconds long); the reader loops at the end. See ``docs/traces.md``.
    """
    path = Path(path)
    header = [
        CAPACITY_FILE_MAGIC,
        f"# interval_us: {series.interval_us}",
        f"# intervals: {series.n}",
        f"# mean_mbps: {series.mean_mbps:.6f}",
        f"# source: {series.source}",
        f"# name: {series.name}",
        f"# digest: {series.digest}",
    ]
    body = "\n".join(map(str, series.bytes.tolist()))
    path.write_text("\n".join(header) + "\n" + body + "\n")
    return path


def read_capacity_file(path: str | Path) -> CapacitySeries:
    """Read a capacity file back; ``SpecError`` when its header or digest does not match."""
    path = Path(path)
    meta: dict[str, str] = {}
    values: list[int] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not a capacity file (bytes that are not UTF-8 text)") from None
    first = lines[0] if lines else ""
    if first != CAPACITY_FILE_MAGIC:
        raise SpecError(f"{path}: not a capacity file (first line {first!r})")
    for number, line in enumerate(lines[1:], start=2):
        if line.startswith("#"):
            key, _, value = line[1:].partition(":")
            meta[key.strip()] = value.strip()
        elif line.strip():
            try:
                values.append(int(line))
            except ValueError:
                raise SpecError(
                    f"{path}:{number}: {line.strip()[:40]!r} is not a whole number of bytes"
                ) from None
    if "interval_us" not in meta:
        raise SpecError(f"{path}: the header has no interval_us")
    series = CapacitySeries(
        np.array(values, dtype=np.int64),
        int(meta["interval_us"]) * 1e-6,
        meta.get("source", "array"),
        meta.get("name", ""),
    )
    if "digest" in meta and meta["digest"] != series.digest:
        raise SpecError(f"{path}: digest {meta['digest']} does not match its values")
    return series


def mahimahi_opportunities(series: CapacitySeries) -> np.ndarray:
    """Millisecond timestamps of 1500-byte delivery opportunities carrying the series.

    The series at 1 ms; a packet leaves in ms ``k`` whenever the cumulative bytes pass a multiple
    of 1500 there (a remainder below 1500 bytes at the end of a replay is dropped).
    """
    per_ms = series.at_interval(0.001).bytes
    packets = np.diff(np.floor(np.concatenate([[0], np.cumsum(per_ms)]) / MTU_BYTES))
    return np.repeat(np.arange(per_ms.size), packets.astype(np.int64))


def write_mahimahi(series: CapacitySeries, path: str | Path) -> Path:
    """Write the series as a Mahimahi trace (for a Mahimahi-style wired link device).

    Mahimahi loops at its last timestamp: a final opportunity at the replay's length keeps the
    period equal to the series' duration (a trace needs at least one opportunity).
    """
    stamps = mahimahi_opportunities(series)
    period_ms = int(round(series.duration_s * 1000))
    if stamps.size == 0:
        raise SpecError("the series carries less than one 1500-byte packet: no Mahimahi trace")
    lines = [*map(str, stamps.tolist())]
    if stamps[-1] < period_ms:
        lines.append(str(period_ms))
    Path(path).write_text("\n".join(lines) + "\n")
    return Path(path)
