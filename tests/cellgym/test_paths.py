"""A scenario program built from other sources than the checkout's is refused, not run."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from cellgym import paths
from cellgym.paths import REPO_ROOT, SOURCE_DIGEST_FILE, StaleNs3Build, ns3_sources_digest

SCRIPT = REPO_ROOT / "ns3-scenarios" / "cmake" / "SourceDigest.cmake"


def _tree(root: Path) -> Path:
    """A small checkout: two sources, a 5G-LENA file (kept apart) and the wire schema."""
    for rel, text in {
        "ns3-scenarios/model/a.cc": "int a;\n",
        "ns3-scenarios/helper/b.h": "#pragma once\n",
        "ns3-scenarios/third_party/nr/NR-SOURCE": "commit=1\n",
        "cellgym/proto/ns3opengym.proto": 'syntax = "proto3";\n',
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _cmake_digest(root: Path, out: Path) -> str:
    subprocess.run(
        [shutil.which("cmake") or "cmake", f"-DREPO={root}", f"-DOUT={out}", "-P", str(SCRIPT)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return out.read_text().strip()


def test_the_digest_follows_the_sources_and_not_5g_lena(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    first = ns3_sources_digest(root)
    (root / "ns3-scenarios/third_party/nr/NR-SOURCE").write_text("commit=2\n")
    assert ns3_sources_digest(root) == first
    (root / "ns3-scenarios/model/a.cc").write_text("int a = 1;\n")
    edited = ns3_sources_digest(root)
    assert edited != first
    (root / "cellgym/proto/ns3opengym.proto").write_text('syntax = "proto2";\n')
    assert ns3_sources_digest(root) != edited
    (root / "ns3-scenarios/model/c.cc").write_text("")
    assert ns3_sources_digest(root) not in {first, edited}


@pytest.mark.skipif(shutil.which("cmake") is None, reason="cmake is not installed")
def test_cmake_records_the_digest_python_computes(tmp_path: Path) -> None:
    root = _tree(tmp_path / "repo")
    assert _cmake_digest(root, tmp_path / "out") == ns3_sources_digest(root)
    (root / "ns3-scenarios/helper/b.h").write_text("#pragma once\nint b;\n")
    assert _cmake_digest(root, tmp_path / "out") == ns3_sources_digest(root)
    # The repository's own sources, as a build records them.
    assert _cmake_digest(REPO_ROOT, tmp_path / "own") == ns3_sources_digest()


def _build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stamp: str | None) -> Path:
    build = tmp_path / "build"
    build.mkdir()
    (build / "cellgym-lte").write_text("")
    if stamp is not None:
        (build / SOURCE_DIGEST_FILE).write_text(stamp + "\n")
    monkeypatch.setenv("CELLGYM_NS3_BUILD", str(build))
    return build


def test_a_program_from_the_checkouts_sources_is_returned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = _build(tmp_path, monkeypatch, ns3_sources_digest())
    assert paths.ns3_program() == build / "cellgym-lte"


def test_a_program_from_other_sources_is_refused_with_the_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = _build(tmp_path, monkeypatch, "0" * 64)
    with pytest.raises(StaleNs3Build, match=r"changed since .* was built") as err:
        paths.ns3_program()
    assert f"cmake --build {build}" in str(err.value)


def test_a_build_without_a_record_of_its_sources_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = _build(tmp_path, monkeypatch, None)
    with pytest.raises(StaleNs3Build, match=f"{SOURCE_DIGEST_FILE} is absent"):
        paths.ns3_program()
    assert not (build / SOURCE_DIGEST_FILE).exists()


def test_an_unbuilt_program_says_how_to_build_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CELLGYM_NS3_BUILD", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="scripts/setup.sh"):
        paths.ns3_program()
