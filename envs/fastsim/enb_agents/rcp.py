"""RCP's router: one common rate R(t) for every flow through the bottleneck.

Dukkipati and McKeown's RCP as the evaluation paper (../shared/papers/xcp-rcp-router-assisted-
evaluation.txt, section 2.3) gives it. Equation 2 updates the rate from the spare capacity and the
queue, shared over the estimated number of flows N(t):

    R(t) = R(t - d) + (alpha (C - y(t)) - beta q(t) / d) / N(t),

and with N(t) = C / R(t - d) (the flows are taken to send at the signalled rate) equation 3:

    R(t) = R(t - d) (1 + (alpha (C - y(t)) - beta q(t) / d) / C).

``_rcp_update`` applies it every T ms with RCP's original scaling for an update period shorter
than the average RTT, R <- R (1 + (T / d) (alpha (C - y) - beta q / d) / C); T = d (the default,
``rcp_update_ms = 0``) is equation 3 exactly. C: the capacity, y: the input traffic rate over the
last T, q: the queue now (bytes), d: the average RTT of the traversing packets (their headers).
R stays within [one packet per d, C]; it starts at C with the first update that has a capacity
(before, the router signals no rate). New flows start at the current R (the SYN-ACK's header).
"""

from __future__ import annotations

from numba import njit

from envs.fastsim.state import RT_RATE


@njit(cache=True, inline="always", error_model="numpy", _nrt=False)
def _rcp_update(row, base, cap, y_rate, q_bytes, period, d, alpha, beta, s):
    """One update of R (bytes per ms) after ``period`` ms: equation 3 with the factor T / d."""
    if cap <= 0:
        return  # no capacity measured yet (a UE not served yet): no rate
    r = row[base + RT_RATE]
    if r <= 0:
        r = cap  # the first update starts from the whole capacity
    r = r * (1.0 + (period / d) * (alpha * (cap - y_rate) - beta * q_bytes / d) / cap)
    row[base + RT_RATE] = min(max(r, s / d), max(cap, s / d))
