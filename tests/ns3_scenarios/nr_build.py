"""Whether this build's scenario program has the NR cell (5G-LENA): one probe per session."""

from __future__ import annotations

import functools
import subprocess

from cellgym.paths import ns3_build_dir


@functools.cache
def nr_missing() -> str | None:
    """Why the NR cell cannot run here, or None. A bad NR option is refused with status 2 by a
    build with 5G-LENA, and with status 4 and the reason by one without."""
    program = ns3_build_dir() / "cellgym-lte"
    if not program.is_file():
        return None  # the ns3 tier as a whole is skipped by conftest.py
    out = subprocess.run(
        [str(program), "--cellType=nr", "--numerology=99"], capture_output=True, text=True
    )
    return out.stderr.strip() if out.returncode == 4 else None
