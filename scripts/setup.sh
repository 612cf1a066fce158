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

# Each phase's wall and CPU seconds go into a [setup] line, so that a CI log shows where a fresh
# set-up's time goes. CPU: user+sys of the phase's processes and their children (bash's `times`
# in a subshell of its own, so that the background kernel compiles are not counted twice).
SETUP_T0=$EPOCHREALTIME
exec 3>&2  # the time lines, also of phases whose output goes to a log
TIMES_DIR=$(mktemp -d)
# shellcheck disable=SC2329  # invoked through the EXIT trap
cleanup_times() { rm -rf "$TIMES_DIR"; }
trap cleanup_times EXIT
cpu_of_times() {  # the children's user+sys seconds in a `times` output file
  tail -1 "$1" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] }
                        printf "%.0f", s }'
}
timed() {  # timed <phase> <command...>: runs the command; says its wall and CPU seconds on fd 3
  local phase=$1 t0=$EPOCHREALTIME rc=0 f
  shift
  f=$(mktemp "$TIMES_DIR/t.XXXXXX")
  # The command runs as a child of the subshell, which passes a TERM on (the EXIT trap's kill).
  ( rc=0; "$@" & child=$!; trap 'kill "$child" 2>/dev/null; exit 143' TERM
    wait "$child" || rc=$?; times > "$f"; exit "$rc" ) || rc=$?
  echo "[setup] time: $phase $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s wall," \
    "$(cpu_of_times "$f") s CPU" >&3
  return "$rc"
}

APT_PACKAGES=(libprotobuf-dev protobuf-compiler clang-format ninja-build
              pkg-config cmake g++ ccache)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  timed apt $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive timed "apt install" $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

UV_VERSION=0.13.9
if ! command -v uv >/dev/null 2>&1 || [ "$(uv --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  echo "[setup] installing uv $UV_VERSION"
  timed uv python3 -m pip install -q "uv==$UV_VERSION"
fi

stamp=.venv/.cellgym-deps
want=$(cat pyproject.toml | sha256sum | cut -d' ' -f1)
deps_stale=0
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  deps_stale=1
  echo "[setup] creating .venv"
  [ -x .venv/bin/python ] || timed "python venv" uv venv -q -p 3.11 .venv
  # ns3's only dependency (cppyy) serves the Python bindings, which CellGym does not use.
  VIRTUAL_ENV="$ROOT/.venv" timed "ns3 wheel" uv pip install -q --no-deps "ns3==3.44.post0"
fi

NS3_DIR=$(.venv/bin/python -c 'import importlib.util as u; print(u.find_spec("ns3").submodule_search_locations[0])')
# 5G-LENA (the NR cell) is built once per machine into a cache outside the checkout (minutes on 2
# cores the first time); without it the LTE cell still builds and --cellType=nr says what is
# missing. It needs only the ns3 wheel: it builds in the background while the other packages
# (torch and its CUDA libraries: mostly download) install and the numba kernels compile.
mkdir -p build
timed 5G-LENA bash scripts/build-nr.sh "$NS3_DIR" .venv/bin/python > build/nr-dir.out &
nr_pid=$!
# shellcheck disable=SC2064  # the pid now
trap "kill $nr_pid 2>/dev/null || true; cleanup_times" EXIT  # set-up failed before the wait

if [ "$deps_stale" -eq 1 ]; then
  VIRTUAL_ENV="$ROOT/.venv" timed "python packages" uv pip install -q -e ".[dev]"
  echo "$want" > "$stamp"
fi

# Python code for the ns3-gym schema (protoc 3.21 output imports fine with protobuf 7).
if [ ! -f cellgym/proto/ns3opengym_pb2.py ] || [ cellgym/proto/ns3opengym.proto -nt cellgym/proto/ns3opengym_pb2.py ]; then
  protoc -I cellgym/proto --python_out=cellgym/proto cellgym/proto/ns3opengym.proto
fi

# The fast simulator's kernels, compiled into numba's cache once per version of their sources
# (minutes when cold; seconds to check after), in one process beside the ns-3 builds. A batch
# spread over threads runs the same entry points on slices of its cells: nothing more to compile.
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
timed "numba kernels" .venv/bin/python -m envs.warm_kernels > build/warm-kernels.log 2>&1 &
warm_pids=$!
# shellcheck disable=SC2086  # a list of process ids
trap '[ -z "$warm_pids" ] || kill $warm_pids $nr_pid 2>/dev/null || true; cleanup_times' EXIT  # set-up failed before the wait

NR_DIR=""
if wait "$nr_pid"; then
  NR_DIR=$(tail -1 build/nr-dir.out)
else
  echo "[setup] continuing without the NR cell (LTE is unaffected)" >&2
fi
nr_pid=""
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
# No precompiled header here: ccache hashes a .gch, which differs between checkouts, so that with
# one a fresh clone compiled every object again (53 of 53 misses), where the header saved a cold
# build 211 -> 178 s CPU only.
if [ ! -f build/ns3/build.ninja ] || ! grep -qxF "CELLGYM_NR_DIR:PATH=$NR_DIR" build/ns3/CMakeCache.txt ||
   ! grep -qxF "CMAKE_EXE_LINKER_FLAGS:STRING=$NR_LINK" build/ns3/CMakeCache.txt ||
   ! grep -qxF "CMAKE_CXX_COMPILER_LAUNCHER:STRING=ccache" build/ns3/CMakeCache.txt; then
  timed "scenario configure" cmake -S ns3-scenarios -B build/ns3 -G Ninja -DNS3_WHEEL_DIR="$NS3_DIR" -DCELLGYM_NR_DIR="$NR_DIR" \
    -DCMAKE_EXE_LINKER_FLAGS="$NR_LINK" -DCMAKE_CXX_COMPILER_LAUNCHER:STRING=ccache >/dev/null
fi
ns3_start=$(date +%s)
export CCACHE_STATSLOG=$ROOT/build/ns3/ccache-stats.log
rm -f "$CCACHE_STATSLOG"
if ! timed "scenario build" cmake --build build/ns3 -j"$(nproc)" > build/ns3/last-build.log 2>&1; then
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

if wait "$warm_pids"; then cat build/warm-kernels.log; else
  tail -30 build/warm-kernels.log >&2
  echo "[setup] warming the numba kernels failed (build/warm-kernels.log)" >&2
  warm_pids=""
  exit 1
fi
warm_pids=""
times > "$TIMES_DIR/all"
echo "[setup] time: total $(awk -v a="$SETUP_T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s wall," \
  "$(cpu_of_times "$TIMES_DIR/all") s CPU"
