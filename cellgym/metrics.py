"""Every metric, computed once, from the per-step records that both backends emit.

Percentiles, delay samples (RLC head-of-line and end-to-end queueing delay), Jain's index,
utilization, throughput and flow completion times are defined here and nowhere else: the
environment's reward (``cellgym.reward``), the evaluation tables and plots (``evaluation``), the
calibration suite and the XRC paper's experiments (``evaluation.experiments``) all call these
functions. So is the one aggregator over seeds (``aggregate``, ``mean_ci``: mean and Student-t
confidence interval), used by the evaluation report (``evaluation.report.summarize``), the periodic
evaluation in training (``agents.callbacks``) and training's final summary (``workflows.train``).

Keys of ``compute_metrics`` (stable: scripts and notebooks depend on them):

- ``utilization``: bytes delivered to all UEs over the bytes their available capacity could carry,
  counting a UE only in steps where it has an active flow.
- ``jain_fairness``: Jain's index over the flows' throughputs in consecutive ``fairness_window_s``
  windows, counting only windows in which at least two flows are active throughout, averaged over
  those windows (1.0 when no window has two flows).
- ``hol_delay_ms``: percentiles of the UEs' RLC head-of-line delay sampled at every step end
  (UEs with an active flow).
- ``queueing_delay_ms``: percentiles of each flow's end-to-end queueing delay per step
  (mean RTT in the step minus the minimum RTT), over active steps with RTT samples.
- ``hol_budget_compliance``: fraction of HoL samples within the delay budget.
- ``flows``: per flow its ``cca``, ``throughput_mbps`` (bytes received over its active time),
  ``rtt_ms`` and ``queueing_delay_ms`` percentiles, ``losses`` (segments the sender detected lost
  and retransmitted), ``loss_events`` (entries into fast recovery or RTO), ``retx_segments`` and
  ``fct_s`` (completion time of a finite flow, ``None`` otherwise).

The Zeus paper's metrics (trace utilization, delay inflation, rolling-window fairness, harm,
scenario scores, the offline optimum) are computed on arrays in ``cellgym.zeus`` and re-exported
here; ``zeus_summary`` applies them to an episode's records.

>>> jain_index(np.array([1.0, 2.0, 3.0])) == 36 / 42
True
>>> percentile(np.array([1.0, np.nan, 3.0]), 50)
2.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from cellgym.fields import FLOW, FLOW_FIELDS, UE, UE_FIELDS
from cellgym.scenario import ScenarioSpec
from cellgym.traces.series import CapacitySeries
from cellgym.vocab import SpecError, check_choice
from cellgym.zeus import (  # noqa: F401  (re-exported: the one metrics module)
    delay_inflation,
    harm,
    offline_optimum,
    self_harm_band,
    trace_capacity_bytes,
    trace_utilization,
    zeus_fairness,
    zeus_scores,
)

if TYPE_CHECKING:  # pandas is imported where a table is built: the env's step path needs none
    import pandas as pd

#: Percentiles of the delay and RTT dictionaries of ``compute_metrics``.
PERCENTILES: tuple[int, ...] = (50, 90, 99)
#: Per-step delay columns of a step frame (``step_frame``) that are delay samples.
DELAY_SERIES: tuple[str, ...] = ("hol_ms", "queueing_delay_ms")


# --------------------------------------------------------------------------------------------
# Elementary metrics
# --------------------------------------------------------------------------------------------


def percentile(values: np.ndarray | pd.Series | Sequence[float], q: float) -> float:
    """The ``q``-th percentile of the finite values (NaN when there are none)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    return float(np.percentile(v, q)) if v.size else float("nan")


def percentiles(
    values: np.ndarray | pd.Series, qs: Sequence[int] = PERCENTILES
) -> dict[str, float | None]:
    """``{"p50": ..., "p90": ..., "p99": ...}`` of the finite values (``None`` when none)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return {f"p{p}": None for p in qs}
    return {f"p{p}": float(np.percentile(v, p)) for p in qs}


def jain_index(x: np.ndarray | Sequence[float]) -> float:
    """Jain's fairness index of non-negative values; 1.0 for an empty or all-zero input."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == 0 or not np.any(x > 0):
        return 1.0
    return float(x.sum() ** 2 / (x.size * np.square(x).sum()))


