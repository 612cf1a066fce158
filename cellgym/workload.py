"""Flow-arrival workloads, the wired last hop and RED: validation, and the Pareto flow sizes.

``traffic: pareto`` on a flow makes it a slot of a *stream* of finite flows: flows arrive with
exponential inter-arrival times (mean ``pareto_iat_ms``), their sizes in packets follow a
truncated (bounded) Pareto distribution with shape ``pareto_shape``, mean ``pareto_mean_pkts``
and cut-off ``pareto_cutoff_pkts``. Flows with ``traffic: pareto`` and the same ue, cca, delay
and ``pareto_*`` values are the slots of one stream: a new flow takes a free slot (a fresh
connection: handshake, initial window, no RTT estimate), and an arrival that finds every slot
busy waits for one, its wait counted in its completion time (``envs/fastsim/workload.py``).

The sizes: the bounded Pareto distribution on ``[L, H]`` (``H`` the cut-off) has the CDF
``F(x) = (1 - (L / x)^a) / (1 - (L / H)^a)``; ``L`` is chosen so that its mean is
``pareto_mean_pkts`` (the evaluation paper's 25 packets with shape 1.2 and cut-off 40,000: about
90 % of 100 Mbit/s at one flow per 3.33 ms). A size is the sample rounded to whole packets
(at least one).

RED and Pareto streams run on both backends (ns-3: ``RedQueueDisc``, ``--bottleneckQueue=red``;
``cellgym-pareto-stream.h``, records through ``--flowLogPath``, read by
``envs.ns3_flows.read_flow_log``); the wired last hop runs in the fast backend only and
``check_ns3_workload`` refuses it by field.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cellgym.vocab import BOTTLENECK_QUEUES, PARETO_CCAS, SpecError, check_choice, check_range


def check_pareto_flow(flow: Any, where: str) -> None:
    """Validate a flow's ``pareto_*`` fields (always) and its controller (``traffic: pareto``)."""
    check_range(f"{where}.pareto_shape", flow.pareto_shape, 1.01, 10.0)
    check_range(f"{where}.pareto_mean_pkts", flow.pareto_mean_pkts, 1.0, 1e6)
    check_range(
        f"{where}.pareto_cutoff_pkts", flow.pareto_cutoff_pkts, flow.pareto_mean_pkts * 1.0001, 1e7
    )
    check_range(f"{where}.pareto_iat_ms", flow.pareto_iat_ms, 0.01, 1e6)
    if flow.traffic == "pareto":
        check_choice(f"{where}.cca", flow.cca, PARETO_CCAS)


def check_red(spec: Any) -> None:
    """Validate the bottleneck's queue discipline and RED's parameters."""
    check_choice("scenario.bottleneck_queue", spec.bottleneck_queue, BOTTLENECK_QUEUES)
    check_range("scenario.red_min_th_pkts", spec.red_min_th_pkts, 0.0, 1e6)
    check_range("scenario.red_max_th_pkts", spec.red_max_th_pkts, spec.red_min_th_pkts + 1e-9, 1e6)
    check_range("scenario.red_max_p", spec.red_max_p, 1e-6, 1.0)
    check_range("scenario.red_weight", spec.red_weight, 1e-6, 1.0)
    if spec.bottleneck_queue == "red" and not spec.bottleneck_mbps > 0:
        raise SpecError(
            "scenario.bottleneck_queue='red' needs a constant-rate bottleneck: set "
            "scenario.bottleneck_mbps in (0, 100000]"
        )


def cell_field_owner(name: str, cell: Any) -> str:
    """Which cell type reads the field ``name`` (for the error on a foreign field)."""
    if name in cell.LTE_FIELDS:
        return "LTE"
    if name in cell.NR_FIELDS:
        return "NR"
    return "wired"


def check_ns3_workload(spec: Any) -> None:
    """Refuse, by field, what only the fast backend runs: wired cells."""
    if spec.cell.type == "wired":
        raise SpecError(
            "scenario.cell.type='wired' does not run on the ns3 backend yet "
            "(fast backend only: docs/xcp-rcp-fct/README.md)"
        )


def pareto_tokens(flow: Any) -> list[str]:
    """A ``pareto`` flow's items of the program's ``--flows`` (``cellgym-pareto-stream.h``)."""
    return [
        f"pareto_shape={flow.pareto_shape:g}",
        f"pareto_mean_pkts={flow.pareto_mean_pkts:g}",
        f"pareto_cutoff_pkts={flow.pareto_cutoff_pkts:g}",
        f"pareto_iat_ms={flow.pareto_iat_ms:g}",
    ]


