#!/usr/bin/env bash
# Builds 5G-LENA (ns3-scenarios/third_party/nr/NR-SOURCE) once into a cache outside the checkout and
# prints its directory on the last line of stdout. Fresh clones and worktrees reuse the cache:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/cellgym/nr-<key>, key = digest of the source (archive sha256 or
#   commit), the ns3 wheel's version, the compiler, the flags and this build code.
# The source: ../shared/third-party/<archive> when present (its sha256 checked), else a clone of the
# upstream repository at the pinned commit. Exits non-zero, saying why on stderr, when neither works.
#   usage: scripts/build-nr.sh <site-packages/ns3 dir> [python]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
NS3_DIR=${1:?usage: build-nr.sh <site-packages/ns3 dir> [python]}
PY=${2:-.venv/bin/python}
SPEC=ns3-scenarios/third_party/nr/NR-SOURCE
get() { sed -n "s/^$1=//p" "$SPEC"; }
COMMIT=$(get commit); URL=$(get url); ARCHIVE=$(get archive); PREFIX_DIR=$(get archive_prefix)
SHA=$(get archive_sha256)
ARCHIVE_PATH=${CELLGYM_NR_ARCHIVE:-$ROOT/../shared/third-party/$ARCHIVE}
say() { echo "[setup] $*" >&2; }

if [ -f "$ARCHIVE_PATH" ]; then
  got=$(sha256sum "$ARCHIVE_PATH" | cut -d' ' -f1)
  if [ "$got" != "$SHA" ]; then
    say "5G-LENA: $ARCHIVE_PATH has sha256 $got, expected $SHA ($SPEC); not building NR"
    exit 2
  fi
  SOURCE_ID="archive:$SHA"
else
  ARCHIVE_PATH=""
  SOURCE_ID="git:$COMMIT"
fi
FLAGS="Release -O2 -std=c++20"  # mirrored in the cmake call below
WHEEL_VERSION=$("$PY" -c 'import importlib.metadata as m; print(m.version("ns3"))')
COMPILER=$(c++ --version | head -1)
OURS=$(cat "$SPEC" ns3-scenarios/third_party/nr/CMakeLists.txt ns3-scenarios/cmake/Ns3Wheel.cmake \
  scripts/build-nr.sh ns3-scenarios/NS3-VERSION | sha256sum | cut -d' ' -f1)
KEY=$(printf '%s\n' "$SOURCE_ID" "$WHEEL_VERSION" "$COMPILER" "$FLAGS" "$OURS" | sha256sum | cut -c1-16)
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/cellgym
OUT=$CACHE/nr-$KEY
mkdir -p "$CACHE"

exec 9>"$CACHE/nr-$KEY.lock"
flock 9  # one build at a time per key; a second caller waits and then reuses it
if [ ! -f "$OUT/.complete" ]; then
  WORK=$(mktemp -d "$CACHE/nr-$KEY.work.XXXXXX")
  trap 'rm -rf "$WORK"' EXIT
  if [ -n "$ARCHIVE_PATH" ]; then
    tar -xzf "$ARCHIVE_PATH" -C "$WORK"
    SRC=$WORK/$PREFIX_DIR
  else
    say "5G-LENA: no $ARCHIVE; cloning $URL at $COMMIT"
    if ! git clone -q "$URL" "$WORK/nr" >&2 || ! git -C "$WORK/nr" checkout -q "$COMMIT" >&2; then
      say "5G-LENA: cannot get the source (no archive at ../shared/third-party/$ARCHIVE and $URL not reachable); not building NR"
      exit 3
    fi
    SRC=$WORK/nr
    head=$(git -C "$SRC" rev-parse HEAD)
    if [ "$head" != "$COMMIT" ]; then
      say "5G-LENA: clone is at $head, expected $COMMIT; not building NR"
      exit 2
    fi
  fi
  say "building 5G-LENA $(get version) once into $OUT (about 7 minutes on 2 cores; log: $OUT.log)"
  start=$(date +%s)
  if ! { cmake -S ns3-scenarios/third_party/nr -B "$WORK/build" -G Ninja -DNS3_WHEEL_DIR="$NS3_DIR" \
           -DNR_SOURCE_DIR="$SRC" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O2 \
           -DCMAKE_INSTALL_PREFIX="$WORK/install" &&
         cmake --build "$WORK/build" -j"$(nproc)" &&
         cmake --install "$WORK/build"; } > "$OUT.log" 2>&1; then
    tail -30 "$OUT.log" >&2
    say "5G-LENA: the build failed (full log: $OUT.log); not building NR"
    exit 4
  fi
  rm -rf "$OUT"
  mv "$WORK/install" "$OUT"
  printf '%s\n' "source=$SOURCE_ID" "wheel=$WHEEL_VERSION" "compiler=$COMPILER" "flags=$FLAGS" \
    "seconds=$(($(date +%s) - start))" > "$OUT/.complete"
  say "5G-LENA built in $(($(date +%s) - start)) s"
fi
echo "$OUT"
