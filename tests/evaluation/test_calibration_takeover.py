"""Which committed ns-3 runs of a calibration table a regeneration may take over."""

from __future__ import annotations

import copy

from evaluation.experiments.calibration_takeover import reusable_rows

RECIPE = {"calibrate": "c1", "calibration_drivers": "d1", "calibration_report": "r1"}
PROBES = {"ns3 a": "A", "fast a": "a", "ns3 b": "B", "fast b": "b"}
COMMITTED = {
    "meta": {
        "sim_time_s": 20.0,
        "warmup_s": 1.0,
        "seeds": [1, 2],
        "provenance": {
            "behaviour": {"format": 2, "probe_s": 1.0, "recipe": RECIPE, "probes": PROBES}
        },
    },
    "rows": [{"scenario": "a", "scenario_digest": "da"}, {"scenario": "b"}],
}
NOW = {"format": 2, "probe_s": 1.0, "recipe": dict(RECIPE), "probes": dict(PROBES)}
DIGESTS = {"a": "da", "b": "db"}


def _rows(committed=COMMITTED, now=NOW, digests=DIGESTS, sim_time_s=20.0, seeds=(1, 2)):
    return reusable_rows(committed, now, digests, sim_time_s, 1.0, list(seeds))


def test_every_row_whose_ns3_probe_stands_is_taken_over():
    # A fast probe that moved (a fast-model fix) and the orchestration's module do not matter.
    now = copy.deepcopy(NOW)
    now["probes"]["fast a"] = "a2"
    now["recipe"]["calibrate"] = "c2"
    assert _rows(now=now) == ({"a", "b"}, "")


def test_a_moved_ns3_probe_or_scenario_reruns_its_row():
    now = copy.deepcopy(NOW)
    now["probes"]["ns3 b"] = "B2"
    assert _rows(now=now) == ({"a"}, "")
    # A row that records its scenario's digest must have today's (b records none: the probe).
    assert _rows(digests={"a": "other", "b": "db"}) == ({"b"}, "")
    assert _rows(digests={"b": "db"}) == ({"b"}, "")  # a row not in today's table


def test_nothing_is_taken_over_when_a_run_would_mean_something_else():
    now = copy.deepcopy(NOW)
    now["recipe"]["calibration_report"] = "r2"
    rows, why = _rows(now=now)
    assert rows == set() and "metrics changed" in why
    assert _rows(sim_time_s=10.0)[0] == set()
    assert _rows(seeds=(1, 2, 3))[0] == set()
    unstamped = copy.deepcopy(COMMITTED)
    del unstamped["meta"]["provenance"]["behaviour"]
    rows, why = _rows(committed=unstamped)
    assert rows == set() and "no behaviour fingerprint" in why
    other_format = copy.deepcopy(NOW)
    other_format["format"] = 3
    assert _rows(now=other_format)[0] == set()
