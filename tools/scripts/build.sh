#!/usr/bin/env bash
# Configures and builds Graft. Usage: build.sh [BUILD_DIR] [extra cmake args]
# GRAFT_SANITIZE=1 builds with ASan + UBSan.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
shift || true
args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
# Ninja when there is one (a build directory keeps the generator it has).
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  args+=(-G Ninja)
fi
if [ "${GRAFT_SANITIZE:-0}" = 1 ]; then args+=(-DGRAFT_SANITIZE=ON -DGRAFT_BUILD_BENCH=OFF); fi
cmake -S "$root" -B "$build" "${args[@]}" "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
