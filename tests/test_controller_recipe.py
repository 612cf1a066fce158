"""The recipe "Add a controller" (docs/architecture.md), proven by a test-only toy on both backends.

``constrate`` paces every segment at a constant rate (``RATE_MBPS`` of the fast model's
``envs/fastsim/senders/constrate.py``, ``kRateBps`` of ns-3's ``tcp-constrate.h``) with the
receive window as its window, which no loss cuts. It was added through the recipe alone: this
test checks that its name is in exactly the files the recipe names (a controller that needs an
edit elsewhere fails here), that it is in no published list (evaluation, reports, the README's
table), and that on an LTE cell several times faster than the rate each backend delivers the rate
and the two backends agree.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from cellgym import controllers, vocab
from cellgym.fields import FLOW, UE
from cellgym.scenario import FlowSpec, ScenarioSpec
from envs.fastsim.senders.constrate import RATE_MBPS
from evaluation.rollouts import run_native

ROOT = Path(__file__).resolve().parents[1]
TOY = "constrate"
#: Every file that names the toy, each with the step of the recipe it is.
RECIPE_FILES: dict[str, str] = {
    "ns3-scenarios/model/tcp-constrate.h": "ns-3: its TcpCongestionOps (CellGymExplicitSender)",
    "ns3-scenarios/model/tcp-constrate.cc": "ns-3: its TcpCongestionOps",
    "ns3-scenarios/model/cellgym-cca-table.cc": "ns-3: its name mapped to its TypeId",
    "envs/fastsim/senders/constrate.py": "fast model: its module",
    "envs/fastsim/codes.py": "fast model: its code",
    "envs/fastsim/senders/dispatch.py": "fast model: its branches",
    "cellgym/controllers.py": "its one registry entry",
    "tests/test_controller_recipe.py": "its tests (this file)",
}
#: The recipe itself, which cites the toy as its worked example and counts its files.
RECIPE_DOC = "docs/architecture.md"

#: The run: one bulk flow of the toy, one UE at 100 m on 50 RBs (about 30 Mbit/s, several times
#: the rate), long enough for a few seconds after the start.
SIM_S = 6.0
#: The throughput is measured from here to the end (the handshake and first RTTs are before).
SETTLED_S = 1.0
#: How close each backend's goodput is to the rate: pacing sets it, and a step's acknowledged
#: bytes come in whole segments (1448 bytes at 5 Mbit/s: one per 2.3 ms), so only the window's
#: edges (a segment or two in 5 s, well under 1 %) and the ACKs' timing differ from the rate.
RATE_TOLERANCE = 0.02
#: How close the two backends' goodputs are (both within RATE_TOLERANCE of the same rate).
BACKEND_TOLERANCE = 0.02
#: The cell must be this many times faster than the rate, so that the rate is the limit.
HEADROOM = 3.0


def _names_the_toy(path: Path) -> bool:
    """Whether ``path`` names the toy other than as the path of one of the recipe's files."""
    text = path.read_text(errors="replace")
    for recipe_file in RECIPE_FILES:
        text = text.replace(recipe_file, "")
    return TOY in text.lower()