def jain_of_floats(x: list[float]) -> float:
    """``jain_index`` of a short list of Python floats (the reward's per-step path, no numpy)."""
    if not x or not any(v > 0 for v in x):
        return 1.0
    total = 0.0
    squares = 0.0
    for v in x:
        total += v
        squares += v * v
    return total**2 / (len(x) * squares)


def rate_mbps(nbytes: Any, seconds: Any) -> Any:
    """Throughput in Mbit/s of ``nbytes`` bytes over ``seconds`` (scalars or arrays)."""
    return nbytes * 8e-6 / seconds


def budget_compliance(samples: np.ndarray, budget_ms: float) -> float | None:
    """Fraction of delay samples within ``budget_ms`` (``None`` without samples)."""
    return float(np.mean(samples <= budget_ms)) if samples.size else None


# --------------------------------------------------------------------------------------------
# Records of an episode
# --------------------------------------------------------------------------------------------


@dataclass
class EpisodeRecords:
    """Per-step raw observations of one episode, appended as they arrive.

    Attributes:
        spec: The scenario that ran.
        controller: Label of the controller under test.
        seed: The seed of the run (ns-3 ``RngRun`` derives from it).
    """

    spec: ScenarioSpec
    controller: str = ""
    seed: int = 0
    times: list[float] = field(default_factory=list)
    flows: list[np.ndarray] = field(default_factory=list)
    ues: list[np.ndarray] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)

    def append(self, t: float, flows: np.ndarray, ues: np.ndarray, reward: float = np.nan) -> None:
        """Add one step's observation."""
        self.times.append(float(t))
        self.flows.append(np.asarray(flows, dtype=np.float64))
        self.ues.append(np.asarray(ues, dtype=np.float64))
        self.rewards.append(float(reward))

    def flows_frame(self) -> pd.DataFrame:
        """Tidy per-step, per-flow table: ``t, flow, cca, ue`` and the flow columns."""
        import pandas as pd

        if not self.times:
            return pd.DataFrame(columns=["t", "flow", "cca", "ue", *FLOW_FIELDS])
        arr = np.stack(self.flows)  # [T, F, C]
        n_t, n_f, _ = arr.shape
        df = pd.DataFrame(arr.reshape(n_t * n_f, -1), columns=list(FLOW_FIELDS))
        df.insert(0, "t", np.repeat(self.times, n_f))
        df.insert(1, "flow", np.tile(np.arange(n_f), n_t))
        df.insert(2, "cca", np.tile([f.cca for f in self.spec.flows], n_t))
        df.insert(3, "ue", np.tile([f.ue for f in self.spec.flows], n_t))
        return df

    def ues_frame(self) -> pd.DataFrame:
        """Tidy per-step, per-UE table: ``t, ue`` and the UE columns."""
        import pandas as pd

        if not self.times:
            return pd.DataFrame(columns=["t", "ue", *UE_FIELDS])
        arr = np.stack(self.ues)
        n_t, n_u, _ = arr.shape
        df = pd.DataFrame(arr.reshape(n_t * n_u, -1), columns=list(UE_FIELDS))
        df.insert(0, "t", np.repeat(self.times, n_u))
        df.insert(1, "ue", np.tile(np.arange(n_u), n_t))
        return df


@dataclass(frozen=True)
class Measured:
    """The steps of an episode that are measured (those ending after ``from_s``), as arrays.

    Attributes:
        times: ``[T]`` step end times.
        flows: ``[T, F, len(FLOW_FIELDS)]``.
        ues: ``[T, U, len(UE_FIELDS)]``.
        rewards: ``[T]`` (NaN where none was recorded).
        flow_ue: ``[F]`` UE of each flow.
        step_s: Step length in seconds.
    """

    times: np.ndarray
    flows: np.ndarray
    ues: np.ndarray
    rewards: np.ndarray
    flow_ue: np.ndarray
    step_s: float

    @property
    def active(self) -> np.ndarray:
        """``[T, F]``: the flow was active in the step."""
        return self.flows[:, :, FLOW["active"]] > 0

    @property
    def ue_active(self) -> np.ndarray:
        """``[T, U]``: the UE had an active flow in the step."""
        return ue_activity(self.active, self.flow_ue, self.ues.shape[1])


