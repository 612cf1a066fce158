"""The scalars of a wired cell (``cell.type: wired``; the link itself: ``wired``)."""

from __future__ import annotations

import numpy as np

from envs.fastsim.codes import UPLINK_CODES

#: A wired cell of unlimited rate serves this many bytes per ms (the whole RLC buffer).
WIRED_UNLIMITED_BPMS = 1e15


def wired_scalars(p: np.ndarray, cell) -> None:
    """A wired cell: the link's bytes per ms, no HARQ, no RLC/MAC headers, ACKs every ms."""
    if cell.type != "wired":
        return
    from envs.fastsim import params as P  # noqa: N812 (params imports this module)

    rate = cell.wired_mbps * 1e6 / 8.0 / 1000.0
    p[P.P_WIRED_BPMS] = rate if cell.wired_mbps > 0 else WIRED_UNLIMITED_BPMS
    p[P.P_HARQ_BLER] = 0.0
    p[P.P_HARQ_BLER_RETX] = 0.0
    p[P.P_TB_OVERHEAD_BYTES] = 0.0
    p[P.P_SDU_OVERHEAD_BYTES] = 0.0
    p[P.P_UPLINK] = UPLINK_CODES["periodic"]
