"""Every integer code the fast simulator's kernels use, defined once, and the name -> code maps.

The kernels compare plain integers (numba reads these module constants as compile-time values):
the sender model of a flow (``FC_CCA``), its traffic (``FC_TRAFFIC``), the model knobs packed
into the scalar vector (``P_SCHEDULER``, ``P_RECOVERY``, ``P_UPLINK``), a sender's congestion
state (``I_CSTATE``), BBR's mode (``X_B_MODE``) and the state of a loss-record entry. The maps
below turn the scenario's names into these codes; ``params.FastSimParams`` packs them.

Which fast sender model runs a controller comes from the controller registry
(``cellgym.controllers``: ``CONTROLLERS[name].fast_model``, as ``linuxreno`` runs as
``newreno``); the Python policy's flow (``cca="agent"``) runs the ``agent`` sender.

>>> cca_code("cubic") == CCA_CUBIC, cca_code("linuxreno") == CCA_NEWRENO
(True, True)
>>> cca_code("agent") == CCA_AGENT
True

Adding a congestion control to the fast model: its code here (``CCA_*`` and
``SENDER_MODEL_CODES``), its module in ``senders/``, its branches in ``senders/dispatch.py``
and its ``fast_model`` in the registry.
"""

from __future__ import annotations

from cellgym.controllers import ALL_CONTROLLERS, TEST_ONLY_NATIVE
from cellgym.vocab import (
    AGENT_CCA,
    MOBILITY_MODES,
    NR_LOS_CONDITIONS,
    NR_PROPAGATION_SCENARIOS,
    TRAFFIC_TYPES,
    SpecError,
)

# -- sender models (``FC_CCA``), one module each in ``senders/`` --------------------------------
CCA_NEWRENO = 0
CCA_CUBIC = 1
CCA_BBR = 2
CCA_XRC = 3
CCA_AGENT = 4
CCA_XCP = 5
CCA_RCP = 6
CCA_XCPR = 7
#: Queueing delay the by-time rings cover besides the path's when a flow runs XCP-r (its receiver
#: reads the router's feedback by time, ``xcpr_receiver.py``; ``FastSimParams.ring_len``), ms.
XCPR_QUEUE_MS = 1024
CCA_PBE = 8
CCA_CONSTRATE = 9  # test-only: the recipe's worked example (``senders/constrate.py``)
#: Sender model name (``senders/<name>.py``) -> code.
SENDER_MODEL_CODES: dict[str, int] = {
    "newreno": CCA_NEWRENO,
    "cubic": CCA_CUBIC,
    "bbr": CCA_BBR,
    "xrc": CCA_XRC,
    AGENT_CCA: CCA_AGENT,
    "xcp": CCA_XCP,
    "rcp": CCA_RCP,
    "xcpr": CCA_XCPR,
    "pbecc": CCA_PBE,
    "constrate": CCA_CONSTRATE,
}

# -- traffic of a flow (``FC_TRAFFIC``) ---------------------------------------------------------
TRAFFIC_BULK = 0
TRAFFIC_VIDEO = 1
TRAFFIC_SHORT = 2
TRAFFIC_PARETO = 3  # a slot of a stream of finite flows (``workload``)
#: ``FlowSpec.traffic`` -> code.
TRAFFIC_CODES: dict[str, int] = {
    "bulk": TRAFFIC_BULK,
    "video": TRAFFIC_VIDEO,
    "short": TRAFFIC_SHORT,
    "pareto": TRAFFIC_PARETO,
}
assert set(TRAFFIC_CODES) == set(TRAFFIC_TYPES)

