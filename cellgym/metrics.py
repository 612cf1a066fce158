"""Every metric, computed once, from the per-step records that both backends emit.

Names of the keys are stable: scripts and notebooks depend on them.

- ``utilization``: bytes delivered to all UEs over the bytes their available capacity could carry,
  counting a UE only in steps where it has an active flow.
- ``jain_fairness``: Jain's index over the flows' throughputs in consecutive ``fairness_window_s``
  windows, counting only windows in which at least two flows are active throughout, averaged over
  those windows (1.0 when no window has two flows).
- ``hol_delay_ms``: percentiles of the UEs' RLC head-of-line delay sampled at every step end.
- ``queueing_delay_ms``: percentiles of each flow's end-to-end queueing delay per step
  (mean RTT in the step minus the minimum RTT), over steps with RTT samples.
- ``hol_budget_compliance``: fraction of HoL samples within the delay budget.
- ``flows``: per flow its ``cca``, ``throughput_mbps`` (bytes received over its active time),
  ``rtt_ms`` and ``queueing_delay_ms`` percentiles, ``losses`` (segments the sender detected lost
  and retransmitted), ``loss_events`` (entries into fast recovery or RTO), ``retx_segments`` and
  ``fct_s`` (completion time of a finite flow, ``None`` otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from cellgym.fields import FLOW_FIELDS, UE_FIELDS
from cellgym.reward import jain_index
from cellgym.scenario import ScenarioSpec

PERCENTILES: tuple[int, ...] = (50, 90, 99)


def percentiles(values: np.ndarray | pd.Series) -> dict[str, float | None]:
    """``{"p50": ..., "p90": ..., "p99": ...}`` of the values (``None`` when there are none)."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return {f"p{p}": None for p in PERCENTILES}
    return {f"p{p}": float(np.percentile(v, p)) for p in PERCENTILES}


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
        if not self.times:
            return pd.DataFrame(columns=["t", "ue", *UE_FIELDS])
        arr = np.stack(self.ues)
        n_t, n_u, _ = arr.shape
        df = pd.DataFrame(arr.reshape(n_t * n_u, -1), columns=list(UE_FIELDS))
        df.insert(0, "t", np.repeat(self.times, n_u))
        df.insert(1, "ue", np.tile(np.arange(n_u), n_t))
        return df


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
    step_s = spec.step_ms / 1000.0
    # The observation at t = 0 precedes any step: leave it out.
    keep = np.array(rec.times) > max(0.0, from_s)
    if not keep.any():
        raise ValueError(f"the episode has no step after t = {from_s:g} s: nothing to measure")
    times = np.array(rec.times)[keep]
    flows = np.stack(rec.flows)[keep]  # [T, F, C]
    ues = np.stack(rec.ues)[keep]  # [T, U, C]
    fi = {n: i for i, n in enumerate(FLOW_FIELDS)}
    ui = {n: i for i, n in enumerate(UE_FIELDS)}
    flow_ue = np.array([f.ue for f in spec.flows])
    active = flows[:, :, fi["active"]] > 0  # [T, F]
    rx = flows[:, :, fi["rx_bytes"]]

    # Utilization over UEs with an active flow.
    ue_active = np.zeros(ues.shape[:2], dtype=bool)
    for f, u in enumerate(flow_ue):
        ue_active[:, u] |= active[:, f]
    capacity_bytes = ues[:, :, ui["capacity_mbps"]] * 1e6 / 8 * step_s
    delivered = np.zeros(ues.shape[:2])
    for f, u in enumerate(flow_ue):
        delivered[:, u] += rx[:, f]
    cap_total = capacity_bytes[ue_active].sum()
    utilization = float(delivered[ue_active].sum() / cap_total) if cap_total > 0 else None

    # Jain over windows where at least two flows are active throughout.
    per_window = max(1, int(round(fairness_window_s / step_s)))
    jains = []
    for start in range(0, len(times) - per_window + 1, per_window):
        sl = slice(start, start + per_window)
        always = active[sl].all(axis=0)
        if always.sum() >= 2:
            jains.append(jain_index(rx[sl][:, always].sum(axis=0)))
    jain = float(np.mean(jains)) if jains else 1.0

    hol = ues[:, :, ui["hol_ms"]][ue_active]
    samples = flows[:, :, fi["rtt_samples"]] > 0
    qdelay = (flows[:, :, fi["rtt_mean_ms"]] - flows[:, :, fi["rtt_min_ms"]])[samples & active]
    compliance = float(np.mean(hol <= delay_budget_ms)) if hol.size else None

    flow_rows = []
    for f, fs in enumerate(spec.flows):
        act = active[:, f]
        active_s = act.sum() * step_s
        fct = flows[:, f, fi["fct_s"]]
        done = fct[fct >= 0]
        rtt = flows[:, f, fi["rtt_mean_ms"]][samples[:, f]]
        flow_rows.append(
            {
                "flow": f,
                "cca": fs.cca,
                "ue": fs.ue,
                "traffic": fs.traffic,
                "throughput_mbps": float(rx[:, f].sum() * 8e-6 / active_s) if active_s else 0.0,
                "rx_bytes": float(rx[:, f].sum()),
                "rtt_ms": percentiles(rtt),
                "queueing_delay_ms": percentiles(
                    rtt - flows[:, f, fi["rtt_min_ms"]][samples[:, f]]
                ),
                "losses": int(flows[:, f, fi["retx_segments"]].sum()),
                "loss_events": int(flows[:, f, fi["loss_events"]].sum()),
                "retx_segments": int(flows[:, f, fi["retx_segments"]].sum()),
                "fct_s": float(done[-1]) if done.size else None,
            }
        )

    rewards = np.array(rec.rewards)[keep]
    rewards = rewards[np.isfinite(rewards)]
    return {
        "scenario": spec.name,
        "controller": rec.controller,
        "seed": rec.seed,
        "duration_s": float(times[-1]),
        "from_s": float(from_s),
        "steps": int(len(times)),
        "utilization": utilization,
        "jain_fairness": jain,
        "hol_delay_ms": percentiles(hol),
        "queueing_delay_ms": percentiles(qdelay),
        "hol_budget_compliance": compliance,
        "delay_budget_ms": delay_budget_ms,
        "mean_reward": float(rewards.mean()) if rewards.size else None,
        "flows": flow_rows,
    }