def measure(rec: EpisodeRecords, from_s: float = 0.0) -> Measured:
    """The steps of ``rec`` ending after ``from_s`` (the observation at t = 0 never counts).

    Raises:
        ValueError: No step ends after ``from_s``.
    """
    keep = np.array(rec.times) > max(0.0, from_s)
    if not keep.any():
        raise ValueError(f"the episode has no step after t = {from_s:g} s: nothing to measure")
    return Measured(
        times=np.array(rec.times)[keep],
        flows=np.stack(rec.flows)[keep],
        ues=np.stack(rec.ues)[keep],
        rewards=np.array(rec.rewards)[keep],
        flow_ue=np.array([f.ue for f in rec.spec.flows]),
        step_s=rec.spec.step_ms / 1000.0,
    )


def ue_activity(active: np.ndarray, flow_ue: np.ndarray, n_ues: int) -> np.ndarray:
    """``[T, U]`` whether each UE has an active flow, from ``[T, F]`` flow activity."""
    ue_active = np.zeros((active.shape[0], n_ues), dtype=bool)
    for f, u in enumerate(flow_ue):
        ue_active[:, u] |= active[:, f]
    return ue_active


def utilization(m: Measured) -> float | None:
    """Delivered bytes over the capacity's bytes, over UEs with an active flow (``None``: none)."""
    ue_active = m.ue_active
    rx = m.flows[:, :, FLOW["rx_bytes"]]
    capacity_bytes = m.ues[:, :, UE["capacity_mbps"]] * 1e6 / 8 * m.step_s
    delivered = np.zeros(m.ues.shape[:2])
    for f, u in enumerate(m.flow_ue):
        delivered[:, u] += rx[:, f]
    cap_total = capacity_bytes[ue_active].sum()
    return float(delivered[ue_active].sum() / cap_total) if cap_total > 0 else None


def windowed_jain(m: Measured, fairness_window_s: float = 1.0) -> float:
    """Jain's index per window with at least two flows active throughout, averaged (else 1.0)."""
    active = m.active
    rx = m.flows[:, :, FLOW["rx_bytes"]]
    per_window = max(1, int(round(fairness_window_s / m.step_s)))
    jains = []
    for start in range(0, len(m.times) - per_window + 1, per_window):
        sl = slice(start, start + per_window)
        always = active[sl].all(axis=0)
        if always.sum() >= 2:
            jains.append(jain_index(rx[sl][:, always].sum(axis=0)))
    return float(np.mean(jains)) if jains else 1.0


def overlap_jain(rec: EpisodeRecords, flows: Sequence[int], from_s: float) -> float:
    """Jain's index of the flows' throughputs over the steps after ``from_s`` they all shared."""
    t, fl = np.array(rec.times), np.stack(rec.flows)
    mask = (t > from_s) & np.all(fl[:, flows, FLOW["active"]] > 0, axis=1)
    return jain_index(fl[mask][:, flows, FLOW["rx_bytes"]].sum(axis=0))


def hol_samples(m: Measured) -> np.ndarray:
    """HoL delay samples: one per step and UE with an active flow (ms)."""
    return m.ues[:, :, UE["hol_ms"]][m.ue_active]


