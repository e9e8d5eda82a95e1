#!/usr/bin/env bash
# Sets up, builds and runs every test.
# Usage: test.sh [BUILD_DIR] [extra cmake args]
# GRAFT_SANITIZE=1 runs the ASan + UBSan build instead.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
default=build; [ "${GRAFT_SANITIZE:-0}" = 1 ] && default=build-asan
build=${1:-$root/$default}
shift || true
"$root/tools/scripts/setup.sh"
"$root/tools/scripts/build.sh" "$build" "$@"
cd "$build"
ctest --output-on-failure -j"$(nproc)" --timeout 900
