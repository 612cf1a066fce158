"""XCP-r's receiver: it sums the router's feedback into the window cwnd' that its ACKs carry.

The paper (../shared/papers/xcp-r-receiver-side-xcp.txt, section IV, its Fig. 8): the receiver
keeps a window cwnd' per flow, adds the ``H_feedback`` of every data packet it receives
(cwnd' = cwnd' + H_feedback), resets it to the header's ``H_cwnd`` when the header carries the
congestion flag, and puts cwnd' on its ACKs instead of the feedback (``senders/xcpr.py``).

How the feedback reaches the receiver here (the per-packet path of docs/explicit-feedback.md):
the router (``enb_agents/router.py``) keeps each flow's feedback so far by time (``FB_XCP``);
a segment sent at ``send`` reached the router ``FC_D_DOWN_MS`` later, so the feedback of every
segment up to it is ``FB_XCP`` at that router time. Once per tick, after the tick's deliveries
(``_receive`` records the latest segment's send time, ``I_XR_LAST_SEND``), the receiver adds the
feedback between the router time it counted last and the newest segment's: exactly the sum of the
feedback of the segments that passed the router in between, the lost ones included (a segment
lost after the router gives its feedback to the next one received). The header (window and reset
count, ``FB_H_*`` at the send time) comes the same way. As XCP's sender does, the window stays at
one segment at least. The ACKs of the tick carry the window after the tick (the uplink,
``receiver._uplink_tti``, copies it into ``V_XR_CWND``): a delayed ACK carries at most the one
segment it waits for more.

The by-time rings must reach back over the queueing delay: ``FastSimParams.ring_len`` adds
``codes.XCPR_QUEUE_MS`` when a flow runs XCP-r; a segment older than the ring (a longer queue)
reads the oldest slot left, which already holds some later segments' feedback.
"""

from __future__ import annotations

import math

from numba import njit

from envs.fastsim.params import FC_CCA, FC_D_DOWN_MS, P_SEG_BYTES
from envs.fastsim.senders.dispatch import _receiver_window
from envs.fastsim.state import (
    FB_H_CWND,
    FB_H_EPOCH,
    FB_XCP,
    I_XR_LAST_SEND,
    I_XR_RCWND,
    I_XR_REPOCH,
    X_XR_RCWND,
    X_XR_RSEEN,
    X_XR_RTIME,
)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xcpr_rule(cwnd, epoch, fb_sum, fb_before, seen, h_cwnd, h_epoch, seg):
    """One receiver update: ``(cwnd', epoch, seen)`` after a segment.

    ``fb_sum``: the router's feedback so far up to the segment; ``fb_before``: before the
    segment's router tick; ``seen``: the part already in cwnd'; ``h_cwnd``, ``h_epoch``: the
    segment's header (window, reset count + 1). A new reset count resynchronises cwnd' to the
    header's window plus the feedback of the segment's tick; otherwise cwnd' adds the new
    feedback.
    """
    if h_epoch != epoch:
        cwnd = h_cwnd + (fb_sum - fb_before)
        epoch = h_epoch
    else:
        cwnd = cwnd + (fb_sum - seen)
    return min(max(cwnd, seg), 4e9), epoch, fb_sum


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xcpr_receivers(b, t, p, fc, fi, fx, fbr):
    """Every XCP-r receiver after tick ``t``'s deliveries: cwnd' from the newest segment."""
    ring = fbr.shape[2]
    seg = p[P_SEG_BYTES]
    for f in range(fi.shape[1]):
        if not _receiver_window(int(fc[f, FC_CCA])):
            continue
        send = fi[b, f, I_XR_LAST_SEND]
        if send <= 0:
            continue
        tr = send + int(fc[f, FC_D_DOWN_MS])
        if tr <= fx[b, f, X_XR_RTIME] or tr >= t:
            # Nothing newer; or the segment passed the router in this very tick (an NR slot after
            # the arrivals), whose feedback the router writes after the receivers: next tick.
            continue
        fx[b, f, X_XR_RTIME] = tr
        tr = max(tr, t - ring + 2)  # the ring's oldest slot still holding its time
        hs = max(send, t - ring + 2)
        cwnd, epoch, seen = _xcpr_rule(
            fx[b, f, X_XR_RCWND], float(fi[b, f, I_XR_REPOCH]), fbr[b, f, tr & (ring - 1), FB_XCP],
            fbr[b, f, (tr - 1) & (ring - 1), FB_XCP], fx[b, f, X_XR_RSEEN],
            fbr[b, f, hs & (ring - 1), FB_H_CWND],
            fbr[b, f, hs & (ring - 1), FB_H_EPOCH], seg,
        )  # fmt: skip
        fx[b, f, X_XR_RCWND] = cwnd
        fx[b, f, X_XR_RSEEN] = seen
        fi[b, f, I_XR_REPOCH] = int(epoch)
        fi[b, f, I_XR_RCWND] = int(math.floor(cwnd))
