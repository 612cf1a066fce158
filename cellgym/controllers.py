"""The controller registry: one table of every controller CellGym can run, and where it lives.

A controller is either *native* (a per-ACK sender inside the simulator, chosen by name in
``FlowSpec.cca``) or a *policy* (a per-step ``predict`` that acts through the environment, like a
trained model). ``evaluate.py``, the periodic evaluation in training and the README's controller
table all read this table; trained checkpoints are the one kind of controller not listed here
(they are resolved from their run directory).

Adding a controller: its files in one folder per backend (``ns3-scenarios/model/``,
``envs/fastsim/senders/``, ``baselines/``), one ``Controller`` entry below, and its tests
(``docs/architecture.md``). A ``test_only`` entry (such as the recipe's worked example) is in
``ALL_CONTROLLERS`` alone: the published table ``CONTROLLERS``, ``names`` and ``get`` leave it
out, so evaluation, reports and the README's table never list it; ``FlowSpec.cca`` accepts it
(``TEST_ONLY_NATIVE``).

>>> CONTROLLERS["cubic"].backends
('ns3', 'fast')
>>> CONTROLLERS["xrc_policy"].kind
'policy'
>>> names(kind="native", backend="fast")
['cubic', 'newreno', 'linuxreno', 'bbr', 'veno', 'xrc', 'xcp', 'rcp', 'xcpr', 'pbecc']
>>> names(kind="native", backend="ns3")[-2:]
['dctcp', 'xrc']
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cellgym.vocab import BACKENDS, NATIVE_CCAS, NS3_TCPS, RADIO_CELL_TYPES, SpecError

#: Kinds of controller.
KINDS: tuple[str, ...] = ("native", "policy")


@dataclass(frozen=True)
class Controller:
    """One controller.

    Attributes:
        name: The name in ``controllers=[...]`` (and in ``FlowSpec.cca`` for native ones).
        kind: ``native`` (per ACK, in the simulator) or ``policy`` (per step, through the env).
        backends: Backends that can run it.
        summary: One line for tables.
        cells: Cell types it runs on (every backend it lists models them).
        code: Where its code lives, per backend (``"ns3"``, ``"fast"``) or ``"policy"``.
        ns3_type: ns-3 ``TypeId`` of a native sender's congestion control.
        fast_model: The fast model's sender that runs it (itself, or the one it shares a model
            with, as ``linuxreno`` runs as ``newreno``).
        entry_point: ``module:Class`` of a policy.
        test_only: Run by tests only (``ALL_CONTROLLERS``): outside every published list.
    """

    name: str
    kind: str
    backends: tuple[str, ...]
    summary: str
    code: dict[str, str] = field(default_factory=dict)
    cells: tuple[str, ...] = RADIO_CELL_TYPES
    ns3_type: str = ""
    fast_model: str = ""
    entry_point: str = ""
    test_only: bool = False


_NS3_TYPES: dict[str, str] = {
    "cubic": "TcpCubic",
    "newreno": "TcpNewReno",
    "linuxreno": "TcpLinuxReno",
    "bbr": "TcpBbr",
    "illinois": "TcpIllinois",
    "veno": "TcpVeno",
    "vegas": "TcpVegas",
    "bic": "TcpBic",
    "htcp": "TcpHtcp",
    "hybla": "TcpHybla",
    "highspeed": "TcpHighSpeed",
    "scalable": "TcpScalable",
    "westwoodplus": "TcpWestwoodPlus",
    "yeah": "TcpYeah",
    "lp": "TcpLp",
    "ledbat": "TcpLedbat",
    "dctcp": "TcpDctcp",
}
#: ns-3 TCPs the fast model runs, and the fast sender model each one runs as.
_FAST_TCPS: dict[str, str] = {
    "cubic": "cubic",
    "newreno": "newreno",
    "linuxreno": "newreno",  # ns-3's LinuxReno differs from NewReno only in byte counting
    "bbr": "bbr",
    "veno": "newreno",  # TcpVeno behaves as NewReno in ns-3 (docs/fastsim.md)
}


def _ns3_tcp(name: str) -> Controller:
    fast = _FAST_TCPS.get(name, "")
    code = {"ns3": f"ns-3 src/internet/model ({_NS3_TYPES[name]})"}
    if fast:
        code["fast"] = f"envs/fastsim/senders/{fast}.py"
    return Controller(
        name=name,
        kind="native",
        backends=BACKENDS if fast else ("ns3",),
        summary=f"ns-3's {_NS3_TYPES[name]}"
        + (f" (fast backend: as `{fast}`)" if fast and fast != name else ""),
        code=code,
        ns3_type=f"ns3::{_NS3_TYPES[name]}",
        fast_model=fast,
    )


def _cellgym_senders() -> dict[str, Controller]:
    """The native senders CellGym models itself, on both backends (XRC, XCP, RCP, XCP-r, PBE-CC)."""
    out: dict[str, Controller] = {}
    out["xrc"] = Controller(
        name="xrc",
        kind="native",
        backends=BACKENDS,
        summary="XRC's sender, per ACK, with the base station's explicit feedback",
        code={
            "ns3": "ns3-scenarios/model/tcp-xrc.cc",
            "fast": "envs/fastsim/senders/xrc.py",
        },
        ns3_type="ns3::TcpXrc",
        fast_model="xrc",
    )
    out["xcp"] = Controller(
        name="xcp",
        kind="native",
        backends=BACKENDS,
        summary="XCP: window sender, per-packet feedback from the bottleneck's efficiency and "
        "fairness controllers",
        code={
            "ns3": "ns3-scenarios/model/tcp-xcp.cc",
            "fast": "envs/fastsim/senders/xcp.py",
        },
        ns3_type="ns3::TcpXcp",
        fast_model="xcp",
    )
    out["rcp"] = Controller(
        name="rcp",
        kind="native",
        backends=BACKENDS,
        summary="RCP: paces at the bottleneck's common rate R(t)",
        code={
            "ns3": "ns3-scenarios/model/tcp-rcp.cc",
            "fast": "envs/fastsim/senders/rcp.py",
        },
        ns3_type="ns3::TcpRcp",
        fast_model="rcp",
    )
    out["xcpr"] = Controller(
        name="xcpr",
        kind="native",
        backends=BACKENDS,
        summary="XCP-r: XCP's router; the receiver sums the feedback and every ACK carries the "
        "window",
        code={
            "ns3": "ns3-scenarios/model/tcp-xcpr.cc",
            "fast": "envs/fastsim/senders/xcpr.py",
        },
        ns3_type="ns3::TcpXcpr",
        fast_model="xcpr",
    )
    out["pbecc"] = Controller(
        name="pbecc",
        kind="native",
        backends=BACKENDS,
        summary="PBE-CC: paces at the rate the UE measures from the cell's allocations (its "
        "share of the idle and fair capacity); BBR-like behind an Internet bottleneck",
        code={
            "ns3": "ns3-scenarios/model/tcp-pbe.cc",
            "fast": "envs/fastsim/senders/pbecc.py",
        },
        ns3_type="ns3::TcpPbe",
        fast_model="pbecc",
    )
    return out


def _policies() -> dict[str, Controller]:
    """The per-step policies of ``baselines/``, by name."""
    out: dict[str, Controller] = {}
    out["xrc_policy"] = Controller(
        name="xrc_policy",
        kind="policy",
        backends=BACKENDS,
        summary="XRC's rules on the environment's observation, per step",
        code={"policy": "baselines/xrc.py"},
        entry_point="baselines.xrc:XrcPolicy",
    )
    out["explicit_rate"] = Controller(
        name="explicit_rate",
        kind="policy",
        backends=BACKENDS,
        summary="window = explicit rate x minimum RTT, per step",
        code={"policy": "baselines/explicit_rate.py"},
        entry_point="baselines.explicit_rate:ExplicitRatePolicy",
    )
    out["pbecc_policy"] = Controller(
        name="pbecc_policy",
        kind="policy",
        backends=BACKENDS,
        summary="PBE-CC's rules on the environment's observation, per step (best with "
        "action_mode=rate)",
        code={"policy": "baselines/pbe_cc.py"},
        entry_point="baselines.pbe_cc:PbeCcPolicy",
    )
    out["oracle"] = Controller(
        name="oracle",
        kind="policy",
        backends=BACKENDS,
        summary="Zeus's delayed-feedback oracle: paces at the base station's capacity, learned "
        "one one-way delay late (best with action_mode=rate)",
        code={"policy": "baselines/oracle.py"},
        entry_point="baselines.oracle:DelayedOraclePolicy",
    )
    return out


def _test_only() -> dict[str, Controller]:
    """The entries only tests run (``test_only``), by name."""
    out: dict[str, Controller] = {}
    out["constrate"] = Controller(
        name="constrate",
        kind="native",
        backends=BACKENDS,
        summary="test-only toy: paces every segment at a constant rate (the worked example of "
        "adding a controller, docs/architecture.md)",
        code={
            "ns3": "ns3-scenarios/model/tcp-constrate.cc",
            "fast": "envs/fastsim/senders/constrate.py",
        },
        ns3_type="ns3::TcpConstRate",
        fast_model="constrate",
        test_only=True,
    )
    return out


def _registry() -> dict[str, Controller]:
    """Every entry, by name: ns-3's TCPs, CellGym's senders, the policies, the test-only ones."""
    out = {name: _ns3_tcp(name) for name in NS3_TCPS}
    out.update(_cellgym_senders())
    out.update(_policies())
    out.update(_test_only())
    return out


#: Every entry, by name, the test-only ones included.
ALL_CONTROLLERS: dict[str, Controller] = _registry()
#: Every controller, by name: the published table (no test-only entry).
CONTROLLERS: dict[str, Controller] = {n: c for n, c in ALL_CONTROLLERS.items() if not c.test_only}
assert tuple(n for n, c in CONTROLLERS.items() if c.kind == "native") == NATIVE_CCAS
#: Native senders only tests run: ``FlowSpec.cca`` accepts them beside ``vocab.CCAS``.
TEST_ONLY_NATIVE: tuple[str, ...] = tuple(
    n for n, c in ALL_CONTROLLERS.items() if c.test_only and c.kind == "native"
)


def names(
    kind: str | None = None, backend: str | None = None, include_test_only: bool = False
) -> list[str]:
    """Controller names, optionally only of one kind and/or one backend (test-only ones on ask)."""
    table = ALL_CONTROLLERS if include_test_only else CONTROLLERS
    return [
        n
        for n, c in table.items()
        if (kind is None or c.kind == kind) and (backend is None or backend in c.backends)
    ]


def get(name: str, backend: str | None = None, field_name: str = "controller") -> Controller:
    """The entry of ``name``; ``SpecError`` naming the field when unknown or unsupported."""
    if name not in CONTROLLERS:
        raise SpecError(
            f"{field_name}={name!r} is not a known controller: choose one of "
            f"{', '.join(CONTROLLERS)}, or a trained checkpoint"
        )
    ctl = CONTROLLERS[name]
    if backend is not None and backend not in ctl.backends:
        raise SpecError(
            f"{field_name}={name!r} does not run on backend={backend!r}: on {backend} choose one "
            f"of {', '.join(names(backend=backend))}"
        )
    return ctl


def is_native(name: str) -> bool:
    """True when ``name`` runs natively in the simulator (ns-3's TCPs, XRC's sender)."""
    return name in CONTROLLERS and CONTROLLERS[name].kind == "native"


def markdown_table() -> str:
    """The README's controller table, generated from the registry."""
    rows = [
        "| name in `controllers=[...]` | kind | backends | cells | summary | code |",
        "|---|---|---|---|---|---|",
    ]
    for c in CONTROLLERS.values():
        code = "; ".join(
            f"{k}: `{v}`" if "/" in v and " " not in v else f"{k}: {v}" for k, v in c.code.items()
        )
        rows.append(
            f"| `{c.name}` | {c.kind} | {', '.join(c.backends)} | {', '.join(c.cells)} | "
            f"{c.summary} | {code} |"
        )
    rows.append(
        "| a trained checkpoint (run directory, `model.zip`, `<algo>:<path>`) | policy | "
        f"ns3, fast | {', '.join(RADIO_CELL_TYPES)} | a `train.py` run | `agents/`, loaded by "
        "`evaluation/` |"
    )
    return "\n".join(rows)
