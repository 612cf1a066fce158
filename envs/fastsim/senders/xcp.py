"""XCP's window-based sender: the router's feedback, echoed on the ACKs, moves the window.

Each data packet carries the congestion header (``xcp_header``): the window and the smoothed RTT
(0 before the first sample: the router then counts the packet's bytes but gives it no feedback),
20 bytes taken from the segment's payload (``codes.XCP_HEADER_BYTES``). On the ACKs
(``xcp_feedback``) the sender adds the feedback the router gave its packets since the last ACKs:
cwnd = max(cwnd + H_feedback, one segment) (XCP's ``cwnd = max(cwnd + H_feedback, s)``). There is
no slow start and no probing of its own: it starts at the initial window and moves only by the
feedback. On a loss it falls back to TCP (the evaluation paper's section 4.2): NewReno's ssthresh
and the shared recovery; the feedback that arrives during fast recovery is dropped. After a
retransmission timeout (one segment) the feedback applies at once, as in the ns-2 XCP the XCP-r
paper describes ("cwnd is increased almost instantaneously afterwards"). The router's side
is ``enb_agents/xcp.py``.
"""

from __future__ import annotations

import math

from numba import njit

from envs.fastsim.codes import ST_RECOVERY
from envs.fastsim.state import (
    FB_H_CWND,
    FB_H_RTT,
    FB_XCP,
    I_CSTATE,
    X_ACK_LOST,
    X_CWND,
    X_SRTT,
    X_XCP_SEEN,
)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xcp_header(b, f, t, fx, fbr):
    """The congestion header the segments sent in tick ``t`` carry (window, RTT), by time."""
    slot = t & (fbr.shape[2] - 1)
    fbr[b, f, slot, FB_H_CWND] = fx[b, f, X_CWND]
    fbr[b, f, slot, FB_H_RTT] = max(fx[b, f, X_SRTT], 0.0)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xcp_feedback(fx, fi, b, f, fbr, fslot, seg):
    """ACKs arrive: the feedback their packets collected since the last ACKs moves the window."""
    total = fbr[b, f, fslot, FB_XCP]
    # Lost ACKs (``ack_loss.py``) lose their share of the feedback (0 without ACK loss).
    delta = (total - fx[b, f, X_XCP_SEEN]) * (1.0 - fx[b, f, X_ACK_LOST])
    fx[b, f, X_XCP_SEEN] = total
    if fi[b, f, I_CSTATE] != ST_RECOVERY:
        fx[b, f, X_CWND] = math.floor(min(max(fx[b, f, X_CWND] + delta, seg), 4e9))
