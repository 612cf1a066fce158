"""Record the golden outputs with the current code: ``python -m tests.golden.record [--fast-only]``.

Run only when a change is meant to alter behaviour; say so in the commit.
"""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

import numpy as np

from tests.golden.cases import CASES, run_case
from tests.golden.tables import evaluation_table

DATA = Path(__file__).resolve().parent / "data"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--fast-only", action="store_true", help="skip the ns-3 cases")
    ap.add_argument("--only", default="", help="substring of the case names to record")
    args = ap.parse_args()
    DATA.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        if args.fast_only and case.backend == "ns3":
            continue
        if args.only and args.only not in case.name:
            continue
        arrays = run_case(case)
        np.savez_compressed(DATA / f"{case.name}.npz", **arrays)
        print(case.name, {k: v.shape for k, v in arrays.items()})
    if not args.only:
        evaluation_table().to_csv(DATA / "evaluation.csv", index=False, float_format="%.17g")
        print("evaluation.csv")
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    (DATA / "RECORDED_AT").write_text(f"recorded with the code of commit {commit}\n")


if __name__ == "__main__":
    main()
