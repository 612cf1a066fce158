"""Same seed, same training, same table: a brief training twice, on each backend.

The README's main job says its table follows from its seed on a machine (across machines torch's
CPU kernels round by instruction set, which the README says too). Two short trainings with the
same seed and configuration leave the same policy parameters, the same observation statistics
and the same evaluation rows, on the fast backend (where the main job trains) and on ns-3
(subprocess simulators seeded by ``RngRun``).
"""

from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from configs.schema import compose_train
from workflows.train import train

#: A few updates, a periodic evaluation and a checkpoint on the way, one evaluation seed (the
#: seed first; ``test_train_ns3`` trains the rest).
BRIEF = [
    "seed=3",
    "total_timesteps=256",
    "agent.kwargs.n_steps=64",
    "agent.kwargs.batch_size=32",
    "agent.net_arch=[8]",
    "scenario.sim_time_s=1",
    "eval.freq=128",
    "eval.seeds=[7]",
    "checkpoint_freq=128",
    "eval_seeds=[7]",
    "eval_baselines=[xrc_policy]",
]
BACKENDS = {
    "fast": ["backend=fast", "backend.n_envs=4", "eval_backend=fast"],
    "ns3": ["backend=ns3", "backend.n_envs=2", "eval_backend=ns3"],
}


def _train(run_dir: Path, backend: str) -> tuple[dict, np.ndarray, pd.DataFrame]:
    train(compose_train([f"run_dir={run_dir}", *BACKENDS[backend], *BRIEF]))
    with zipfile.ZipFile(run_dir / "model.zip") as z:
        params = torch.load(io.BytesIO(z.read("policy.pth")), weights_only=True)
    with (run_dir / "vecnormalize.pkl").open("rb") as f:
        norm = pickle.load(f)
    stats = np.concatenate([norm.obs_rms.mean, norm.obs_rms.var, [norm.obs_rms.count]])
    results = pd.read_parquet(run_dir / "evaluation" / "results.parquet")
    return params, stats, results.drop(columns=[c for c in results if "wall" in c])


@pytest.mark.parametrize("backend", ["fast", pytest.param("ns3", marks=pytest.mark.ns3)])
def test_the_same_seed_trains_the_same_policy_and_table(tmp_path, backend):
    (pa, sa, ra), (pb, sb, rb) = (_train(tmp_path / r, backend) for r in ("a", "b"))
    assert pa.keys() == pb.keys()
    for name in pa:
        assert torch.equal(pa[name], pb[name]), name
    np.testing.assert_array_equal(sa, sb)
    assert len(ra) == 2 and ra["mean_reward"].notna().all()
    pd.testing.assert_frame_equal(ra, rb, check_exact=True)
