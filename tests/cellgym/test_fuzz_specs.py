"""Property-based fuzzing of the scenario and reward specs (no simulator).

Any value of any field is either accepted (and the accepted spec renders its ns-3 arguments and
passes its own validation again), or rejected with a ``SpecError`` whose message names the field
(or a field it is checked against). Never another exception.

The strategies here are shared with ``tests/envs/test_fuzz_envs.py`` (fast backend runs) and
``tests/envs/test_fuzz_envs_ns3.py`` (ns-3 runs).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec, load_scenario
from cellgym.vocab import CCAS, LTE_BANDWIDTHS_RBS, SpecError

# -- value strategies ------------------------------------------------------------------------------
#: Wrong types for any field: strings of numbers, booleans, None, containers, nested garbage.
GARBAGE = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(["1", "0.5", "1e3", "nan", "inf", "", "agent", "-1", "  2 "]),
    st.text(max_size=4),
    st.binary(max_size=3),
    st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False),
    st.lists(st.integers(-3, 3), max_size=3),
    st.tuples(st.floats(allow_nan=False), st.none()),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.lists(st.lists(st.none() | st.text(max_size=2), max_size=2), max_size=2),
    st.just({"nested": [{"x": None}]}),
)
ODD_FLOATS = st.sampled_from([0.0, -0.0, -1.0, 1e-300, 1e300, math.inf, -math.inf, math.nan])


def number(low: float, high: float, kind: str = "float") -> st.SearchStrategy[Any]:
    """Valid, boundary, out-of-range and wrong-type values of a numeric field."""
    span = high - low if math.isfinite(high) else 1e6
    bounds = [low, high, low - 1, high + 1, low - 1e-9 * max(1, abs(low))]
    if math.isfinite(high):
        bounds.append(high + 1e-9 * max(1.0, abs(high)))
        bounds.append(high * 10)
    if kind == "int":
        lo, hi = math.ceil(low), math.floor(min(high, 2**62))
        valid = st.integers(lo, hi)
        boundary = st.sampled_from([int(b) for b in bounds if math.isfinite(b)] + [2**64, -(2**63)])
        wrong = st.one_of(
            st.floats(low, min(high, low + span), allow_nan=False),  # floats for ints
            st.sampled_from([float(lo), lo + 0.5]),
        )
    else:
        valid = st.floats(low, min(high, 1e300), allow_nan=False, allow_infinity=False)
        boundary = st.sampled_from([b for b in bounds if not math.isnan(b)])
        wrong = st.integers(-(2**70), 2**70)  # integers are accepted for floats
    return st.one_of(valid, valid, boundary, ODD_FLOATS, wrong, GARBAGE)


def choice(values: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    """Allowed values, near misses (case, spaces) and wrong types of a choice field."""
    near = [v.upper() for v in values if isinstance(v, str)] + [f" {values[0]}", ""]
    return st.one_of(st.sampled_from(values), st.sampled_from(values), st.sampled_from(near),
                     GARBAGE)  # fmt: skip


def float_list(low: float, high: float) -> st.SearchStrategy[Any]:
    """Lists of valid and invalid numbers, empty lists, and scalars for the list."""
    item = st.one_of(st.floats(low, high), st.integers(int(low), int(high)), number(low, high))
    return st.one_of(st.lists(item, max_size=4), st.lists(st.floats(low, high), min_size=1,
                     max_size=3), number(low, high))  # fmt: skip


UNKNOWN_KEYS = st.dictionaries(
    st.one_of(st.sampled_from(["bogus", "rbs", "mobility", "simtime", "Sim_time_s"]),
              st.integers(0, 3), st.none(), st.tuples(st.integers(0, 1))),  # fmt: skip
    st.integers(0, 3),
    max_size=2,
)

CELL_FIELDS = {"type": choice(("lte",)), "rbs": choice(LTE_BANDWIDTHS_RBS) | number(1, 200, "int")}
CHANNEL_FIELDS = {
    "source": choice(("distance",)),
    "distances_m": float_list(1.0, 600.0),
    "mobility": choice(("static", "random")),
    "mobility_period_s": number(0.01, 1e6),
    "min_distance_m": number(1.0, 600.0),
    "max_distance_m": number(1.0, 600.0),
}
FLOW_FIELDS = {
    "ue": number(0, 4, "int"),
    "cca": choice(CCAS),
    "traffic": choice(("bulk", "video", "short")),
    "start_s": number(0.0, 1e6),
    "stop_s": st.none() | number(0.0, 1e6),
    "delay_ms": number(0.0, 10_000.0),
    "size_bytes": number(1, 1e12, "int"),
    "video_rate_mbps": number(0.001, 10_000.0),
    "video_on_s": number(0.0, 1e6),
    "video_period_s": number(0.001, 1e6),
    "ssthresh_segments": number(0, 1_000_000, "int"),
}
SCENARIO_FIELDS = {
    "name": st.text(max_size=8) | GARBAGE,
    "sim_time_s": number(0.001, 1e6),
    "step_ms": number(1, 10_000, "int") | number(1.0, 10_000.0),
    "num_ues": number(1, 256, "int"),
    "rlc_buffer_pkts": number(1, 100_000, "int"),
    "server_delay_ms": number(0.0, 10_000.0),
    "bottleneck_mbps": st.just(0.0) | number(0.0, 100_000.0),
    "bottleneck_buffer_pkts": number(1, 1_000_000, "int"),
    "active_timeout_ms": number(1.0, 100_000.0),
    "xrc_window_ttis": number(1, 10_000, "int"),
}
REWARD_FIELDS = {
    "w_utilization": number(0.0, 1e6),
    "w_delay": number(0.0, 1e6),
    "w_fairness": number(0.0, 1e6),
    "delay_budget_ms": number(0.0, 1e6),
    "max_delay_penalty": number(0.0, 1e6),
}


def section(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """A mapping with any subset of the fields, sometimes unknown keys, or not a mapping at all."""
    mapping = st.fixed_dictionaries({}, optional=fields)
    with_unknown = st.tuples(mapping, UNKNOWN_KEYS).map(lambda t: {**t[0], **t[1]})
    return st.one_of(mapping, mapping, mapping, with_unknown, GARBAGE)


FLOW = section(FLOW_FIELDS)


@st.composite
def flows(draw: st.DrawFn, agent: bool) -> Any:
    """A list of flow mappings; with ``agent``, usually exactly one ``cca="agent"`` flow."""
    items = draw(st.lists(FLOW, min_size=0, max_size=4))
    if agent and draw(st.integers(0, 9)) > 0:
        items = [f for f in items if not (isinstance(f, dict) and f.get("cca") == "agent")]
        at = draw(st.integers(0, len(items)))
        agent_flow = draw(st.fixed_dictionaries({"cca": st.just("agent")}, optional=FLOW_FIELDS))
        agent_flow["cca"] = "agent"
        items.insert(at, agent_flow)
    return draw(st.one_of(st.just(items), st.just(items), st.just(tuple(items)), GARBAGE))


def scenarios(agent: bool = False) -> st.SearchStrategy[Any]:
    """Scenario mappings: any subset of fields and sections, with unknown keys sometimes."""
    fields = {
        **SCENARIO_FIELDS,
        "cell": section(CELL_FIELDS),
        "channel": section(CHANNEL_FIELDS),
        "flows": flows(agent),
    }
    return section(fields)


def rewards() -> st.SearchStrategy[Any]:
    """Reward mappings, ``None`` (the defaults) and garbage."""
    return st.one_of(st.none(), section(REWARD_FIELDS))


# -- what a rejection must name --------------------------------------------------------------------
#: Fields checked against one another: an error about one may name the other.
COUPLED = {
    "channel.min_distance_m": ["channel.max_distance_m"],
    "num_ues": ["channel.distances_m", "].ue"],
    "ue": ["scenario.num_ues"],
    "start_s": ["stop_s"],
    "video_period_s": ["video_on_s"],
    "traffic": ["size_bytes"],
    "cca": ["scenario.flows "],
}


def field_names(data: Any, where: str) -> list[str]:
    """Every dotted name in ``data`` (and its coupled names), for matching error messages."""
    names = [where]
    if isinstance(data, dict):
        for key, value in data.items():
            if not isinstance(key, str):
                names.append(repr(key))
                continue
            names.append(repr(key))
            names.extend(field_names(value, f"{where}.{key}"))
    elif isinstance(data, list | tuple) and where.endswith(".flows"):
        names.append(where + " ")
        for i, item in enumerate(data):
            names.extend(field_names(item, f"{where}[{i}]"))
    names.extend(c for key, cs in COUPLED.items() if where.endswith(key) for c in cs)
    return names


def outcome(fn: Any, names: list[str]) -> Any:
    """``fn()``'s result, or ``None`` after a ``SpecError`` that names one of ``names``."""
    try:
        return fn()
    except SpecError as exc:
        text = str(exc)
        # The section itself (``scenario``) only counts for errors about the whole mapping.
        specific = [n for n in names if n not in ("scenario", "reward")]
        whole = text.startswith(("scenario=", "scenario has", "reward=", "reward has"))
        assert whole or any(n in text for n in specific), (text, names)
        return None


