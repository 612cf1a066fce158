"""The reward: utilization, a queueing-delay budget and Jain fairness, each reported separately.

Two forms (``RewardSpec.form``). ``penalty`` (default):

``reward = w_utilization * utilization - w_delay * delay_penalty + w_fairness * jain``

``zeus``, the Zeus paper's four-term scores as a per-step reward (``cellgym.zeus``, docs/zeus.md):

``reward = w_utilization * utilization + w_inverse_delay * inverse_delay
+ w_intra_fairness * intra_jain + w_inter_fairness * inter_jain``

- ``utilization``: bytes delivered to the controlled flow's UE in the step (all its flows) over the
  UE's available capacity in the step (the eNB agent's estimate, new transport blocks plus the UE's
  share of idle resource blocks), clipped to [0, 1].
- ``delay_penalty``: ``max(0, d - budget) / budget`` with ``d = max(HoL, RTT_mean - RTT_min)`` for
  the controlled flow (XRC's queueing-delay estimate: the RLC head-of-line delay at the eNB, or the
  end-to-end queueing delay when larger); clipped to ``max_delay_penalty``.
- ``jain``: Jain's index over the throughputs of the cell's active flows in the step
  (1 for one flow; ``cellgym.metrics.jain_index``, imported here for callers of this module).
- ``inverse_delay``: the paper's Delay^-1 per step, ``RTT_min / (RTT_min + d)`` with ``d`` as
  above and ``RTT_min`` the flow's minimum RTT (1 before the first RTT sample).
- ``intra_jain``: Jain's index over the active flows that run the controlled flow's controller
  (its ``cca``; with one agent flow: 1).
- ``inter_jain``: Jain's index over the controlled flow and the active CUBIC flows (1 without
  any CUBIC flow).

The fairness terms need each flow's group (``fairness_groups``); without it the zeus form refuses
to compute and the penalty form reports them as NaN.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from cellgym.fields import FLOW, UE
from cellgym.metrics import jain_index, jain_of_floats
from cellgym.vocab import (
    SpecError,
    check_above,
    check_choice,
    check_field_types,
    check_keys,
    check_range,
)

#: A term's type: a float (``reward_terms``) or a ``[B]`` array (``reward_terms_batch``).
T = TypeVar("T", float, np.ndarray)

__all__ = [
    "REWARD_FORMS",
    "TERMS",
    "RewardSpec",
    "fairness_groups",
    "jain_index",
    "queueing_delay_ms",
    "reward_terms",
    "reward_terms_batch",
]

#: Upper bound of the weights, the delay budget (ms) and the penalty clip: the reward stays finite.
MAX_WEIGHT = 1e6

#: Keys of ``reward_terms``'s result, in order.
TERMS: tuple[str, ...] = (
    "utilization",
    "delay_ms",
    "delay_penalty",
    "jain",
    "reward",
    "inverse_delay",
    "intra_jain",
    "inter_jain",
)
#: Forms of the reward: today's utilization/penalty/Jain, or the Zeus paper's four terms.
REWARD_FORMS: tuple[str, ...] = ("penalty", "zeus")
#: Weights each form reads (the other form's must stay 0).
FORM_WEIGHTS: dict[str, tuple[str, ...]] = {
    "penalty": ("w_delay", "w_fairness"),
    "zeus": ("w_inverse_delay", "w_intra_fairness", "w_inter_fairness"),
}
#: Bits of a flow's fairness group: it runs the controlled flow's controller; it is CUBIC.
GROUP_SAME, GROUP_CUBIC = 1, 2


def fairness_groups(ccas: Sequence[str], flow: int) -> np.ndarray:
    """Each flow's fairness group bits (``GROUP_SAME | GROUP_CUBIC``) relative to ``flow``.

    >>> fairness_groups(["cubic", "agent", "agent", "bbr"], 1).tolist()
    [2, 1, 1, 0]
    """
    own = ccas[flow]
    return np.array(
        [(GROUP_SAME if c == own else 0) | (GROUP_CUBIC if c == "cubic" else 0) for c in ccas],
        dtype=np.int64,
    )


@dataclass
class RewardSpec:
    """Weights and budget of the reward.

    Attributes:
        w_utilization: Weight of the utilization term (0 to ``MAX_WEIGHT``, 1e6, as every
            field: the reward stays finite); Zeus's Thpt in the ``zeus`` form.
        w_delay: ``penalty`` form: weight of the queueing-delay penalty.
        w_fairness: ``penalty`` form: weight of Jain's fairness index.
        delay_budget_ms: Queueing-delay budget, in ms (XRC's default: 10 ms); above 0.
        max_delay_penalty: Upper clip of the delay penalty (in budgets over the budget); above 0.
        form: ``penalty`` or ``zeus`` (``REWARD_FORMS``; module docstring).
        w_inverse_delay: ``zeus`` form: weight of Delay^-1.
        w_intra_fairness: ``zeus`` form: weight of IntraFair.
        w_inter_fairness: ``zeus`` form: weight of InterFair.
    """

    w_utilization: float = 1.0
    w_delay: float = 0.5
    w_fairness: float = 0.2
    delay_budget_ms: float = 10.0
    max_delay_penalty: float = 10.0
    form: str = "penalty"
    w_inverse_delay: float = 0.0
    w_intra_fairness: float = 0.0
    w_inter_fairness: float = 0.0

    def __post_init__(self) -> None:
        """Validate the fields."""
        check_field_types(self, "reward")
        check_choice("reward.form", self.form, REWARD_FORMS)
        for name in ("w_utilization", *FORM_WEIGHTS["penalty"], *FORM_WEIGHTS["zeus"]):
            check_range(f"reward.{name}", getattr(self, name), 0.0)
        for form, names in FORM_WEIGHTS.items():
            for name in names:
                if form != self.form and getattr(self, name) != 0:
                    raise SpecError(
                        f"reward.{name}={getattr(self, name)!r} does not apply to "
                        f"form={self.form!r}: set it to 0 (it weighs a {form!r} term)"
                    )
        check_above("reward.delay_budget_ms", self.delay_budget_ms, 0.0)
        check_above("reward.max_delay_penalty", self.max_delay_penalty, 0.0)
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name != "form" and value > MAX_WEIGHT:
                raise SpecError(
                    f"reward.{f.name}={value!r} is too large: at most {MAX_WEIGHT:g}, so that the "
                    "reward stays finite"
                )

    @classmethod
    def from_config(cls, cfg: RewardSpec | Mapping[str, Any] | None) -> RewardSpec:
        """Build from a mapping (a dict or an OmegaConf node); unknown keys name themselves."""
        if cfg is None:
            return cls()
        if isinstance(cfg, RewardSpec):
            return cfg
        if hasattr(cfg, "_metadata"):  # an OmegaConf node
            from omegaconf import OmegaConf

            cfg = OmegaConf.to_container(cfg, resolve=True)  # type: ignore[assignment]
        if not isinstance(cfg, Mapping):
            raise SpecError(f"reward={cfg!r} is a {type(cfg).__name__}: give a mapping of weights")
        check_keys("reward", cfg, {f.name for f in dataclasses.fields(cls)})
        return cls(**dict(cfg))


def queueing_delay_ms(flow_row: np.ndarray | Sequence[float], hol_ms: float) -> float:
    """XRC's queueing-delay estimate for one flow: max(HoL, mean RTT - min RTT), in ms."""
    e2e = 0.0
    if flow_row[FLOW["rtt_samples"]] > 0 and flow_row[FLOW["rtt_min_ms"]] > 0:
        e2e = max(0.0, flow_row[FLOW["rtt_mean_ms"]] - flow_row[FLOW["rtt_min_ms"]])
    return max(float(hol_ms), e2e)


def reward_terms(
    flows: np.ndarray,
    ues: np.ndarray,
    flow_ue: np.ndarray,
    flow: int,
    step_s: float,
    spec: RewardSpec,
    flow_group: np.ndarray | None = None,
) -> dict[str, float]:
    """Compute each reward term and their weighted sum for the controlled flow.

    Args:
        flows: ``[F, len(FLOW_FIELDS)]`` raw flow observation of the step.
        ues: ``[U, len(UE_FIELDS)]`` raw UE observation of the step.
        flow_ue: ``[F]`` UE index of each flow.
        flow: Index of the controlled flow.
        step_s: Step length in seconds.
        spec: Weights and budget.
        flow_group: ``[F]`` fairness groups (``fairness_groups``); needed by the zeus form.

    Returns:
        The ``TERMS``: ``utilization``, ``delay_ms``, ``delay_penalty``, ``jain``, ``reward``,
        ``inverse_delay``, ``intra_jain`` and ``inter_jain``.
    """
    # Plain Python floats over the step's few rows: the same float64 arithmetic in the same order
    # as the vectorised form (``reward_terms_batch``), several times faster for one cell.
    rows = flows.tolist()
    owners = flow_ue.tolist()
    ue = int(owners[flow])
    rx, act = FLOW["rx_bytes"], FLOW["active"]
    delivered = 0.0
    for row, owner in zip(rows, owners, strict=True):
        if owner == ue:
            delivered += row[rx]
    delivered_mbps = delivered * 8e-6 / step_s
    ue_row = ues[ue].tolist()
    capacity = ue_row[UE["capacity_mbps"]]
    utilization = min(1.0, max(0.0, delivered_mbps / capacity)) if capacity > 0 else 0.0
    delay = queueing_delay_ms(rows[flow], ue_row[UE["hol_ms"]])
    penalty = min(
        spec.max_delay_penalty, max(0.0, delay - spec.delay_budget_ms) / spec.delay_budget_ms
    )
    jain = jain_of_floats([row[rx] for row in rows if row[act] > 0])
    own = rows[flow]
    base = own[FLOW["rtt_min_ms"]] if own[FLOW["rtt_samples"]] > 0 else 0.0
    inverse = base / (base + delay) if base > 0 else 1.0
    if flow_group is None:
        if spec.form == "zeus":
            raise SpecError("reward.form='zeus' needs each flow's fairness group (flow_group)")
        intra = inter = float("nan")
    else:
        groups = flow_group.tolist()
        pairs = list(zip(rows, groups, strict=True))
        intra = jain_of_floats([row[rx] for row, g in pairs if g & GROUP_SAME and row[act] > 0])
        inter = jain_of_floats(
            [
                row[rx]
                for f, (row, g) in enumerate(pairs)
                if (f == flow or g & GROUP_CUBIC) and row[act] > 0
            ]
        )
    return _with_reward(spec, utilization, delay, penalty, jain, inverse, intra, inter)


def reward_terms_batch(
    flows: np.ndarray,
    ues: np.ndarray,
    flow_ue: np.ndarray,
    flow: int,
    step_s: float,
    spec: RewardSpec,
    flow_group: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """``reward_terms`` for a batch of cells at once (the fast simulator's vector env).

    Args:
        flows: ``[B, F, len(FLOW_FIELDS)]`` raw flow observations of the step.
        ues: ``[B, U, len(UE_FIELDS)]`` raw UE observations of the step.
        flow_ue: ``[F]`` UE index of each flow (the same in every cell).
        flow: Index of the controlled flow.
        step_s: Step length in seconds.
        spec: Weights and budget.
        flow_group: ``[F]`` fairness groups (``fairness_groups``); needed by the zeus form.

    Returns:
        ``[B]`` arrays of the ``TERMS``, element ``i`` equal to ``reward_terms`` of cell ``i``.
    """
    flows = np.asarray(flows, dtype=np.float64)
    ues = np.asarray(ues, dtype=np.float64)
    flow_ue = np.asarray(flow_ue)
    ue = int(flow_ue[flow])
    delivered_mbps = flows[:, flow_ue == ue, FLOW["rx_bytes"]].sum(axis=1) * 8e-6 / step_s
    capacity = ues[:, ue, UE["capacity_mbps"]]
    safe = np.where(capacity > 0, capacity, 1.0)
    utilization = np.where(capacity > 0, np.clip(delivered_mbps / safe, 0.0, 1.0), 0.0)
    row = flows[:, flow]
    has_rtt = (row[:, FLOW["rtt_samples"]] > 0) & (row[:, FLOW["rtt_min_ms"]] > 0)
    e2e = np.where(
        has_rtt, np.maximum(0.0, row[:, FLOW["rtt_mean_ms"]] - row[:, FLOW["rtt_min_ms"]]), 0.0
    )
    delay = np.maximum(ues[:, ue, UE["hol_ms"]], e2e)
    penalty = np.minimum(
        spec.max_delay_penalty, np.maximum(0.0, delay - spec.delay_budget_ms) / spec.delay_budget_ms
    )
    active = flows[:, :, FLOW["active"]] > 0
    x = np.where(active, flows[:, :, FLOW["rx_bytes"]], 0.0)
    jain = _jain_batch(x, active)
    base = np.where(row[:, FLOW["rtt_samples"]] > 0, row[:, FLOW["rtt_min_ms"]], 0.0)
    inverse = np.where(base > 0, base / np.where(base > 0, base + delay, 1.0), 1.0)
    if flow_group is None:
        if spec.form == "zeus":
            raise SpecError("reward.form='zeus' needs each flow's fairness group (flow_group)")
        intra = inter = np.full(flows.shape[0], np.nan)
    else:
        g = np.asarray(flow_group)
        intra = _jain_batch(x, active & ((g & GROUP_SAME) > 0))
        own = np.arange(flows.shape[1]) == flow
        inter = _jain_batch(x, active & (((g & GROUP_CUBIC) > 0) | own))
    return _with_reward(spec, utilization, delay, penalty, jain, inverse, intra, inter)


def _with_reward(
    spec: RewardSpec,
    utilization: T,
    delay: T,
    penalty: T,
    jain: T,
    inverse: T,
    intra: T,
    inter: T,
) -> dict[str, T]:
    """The ``TERMS``: the terms and their weighted sum (``spec.form``), for floats or arrays."""
    if spec.form == "zeus":
        reward = (
            spec.w_utilization * utilization
            + spec.w_inverse_delay * inverse
            + spec.w_intra_fairness * intra
            + spec.w_inter_fairness * inter
        )
    else:
        reward = spec.w_utilization * utilization - spec.w_delay * penalty + spec.w_fairness * jain
    return {
        "utilization": utilization,
        "delay_ms": delay,
        "delay_penalty": penalty,
        "jain": jain,
        "reward": reward,
        "inverse_delay": inverse,
        "intra_jain": intra,
        "inter_jain": inter,
    }


def _jain_batch(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``[B]`` Jain's index over the masked entries of ``[B, F]`` (1 where none is positive)."""
    v = np.where(mask, x, 0.0)
    n = mask.sum(axis=1)
    total = v.sum(axis=1)
    squares = np.square(v).sum(axis=1)
    positive = (v > 0).any(axis=1)
    return np.where((n > 0) & positive, total**2 / np.maximum(n * squares, 1e-300), 1.0)
