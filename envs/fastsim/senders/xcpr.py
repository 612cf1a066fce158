"""XCP-r's sender: the window its ACKs carry, and the resynchronisation flag.

XCP-r (Pascal Vicat-Blanc Primet and Dino Lopez Pacheco's receiver-side XCP,
../shared/papers/xcp-r-receiver-side-xcp.txt, section IV) keeps XCP's router untouched
(``enb_agents/xcp.py``) and moves the sum of the feedback from the sender to the receiver
(``xcpr_receiver.py``): every ACK carries the receiver's window cwnd' itself, so a lost ACK only
delays the sender's update. The sender's two changes (the paper's (i) and (ii)):

- on the ACKs, ``cwnd = H_feedback`` (here: the window the latest surviving ACK carries,
  ``V_XR_CWND``) instead of ``cwnd = cwnd + H_feedback``;
- whenever it changes the window itself (entering fast recovery or a retransmission timeout, and
  the window it sets when recovery ends), it raises the congestion flag, so that the receiver
  reads the header's window again. The flag is kept as a count of resets (``X_XR_EPOCH``; the
  header carries the count + 1, ``FB_H_EPOCH``): every segment sent after a reset carries it, so
  the receiver resynchronises on the first one that arrives whatever was lost before, and the
  sender ignores the windows of ACKs whose count is older (computed before the reset: "it must
  synchronize with the receiver beforehand"), except, after a timeout, those of the count just
  before it (the receiver's unchanged cwnd', which the paper credits for XCP-r's recovery).

During fast recovery the shared recovery (PRR) sets the window and the ACKs' windows are ignored,
as XCP drops its feedback then; after a timeout (one segment, ``ST_LOSS``) the ACKs' windows
apply at once, which is how XCP leaves a timeout in the paper ("cwnd is increased almost
instantaneously afterwards"). The header is XCP's (20 bytes of the payload).
"""

from __future__ import annotations

import math

from numba import njit

from envs.fastsim.codes import ST_LOSS, ST_RECOVERY
from envs.fastsim.state import (
    FB_H_CWND,
    FB_H_EPOCH,
    FB_H_RTT,
    I_CSTATE,
    V_XR_CWND,
    V_XR_EPOCH,
    X_CWND,
    X_SRTT,
    X_XR_EPOCH,
)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xcpr_header(b, f, t, fx, fbr):
    """The header of the segments sent in tick ``t``: window, RTT and the reset count + 1."""
    slot = t & (fbr.shape[2] - 1)
    fbr[b, f, slot, FB_H_CWND] = fx[b, f, X_CWND]
    fbr[b, f, slot, FB_H_RTT] = max(fx[b, f, X_SRTT], 0.0)
    fbr[b, f, slot, FB_H_EPOCH] = fx[b, f, X_XR_EPOCH] + 1.0


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xcpr_window(b, f, fi, fx, rcv, slot, seg):
    """ACKs arrive (the receiver's state at ``slot``): the window they carry becomes cwnd."""
    if fi[b, f, I_CSTATE] == ST_RECOVERY:
        return
    count = rcv[b, f, slot, V_XR_EPOCH]
    current = int(fx[b, f, X_XR_EPOCH]) + 1
    # After a timeout the receiver's cwnd' of before it still counts (the paper: "the next ACK
    # will carry the correct value ... since cwnd' remains unchanged at the receiver side");
    # otherwise only ACKs synchronised with the latest reset.
    if count != current and not (fi[b, f, I_CSTATE] == ST_LOSS and count == current - 1):
        return
    w = rcv[b, f, slot, V_XR_CWND]
    if w > 0:
        fx[b, f, X_CWND] = math.floor(min(max(float(w), seg), 4e9))


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xcpr_reset(fx, b, f):
    """The sender changed its window itself: raise the congestion flag (one more reset)."""
    fx[b, f, X_XR_EPOCH] += 1.0