def red_ns3_args(spec: Any) -> list[str]:
    """The ns-3 program's arguments of the bottleneck's queue discipline (RED's knobs)."""
    if spec.bottleneck_queue != "red":
        return []
    return [
        "--bottleneckQueue=red",
        f"--redMinThPkts={spec.red_min_th_pkts:g}",
        f"--redMaxThPkts={spec.red_max_th_pkts:g}",
        f"--redMaxP={spec.red_max_p:g}",
        f"--redWeight={spec.red_weight:g}",
    ]


# -- the truncated Pareto flow sizes ----------------------------------------------------------


def bounded_pareto_mean(low: float, high: float, shape: float) -> float:
    """Mean of the Pareto distribution of ``shape`` bounded to ``[low, high]``."""
    a = shape
    norm = 1.0 - (low / high) ** a
    return low**a / norm * a / (a - 1.0) * (low ** (1.0 - a) - high ** (1.0 - a))


def bounded_pareto_low(mean: float, high: float, shape: float) -> float:
    """The lower bound ``L`` whose bounded Pareto distribution has this ``mean`` (bisection)."""
    lo, hi = 1e-9, mean
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if bounded_pareto_mean(mid, high, shape) < mean:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


class ParetoSizes:
    """Flow sizes in packets: a bounded Pareto distribution of a given mean and cut-off.

    Args:
        shape: The Pareto shape ``a`` (> 1).
        mean_pkts: Mean of the continuous distribution, packets.
        cutoff_pkts: Its upper bound ``H``, packets.
    """

    def __init__(self, shape: float, mean_pkts: float, cutoff_pkts: float) -> None:
        self.shape = float(shape)
        self.high = float(cutoff_pkts)
        self.low = bounded_pareto_low(float(mean_pkts), self.high, self.shape)
        self._tail = 1.0 - (self.low / self.high) ** self.shape

    def cdf(self, x: np.ndarray | float) -> np.ndarray:
        """The continuous distribution's CDF."""
        x = np.clip(np.asarray(x, dtype=np.float64), self.low, self.high)
        return (1.0 - (self.low / x) ** self.shape) / self._tail

    def continuous(self, u: np.ndarray) -> np.ndarray:
        """Inverse CDF of uniforms ``u`` in ``[0, 1)``."""
        return self.low / (1.0 - u * self._tail) ** (1.0 / self.shape)

    def sample(self, rng: np.random.Generator, n: int | None = None) -> np.ndarray | int:
        """Sizes in whole packets (the sample rounded, at least 1)."""
        u = rng.random(n)
        x = np.maximum(np.rint(self.continuous(u)), 1.0)
        return x.astype(np.int64) if n is not None else int(x)

    def variance(self) -> float:
        """Variance of the continuous distribution."""
        a, lo, hi = self.shape, self.low, self.high
        m2 = lo**a / self._tail * a / (2.0 - a) * (hi ** (2.0 - a) - lo ** (2.0 - a))
        m = bounded_pareto_mean(lo, hi, a)
        return m2 - m * m


def processor_sharing_fct_s(
    size_pkts: np.ndarray, rtt_s: float, rate_mbps: float, load: float, pkt_bytes: int = 1500
) -> np.ndarray:
    """FCT of processor sharing (M/G/1-PS): 1.5 RTT + L / (C (1 - load)), as in RCP's papers."""
    tx = np.asarray(size_pkts, dtype=np.float64) * pkt_bytes * 8.0 / (rate_mbps * 1e6)
    return 1.5 * rtt_s + tx / (1.0 - load)


def minimum_fct_s(
    size_pkts: np.ndarray, rtt_s: float, rate_mbps: float, pkt_bytes: int = 1500
) -> np.ndarray:
    """The least FCT: SYN + SYN-ACK (one RTT), half an RTT to the receiver, L / C on the link."""
    tx = np.asarray(size_pkts, dtype=np.float64) * pkt_bytes * 8.0 / (rate_mbps * 1e6)
    return 1.5 * rtt_s + tx


def offered_load(mean_pkts: float, iat_ms: float, rate_mbps: float, pkt_bytes: int = 1500) -> float:
    """Offered load of a stream on a link: mean size / mean inter-arrival / rate."""
    return mean_pkts * pkt_bytes * 8.0 / (iat_ms * 1e-3) / (rate_mbps * 1e6)
