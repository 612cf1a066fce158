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
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from cellgym.reward import RewardSpec
from cellgym.scenario import ScenarioSpec, load_scenario
from cellgym.vocab import (
    CCAS,
    CELL_TYPES,
    EXPLICIT_CCAS,
    FAST_ONLY_CCAS,
    LTE_BANDWIDTHS_RBS,
    NR_BANDWIDTHS_MHZ,
    NR_FREQUENCY_RANGES_GHZ,
    NR_LOS_CONDITIONS,
    NR_MCS_TABLES,
    NR_MIN_FREQUENCY_GHZ,
    NR_NUMEROLOGIES,
    NR_PROPAGATION_SCENARIOS,
    NR_SCHEDULERS,
    SpecError,
)

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


def number(low: float, high: float, kind: str = "float", ok: bool = False) -> Any:
    """Valid, boundary, out-of-range and wrong-type values of a numeric field (``ok``: valid)."""
    span = high - low if math.isfinite(high) else 1e6
    bounds = [low, high, low - 1, high + 1, low - 1e-9 * max(1, abs(low))]
    if math.isfinite(high):
        bounds.append(high + 1e-9 * max(1.0, abs(high)))
        bounds.append(high * 10)
    if kind == "int":
        lo, hi = math.ceil(low), math.floor(min(high, 2**62))
        valid = st.integers(lo, hi) | st.sampled_from([lo, hi])
        boundary = st.sampled_from([int(b) for b in bounds if math.isfinite(b)] + [2**64, -(2**63)])
        wrong = st.one_of(
            st.floats(low, min(high, low + span), allow_nan=False),  # floats for ints
            st.sampled_from([float(lo), lo + 0.5]),
        )
    else:
        valid = st.floats(low, min(high, 1e300), allow_nan=False, allow_infinity=False)
        valid = valid | st.sampled_from([low, high]) | st.integers(math.ceil(low), int(high))
        boundary = st.sampled_from([b for b in bounds if not math.isnan(b)])
        wrong = st.integers(-(2**70), 2**70)  # integers are accepted for floats
    if ok:
        return valid
    return st.one_of(valid, boundary, ODD_FLOATS, wrong, GARBAGE)


def choice(values: tuple[Any, ...], ok: bool = False) -> Any:
    """Allowed values, near misses (case, spaces) and wrong types of a choice field."""
    near = [v.upper() for v in values if isinstance(v, str)] + [f" {values[0]}", ""]
    if ok:
        return st.sampled_from(values)
    return st.one_of(st.sampled_from(values), st.sampled_from(near), GARBAGE)


def float_list(low: float, high: float, ok: bool = False) -> Any:
    """Lists of valid and invalid numbers, empty lists, and scalars for the list."""
    good = st.lists(number(low, high, ok=True), min_size=1, max_size=1)
    if ok:
        return good
    return st.one_of(good, st.lists(number(low, high), max_size=4), number(low, high))


UNKNOWN_KEYS = st.dictionaries(
    st.one_of(
        st.sampled_from(["bogus", "rbs", "mobility", "simtime", "Sim_time_s"]),
        st.integers(0, 3),
        st.none(),
        st.tuples(st.integers(0, 1)),
    ),
    st.integers(0, 3),
    min_size=1,
    max_size=2,
)


def cell_fields(ok: bool) -> dict[str, Any]:
    """Any subset of both cell types' fields (an NR field on an LTE cell is an error, and so on)."""
    rbs = choice(LTE_BANDWIDTHS_RBS, ok)
    return {
        "type": choice(CELL_TYPES, ok),
        "rbs": rbs if ok else rbs | number(1, 200, "int"),
        "numerology": choice(NR_NUMEROLOGIES, ok) | number(-1, 5, "int"),
        "bandwidth_mhz": number(5.0, 400.0),
        "frequency_ghz": number(0.41, 52.6) | st.sampled_from([0.45, 0.5, 3.5, 10.0, 28.0]),
        "propagation": choice(NR_PROPAGATION_SCENARIOS, ok),
        "los": choice(NR_LOS_CONDITIONS, ok),
        "scheduler": choice(NR_SCHEDULERS, ok),
        "mcs_table": choice(NR_MCS_TABLES, ok),
    }


