"""Provenance of a generated report: the commit, and a digest of the inputs that produced it.

A report (a table, a figure set) is the output of a command run over some source files. Its
provenance records the git commit the tree was at, whether any of the declared input files
differed from that commit (``dirty``), the command-line arguments, the SHA-256 of every input
file (by content, paths relative to the repository root in POSIX form, sorted) and one digest
over all of them and the arguments. The digest depends on nothing but file contents, relative
paths and arguments, so it is the same on any clone; a check recomputes it on the current tree
and names the files whose content changed (``changed_inputs``).

Inputs are declared per report as glob patterns relative to the repository root (``**`` matches
any depth). Caches and build products are left out: any path with a component that starts with
``.`` or is ``__pycache__``, files ending in ``IGNORED_SUFFIXES``, and files git ignores.

    >>> files = {"b.py": "00", "a.py": "11"}
    >>> inputs_digest(files, ["--quick"]) == inputs_digest(dict(sorted(files.items())), ["--quick"])
    True
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: Format version of the provenance record; bump it when the digest's definition changes.
FORMAT = 1
IGNORED_SUFFIXES = (".pyc", ".pyo", ".nbi", ".nbc", ".so", ".o")


def _git(root: Path, *args: str, stdin: str | None = None) -> str | None:
    try:
        res = subprocess.run(
            ["git", *args],
            cwd=root,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout if res.returncode in (0, 1) else None


def _skipped(rel: str) -> bool:
    parts = rel.split("/")
    return any(p.startswith(".") or p == "__pycache__" for p in parts) or rel.endswith(
        IGNORED_SUFFIXES
    )


def input_files(patterns: Iterable[str], root: Path) -> list[str]:
    """The files matching ``patterns`` under ``root``: sorted POSIX paths relative to ``root``."""
    root = Path(root)
    found: set[str] = set()
    for pat in patterns:
        for p in root.glob(pat):
            if p.is_file():
                rel = p.relative_to(root).as_posix()
                if not _skipped(rel):
                    found.add(rel)
    files = sorted(found)
    ignored = _git(root, "check-ignore", "--stdin", stdin="\n".join(files) + "\n")
    if ignored:
        drop = set(ignored.split("\n"))
        files = [f for f in files if f not in drop]
    return files


def file_digest(path: Path) -> str:
    """SHA-256 of a file's content, with CRLF line ends read as LF (clones may convert them)."""
    data = Path(path).read_bytes()
    return hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def file_digests(patterns: Iterable[str], root: Path) -> dict[str, str]:
    """``{relative path: SHA-256}`` of every input file, sorted by path."""
    return {rel: file_digest(Path(root) / rel) for rel in input_files(patterns, root)}


def inputs_digest(files: Mapping[str, str], args: Sequence[str]) -> str:
    """One SHA-256 over the per-file digests (sorted by path) and the command-line arguments."""
    h = hashlib.sha256(f"cellgym-provenance {FORMAT}\n".encode())
    for rel in sorted(files):
        h.update(f"{rel}\0{files[rel]}\n".encode())
    h.update(json.dumps(list(args)).encode())
    return h.hexdigest()


def git_state(root: Path, files: Iterable[str] = ()) -> tuple[str | None, bool | None]:
    """The commit at HEAD, and whether any of ``files`` differs from it (None without git)."""
    head = _git(root, "rev-parse", "HEAD")
    commit = head.strip() if head else None
    files = list(files)
    if commit is None or not files:
        return commit, None
    status = _git(root, "status", "--porcelain", "--untracked-files=all", "--", *files)
    return commit, None if status is None else bool(status.strip())


def record(
    command: str, args: Sequence[str], patterns: Sequence[str], root: Path
) -> dict[str, Any]:
    """The provenance of a report made by ``command args`` from the files matching ``patterns``."""
    files = file_digests(patterns, root)
    commit, dirty = git_state(root, files)
    return {
        "format": FORMAT,
        "command": " ".join([command, *args]),
        "args": list(args),
        "commit": commit,
        "dirty": dirty,
        "input_patterns": list(patterns),
        "inputs_digest": inputs_digest(files, args),
        "inputs": files,
    }


def markdown_line(prov: Mapping[str, Any]) -> str:
    """One Markdown line: commit, inputs digest and command."""
    commit = (prov.get("commit") or "unknown")[:12]
    dirty = " (inputs modified from it)" if prov.get("dirty") else ""
    return (
        f"Provenance: commit `{commit}`{dirty}, inputs digest `{prov['inputs_digest'][:16]}` "
        f"({len(prov['inputs'])} files), command `{prov['command']}`."
    )


def changed_inputs(
    prov: Mapping[str, Any], root: Path, patterns: Sequence[str] | None = None
) -> dict[str, list[str]]:
    """The inputs of ``prov`` whose content on the tree at ``root`` differs from the record.

    ``patterns`` are the report's declared inputs now (default: the recorded ones). Returns
    ``{"changed": [...], "added": [...], "removed": [...]}`` (paths); all empty when the digest
    recomputed over them and the recorded arguments equals the recorded one, and ``"digest"``
    holding the recomputed digest where it differs but no file does (a new digest format).
    """
    now = file_digests(prov["input_patterns"] if patterns is None else patterns, root)
    digest = inputs_digest(now, prov["args"])
    if digest == prov["inputs_digest"]:
        return {"changed": [], "added": [], "removed": []}
    old = prov["inputs"]
    out = {
        "changed": sorted(f for f in now.keys() & old.keys() if now[f] != old[f]),
        "added": sorted(now.keys() - old.keys()),
        "removed": sorted(old.keys() - now.keys()),
    }
    if not any(out.values()):
        out["digest"] = [digest]
    return out


def staleness(prov: Mapping[str, Any], root: Path, patterns: Sequence[str] | None = None) -> str:
    """``""`` when the report is current, else a message naming what changed and the command."""
    diff = changed_inputs(prov, root, patterns)
    if not any(diff.values()):
        return ""
    parts = [f"{kind}: {', '.join(paths)}" for kind, paths in diff.items() if paths]
    commit = (prov.get("commit") or "unknown")[:12]
    return (
        f"inputs changed since the report was made at commit {commit} "
        f"({'; '.join(parts)}); regenerate it with `{prov['command']}`"
    )
