"""The layers hold (import-linter contracts in pyproject.toml): no upward imports, no cycles.

``workflows > evaluation > learners > agents > baselines > envs | configs > cellgym``: a package
imports only from its own layer or lower ones (``envs`` and ``configs`` not from each other), and
the modules of a package import each other without cycles. Lazy imports inside functions count too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def test_import_contracts_are_kept():
    proc = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-5000:]
    assert "Contracts: 2 kept, 0 broken." in out, out[-3000:]


def test_the_core_imports_nothing_above_it():
    # The contract's bottom layer, checked directly too: cellgym/ names no upper package.
    upper = ("envs", "baselines", "agents", "configs", "evaluation", "learners", "workflows")
    offenders = []
    for path in sorted((ROOT / "cellgym").rglob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            words = line.split()
            if len(words) >= 2 and words[0] in ("import", "from"):
                if words[1].split(".")[0] in upper:
                    offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
