#!/usr/bin/env bash
# Configures and builds Graft. Usage: build.sh [BUILD_DIR] [extra cmake args]
# GRAFT_SANITIZE=1 builds with ASan + UBSan, GRAFT_SANITIZE=thread with TSan.
# GRAFT_BUILD_TARGETS="a b ..." builds only those targets.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
# Ninja when there is one (a build directory keeps the generator it has).
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  args+=(-G Ninja)
fi
case "${GRAFT_SANITIZE:-0}" in
  1) args+=(-DGRAFT_SANITIZE=ON -DGRAFT_BUILD_BENCH=OFF) ;;
  thread) args+=(-DGRAFT_SANITIZE=thread -DGRAFT_BUILD_BENCH=OFF) ;;
esac
cmake -S "$root" -B "$build" "${args[@]}" "$@" >/dev/null
targets=()
for t in ${GRAFT_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