def test_the_toy_names_exactly_the_recipes_files():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the files are listed by git grep")
    out = subprocess.run(
        ["git", "grep", "--untracked", "-I", "-i", "-l", TOY],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode in (0, 1), out.stderr  # 1: no match
    # A report's provenance records a digest of every source file, the toy's among them: a path
    # of one of the recipe's files is not a mention of the toy, so it is struck before looking.
    naming = {
        path
        for path in out.stdout.split()
        if path in RECIPE_FILES or path == RECIPE_DOC or _names_the_toy(ROOT / path)
    }
    want = set(RECIPE_FILES) | {RECIPE_DOC}
    assert naming == want, (
        f"files naming {TOY!r} outside the recipe: {sorted(naming - want)}; "
        f"missing: {sorted(want - naming)}"
    )
    # The recipe cites the toy and states the count this test checks.
    recipe = (ROOT / RECIPE_DOC).read_text().split("### Add a controller", 1)[1]
    recipe = recipe.split("\n### ", 1)[0]
    assert f"`{TOY}`" in recipe and f"{len(RECIPE_FILES)} files" in recipe
    # One registry entry: one `Controller(` naming it.
    registry = (ROOT / "cellgym" / "controllers.py").read_text()
    assert len(re.findall(rf'out\["{TOY}"\] = Controller\(', registry)) == 1


def test_the_toy_is_a_test_only_entry_in_no_published_list():
    entry = controllers.ALL_CONTROLLERS[TOY]
    assert entry.test_only and entry.kind == "native" and entry.backends == vocab.BACKENDS
    assert set(entry.code.values()) <= set(RECIPE_FILES)
    assert entry.fast_model == TOY
    assert TOY in controllers.TEST_ONLY_NATIVE
    assert TOY not in controllers.CONTROLLERS
    for kind in (None, *controllers.KINDS):
        for backend in (None, *vocab.BACKENDS):
            assert TOY not in controllers.names(kind=kind, backend=backend)
    for backend in vocab.BACKENDS:
        assert TOY in controllers.names("native", backend, include_test_only=True)
    assert f"`{TOY}`" not in controllers.markdown_table()
    assert TOY not in vocab.CCAS
    with pytest.raises(vocab.SpecError, match="is not a known controller"):
        controllers.get(TOY)
    assert FlowSpec(cca=TOY).cca == TOY  # a scenario runs it


def test_both_backends_pace_at_the_same_rate():
    header = (ROOT / "ns3-scenarios" / "model" / "tcp-constrate.h").read_text()
    rate_bps = re.search(r"kRateBps = (\d+);", header)
    assert rate_bps, "kRateBps not found in tcp-constrate.h"
    assert int(rate_bps.group(1)) == round(RATE_MBPS * 1e6)


def _spec() -> ScenarioSpec:
    return ScenarioSpec(name=f"{TOY}_lte", sim_time_s=SIM_S, flows=[FlowSpec(cca=TOY)])


def _measure(backend: str) -> dict[str, float]:
    """Goodput, pacing rate, capacity and retransmissions of the toy's flow after SETTLED_S."""
    rec = run_native(_spec(), TOY, seed=1, backend=backend)
    t = np.asarray(rec.times)
    flows = np.stack(rec.flows)[:, 0]  # [step, field] of the one flow
    ues = np.stack(rec.ues)[:, 0]
    after = t > SETTLED_S + 1e-9
    span_s = t[after][-1] - SETTLED_S
    acked = flows[after, FLOW["acked_bytes"]].sum()
    return {
        "goodput_mbps": acked * 8 / span_s / 1e6,
        "pacing_mbps": float(np.median(flows[after, FLOW["pacing_rate_mbps"]])),
        "capacity_mbps": float(ues[after, UE["capacity_mbps"]].mean()),
        "retx_segments": float(flows[:, FLOW["retx_segments"]].sum()),
    }


def _check_rate(m: dict[str, float], backend: str) -> None:
    print(f"{TOY} on {backend}: {m} (rate {RATE_MBPS} Mbit/s)")
    assert m["capacity_mbps"] > HEADROOM * RATE_MBPS, "the cell, not the rate, would limit"
    assert m["goodput_mbps"] == pytest.approx(RATE_MBPS, rel=RATE_TOLERANCE)
    assert m["pacing_mbps"] == pytest.approx(RATE_MBPS, rel=1e-6)
    assert m["retx_segments"] == 0  # far below the cell's rate: nothing queues, nothing is lost


@pytest.fixture(scope="module")
def fast() -> dict[str, float]:
    return _measure("fast")


def test_the_toy_delivers_its_rate_on_the_fast_backend(fast):
    _check_rate(fast, "fast")


@pytest.mark.ns3
def test_the_toy_delivers_its_rate_on_ns3_and_the_backends_agree(fast):
    ns3 = _measure("ns3")
    _check_rate(ns3, "ns3")
    assert ns3["goodput_mbps"] == pytest.approx(fast["goodput_mbps"], rel=BACKEND_TOLERANCE)
