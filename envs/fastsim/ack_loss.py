"""ACK loss on the reverse path, between the bottleneck's router and the sender.

``ScenarioSpec.ack_loss`` = p: every ACK is lost with probability p, independently, drawn from the
cell's generator (``rng``; no draw at all when p = 0, so other scenarios keep their trajectories).
The loss sits after the router: the explicit feedback an ACK picked up there is lost with it.

The fast model's ACKs of a tick reach the sender as one bunch carrying the receiver's state
(cumulative, so a later ACK repeats what a lost one said). Each tick the ACKs new to the reverse
path are drawn one by one (``I_ACKS_DRAWN``):

- none survives: the sender sees nothing in this tick (no RTT sample, no cumulative ACK, no
  window change); the next surviving ACK carries the state, as TCP's cumulative ACKs do. XCP's
  feedback of the lost ACKs is gone (the sender moves past it, ``X_XCP_SEEN``).
- some survive: the bunch is processed, and XCP adds the surviving share (``X_ACK_LOST``) of the
  feedback the bunch carried. XCP-r's ACKs carry the window itself, so one survivor is enough.
- a retransmission timeout while the receiver's latest state is known only to lost ACKs: the
  timeout's retransmission of the first unacknowledged segment makes the receiver ACK again (a
  duplicate ACK repeating its state). The fast model resends only segments it knows lost, so this
  ACK is modelled directly: one smoothed RTT after the timeout (``X_ACK_REDRAW``, set in
  ``dispatch._on_rto``) one more ACK carrying the receiver's state is drawn, lost with the same
  probability. Without it a sender whose last ACK was lost would wait forever.
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.params import FC_D_SRV_UP_MS, P_ACK_LOSS
from envs.fastsim.rng import _rand
from envs.fastsim.state import (
    FB_XCP,
    I_ACKS_DRAWN,
    I_SEEN_ACKS,
    X_ACK_LOST,
    X_ACK_REDRAW,
    X_XCP_SEEN,
)


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _ack_survivors(n, loss, rng, b):
    """How many of ``n`` ACKs survive a loss probability ``loss`` (one draw each)."""
    kept = 0
    for _ in range(n):
        if _rand(rng, b) >= loss:
            kept += 1
    return kept


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _ack_loss(b, f, t, p, fc, fi, fx, rng, fbr, v_acks, sums_feedback):
    """The reverse path's losses of the ACKs up to ``v_acks``; True when the sender sees none.

    ``sums_feedback``: the sender sums the router's feedback off its ACKs (XCP), so the lost
    ACKs' share is lost with them.
    """
    fresh = v_acks - max(fi[b, f, I_ACKS_DRAWN], fi[b, f, I_SEEN_ACKS])
    if fresh <= 0:
        redraw = fx[b, f, X_ACK_REDRAW]
        if redraw <= 0 or t < redraw:
            return True  # only ACKs already lost: nothing new reaches the sender
        fx[b, f, X_ACK_REDRAW] = 0.0
        fresh = 1  # the timeout's duplicate ACK, carrying the receiver's latest state
    fi[b, f, I_ACKS_DRAWN] = v_acks
    kept = _ack_survivors(fresh, p[P_ACK_LOSS], rng, b)
    fx[b, f, X_ACK_LOST] = 1.0 - kept / fresh
    if kept > 0:
        return False
    if sums_feedback:
        tf = t - int(fc[f, FC_D_SRV_UP_MS])
        if tf >= 0:
            fx[b, f, X_XCP_SEEN] = fbr[b, f, tf & (fbr.shape[2] - 1), FB_XCP]
    return True
