from pathlib import Path

import pytest

from cellgym.scenario import FlowSpec, ScenarioSpec, SpecError, load_scenario, scenario_names


def test_defaults_render_the_contract_arguments():
    spec = ScenarioSpec()
    args = spec.to_ns3_args(seed=7)
    assert "--simSeed=7" in args
    assert "--rbs=50" in args
    assert "--rlcBufferPkts=128" in args
    assert "--serverDelayMs=15" in args
    assert args[-1] == "--flows=ue=0,cca=agent,traffic=bulk,start=0"
    assert spec.agent_flows == [0]
    assert spec.num_steps == 500


def test_flow_tokens_carry_every_set_option():
    f = FlowSpec(
        ue=1,
        cca="newreno",
        traffic="short",
        start_s=2.5,
        stop_s=9,
        size_bytes=10_000,
        delay_ms=10,
        ssthresh_segments=1,
    )
    assert f.to_token() == (
        "ue=1,cca=newreno,traffic=short,start=2.5,stop=9,delay_ms=10,size_bytes=10000,"
        "ssthresh_segments=1"
    )
    v = FlowSpec(traffic="video")
    assert "video_rate_mbps=17" in v.to_token() and "video_period_s=10" in v.to_token()


@pytest.mark.parametrize(
    ("cfg", "field"),
    [
        ({"cell": {"rbs": 42}}, "scenario.cell.rbs"),
        ({"cell": {"type": "wifi"}}, "scenario.cell.type"),
        ({"cell": {"numerlogy": 1}}, "scenario.cell has unknown field"),
        ({"cell": {"numerology": 2}}, "scenario.cell.numerology=2 does not apply to an LTE cell"),
        ({"cell": {"type": "nr", "rbs": 25}}, "scenario.cell.rbs=25 does not apply to an NR cell"),
        ({"cell": {"type": "nr", "numerology": 4}}, "scenario.cell.numerology"),
        ({"cell": {"type": "nr", "bandwidth_mhz": 200.0}}, "scenario.cell.bandwidth_mhz"),
        ({"cell": {"type": "nr", "frequency_ghz": 10.0}}, "scenario.cell.frequency_ghz"),
        (
            {"cell": {"type": "nr", "frequency_ghz": 0.45}},
            "scenario.cell.frequency_ghz=0.45 is below",
        ),
        (
            {"cell": {"type": "nr", "frequency_ghz": 28.0, "numerology": 1}},
            "scenario.cell.numerology=1 is not used in FR2",
        ),
        ({"cell": {"type": "nr", "propagation": "indoor"}}, "scenario.cell.propagation"),
        ({"cell": {"type": "nr", "los": "maybe"}}, "scenario.cell.los"),
        ({"cell": {"type": "nr", "scheduler": "edf"}}, "scenario.cell.scheduler"),
        ({"cell": {"type": "nr", "mcs_table": "1024qam"}}, "scenario.cell.mcs_table"),
        ({"channel": {"source": "trace"}}, "scenario.channel.source"),
        ({"rbs": 25}, "scenario.rbs is now scenario.cell.rbs"),
        ({"mobility": "random"}, "scenario.mobility is now scenario.channel.mobility"),
        ({"num_ues": 0}, "scenario.num_ues"),
        ({"step_ms": 0.5}, "scenario.step_ms"),
        ({"step_ms": 20.5}, "scenario.step_ms"),
        ({"channel": {"mobility": "walk"}}, "scenario.channel.mobility"),
        ({"channel": {"distances_m": [100, 200]}}, "scenario.channel.distances_m"),
        ({"channel": {"max_distance_m": 50}}, "scenario.channel.max_distance_m"),
        ({"flows": [{"cca": "quic"}]}, "scenario.flows[0].cca"),
        ({"flows": [{"ue": 3}]}, "scenario.flows[0].ue"),
        ({"flows": [{"traffic": "short"}]}, "scenario.flows[0].size_bytes"),
        ({"flows": [{"cca": "cubic", "color": 1}]}, "scenario.flows[0]"),
        ({"sim_len": 3}, "scenario has unknown field"),
        ({"flows": []}, "scenario.flows"),
    ],
)
def test_bad_values_name_the_field_and_range(cfg, field):
    with pytest.raises(SpecError) as exc:
        ScenarioSpec.from_config(cfg)
    assert field in str(exc.value)


def test_out_of_range_message_gives_the_allowed_range():
    with pytest.raises(
        SpecError, match=r"scenario.rlc_buffer_pkts=0 is out of range: allowed \[1, "
    ):
        ScenarioSpec(rlc_buffer_pkts=0)
    with pytest.raises(SpecError, match="choose one of 25, 50, 75, 100"):
        ScenarioSpec(cell={"rbs": 10})