def queueing_delay_samples(flows: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Queueing delay samples (mean minus minimum RTT, ms) of the steps with RTT samples.

    Args:
        flows: ``[..., len(FLOW_FIELDS)]`` flow rows (e.g. ``[T, F, C]`` or one flow's ``[T, C]``).
        mask: Further rows to keep (e.g. the flow was active), of ``flows.shape[:-1]``.
    """
    keep = flows[..., FLOW["rtt_samples"]] > 0
    if mask is not None:
        keep = keep & mask
    return (flows[..., FLOW["rtt_mean_ms"]] - flows[..., FLOW["rtt_min_ms"]])[keep]


def delay_samples(rec: EpisodeRecords, from_s: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """The HoL and queueing delay samples of the steps after ``from_s``, as the metrics count them.

    Returns:
        ``(hol_ms, queueing_delay_ms)``: HoL per step and UE with an active flow; queueing delay
        per step and active flow with RTT samples.
    """
    m = measure(rec, from_s)
    return hol_samples(m), queueing_delay_samples(m.flows, m.active)


def completed_fct_s(flow_rows: Sequence[dict[str, Any]]) -> np.ndarray:
    """The completion times of the finished flows among ``compute_metrics``' flow rows (s)."""
    return np.array([f["fct_s"] for f in flow_rows if f["fct_s"] is not None], dtype=np.float64)


def chunk_delivery_s(
    rec: EpisodeRecords, flow: int, chunk_bytes: float, period_s: float = 10.0
) -> list[float]:
    """Delivery time of each video chunk of ``flow``: from its start until all its bytes arrived.

    A chunk of ``chunk_bytes`` starts every ``period_s`` from the flow's start.
    """
    t, fl = np.array(rec.times), np.stack(rec.flows)
    start = rec.spec.flows[flow].start_s
    cum = np.cumsum(fl[:, flow, FLOW["rx_bytes"]])
    out = []
    k = 0
    while start + k * period_s < t[-1] - period_s:
        done = np.nonzero(cum >= (k + 1) * chunk_bytes)[0]
        if done.size == 0:
            break
        out.append(float(t[done[0]] - (start + k * period_s)))
        k += 1
    return out


# --------------------------------------------------------------------------------------------
# One episode's summary and its per-step table
# --------------------------------------------------------------------------------------------


def compute_metrics(
    rec: EpisodeRecords,
    delay_budget_ms: float = 10.0,
    fairness_window_s: float = 1.0,
    from_s: float = 0.0,
) -> dict[str, Any]:
    """Summarise one episode (see the module docstring for each key's definition).

    Args:
        rec: The episode's records.
        delay_budget_ms: Budget for ``hol_budget_compliance``.
        fairness_window_s: Window of the Jain index.
        from_s: Measure only steps ending after this time (to leave out a warm-up).
    """
    spec = rec.spec
    m = measure(rec, from_s)
    flows, step_s = m.flows, m.step_s
    active = m.active
    rx = flows[:, :, FLOW["rx_bytes"]]
    hol = hol_samples(m)
    samples = flows[:, :, FLOW["rtt_samples"]] > 0

    flow_rows = []
    for f, fs in enumerate(spec.flows):
        active_s = active[:, f].sum() * step_s
        fct = flows[:, f, FLOW["fct_s"]]
        done = fct[fct >= 0]
        rtt = flows[:, f, FLOW["rtt_mean_ms"]][samples[:, f]]
        flow_rows.append(
            {
                "flow": f,
                "cca": fs.cca,
                "ue": fs.ue,
                "traffic": fs.traffic,
                "throughput_mbps": float(rate_mbps(rx[:, f].sum(), active_s)) if active_s else 0.0,
                "rx_bytes": float(rx[:, f].sum()),
                "rtt_ms": percentiles(rtt),
                "queueing_delay_ms": percentiles(queueing_delay_samples(flows[:, f])),
                "losses": int(flows[:, f, FLOW["retx_segments"]].sum()),
                "loss_events": int(flows[:, f, FLOW["loss_events"]].sum()),
                "retx_segments": int(flows[:, f, FLOW["retx_segments"]].sum()),
                "fct_s": float(done[-1]) if done.size else None,
            }
        )

    rewards = m.rewards[np.isfinite(m.rewards)]
    return {
        "scenario": spec.name,
        "controller": rec.controller,
        "seed": rec.seed,
        "duration_s": float(m.times[-1]),
        "from_s": float(from_s),
        "steps": int(len(m.times)),
        "utilization": utilization(m),
        "jain_fairness": windowed_jain(m, fairness_window_s),
        "hol_delay_ms": percentiles(hol),
        "queueing_delay_ms": percentiles(queueing_delay_samples(flows, active)),
        "hol_budget_compliance": budget_compliance(hol, delay_budget_ms),
        "delay_budget_ms": delay_budget_ms,
        "mean_reward": float(rewards.mean()) if rewards.size else None,
        "flows": flow_rows,
    }


def zeus_summary(
    rec: EpisodeRecords,
    flow: int,
    competitor: int | None = None,
    series: CapacitySeries | None = None,
    base_rtt_ms: float | None = None,
    from_s: float = 0.0,
) -> dict[str, Any]:
    """The Zeus metrics of ``flow`` in one episode (``cellgym.zeus``; docs/zeus.md).

    ``utilization`` of ``series`` (the replayed trace; ``None``: the recorded capacity),
    ``delay_inflation`` over ``base_rtt_ms`` (``None``: the flow's smallest RTT), the flow's
    ``throughput_mbps`` and ``rtt_ms`` (mean RTT: the inputs of ``harm``) and, beside a
    ``competitor`` flow (the same controller: intra; CUBIC: inter), ``fairness_short``,
    ``fairness_long`` and ``fairness_by_k``, over the steps ending after ``from_s``.
    """
    m = measure(rec, from_s)
    rx = m.flows[:, :, FLOW["rx_bytes"]]
    if series is None:
        util = utilization(m)
    else:
        start = float(m.times[0]) - m.step_s
        util = trace_utilization(rx.sum(), trace_capacity_bytes(series, start, float(m.times[-1])))
    row = m.flows[:, flow]
    n_rtt = row[:, FLOW["rtt_samples"]]
    if base_rtt_ms is None:
        mins = row[:, FLOW["rtt_min_ms"]][(n_rtt > 0) & (row[:, FLOW["rtt_min_ms"]] > 0)]
        base_rtt_ms = float(mins.min()) if mins.size else float("nan")
    out: dict[str, Any] = {"utilization": util, "base_rtt_ms": base_rtt_ms}
    ok = math.isfinite(base_rtt_ms) and base_rtt_ms > 0
    rtt = row[:, FLOW["rtt_mean_ms"]]
    out["delay_inflation"] = delay_inflation(rtt, base_rtt_ms, n_rtt) if ok else float("nan")
    active_s = m.active[:, flow].sum() * m.step_s
    out["throughput_mbps"] = float(rate_mbps(rx[:, flow].sum(), active_s)) if active_s else 0.0
    out["rtt_ms"] = float(np.average(rtt, weights=n_rtt)) if n_rtt.sum() > 0 else float("nan")
    if competitor is not None and ok:
        pair = [flow, competitor]
        fair = zeus_fairness(rx[:, pair], m.active[:, pair], m.step_s, base_rtt_ms / 1000.0)
        out.update(
            fairness_short=fair["short"], fairness_long=fair["long"], fairness_by_k=fair["by_k"]
        )
    return out


def step_frame(rec: EpisodeRecords, agent_flows: Sequence[int] = ()) -> pd.DataFrame:
    """Per-step, per-flow quantities of one episode for plots and delay distributions.

    Columns: ``t``, ``flow``, ``cca``, ``agent`` (the flow is driven by the controller under
    test), ``ue``, ``active``, ``throughput_mbps`` (bytes received in the step), ``cwnd_bytes``,
    ``pacing_rate_mbps``, ``rtt_ms`` (mean RTT of the step, NaN without samples),
    ``queueing_delay_ms`` (mean minus minimum RTT, NaN without samples), ``hol_ms`` and
    ``capacity_mbps`` of the flow's UE, and ``reward``. The observation at t = 0 is left out.
    """
    import pandas as pd

    spec = rec.spec
    step_s = spec.step_ms / 1000.0
    keep = np.array(rec.times) > 0
    times = np.array(rec.times)[keep]
    flows = np.stack(rec.flows)[keep] if rec.flows else np.zeros((0, len(spec.flows), len(FLOW)))
    ues = np.stack(rec.ues)[keep] if rec.ues else np.zeros((0, spec.num_ues, len(UE)))
    rewards = np.array(rec.rewards)[keep]
    n_t, n_f = flows.shape[0], len(spec.flows)
    flow_ue = np.array([f.ue for f in spec.flows], dtype=int)
    samples = flows[:, :, FLOW["rtt_samples"]] > 0
    rtt = np.where(samples, flows[:, :, FLOW["rtt_mean_ms"]], np.nan)
    agent = np.zeros(n_f, dtype=bool)
    agent[list(agent_flows)] = True
    return pd.DataFrame(
        {
            "t": np.repeat(times, n_f),
            "flow": np.tile(np.arange(n_f), n_t),
            "cca": np.tile(np.array([f.cca for f in spec.flows], dtype=object), n_t),
            "agent": np.tile(agent, n_t),
            "ue": np.tile(flow_ue, n_t),
            "active": (flows[:, :, FLOW["active"]] > 0).reshape(-1),
            "throughput_mbps": rate_mbps(flows[:, :, FLOW["rx_bytes"]], step_s).reshape(-1),
            "cwnd_bytes": flows[:, :, FLOW["cwnd_bytes"]].reshape(-1),
            "pacing_rate_mbps": flows[:, :, FLOW["pacing_rate_mbps"]].reshape(-1),
            "rtt_ms": rtt.reshape(-1),
            "queueing_delay_ms": (rtt - flows[:, :, FLOW["rtt_min_ms"]]).reshape(-1),
            "hol_ms": ues[:, flow_ue, UE["hol_ms"]].reshape(-1),
            "capacity_mbps": ues[:, flow_ue, UE["capacity_mbps"]].reshape(-1),
            "reward": np.repeat(rewards, n_f),
        }
    )


def step_delay_samples(
    frame: pd.DataFrame, delay: str = "hol_ms", keys: Sequence[str] = ()
) -> pd.DataFrame:
    """The delay samples of a step frame, counted as ``delay_samples`` counts them.

    ``hol_ms``: one sample per step and UE that has an active flow; ``queueing_delay_ms``: one per
    step and active flow with RTT samples.

    Args:
        frame: ``step_frame`` rows, or several runs' rows told apart by the ``keys`` columns.
        delay: One of ``DELAY_SERIES``.
        keys: Columns that identify a run (e.g. ``controller, scenario, seed``).

    Returns:
        The ``keys`` columns and ``value`` (finite values only).
    """
    check_choice("delay", delay, DELAY_SERIES)
    ts = frame[frame["active"].astype(bool)]
    if delay == "hol_ms":
        ts = ts.drop_duplicates([*keys, "t", "ue"])
    out = ts[[*keys, delay]].rename(columns={delay: "value"})
    return out[np.isfinite(out["value"].to_numpy(dtype=float))]


# --------------------------------------------------------------------------------------------
# Over seeds: the one aggregator (mean and Student-t confidence interval)
# --------------------------------------------------------------------------------------------

#: Default level of the confidence intervals.
CONFIDENCE = 0.95

# Two-sided 97.5 % quantiles of Student's t for 1..30 degrees of freedom (standard tables); used
# only when scipy is missing. Beyond 30, or for another confidence, the normal quantile is used,
# which makes the interval slightly too narrow for few seeds.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def check_confidence(confidence: float, name: str = "confidence") -> None:
    """Raise ``SpecError`` unless ``0 < confidence < 1``."""
    if not 0.0 < confidence < 1.0:
        raise SpecError(f"{name}={confidence!r} is out of range: allowed (0, 1)")


def t_quantile(confidence: float, dof: int) -> float:
    """The two-sided Student-t quantile ``t_{(1 + confidence) / 2, dof}``.

    Uses ``scipy.stats.t``; without scipy, a table for 95 % and 1..30 degrees of freedom, else
    the normal quantile (documented fallback).

    Raises:
        SpecError: ``confidence`` outside (0, 1) or ``dof < 1``.
    """
    check_confidence(confidence)
    if dof < 1:
        raise SpecError(f"dof={dof!r} is out of range: allowed [1, inf)")
    try:
        from scipy import stats
    except ImportError:  # pragma: no cover - scipy is installed with the dependencies
        if abs(confidence - 0.95) < 1e-12 and dof <= len(_T975):
            return _T975[dof - 1]
        from statistics import NormalDist

        return NormalDist().inv_cdf((1.0 + confidence) / 2.0)
    return float(stats.t.ppf((1.0 + confidence) / 2.0, dof))


def mean_ci(
    values: Sequence[float] | np.ndarray | pd.Series, confidence: float = CONFIDENCE
) -> tuple[float, float, int]:
    """Mean and the half-width of its t confidence interval over the finite values.

    ``half = t_{(1+c)/2, n-1} * s / sqrt(n)`` with ``s`` the sample standard deviation (ddof 1).

    Returns:
        ``(mean, half_width, n)``; the half-width is NaN for fewer than two values, the mean NaN
        for none.
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    n = int(v.size)
    if n == 0:
        return float("nan"), float("nan"), 0
    mean = float(v.mean())
    if n < 2:
        return mean, float("nan"), n
    half = t_quantile(confidence, n - 1) * float(v.std(ddof=1)) / math.sqrt(n)
    return mean, half, n


def aggregate(
    df: pd.DataFrame,
    metrics: Sequence[str],
    by: Sequence[str] = ("controller", "scenario"),
    confidence: float = CONFIDENCE,
) -> pd.DataFrame:
    """Per group, mean and t confidence interval of each metric over the group's rows (seeds).

    Only rows with ``status == "ok"`` count (when the column exists); NaN values of a metric are
    left out of that metric (e.g. FCT where no short flow completed).

    Args:
        df: One row per run (e.g. ``evaluation.records.RESULT_COLUMNS``).
        metrics: Columns to aggregate.
        by: Grouping columns, kept in their order of first appearance.
        confidence: Level of the intervals.

    Returns:
        One row per group: the ``by`` columns, ``n`` (successful runs), ``failed`` (failed runs),
        then per metric ``<m>_mean``, ``<m>_ci`` (half-width), ``<m>_low``, ``<m>_high`` and
        ``<m>_n`` (values used).

    Raises:
        SpecError: A column missing from ``df`` (naming it), or ``confidence`` outside (0, 1).
    """
    import pandas as pd

    by = list(by)
    metrics = list(metrics)
    check_confidence(confidence)
    missing = [c for c in [*by, *metrics] if c not in df.columns]
    if missing:
        raise SpecError(f"columns {missing} are not in the table: have {list(df.columns)}")
    ok = df["status"].eq("ok") if "status" in df.columns else pd.Series(True, index=df.index)
    groups = df[by].drop_duplicates()
    rows = []
    for _, key in groups.iterrows():
        mask = np.logical_and.reduce([df[c].eq(key[c]).to_numpy() for c in by])
        good = df[mask & ok.to_numpy()]
        row: dict[str, Any] = {c: key[c] for c in by}
        row["n"] = len(good)
        row["failed"] = int(mask.sum() - len(good))
        for m in metrics:
            mean, half, n = mean_ci(pd.to_numeric(good[m], errors="coerce"), confidence)
            row[f"{m}_mean"] = mean
            row[f"{m}_ci"] = half
            row[f"{m}_low"] = mean - half
            row[f"{m}_high"] = mean + half
            row[f"{m}_n"] = n
        rows.append(row)
    return pd.DataFrame(rows)


def group_means(
    df: pd.DataFrame, metrics: Sequence[str], by: str = "controller"
) -> dict[str, dict[str, float]]:
    """``{group: {metric: mean over the group's successful rows}}`` (``aggregate``'s means)."""
    table = aggregate(df, metrics, by=[by])
    return {str(r[by]): {m: float(r[f"{m}_mean"]) for m in metrics} for _, r in table.iterrows()}
