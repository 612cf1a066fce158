"""``python train.py`` with a bad config: one line naming the field, exit status 2 (round three).

Also ``train.py --help`` (agents, scenarios, baselines, main options; ``workflows.cli_help``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "train.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["backend.n_envs=0"], "backend.n_envs=0 is out of range: allowed [1, inf)"),
        (["agent.kwargs.n_steps=0"], "agent.kwargs.n_steps=0 is out of range: allowed [1, inf)"),
        (["agent=sac", "agent.kwargs.gamma=1.5"], "agent.kwargs.gamma=1.5 is out of range"),
        (["agent.kwargs.learning_rate=0"], "agent.kwargs.learning_rate=0 is out of range"),
        (["+agent.kwargs.n_stepz=8"], "n_stepz is not an argument of PPO: did you mean n_steps?"),
        (["agent.kwargs.n_epochs=3"], "add it with +agent.kwargs.n_epochs=3"),
        (["n_envs=4"], "n_envs is not an option of train.py: did you mean backend.n_envs=4?"),
        (
            ["agent=nope"],
            "agent='nope' is unknown: choose one of fast_ppo, ppo, recurrent_ppo, sac, td3",
        ),
        (["total_timesteps=lots"], "total_timesteps: Value 'lots'"),
        (["final_model=first"], "final_model='first' is not allowed: choose one of last, best"),
    ],
)
def test_a_bad_config_is_one_line_and_exit_status_2(args, expected):
    proc = _run("backend=fast", *args)
    assert proc.returncode == 2, proc.stderr[-2000:]
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("train.py: invalid config: ")
    assert expected in lines[0]
    assert "Traceback" not in proc.stderr and "HYDRA_FULL_ERROR" not in proc.stderr


def test_an_unknown_agent_kwarg_lists_the_constructor_arguments():
    from agents.factory import check_agent_kwargs
    from cellgym.vocab import SpecError

    with pytest.raises(SpecError, match=r"did you mean buffer_size\? allowed .*learning_starts"):
        check_agent_kwargs("SAC", {"buffer_sise": 10})
    with pytest.raises(SpecError, match="seed is set by train.py itself"):
        check_agent_kwargs("PPO", {"seed": 1})
    with pytest.raises(SpecError, match=r"agent.kwargs.tau=2 is out of range: allowed \[0, 1\]"):
        check_agent_kwargs("TD3", {"tau": 2})
    check_agent_kwargs("A2C", {"n_steps": 5, "gamma": 0.9, "learning_rate": "lin_0.001"})


def test_help_lists_agents_scenarios_baselines_and_options():
    proc = _run("--help")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for text in (
        "Usage: python train.py",
        "fast_ppo, ppo, recurrent_ppo, sac, td3",
        "fluctuating",
        "xrc_policy",
        "checkpoint_freq=N",
        "resume=<run_dir>",
        "model.zip is the last model",
        "== Config groups",
    ):
        assert text in out, text
