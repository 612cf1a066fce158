"""Readers of measured traces: Mahimahi files and the Irish 5G dataset's per-second CSVs.

- ``read_mahimahi``: one line per 1500-byte delivery opportunity, the time in ms since the start
  (repeats: several packets in one ms); the link loops at the last timestamp. Result: bytes per
  1 ms interval, exact.
- ``read_irish5g``: one row per second (``DL_bitrate`` in kbit/s, ``CQI``, ``NetworkMode``,
  ``State``, ...). Per-slot capacity comes from a seeded synthesis (``synthesize_irish5g``): the
  second's rate (measured, or estimated from the CQI where demand limited it: ``ENVELOPES``) is
  its envelope (each second's bytes equal its measured rate, to a
  byte), and the CQI shapes the variation inside the second: a per-slot CQI follows the
  per-second CQI (interpolated between seconds) plus an AR(1) jitter, and each slot gets a share
  of the second's bytes proportional to the spectral efficiency of its CQI (TS 36.213 table
  7.2.3-1, the same values as TS 38.214 table 5.2.2.1-2). Parameters: ``IrishParams``.

Trace names resolve against the shared traces folder (``cellgym.paths.traces_dir``): the
project never copies the files into its tree.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cellgym.paths import traces_dir
from cellgym.traces.series import MTU_BYTES, CapacitySeries, integer_bytes
from cellgym.vocab import SpecError, check_choice, check_range

#: Spectral efficiency (bit per resource element) of CQI 0..15: TS 36.213 table 7.2.3-1
#: (4-bit CQI, up to 64QAM); TS 38.214 table 5.2.2.1-2 has the same values. CQI 0 is out of range.
CQI_EFFICIENCY: np.ndarray = np.array(
    [0.0, 0.1523, 0.2344, 0.3770, 0.6016, 0.8770, 1.1758, 1.4766,
     1.9141, 2.4063, 2.7305, 3.3223, 3.9023, 4.5234, 5.1152, 5.5547]
)  # fmt: skip
#: Each second's rate (the envelope): ``measured`` (``DL_bitrate``: the download sessions, where
#: the phone saturates the channel); ``cqi_idle`` (measured, but seconds the phone was idle,
#: ``State == "I"``, estimated from their CQI); ``cqi`` (every second from its CQI: the Netflix
#: sessions, whose rate is demand-limited throughout). A CQI estimate is ``k * efficiency(CQI)``
#: with ``k`` the ``cqi_quantile`` quantile of ``rate / efficiency`` over the downloading seconds.
ENVELOPES: tuple[str, ...] = ("measured", "cqi_idle", "cqi")


def resolve_trace(trace: str, where: str = "trace") -> Path:
    """A trace file by path, or by name relative to the shared traces folder.

    Raises:
        SpecError: Neither exists (naming ``where`` and the folder searched).
    """
    path = Path(trace)
    if path.is_file():
        return path
    shared = traces_dir() / trace
    if shared.is_file():
        return shared
    raise SpecError(
        f"{where}={trace!r} is not a file, nor a trace under {traces_dir()} "
        "(set CELLGYM_TRACES to the traces folder)"
    )


def parse_mahimahi(lines: list[str] | np.ndarray, name: str = "") -> CapacitySeries:
    """Bytes per ms of Mahimahi timestamps (ms, non-decreasing); the period is the last one.

    The opportunities at the last timestamp ``T`` coincide with time 0 of the next replay
    (Mahimahi restarts its schedule at ``T``), so they count in interval 0 of the period.

    >>> parse_mahimahi(["0", "1", "1", "3"]).bytes.tolist()  # period 3 ms
    [3000, 3000, 0]
    """
    stamps = np.asarray([int(x) for x in lines] if isinstance(lines, list) else lines, np.int64)
    if stamps.size == 0:
        raise SpecError(f"Mahimahi trace {name!r} has no delivery opportunity")
    if stamps.min() < 0 or np.any(np.diff(stamps) < 0):
        raise SpecError(f"Mahimahi trace {name!r}: timestamps must be non-negative, non-decreasing")
    period = int(stamps[-1])
    if period == 0:
        raise SpecError(f"Mahimahi trace {name!r} lasts 0 ms: its last timestamp must be > 0")
    counts = np.bincount(stamps % period, minlength=period)
    return CapacitySeries(counts * MTU_BYTES, 0.001, "mahimahi", name)


def _read_text(path: Path, what: str) -> str:
    """A trace file's text; ``SpecError`` naming the file when it is not UTF-8 text."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        line = path.read_bytes()[: e.start].count(b"\n") + 1
        raise SpecError(f"{path}:{line}: not a {what} (bytes that are not UTF-8 text)") from None