# -- the properties -----------------------------------------------------------------------------
SETTINGS = settings(
    max_examples=600,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SETTINGS
@given(data=scenarios())
@example(data={"flows": [{"start_s": math.inf}]})
@example(data={"channel": {"mobility_period_s": math.inf}})
@example(data={"flows": [{"video_period_s": math.inf, "video_on_s": 1e300}]})
@example(data={"flows": [{"ssthresh_segments": 10**9}]})
@example(data={"bogus": 1, 1: 2})
@example(data={"cell": {0: 1, "x": 2}})
@example(data={"flows": [{None: 1, "a": 2}]})
@example(data={"num_ues": 256, "rlc_buffer_pkts": 1_000_000})
def test_scenario_accepts_or_names_the_field(data: Any) -> None:
    spec = outcome(lambda: ScenarioSpec.from_config(data), field_names(data, "scenario"))
    if spec is None:
        return
    spec.validate()
    args = spec.to_ns3_args(seed=1)
    assert all(isinstance(a, str) and "nan" not in a and "inf" not in a for a in args), args
    assert 1 <= spec.num_steps
    assert spec.replace() == spec
    assert load_scenario(spec) is spec


@SETTINGS
@given(data=rewards())
@example(data={"w_delay": math.inf})
@example(data={"delay_budget_ms": 1e-300, "max_delay_penalty": 1e300})
@example(data={2: 1.0, "x": 0})
def test_reward_accepts_or_names_the_field(data: Any) -> None:
    spec = outcome(lambda: RewardSpec.from_config(data), field_names(data, "reward"))
    if spec is None:
        return
    # The largest possible reward magnitude stays finite.
    worst = spec.w_utilization + spec.w_delay * spec.max_delay_penalty + spec.w_fairness
    assert math.isfinite(worst)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, "1", None, [1.0], True])
def test_every_scenario_number_rejects_non_numbers(value: Any) -> None:
    for key in SCENARIO_FIELDS:
        if key == "name":
            continue
        with pytest.raises(SpecError, match=f"scenario.{key}"):
            ScenarioSpec.from_config({key: value})
