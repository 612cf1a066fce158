#!/usr/bin/env bash
# Idempotent set-up on a fresh Debian machine (as root): apt packages, .venv with pinned
# dependencies and the ns-3 wheel, generated protobuf code, and the CMake build of ns3-scenarios/.
# Fast when everything is already in place.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

APT_PACKAGES=(libprotobuf-dev protobuf-compiler clang-format ninja-build
              pkg-config cmake g++)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

UV_VERSION=0.13.9
if ! command -v uv >/dev/null 2>&1 || [ "$(uv --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  echo "[setup] installing uv $UV_VERSION"
  python3 -m pip install -q "uv==$UV_VERSION"
fi

stamp=.venv/.cellgym-deps
want=$(cat pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "[setup] creating .venv"
  [ -x .venv/bin/python ] || uv venv -q -p 3.11 .venv
  # ns3's only dependency (cppyy) serves the Python bindings, which CellGym does not use.
  VIRTUAL_ENV="$ROOT/.venv" uv pip install -q --no-deps "ns3==3.44.post0"
  VIRTUAL_ENV="$ROOT/.venv" uv pip install -q -e ".[dev]"
  echo "$want" > "$stamp"
fi

# Python code for the ns3-gym schema (protoc 3.21 output imports fine with protobuf 7).
if [ ! -f cellgym/proto/ns3opengym_pb2.py ] || [ cellgym/proto/ns3opengym.proto -nt cellgym/proto/ns3opengym_pb2.py ]; then
  protoc -I cellgym/proto --python_out=cellgym/proto cellgym/proto/ns3opengym.proto
fi

NS3_DIR=$(.venv/bin/python -c 'import importlib.util as u; print(u.find_spec("ns3").submodule_search_locations[0])')
# 5G-LENA (the NR cell) is built once per machine into a cache outside the checkout (about 7
# minutes on 2 cores the first time); without it the LTE cell still builds and --cellType=nr says
# what is missing.
NR_DIR=""
if NR_OUT=$(bash scripts/build-nr.sh "$NS3_DIR" .venv/bin/python); then
  NR_DIR=$(echo "$NR_OUT" | tail -1)
else
  echo "[setup] continuing without the NR cell (LTE is unaffected)" >&2
fi
# With NR, the programs record every ns-3 library they link (no --as-needed), so that 5G-LENA's
# dependencies load through the program's rpath, this checkout's wheel: the cached 5G-LENA library
# is shared by checkouts, and its own runpath names the wheel of the venv that built it.
NR_LINK=""
[ -z "$NR_DIR" ] || NR_LINK="-Wl,--no-as-needed"
if [ ! -f build/ns3/build.ninja ] || ! grep -qxF "CELLGYM_NR_DIR:PATH=$NR_DIR" build/ns3/CMakeCache.txt ||
   ! grep -qxF "CMAKE_EXE_LINKER_FLAGS:STRING=$NR_LINK" build/ns3/CMakeCache.txt; then
  cmake -S ns3-scenarios -B build/ns3 -G Ninja -DNS3_WHEEL_DIR="$NS3_DIR" -DCELLGYM_NR_DIR="$NR_DIR" \
    -DCMAKE_EXE_LINKER_FLAGS="$NR_LINK" >/dev/null
fi
if ! cmake --build build/ns3 -j"$(nproc)" > build/ns3/last-build.log 2>&1; then
  tail -40 build/ns3/last-build.log >&2
  echo "[setup] the ns-3 scenario build failed (full log: build/ns3/last-build.log)" >&2
  exit 1
fi

# The fast simulator's kernels, compiled into numba's cache once per version of their sources
# (minutes when cold; seconds to check after).
.venv/bin/python -m envs.warm_kernels
