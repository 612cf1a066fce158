"""What the explicit-feedback routers and PBE-CC's UE monitor cost others: vs a baseline commit.

    .venv/bin/python bench/explicit_feedback.py [--baseline main] [--seconds 2] [--rounds 3]
    .venv/bin/python bench/explicit_feedback.py --own-only   # the controllers' own cost only

The router logic (``envs/fastsim/enb_agents/router.py``) runs only when a flow is XCP or RCP;
what every other scenario pays is the branch that skips it, the per-packet arrival count and the
wider state. PBE-CC's UE monitor (``envs/fastsim/ue_monitor.py``) likewise runs only with a
``pbecc`` flow: the others pay a skipped branch per slot and per ms and wider UE rows. This times
the bare kernel (``FastCellBatch.step``, one thread, 1 and 64 cells) of scenarios without them,
here and in the baseline commit (``git archive`` of ``--baseline`` into a temporary directory;
its kernels compile there first, which takes minutes), and prints the ratio: cell steps/s of
this tree / the baseline's. Scenarios: one UE at 100 m, 50 RBs, one bulk CUBIC flow; 4 CUBIC
flows; one CUBIC flow behind a 10 Mbit/s wired bottleneck. For scale it also times this tree's
XCP, RCP, XCP-r and PBE-CC with 4 flows against 4 CUBIC flows. Rounds alternate the trees;
figures are medians of CPU time (``time.process_time``: the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: name -> (flows' cca, number of flows, wired bottleneck Mbit/s or 0).
SCENARIOS: dict[str, tuple[str, int, float]] = {
    "1 CUBIC flow": ("cubic", 1, 0.0),
    "4 CUBIC flows": ("cubic", 4, 0.0),
    "1 CUBIC flow, 10 Mbit/s bottleneck": ("cubic", 1, 10.0),
}
#: This tree only: the controllers' own cost (the router's; PBE-CC's monitor and sender).
ROUTED: dict[str, tuple[str, int, float]] = {
    "4 XCP flows": ("xcp", 4, 0.0),
    "4 RCP flows": ("rcp", 4, 0.0),
    "4 XCP-r flows": ("xcpr", 4, 0.0),
    "4 PBE-CC flows": ("pbecc", 4, 0.0),
}

WORKER = r"""
import json, sys, time
sys.path.insert(0, {root!r})
import numpy as np
from cellgym.scenario import FlowSpec, ScenarioSpec
from envs.fastsim import FastCellBatch, FastSimParams

cca, n, mbps, cells, seconds = {cca!r}, {n}, {mbps}, {cells}, {seconds}
spec = ScenarioSpec(name="bench", sim_time_s=1e6, flows=[FlowSpec(cca=cca) for _ in range(n)],
                    bottleneck_mbps=mbps, bottleneck_buffer_pkts=100)
batch = FastCellBatch(FastSimParams.from_spec(spec), cells, parallel=False)
batch.reset(np.arange(cells) + 1)
for _ in range(50):
    batch.step()
k, t0 = 0, time.process_time()
while True:
    batch.step()
    k += 1
    if k % 8 == 0 and time.process_time() - t0 >= seconds:
        break
print(json.dumps(k * cells / (time.process_time() - t0)))
"""


def rate(root: Path, cca: str, n: int, mbps: float, cells: int, seconds: float) -> float:
    """Cell steps per second of the bare kernel of the tree at ``root`` (a fresh process)."""
    code = WORKER.format(root=str(root), cca=cca, n=n, mbps=mbps, cells=cells, seconds=seconds)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, check=True, capture_output=True, text=True
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def export(ref: str, into: Path) -> Path:
    """The tree of commit ``ref`` of this repository, unpacked into ``into``."""
    archive = into / "baseline.tar"
    with archive.open("wb") as fh:
        subprocess.run(["git", "-C", str(ROOT), "archive", ref], stdout=fh, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def side_by_side(base: Path, rounds: int, seconds: float) -> list[tuple]:
    """``SCENARIOS`` at 1 and 64 cells, this tree against ``base`` in alternating rounds; print
    each ratio as it comes and the table; return its rows."""
    rows = []
    for name, (cca, n, mbps) in SCENARIOS.items():
        for cells in (1, 64):
            ours, theirs = [], []
            for _ in range(rounds):
                theirs.append(rate(base, cca, n, mbps, cells, seconds))
                ours.append(rate(ROOT, cca, n, mbps, cells, seconds))
            a, b = statistics.median(ours), statistics.median(theirs)
            rows.append((name, cells, b, a, a / b))
            print(f"{name}, {cells} cells: baseline {b:,.0f}, this tree {a:,.0f}, "
                  f"ratio {a / b:.3f}", flush=True)  # fmt: skip
    print("\n| scenario | cells | baseline cell steps/s | this tree | this / baseline |")
    print("|---|---|---|---|---|")
    for name, cells, b, a, r in rows:
        print(f"| {name} | {cells} | {b:,.0f} | {a:,.0f} | {r:.3f} |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--baseline", default="main", help="git ref without the router (main)")
    ap.add_argument("--seconds", type=float, default=2.0, help="CPU s per measurement")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (medians)")
    ap.add_argument(
        "--own-only", action="store_true", help="only the controllers' own cost (no baseline)"
    )
    args = ap.parse_args()
    if not args.own_only:
        with tempfile.TemporaryDirectory() as tmp:
            base = export(args.baseline, Path(tmp))
            print(f"baseline {args.baseline} in {base} (its kernels compile on first use)")
            side_by_side(base, args.rounds, args.seconds)
    print("\nThis tree, the controllers' own cost (4 flows, 1 cell):")
    cubic = statistics.median(rate(ROOT, "cubic", 4, 0.0, 1, args.seconds) for _ in range(2))
    for name, (cca, n, mbps) in ROUTED.items():
        r = statistics.median(rate(ROOT, cca, n, mbps, 1, args.seconds) for _ in range(2))
        print(f"| {name} | {r:,.0f} cell steps/s | x{r / cubic:.2f} of 4 CUBIC flows |")


if __name__ == "__main__":
    main()