@pytest.mark.parametrize("rate", [5e-7, 1e-6, 0.0009, -1.0, 100_001.0])
def test_a_bottleneck_rate_the_simulators_cannot_carry_is_refused(rate):
    # Below 1 bit/s ns-3 rounded the rate to 0 and died on SIGFPE; the fast backend ran it.
    with pytest.raises(SpecError) as exc:
        ScenarioSpec(bottleneck_mbps=rate)
    message = str(exc.value)
    assert message.startswith(f"scenario.bottleneck_mbps={rate!r} is out of range")
    assert "0 (no bottleneck) or [0.001, 100000]" in message
    assert ScenarioSpec(bottleneck_mbps=0.001).bottleneck_mbps == 0.001


def test_seed_must_be_a_valid_rng_run():
    with pytest.raises(SpecError, match="seed"):
        ScenarioSpec().to_ns3_args(seed=0)


def test_per_ue_distances():
    spec = ScenarioSpec(num_ues=3, channel={"distances_m": [100, 200, 300]}, flows=[FlowSpec(ue=2)])
    assert spec.ue_distances() == [100.0, 200.0, 300.0]
    assert "--distances=100,200,300" in spec.to_ns3_args(1)
    assert ScenarioSpec(num_ues=2).ue_distances() == [100.0, 100.0]


def test_sections_default_to_the_lte_cell_and_distance_channel():
    spec = ScenarioSpec()
    assert (spec.cell.type, spec.cell.rbs) == ("lte", 50)
    assert (spec.channel.source, spec.channel.mobility) == ("distance", "static")
    assert spec.ue_distances() == [100.0]


def test_replace_changes_section_fields_and_validates():
    spec = ScenarioSpec().replace(sim_time_s=5.0, channel={"mobility": "random"})
    assert spec.sim_time_s == 5.0 and spec.channel.mobility == "random"
    assert spec.channel.max_distance_m == 380.0
    with pytest.raises(SpecError, match="scenario.channel.mobility"):
        spec.replace(channel={"mobility": "teleport"})


def test_load_scenario_by_name_path_mapping_and_overrides(tmp_path):
    assert load_scenario("vs_cubic").name == "vs_cubic"
    cal = load_scenario("calibration/four_ues", sim_time_s=3.0)
    assert cal.num_ues == 4 and cal.sim_time_s == 3.0
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\ncell: {rbs: 25}\nflows: [{cca: bbr}]\n")
    assert load_scenario(path).cell.rbs == 25
    assert load_scenario({"name": "m"}).name == "m"
    with pytest.raises(SpecError, match="choose one of .*calibration/static_cubic"):
        load_scenario("no_such_scenario")


@pytest.mark.parametrize("name", scenario_names())
def test_every_scenario_config_loads(name):
    assert load_scenario(name).flows


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"sim_time_s": "10"}, "scenario.sim_time_s='10' is a str: give a number"),
        ({"num_ues": "2"}, "scenario.num_ues='2' is a str: give an integer"),
        ({"num_ues": 2.5}, "scenario.num_ues=2.5 is a float: give an integer"),
        ({"cell": {"rbs": 50.0}}, "scenario.cell.rbs=50.0 is a float: give an integer"),
        ({"rlc_buffer_pkts": 1.5}, "scenario.rlc_buffer_pkts=1.5 is a float"),
        ({"sim_time_s": True}, "scenario.sim_time_s=True is a bool"),
        ({"channel": {"distances_m": 100}}, "scenario.channel.distances_m=100 is not a list"),
        ({"channel": {"distances_m": ["100"]}}, r"scenario.channel.distances_m\[0\]='100'"),
        ({"flows": [{"ue": True}]}, r"scenario.flows\[0\].ue=True is a bool"),
        ({"flows": "cubic"}, "scenario.flows='cubic' is not a list"),
        ({"flows": [3]}, r"scenario.flows\[0\]=3 is not a mapping"),
        ({"cell": 5}, "scenario.cell=5 is not a mapping"),
    ],
)
def test_wrong_types_name_the_field(cfg, message):
    with pytest.raises(SpecError, match=message):
        ScenarioSpec.from_config(cfg)


def test_a_scenario_given_as_a_name_or_of_the_wrong_kind():
    assert ScenarioSpec.from_config("vs_cubic").name == "vs_cubic"
    with pytest.raises(SpecError, match="scenario=5 is a int: give a mapping"):
        ScenarioSpec.from_config(5)


def test_the_readme_scenario_example_loads(tmp_path):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    start = readme.index("name: two_ues")
    path = tmp_path / "two_ues.yaml"
    path.write_text(readme[start : readme.index("```", start)])
    spec = load_scenario(path)
    assert spec.num_ues == 2 and spec.channel.mobility == "random" and len(spec.flows) == 2
