"""The fast model takes the run's draws (``cellgym.draws``): moves, start offsets, Pareto arrivals.

What ns-3 takes for the same ``RngRun`` (tests/ns3_scenarios/test_draws_ns3.py runs both).
"""

from __future__ import annotations

import numpy as np

from cellgym.draws import draw
from cellgym.fields import UE
from cellgym.scenario import ScenarioSpec
from envs.fastsim import FastCellBatch, FastSimParams
from envs.fastsim.session import FastSession
from envs.fastsim.state import I_START_MS

MOBILE = ScenarioSpec.from_config(
    {
        "sim_time_s": 2.0,
        "step_ms": 20.0,
        "num_ues": 3,
        "channel": {"mobility": "random", "mobility_period_s": 0.5, "distances_m": [150.0]},
        "flows": [{"ue": 0, "cca": "cubic"}, {"ue": 1, "start_s": 0.3}, {"ue": 2, "cca": "bbr"}],
    }
)


def _run(spec: ScenarioSpec, seed: int, **knobs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step times (s), UE distances per step ``[T, U]`` and the flows' starts (ms)."""
    s = FastSession(spec, seed, FastSimParams.from_spec(spec, **knobs))
    raw = s.start()
    t, d = [raw.t], [raw.ues[:, UE["distance_m"]].copy()]
    while not raw.done:
        raw = s.step(np.zeros((len(spec.agent_flows), 2)))
        t.append(raw.t)
        d.append(raw.ues[:, UE["distance_m"]].copy())
    starts = s.cell.state.fi[0, :, I_START_MS].copy()
    s.close()
    return np.array(t), np.array(d), starts


def expected_distances(spec: ScenarioSpec, seed: int, t: np.ndarray) -> np.ndarray:
    """``[T, U]``: where the draws put the UEs at each step's end (a move at the end included)."""
    d = draw(spec, seed)
    k = np.floor(t / spec.channel.mobility_period_s + 1e-9).astype(int)
    start = np.array(spec.ue_distances())
    return np.array([start if i == 0 else d.moves_m[i - 1] for i in k])


def expected_starts_ms(spec: ScenarioSpec, seed: int) -> np.ndarray:
    offsets = draw(spec, seed).start_offset_ms
    return np.array([max(round(f.start_s * 1000), 100) for f in spec.flows]) + offsets


def test_ues_move_to_the_drawn_distances_and_flows_start_at_the_drawn_offsets():
    t, d, starts = _run(MOBILE, 4242)
    assert np.array_equal(d, expected_distances(MOBILE, 4242, t))
    assert np.array_equal(starts, expected_starts_ms(MOBILE, 4242))
    # Another seed: other moves and offsets.
    t2, d2, starts2 = _run(MOBILE, 4243)
    assert np.array_equal(d2, expected_distances(MOBILE, 4243, t2))
    assert not np.array_equal(d2, d) and not np.array_equal(starts2, starts)
    # Without offsets (a run replaying another's starts): the flows' start times themselves.
    _, _, plain = _run(MOBILE, 4242, start_offsets=False)
    assert list(plain) == [100, 300, 100]


def test_each_cell_of_a_batch_takes_its_own_seeds_draws():
    params = FastSimParams.from_spec(MOBILE)
    batch = FastCellBatch(params, 3, parallel=False)
    seeds = np.array([7, 8, 7])
    batch.reset(seeds)
    for _ in range(40):  # 0.8 s: one move
        batch.step(np.zeros((3, 0, 2)))
    moved = batch.ues[:, :, UE["distance_m"]]
    for b, s in enumerate(seeds):
        assert np.array_equal(moved[b], draw(MOBILE, int(s)).moves_m[0])
        assert np.array_equal(batch.state.fi[b, :, I_START_MS], expected_starts_ms(MOBILE, s))
    assert not np.array_equal(moved[0], moved[1])


def test_pareto_flows_arrive_with_the_drawn_times_and_sizes():
    spec = ScenarioSpec.from_config(
        {
            "sim_time_s": 3.0,
            "bottleneck_mbps": 20.0,
            "bottleneck_buffer_pkts": 500,
            "flows": [{"traffic": "pareto", "pareto_iat_ms": 40.0, "pareto_cutoff_pkts": 200.0}]
            * 6,
        }
    )
    batch = FastCellBatch(FastSimParams.from_spec(spec), 1, parallel=False)
    batch.reset(np.array([99]))
    while not batch.done[0]:
        batch.step()
    done = batch.workload.finished(0)
    d = draw(spec, 99).pareto[0]
    arrivals = np.floor(100.0 + d.after_ms).astype(int)
    drawn = set(zip(arrivals.tolist(), d.size_pkts.tolist(), strict=True))
    assert len(done) > 30
    assert {(int(r["arrival_ms"]), int(r["size_pkts"])) for r in done} <= drawn
    # The arrivals in order are the first drawn ones.
    first = sorted(int(a) for a in done["arrival_ms"])[:10]
    assert first == arrivals[:10].tolist()