@st.composite
def valid_cells(draw: st.DrawFn) -> dict[str, Any]:
    """A valid LTE cell, or a valid NR cell (frequency, numerology and bandwidth consistent)."""
    if draw(st.booleans()):
        return draw(
            st.fixed_dictionaries(
                {}, optional={"type": st.just("lte"), "rbs": choice(LTE_BANDWIDTHS_RBS, True)}
            )
        )
    fr, mu = draw(st.sampled_from(sorted(NR_BANDWIDTHS_MHZ)))
    low, high = NR_FREQUENCY_RANGES_GHZ[fr]
    bw_low, bw_high = NR_BANDWIDTHS_MHZ[(fr, mu)]
    cell = {
        "type": "nr",
        "numerology": mu,
        "frequency_ghz": draw(st.floats(max(low, NR_MIN_FREQUENCY_GHZ), high)),
        "bandwidth_mhz": draw(st.sampled_from([bw_low, bw_high, (bw_low + bw_high) / 2])),
    }
    optional = {
        "propagation": choice(NR_PROPAGATION_SCENARIOS, True),
        "los": choice(NR_LOS_CONDITIONS, True),
        "scheduler": choice(NR_SCHEDULERS, True),
        "mcs_table": choice(NR_MCS_TABLES, True),
    }
    return {**cell, **draw(st.fixed_dictionaries({}, optional=optional))}


def channel_fields(ok: bool) -> dict[str, Any]:
    return {
        "source": choice(("distance",), ok),
        "distances_m": float_list(1.0, 600.0, ok),
        "mobility": choice(("static", "random"), ok),
        "mobility_period_s": number(0.01, 1e6, ok=ok),
        "min_distance_m": number(1.0, 300.0 if ok else 600.0, ok=ok),
        "max_distance_m": number(300.0 if ok else 1.0, 600.0, ok=ok),
    }


def flow_fields(ok: bool) -> dict[str, Any]:
    return {
        "ue": number(0, 1, "int", ok),
        "cca": choice(CCAS, ok),
        "traffic": choice(("bulk", "video", "short"), ok),
        "start_s": number(0.0, 1e6, ok=ok) if not ok else number(0.0, 2.0, ok=ok),
        "stop_s": st.none() | number(2.0 if ok else 0.0, 1e6, ok=ok),
        "delay_ms": number(0.0, 10_000.0, ok=ok),
        "size_bytes": number(1, 1e12, "int", ok),
        "video_rate_mbps": number(0.001, 10_000.0, ok=ok),
        "video_on_s": number(0.0, 1.0 if ok else 1e6, ok=ok),
        "video_period_s": number(1.0 if ok else 0.001, 1e6, ok=ok),
        "ssthresh_segments": number(0, 1_000_000, "int", ok),
    }


def scenario_fields(ok: bool) -> dict[str, Any]:
    return {
        "name": st.text(max_size=8) if ok else st.text(max_size=8) | GARBAGE,
        "sim_time_s": number(0.001, 1e6, ok=ok),
        "step_ms": number(1, 10_000, "int", ok) | number(1.0, 10_000.0, ok=ok),
        "num_ues": number(1, 256, "int", ok) if not ok else st.sampled_from([1, 2, 3, 256]),
        "rlc_buffer_pkts": number(1, 3906 if ok else 1_000_000, "int", ok),
        "server_delay_ms": number(0.0, 10_000.0, ok=ok),
        "bottleneck_mbps": st.just(0.0) | number(0.001, 100_000.0, ok=ok),
        "bottleneck_buffer_pkts": number(1, 1_000_000, "int", ok),
        "active_timeout_ms": number(1.0, 100_000.0, ok=ok),
        "xrc_window_ttis": number(1, 10_000, "int", ok),
    }


def reward_fields(ok: bool) -> dict[str, Any]:
    return {
        "w_utilization": number(0.0, 1e6, ok=ok),
        "w_delay": number(0.0, 1e6, ok=ok),
        "w_fairness": number(0.0, 1e6, ok=ok),
        "delay_budget_ms": number(0.0, 1e6, ok=ok),
        "max_delay_penalty": number(0.0, 1e6, ok=ok),
    }


