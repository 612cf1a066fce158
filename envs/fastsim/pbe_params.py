"""PBE-CC's knobs (the UE's monitor and the sender) and their slice of the scalar vector.

``FastSimParams.pbe`` holds a ``PbeKnobs`` (a mapping is accepted too, as from a config);
``pbe_scalars`` packs them from ``params.P_PBE`` on (``PB_*`` offsets), with ``PB_ON`` set when a
flow runs ``pbecc`` (the monitor is skipped otherwise). docs/pbe-cc.md gives the rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from cellgym.vocab import check_above, check_range
from envs.fastsim.codes import SENDER_MODEL_CODES, cca_code
from envs.fastsim.knobs import knobs_from

#: Slots the monitor's rings hold: the longest averaging window (``PbeKnobs.window_slots``).
PB_RING = 32

# -- a UE's monitor state, offsets from ``state.U_PB0`` in the UE's row ---------------------------
UM_LAST = 0  # slot + 1 of the UE's latest allocation on the control channel (0: none yet)
UM_RBSUM = 1  # RBs of the UE's new transport blocks over the window (the sum of its RB ring)
UM_FULLSUM = 2  # PDCP bytes all usable RBs carry at the UE's MCS, over the window (its ring)
UM_RATE = 3  # the UE's estimate at the latest 1 ms tick: PDCP bytes per ms
UM_RETXSUM = 4  # RBs of the UE's HARQ retransmissions over the window (the sum of its ring)
UM_RB0 = 5  # ring of the UE's new-block RBs per slot (PB_RING entries)
UM_FULL0 = UM_RB0 + PB_RING  # ring of the full-cell bytes at the UE's MCS per slot
UM_RETX0 = UM_FULL0 + PB_RING  # ring of the UE's retransmission RBs per slot
UM_LEN = UM_RETX0 + PB_RING

# -- offsets from ``params.P_PBE`` ---------------------------------------------------------------
PB_ON = 0  # 1 when a flow runs PBE-CC: the UE monitor runs
PB_WINDOW = 1  # slots of the monitor's averaging window
PB_ACTIVE_SLOTS = 2  # a UE scheduled within this many slots counts as active
PB_PACING_GAIN = 3  # the sender paces at this times the estimate
PB_CWND_GAIN = 4  # window = estimate x min RTT x this
PB_MARGIN_MS = 5  # RTT beyond what the estimate explains before the fallback, ms
PB_HOLD_RTTS = 6  # ... for this many min RTTs
PB_RETURN = 7  # the fallback ends when BBR's bandwidth reaches this share of the estimate
PB_LEN = 8


@dataclass(frozen=True)
class PbeKnobs:
    """Knobs of PBE-CC (every value is CellGym's choice: the paper's introduction gives none).

    Attributes:
        window_slots: Slots (LTE: 1 ms TTIs; NR: slots) over which the UE averages the
            allocations it decodes, [1, 32].
        active_ms: A UE the control channel showed scheduled within this many ms is active
            (shares the idle resource blocks), [1, 10000].
        pacing_gain: The sender paces at this times the rate the ACKs carry, (0, 2].
        cwnd_gain: The window is the rate x min RTT x this, [1, 4].
        margin_ms: The RTT may exceed what the estimate explains by this much, [0, 1000].
        hold_rtts: ... for this many min RTTs before the BBR-like fallback, (0, 100].
        return_share: The fallback ends when its bottleneck-bandwidth estimate reaches this
            share of the rate the ACKs carry, (0, 2].
    """

    window_slots: int = 8
    active_ms: float = 100.0
    pacing_gain: float = 1.0
    cwnd_gain: float = 1.25
    margin_ms: float = 10.0
    hold_rtts: float = 2.0
    return_share: float = 0.9

    def __post_init__(self) -> None:
        check_range("fastsim.pbe.window_slots", self.window_slots, 1, PB_RING)
        check_range("fastsim.pbe.active_ms", self.active_ms, 1.0, 10000.0)
        check_range("fastsim.pbe.cwnd_gain", self.cwnd_gain, 1.0, 4.0)
        check_range("fastsim.pbe.margin_ms", self.margin_ms, 0.0, 1000.0)
        for name, hi in (("pacing_gain", 2.0), ("hold_rtts", 100.0), ("return_share", 2.0)):
            check_above(f"fastsim.pbe.{name}", getattr(self, name), 0.0, hi)


def pbe_knobs(value: PbeKnobs | Mapping | None) -> PbeKnobs:
    """``value`` as validated knobs (a mapping's keys must be ``PbeKnobs`` fields)."""
    return knobs_from(PbeKnobs, value, "fastsim.pbe")


def pbe_scalars(knobs: PbeKnobs, spec, slots_per_ms: int) -> np.ndarray:
    """The ``PB_*`` values of the scenario (from ``params.P_PBE`` in the scalar vector)."""
    out = np.zeros(PB_LEN)
    pbe = SENDER_MODEL_CODES["pbecc"]
    out[PB_ON] = float(any(cca_code(f.cca) == pbe for f in spec.flows))
    out[PB_WINDOW] = knobs.window_slots
    out[PB_ACTIVE_SLOTS] = round(knobs.active_ms * slots_per_ms)
    out[PB_PACING_GAIN] = knobs.pacing_gain
    out[PB_CWND_GAIN] = knobs.cwnd_gain
    out[PB_MARGIN_MS] = knobs.margin_ms
    out[PB_HOLD_RTTS] = knobs.hold_rtts
    out[PB_RETURN] = knobs.return_share
    return out
