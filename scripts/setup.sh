#!/usr/bin/env bash
# Idempotent set-up on a fresh Debian machine (as root): apt packages, .venv with pinned
# dependencies and the ns-3 wheel, generated protobuf code, the CMake build of ns3-scenarios/ and
# the fast simulator's numba kernels. Fast when everything is already in place, and fast on a fresh
# clone of a machine that has set up once: the heavy builds are cached outside the checkout, under
# ${XDG_CACHE_HOME:-$HOME/.cache}/cellgym, keyed by their sources (5G-LENA: scripts/build-nr.sh;
# the scenario build's objects: ccache; the numba kernels: a store per checkout path).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

APT_PACKAGES=(libprotobuf-dev protobuf-compiler clang-format ninja-build
              pkg-config cmake g++ ccache)
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

# The fast simulator's kernels, compiled into numba's cache once per version of their sources
# (minutes each when cold; seconds to check after): the serial entry points and the threaded ones
# (test_parallel_batch_equals_serial runs those), each in a process of its own so that on a cold
# cache they compile side by side, and beside the ns-3 build below.
# The cache directory of these sources (envs/fastsim/_numba_cache.py: under the package's
# __pycache__ unless NUMBA_CACHE_DIR is set) is made a link into a store outside the checkout, one
# per checkout path (numba keys its entries on the sources' absolute path): a fresh clone at the
# same path (CI) starts warm, and every entry point (make, python train.py, pytest) uses it. A
# directory already in the checkout stays (warm, and maybe in use); the store keeps the current
# sources only, as the package's own directory does.
if [ -z "${NUMBA_CACHE_DIR:-}" ]; then
  # The module alone: importing envs.fastsim would create the directory (its kernels' caches).
  kernels=$(.venv/bin/python -c 'import importlib.util as u
spec = u.spec_from_file_location("numba_cache", "envs/fastsim/_numba_cache.py")
c = u.module_from_spec(spec); spec.loader.exec_module(c); print(c.cache_dir())')
  store=${XDG_CACHE_HOME:-$HOME/.cache}/cellgym/numba-$(printf %s "$ROOT" | sha256sum | cut -c1-16)
  shopt -s nullglob
  for old in "$store"/numba-* "$(dirname "$kernels")"/numba-*; do
    [ "$(basename "$old")" = "$(basename "$kernels")" ] || rm -rf "$old"
  done
  shopt -u nullglob
  if [ ! -e "$kernels" ]; then
    mkdir -p "$store/$(basename "$kernels")" "$(dirname "$kernels")"
    rm -f "$kernels"  # a link to a store that was removed
    ln -s "$store/$(basename "$kernels")" "$kernels"
  fi
  echo "[setup] numba cache: $kernels$([ -L "$kernels" ] && echo " -> $(readlink "$kernels")")"
else
  echo "[setup] numba cache: under NUMBA_CACHE_DIR=$NUMBA_CACHE_DIR"
fi
mkdir -p build
.venv/bin/python -m envs.warm_kernels > build/warm-serial.log 2>&1 &
warm_serial=$!
.venv/bin/python -c 'from envs import warm_kernels as w
if not w.is_warm(parallel=True):
    print("[setup] compiling the threaded kernels (minutes, once per version)", flush=True)
    print(f"[setup] threaded kernels compiled in {w.warm(parallel=True):.0f} s")' \
  > build/warm-parallel.log 2>&1 &
warm_parallel=$!
warm_pids="$warm_serial $warm_parallel"
# shellcheck disable=SC2086  # a list of process ids
trap '[ -z "$warm_pids" ] || kill $warm_pids 2>/dev/null || true' EXIT  # set-up failed before the wait

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
# The scenario build lives in the checkout (build/ns3: its programs' rpath names this checkout's
# wheel), its compiled objects in ccache outside it: a fresh clone compiles nothing that an
# earlier checkout compiled from the same sources, headers and flags (ccache hashes them all; paths
# under the checkout count relative to it), and links.
export CCACHE_DIR=${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cellgym/ccache}
export CCACHE_BASEDIR=$ROOT CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-2G}
if [ ! -f build/ns3/build.ninja ] || ! grep -qxF "CELLGYM_NR_DIR:PATH=$NR_DIR" build/ns3/CMakeCache.txt ||
   ! grep -qxF "CMAKE_EXE_LINKER_FLAGS:STRING=$NR_LINK" build/ns3/CMakeCache.txt ||
   ! grep -qxF "CMAKE_CXX_COMPILER_LAUNCHER:STRING=ccache" build/ns3/CMakeCache.txt; then
  cmake -S ns3-scenarios -B build/ns3 -G Ninja -DNS3_WHEEL_DIR="$NS3_DIR" -DCELLGYM_NR_DIR="$NR_DIR" \
    -DCMAKE_EXE_LINKER_FLAGS="$NR_LINK" -DCMAKE_CXX_COMPILER_LAUNCHER:STRING=ccache >/dev/null
fi
ns3_start=$(date +%s)
export CCACHE_STATSLOG=$ROOT/build/ns3/ccache-stats.log
rm -f "$CCACHE_STATSLOG"
if ! cmake --build build/ns3 -j"$(nproc)" > build/ns3/last-build.log 2>&1; then
  tail -40 build/ns3/last-build.log >&2
  echo "[setup] the ns-3 scenario build failed (full log: build/ns3/last-build.log)" >&2
  exit 1
fi
hits=0 misses=0
if [ -f "$CCACHE_STATSLOG" ]; then
  hits=$(grep -c "_cache_hit$" "$CCACHE_STATSLOG" || true)
  misses=$(grep -c "^cache_miss$" "$CCACHE_STATSLOG" || true)
fi
echo "[setup] ns-3 scenario build up to date in $(($(date +%s) - ns3_start)) s" \
  "(ccache: $hits compiled objects reused, $misses compiled)"

warm_failed=0
for job in "$warm_serial:build/warm-serial.log" "$warm_parallel:build/warm-parallel.log"; do
  if wait "${job%%:*}"; then cat "${job#*:}"; else
    tail -30 "${job#*:}" >&2; echo "[setup] warming the numba kernels failed (${job#*:})" >&2
    warm_failed=1
  fi
done
warm_pids=""
[ "$warm_failed" -eq 0 ] || exit 1