SCENARIO_FIELDS = scenario_fields(False)


def section(fields: dict[str, Any], ok: bool) -> Any:
    """A mapping with any subset of the fields; unless ``ok``, also unknown keys or garbage."""
    mapping = st.fixed_dictionaries({}, optional=fields)
    if ok:
        return mapping
    with_unknown = st.tuples(mapping, UNKNOWN_KEYS).map(lambda t: {**t[0], **t[1]})
    return st.one_of(mapping, mapping, mapping, with_unknown, GARBAGE)


@st.composite
def flows(draw: st.DrawFn, agent: bool, ok: bool) -> Any:
    """A list of flow mappings; with ``agent``, usually exactly one ``cca="agent"`` flow."""
    items = draw(st.lists(section(flow_fields(ok), ok), min_size=0 if not ok else 1, max_size=4))
    if agent and draw(st.integers(0, 9)) > 0:
        items = [f for f in items if not (isinstance(f, dict) and f.get("cca") == "agent")]
        at = draw(st.integers(0, len(items)))
        others = {k: v for k, v in flow_fields(ok).items() if k != "cca"}
        agent_flow = draw(st.fixed_dictionaries({"cca": st.just("agent")}, optional=others))
        items.insert(at, agent_flow)
    if ok:
        return items
    return draw(st.one_of(st.just(items), st.just(items), st.just(tuple(items)), GARBAGE))


def _scenario(agent: bool, ok: bool) -> Any:
    fields = {
        **scenario_fields(ok),
        "cell": valid_cells() if ok else section(cell_fields(ok), ok),
        "channel": section(channel_fields(ok), ok),
        "flows": flows(agent, ok),
    }
    return section(fields, ok)


@st.composite
def _one_bad(draw: st.DrawFn, good: Any, bad: Any) -> Any:
    """A valid mapping with one top-level entry replaced by an arbitrary one."""
    data = dict(draw(good))
    other = draw(bad)
    if isinstance(other, dict) and other:
        key = draw(st.sampled_from(sorted(other, key=repr)))
        data[key] = other[key]
    return data


def scenarios(agent: bool = False) -> Any:
    """Scenario mappings: valid ones, ones with one bad entry, and arbitrary ones."""
    good, bad = _scenario(agent, True), _scenario(agent, False)
    return st.one_of(good, _one_bad(good, bad), bad)


def rewards() -> Any:
    """Reward mappings, ``None`` (the defaults) and garbage."""
    good, bad = section(reward_fields(True), True), section(reward_fields(False), False)
    return st.one_of(st.none(), good, _one_bad(good, bad), bad)


# -- what a rejection must name --------------------------------------------------------------------
#: Fields checked against one another: an error about one may name the other.
COUPLED = {
    "cell.numerology": ["cell.frequency_ghz"],
    "cell.frequency_ghz": ["cell.numerology"],
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
        result = fn()
    except SpecError as exc:
        event("rejected")
        text = str(exc)
        # The section itself (``scenario``) only counts for errors about the whole mapping.
        specific = [n for n in names if n not in ("scenario", "reward")]
        whole = text.startswith(("scenario=", "scenario has", "reward=", "reward has"))
        assert whole or any(n in text for n in specific), (text, names)
        return None
    event("accepted")
    return result


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
    explicit = [f.cca for f in spec.flows if f.cca in EXPLICIT_CCAS]
    if any(f.cca in FAST_ONLY_CCAS for f in spec.flows) or len(set(explicit)) > 1:
        # A fast-only controller, or XCP, XCP-r and RCP at one bottleneck (one router kind per
        # scenario), is refused on ns-3, naming the flow.
        with pytest.raises(SpecError, match=r"scenario\.flows\[\d+\]\.cca="):
            spec.to_ns3_args(seed=1)
        return
    args = spec.to_ns3_args(seed=1)
    assert all(isinstance(a, str) and "nan" not in a and "inf" not in a for a in args), args
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