# -- model knobs in the scalar vector (``P_SCHEDULER``, ``P_RECOVERY``, ...) ------------------
SCHEDULER_PF = 0
SCHEDULER_RR = 1
#: ``FastSimParams.scheduler`` -> code.
SCHEDULER_CODES: dict[str, int] = {"pf": SCHEDULER_PF, "rr": SCHEDULER_RR}
RECOVERY_CLASSIC = 0  # the window steps to ssthresh, RFC 6675 pipe
RECOVERY_NS3_PRR = 1  # ns-3.44's loss recovery (PRR, re-entry, ...)
#: ``FastSimParams.recovery`` -> code.
RECOVERY_CODES: dict[str, int] = {"ns3_prr": RECOVERY_NS3_PRR, "classic": RECOVERY_CLASSIC}
UPLINK_PERIODIC = 0  # periodic uplink opportunities
UPLINK_BSR = 1  # buffer status report -> grant (ns-3's UE MAC)
#: ``FastSimParams.uplink`` -> code.
UPLINK_CODES: dict[str, int] = {"periodic": UPLINK_PERIODIC, "bsr": UPLINK_BSR}
MOBILITY_STATIC = 0
MOBILITY_RANDOM = 1  # a new random distance every ``mobility_period_s``
#: ``ScenarioSpec.channel.mobility`` -> code (``P_MOBILITY``).
MOBILITY_CODES: dict[str, int] = {"static": MOBILITY_STATIC, "random": MOBILITY_RANDOM}
assert set(MOBILITY_CODES) == set(MOBILITY_MODES)
PROP_UMI = 0  # TR 38.901 urban micro, street canyon
PROP_UMA = 1  # urban macro
PROP_RMA = 2  # rural macro
#: ``ScenarioSpec.cell.propagation`` -> code (``P_NR_SCENARIO``).
PROPAGATION_CODES: dict[str, int] = {"umi": PROP_UMI, "uma": PROP_UMA, "rma": PROP_RMA}
assert set(PROPAGATION_CODES) == set(NR_PROPAGATION_SCENARIOS)
LOS_PROBABILISTIC = 0  # TR 38.901's distance-dependent LOS probability, drawn as the UE moves
LOS_ALWAYS = 1
LOS_NEVER = 2
#: ``ScenarioSpec.cell.los`` -> code (``P_NR_LOS_MODE``).
LOS_CODES: dict[str, int] = {
    "probabilistic": LOS_PROBABILISTIC,
    "los": LOS_ALWAYS,
    "nlos": LOS_NEVER,
}
assert set(LOS_CODES) == set(NR_LOS_CONDITIONS)

# -- the router-assisted bottleneck (``P_ROUTER``, ``enb_agents/router.py``) ------------------
ROUTER_NONE = 0  # no flow carries an explicit-feedback header: the router logic is off
ROUTER_XCP = 1  # XCP's efficiency and fairness controllers (``enb_agents/xcp.py``)
ROUTER_RCP = 2  # RCP's common rate (``enb_agents/rcp.py``)
#: Sender model code -> the router it needs.
ROUTER_OF_CCA: dict[int, int] = {CCA_XCP: ROUTER_XCP, CCA_RCP: ROUTER_RCP, CCA_XCPR: ROUTER_XCP}
#: Bytes of the congestion header in every data packet (taken from the segment's payload: the
#: packet stays an MTU on the wire). XCP (draft-falk-xcp): format/protocol/length word, RTT,
#: X (inter-packet time), delta throughput, reverse feedback, 4 bytes each. RCP: a word, RTT,
#: rate and reverse rate.
XCP_HEADER_BYTES = 20
RCP_HEADER_BYTES = 16

# -- a sender's congestion state (``I_CSTATE``) -------------------------------------------------
ST_OPEN = 0
ST_RECOVERY = 1  # fast recovery
ST_LOSS = 2  # after a retransmission timeout

# -- BBR's mode (``X_B_MODE``) ------------------------------------------------------------------
BBR_STARTUP = 0
BBR_DRAIN = 1
BBR_PROBE_BW = 2
BBR_PROBE_RTT = 3

# -- state of a loss-record entry (``lost[b, f, k, 1]``) -----------------------------------------
LOST_NEED = 0  # lost, not retransmitted
LOST_RETX = 1  # retransmitted, on its way
LOST_DONE = 2  # retransmission delivered
LOST_AGAIN = 3  # retransmission dropped too (the sender learns by RTO)

# -- the wired bottleneck's link (``bottleneck.BN_MODE``) -------------------------------------
BN_NONE = 0  # no bottleneck: segments go straight to the eNB
BN_RATE = 1  # constant-rate serialising link (``bottleneck_mbps``)
BN_TRACE = 2  # Mahimahi delivery opportunities (``bottleneck_trace``)

# -- sentinel values in the float state ---------------------------------------------------------
SSTHRESH_INF = 4.0e9  # no slow-start threshold yet
NO_RTT = 1.0e12  # no RTT sample yet


def _fast_models() -> dict[str, str]:
    out = {
        n: c.fast_model for n, c in ALL_CONTROLLERS.items() if c.kind == "native" and c.fast_model
    }
    out[AGENT_CCA] = AGENT_CCA
    return out


#: ``FlowSpec.cca`` -> the fast sender model that runs it (from the controller registry).
FAST_MODELS: dict[str, str] = _fast_models()
assert set(FAST_MODELS.values()) <= set(SENDER_MODEL_CODES)
#: ``FlowSpec.cca`` values the fast backend runs.
FAST_CCAS: tuple[str, ...] = tuple(FAST_MODELS)


def cca_code(name: str, field_name: str = "cca") -> int:
    """The sender model code of a flow's ``cca``; ``SpecError`` naming ``field_name`` if none."""
    if name not in FAST_MODELS:
        raise SpecError(
            f"{field_name}={name!r} is not modelled by the fast backend: "
            f"choose one of {sorted(n for n in FAST_MODELS if n not in TEST_ONLY_NATIVE)}"
        )
    return SENDER_MODEL_CODES[FAST_MODELS[name]]
