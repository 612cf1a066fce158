import math

import numpy as np
import pytest

from baselines import is_native, make_policy
from envs.lte_cell import OBS, OBS_FIELDS


def _obs(rate, rtt_min, cwnd):
    o = np.zeros(len(OBS_FIELDS), dtype=np.float32)
    o[OBS["fair_rate_mbps"]] = rate
    o[OBS["rtt_min_ms"]] = rtt_min
    o[OBS["cwnd_bytes"]] = cwnd
    return o


def test_explicit_rate_policy_by_hand():
    p = make_policy("explicit_rate", max_change=2.0)
    # 20 Mbit/s x 40 ms = 100,000 B; cwnd 50,000 B -> x2 -> action log2(2) = 1.
    a, _ = p.predict(_obs(20, 40, 50_000))
    assert a.shape == (1,) and a[0] == pytest.approx(1.0)
    # cwnd 141,421 B -> ratio 1/sqrt(2) -> action -0.5.
    a, _ = p.predict(_obs(20, 40, 100_000 * math.sqrt(2)))
    assert a[0] == pytest.approx(-0.5, abs=1e-5)
    # Far above target: clipped at -1. No feedback yet: grow.
    assert p.predict(_obs(20, 40, 1e7))[0][0] == -1.0
    assert p.predict(_obs(0, 0, 14480))[0][0] == 1.0


def test_batch_predict_matches_single():
    p = make_policy("explicit_rate")
    batch = np.stack([_obs(20, 40, 50_000), _obs(10, 40, 50_000)])
    a, state = p.predict(batch, episode_start=np.array([True, True]))
    assert a.shape == (2, 1) and state is None
    assert a[1, 0] == pytest.approx(0.0)


def test_registry():
    assert is_native("cubic") and not is_native("explicit_rate")
    with pytest.raises(ValueError, match="choose one of"):
        make_policy("nope")
