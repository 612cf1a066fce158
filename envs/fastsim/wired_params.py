"""The scalars of a wired cell (``cell.type: wired``; the link itself: ``wired``)."""

from __future__ import annotations

from envs.fastsim.codes import UPLINK_CODES

#: A wired cell of unlimited rate serves this many bytes per ms (the whole RLC buffer).
WIRED_UNLIMITED_BPMS = 1e15


def wired_values(cell) -> tuple[float, int] | None:
    """A wired cell's link rate (bytes per ms) and uplink code (ACKs every ms); None otherwise.

    ``FastSimParams`` also turns HARQ and the RLC/MAC headers off for it.
    """
    if cell.type != "wired":
        return None
    rate = cell.wired_mbps * 1e6 / 8.0 / 1000.0
    return (rate if cell.wired_mbps > 0 else WIRED_UNLIMITED_BPMS), UPLINK_CODES["periodic"]