def read_mahimahi(trace: str | Path) -> CapacitySeries:
    """A Mahimahi trace file (a path or a name under the traces folder) as bytes per ms.

    A file is parsed once per process while its size and modification time stay the same
    (``_file_key``); the series' arrays are read-only.

    Raises:
        SpecError: A line is not a whole number of ms (naming the file and line), or the file is
            empty or not text.
    """
    return _read_mahimahi(*_file_key(resolve_trace(str(trace))))


def _file_key(path: Path) -> tuple[str, int, int]:
    """``(path, size, mtime_ns)``: a parsed file's cache key (an edited file is read again)."""
    st = path.stat()
    return str(path), st.st_size, st.st_mtime_ns


def _read_only(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@functools.lru_cache(maxsize=32)
def _read_mahimahi(path_s: str, _size: int, _mtime_ns: int) -> CapacitySeries:
    path = Path(path_s)
    stamps: list[int] = []
    for number, line in enumerate(_read_text(path, "Mahimahi trace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            stamps.append(int(line))
        except ValueError:
            raise SpecError(
                f"{path}:{number}: {line.strip()[:40]!r} is not a timestamp: a Mahimahi trace "
                "holds one whole number of ms per line"
            ) from None
    series = parse_mahimahi(np.asarray(stamps, np.int64), path.name)
    _read_only(series.bytes)
    return series


@dataclass(frozen=True)
class IrishParams:
    """Parameters of the Irish 5G per-slot synthesis (``channel.params`` keys).

    Attributes:
        cqi_sigma: Standard deviation of the per-slot CQI jitter, in CQI steps (0: the CQI
            interpolated between seconds, no jitter).
        cqi_corr_ms: Correlation time of the jitter (AR(1), ``rho = exp(-slot / corr)``), ms.
        envelope: Each second's rate: ``measured``, ``cqi_idle`` or ``cqi`` (``ENVELOPES``).
        cqi_quantile: Quantile of ``rate / efficiency(CQI)`` over downloading seconds that
            scales a CQI estimate (0.5-1; a demand-limited session's best seconds approach the
            channel's rate).
    """

    cqi_sigma: float = 1.0
    cqi_corr_ms: float = 20.0
    envelope: str = "measured"
    cqi_quantile: float = 0.9

    def check(self, where: str) -> None:
        """Raise ``SpecError`` naming ``where.<key>``."""
        check_range(f"{where}.cqi_sigma", self.cqi_sigma, 0.0, 15.0)
        check_range(f"{where}.cqi_corr_ms", self.cqi_corr_ms, 0.0, 1e6)
        check_choice(f"{where}.envelope", self.envelope, ENVELOPES)
        check_range(f"{where}.cqi_quantile", self.cqi_quantile, 0.5, 1.0)


@dataclass(frozen=True)
class IrishSeconds:
    """An Irish 5G CSV reduced to whole seconds from its first row.

    Attributes:
        rate_kbps: ``[S]`` measured downlink rate (``DL_bitrate``, kbit/s; repeated rows of a
            second averaged, missing seconds hold the previous second's values).
        cqi: ``[S]`` CQI (0-15; missing values filled from neighbours, 7 when none).
        idle: ``[S]`` the phone was idle (``State == "I"``).
        five_g: ``[S]`` ``NetworkMode == "5G"``.
        name: The file's name.
    """

    rate_kbps: np.ndarray
    cqi: np.ndarray
    idle: np.ndarray
    five_g: np.ndarray
    name: str


def read_irish5g_seconds(trace: str | Path) -> IrishSeconds:
    """Read an Irish 5G dataset CSV into per-second arrays (``IrishSeconds``).

    A file is parsed once per process while its size and modification time stay the same (a
    reset of a trace cell re-synthesizes its slots from the parsed seconds); the arrays are
    read-only.
    """
    return _read_irish5g_seconds(*_file_key(resolve_trace(str(trace))))


@functools.lru_cache(maxsize=32)
def _read_irish5g_seconds(path_s: str, _size: int, _mtime_ns: int) -> IrishSeconds:
    import pandas as pd

    path = Path(path_s)
    _read_text(path, "CSV file")
    try:
        df = pd.read_csv(path, dtype=str)
    except (pd.errors.EmptyDataError, pd.errors.ParserError) as e:
        raise SpecError(f"{path}: not an Irish 5G dataset CSV ({e})") from None
    missing = [c for c in ("Timestamp", "DL_bitrate", "CQI") if c not in df.columns]
    if missing:
        raise SpecError(f"{path.name}: columns {missing} missing: not an Irish 5G dataset CSV")
    t = pd.to_datetime(df["Timestamp"], format="%Y.%m.%d_%H.%M.%S", errors="coerce")
    keep = t.notna()
    if not keep.any():
        raise SpecError(f"{path.name}: no row has a readable Timestamp")
    df, t = df[keep], t[keep]
    sec = ((t - t.min()).dt.total_seconds()).astype(np.int64).to_numpy()
    frame = pd.DataFrame(
        {
            "sec": sec,
            "rate": pd.to_numeric(df["DL_bitrate"], errors="coerce").to_numpy(),
            "cqi": pd.to_numeric(df["CQI"], errors="coerce").to_numpy(),
            "idle": (df.get("State", pd.Series("D", index=df.index)) == "I").to_numpy(),
            "g5": (df.get("NetworkMode", pd.Series("", index=df.index)) == "5G").to_numpy(),
        }
    )
    per = frame.groupby("sec").agg({"rate": "mean", "cqi": "mean", "idle": "all", "g5": "all"})
    per = per.reindex(np.arange(int(sec.max()) + 1)).ffill()
    per["cqi"] = per["cqi"].bfill().fillna(7.0).clip(0, 15)
    per["rate"] = per["rate"].fillna(0.0).clip(lower=0.0)
    return IrishSeconds(
        rate_kbps=_read_only(per["rate"].to_numpy(np.float64, copy=True)),
        cqi=_read_only(per["cqi"].to_numpy(np.float64, copy=True)),
        idle=_read_only(per["idle"].fillna(False).to_numpy(bool, copy=True)),
        five_g=_read_only(per["g5"].fillna(False).to_numpy(bool, copy=True)),
        name=path.name,
    )


#: Normals drawn per chunk when an AR(1) head skips the rest of its series' draws.
_DRAW_CHUNK = 1 << 16


def _ar1(
    rng: np.random.Generator, n: int, sigma: float, rho: float, limit: int | None = None
) -> np.ndarray:
    """A stationary AR(1) series of standard deviation ``sigma`` and lag-1 correlation ``rho``.

    ``limit``: only the first ``limit`` values (``min(limit, n)``), equal to those of the whole
    series; the generator still draws all ``n + 1`` normals (``x[0]`` is the last), so it ends
    in the same state, but the recursion runs over the head only.
    """
    if sigma == 0 or n == 0:
        return np.zeros(n if limit is None else min(limit, n))
    if limit is None or limit >= n:
        e = rng.standard_normal(n) * sigma * math.sqrt(1.0 - rho * rho)
        m_out = n
    else:
        m_out = max(0, limit)
        e = rng.standard_normal(m_out) * sigma * math.sqrt(1.0 - rho * rho)
        # The rest of the series' draws, discarded in chunks: the same stream as one call.
        buf = np.empty(min(_DRAW_CHUNK, n - m_out))
        rest = n - m_out
        while rest > 0:
            k = min(rest, buf.size)
            rng.standard_normal(out=buf[:k])
            rest -= k
    x = np.empty(m_out)
    x0 = rng.standard_normal() * sigma
    if m_out == 0:
        return x
    x[0] = x0
    # x_k = rho x_{k-1} + e_k in blocks: within a block x_{k+i} = rho^(i+1) (x_{k-1} +
    # sum_{j<=i} e_{k+j} rho^-(j+1)), with blocks short enough (rho^L >= e^-15) to stay exact.
    # Block boundaries depend on n alone, so a head's values are the whole series' own.
    block = n if rho <= 0 else max(1, min(n, int(15.0 / -math.log(rho)) if rho < 1 else n))
    k = 1
    while k < m_out:
        m = min(block, n - k, m_out - k)
        if rho <= 0:
            x[k : k + m] = e[k : k + m]
        else:
            pw = rho ** np.arange(1, m + 1)
            x[k : k + m] = pw * (x[k - 1] + np.cumsum(e[k : k + m] / pw))
        k += m
    return x


def synthesize_irish5g(
    seconds: IrishSeconds, slot_s: float, seed: int, params: IrishParams | None = None
) -> CapacitySeries:
    """Per-slot bytes from per-second rows (method in the module docstring), seeded.

    Each second's bytes equal ``rate_kbps * 125`` (the measured rate over 1 s) to a byte; inside
    a second a slot's share is proportional to ``CQI_EFFICIENCY`` of its CQI, where the slot's
    CQI is the per-second CQI interpolated linearly between second centres plus an AR(1) jitter
    (``cqi_sigma``, ``cqi_corr_ms``), rounded and clipped to 0-15. A second whose slots all have
    CQI 0 is spread evenly.
    """
    p = params or IrishParams()
    slot_bytes = _irish_slot_bytes(seconds, slot_s, seed, p, None)
    params_out = (
        ("seed", str(seed)),
        ("cqi_sigma", f"{p.cqi_sigma:g}"),
        ("cqi_corr_ms", f"{p.cqi_corr_ms:g}"),
        ("envelope", p.envelope),
        ("cqi_quantile", f"{p.cqi_quantile:g}"),
    )
    return CapacitySeries(integer_bytes(slot_bytes), slot_s, "irish5g", seconds.name, params_out)


def irish5g_slots(seconds: IrishSeconds, slot_s: float) -> int:
    """Number of slots of ``synthesize_irish5g``'s series (whole seconds of slots)."""
    return int(seconds.rate_kbps.size) * _slots_per_second(slot_s)


def synthesize_irish5g_head(
    seconds: IrishSeconds,
    slot_s: float,
    seed: int,
    n_slots: int,
    params: IrishParams | None = None,
) -> np.ndarray:
    """``synthesize_irish5g(...).bytes[:n_slots]`` without synthesizing the rest of the trace.

    The same values (the generator draws the whole series' jitter, which is cheap; the slots
    after the head, their CQI, shares and bytes are never computed): a cell replaying the first
    seconds of a long trace resets in milliseconds instead of a synthesis of all of it.
    """
    p = params or IrishParams()
    p.check("params")
    n_slots = max(0, min(int(n_slots), irish5g_slots(seconds, slot_s)))
    per_s = _slots_per_second(slot_s)
    slot_bytes = _irish_slot_bytes(seconds, slot_s, seed, p, -(-n_slots // per_s))
    return integer_bytes(slot_bytes)[:n_slots]


def _slots_per_second(slot_s: float) -> int:
    per_s = int(round(1.0 / slot_s))
    if abs(per_s * slot_s - 1.0) > 1e-9:
        raise SpecError(f"slot_s={slot_s!r} does not divide one second")
    return per_s


def _irish_slot_bytes(
    seconds: IrishSeconds, slot_s: float, seed: int, p: IrishParams, head_s: int | None
) -> np.ndarray:
    """Float bytes of every slot (``head_s``: of the first ``head_s`` seconds only, the same)."""
    p.check("params")
    per_s = _slots_per_second(slot_s)
    rate = seconds.rate_kbps.copy()
    if p.envelope != "measured":
        eff_s = CQI_EFFICIENCY[np.clip(np.rint(seconds.cqi), 0, 15).astype(int)]
        busy = ~seconds.idle & (eff_s > 0) & (rate > 0)
        if busy.any():
            per_eff = float(np.quantile(rate[busy] / eff_s[busy], p.cqi_quantile))
            rate = np.where(seconds.idle | (p.envelope == "cqi"), per_eff * eff_s, rate)
    n_s = rate.size
    n = n_s * per_s
    h_s = n_s if head_s is None else min(n_s, head_s)
    h = h_s * per_s
    rng = np.random.default_rng([seed, 0x1815])
    centres = (np.arange(n_s) + 0.5) * per_s
    cqi = np.interp(np.arange(h) + 0.5, centres, seconds.cqi)
    rho = math.exp(-slot_s * 1000.0 / p.cqi_corr_ms) if p.cqi_corr_ms > 0 else 0.0
    cqi = cqi + _ar1(rng, n, p.cqi_sigma, rho, None if h == n else h)
    w = CQI_EFFICIENCY[np.clip(np.rint(cqi), 0, 15).astype(int)].reshape(h_s, per_s)
    sums = w.sum(axis=1, keepdims=True)
    share = np.where(sums > 0, w / np.where(sums > 0, sums, 1.0), 1.0 / per_s)
    return (share * (rate[:h_s] * 125.0)[:, None]).reshape(-1)


def read_irish5g(
    trace: str | Path, slot_s: float = 0.001, seed: int = 0, params: IrishParams | None = None
) -> CapacitySeries:
    """An Irish 5G dataset CSV as bytes per slot (``read_irish5g_seconds`` then synthesis)."""
    return synthesize_irish5g(read_irish5g_seconds(trace), slot_s, seed, params)
