"""XCP's router: the efficiency controller, the fairness controller and the per-packet feedback.

Katabi, Handley and Rohrs' XCP as the evaluation paper (../shared/papers/xcp-rcp-router-assisted-
evaluation.txt, section 2.2) describes it, with the window-based sender (section 4.2). Every data
packet carries a congestion header: the sender's window ``H_cwnd``, its RTT ``H_rtt`` and the
feedback. Per control interval, whose length d is the average RTT of the packets of the previous
interval (weighted by their bytes), the router keeps no per-flow state, only sums over the
packets that arrive:

- input traffic y (bytes), sum rtt_i s_i, sum rtt_i s_i / cwnd_i (packets with an RTT);
- the persistent queue Q: the smallest queue of the interval.

At the end of an interval (``_xcp_control``), with C the capacity and S = C - y/d the spare
bandwidth:

- efficiency controller (equation 1 of the paper, as an amount per interval):
  phi = alpha d S - beta Q (alpha = 0.4, beta = 0.226);
- bandwidth shuffling: h = max(0, gamma C d - |phi|) with gamma = 0.1 (10 % of the capacity);
- fairness controller: positive feedback h + max(phi, 0) is shared so that every flow gains the
  same rate, negative feedback h + max(-phi, 0) in proportion to the flows' rates (AIMD):
  xi_p = (h + max(phi, 0)) / (d sum rtt_i s_i / cwnd_i), xi_n = (h + max(-phi, 0)) / (d sum s_i),
  the sums over an interval of length d. The interval that just ended lasted T (whole ms, at
  least d): its sums are scaled to d (by d / T), so the feedback handed out over the next d is
  the aggregate whatever T was.

Each packet of the next interval gets (``_xcp_packet_feedback``)
p_i - n_i = xi_p rtt_i^2 s_i / cwnd_i - xi_n rtt_i s_i bytes of window change, which the receiver
echoes and the sender adds to its window (``senders/xcp.py``). Summed over a flow's packets of one
interval (cwnd_i d / rtt_i bytes) the positive part is (h + phi+) rtt_i / (N d) (the same rate
gain for every flow), the negative part is proportional to the flow's share of the traffic.

Units: ms, bytes on the wire at the router (``router.py`` converts the header's window and the
feedback between the sender's payload bytes and the router's wire bytes).
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.state import RT_PHI, RT_QMIN, RT_RTT_BYTES, RT_SUM_RSC, RT_XIN, RT_XIP


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xcp_control(row, base, cap, y_rate, elapsed, d, alpha, beta, shuffle):
    """End of a control interval: phi, the shuffled traffic and the fairness factors xi_p, xi_n.

    ``row[base + RT_*]`` holds the sums of the interval, which lasted ``elapsed`` ms; ``cap`` and
    ``y_rate`` (its input traffic) in bytes per ms; ``d`` the new control interval (the average
    RTT of the interval's packets), ms.
    """
    phi = alpha * d * (cap - y_rate) - beta * row[base + RT_QMIN]
    h = max(0.0, shuffle * cap * d - abs(phi))
    rsc = row[base + RT_SUM_RSC] * d / elapsed
    sized = row[base + RT_RTT_BYTES] * d / elapsed
    row[base + RT_XIP] = (h + max(phi, 0.0)) / (d * rsc) if rsc > 0 else 0.0
    row[base + RT_XIN] = (h + max(-phi, 0.0)) / (d * sized) if sized > 0 else 0.0
    row[base + RT_PHI] = phi


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _xcp_packet_feedback(xi_p, xi_n, rtt, cwnd, s):
    """The feedback of one packet of ``s`` bytes with header ``cwnd`` (bytes), ``rtt`` (ms)."""
    return xi_p * rtt * rtt * s / cwnd - xi_n * rtt * s
