#!/usr/bin/env bash
# What Graft costs on disk: the stripped sizes of libgraft.so and of the
# graft CLI in BUILD, and of libgraft.so in a selective build (GRAFT_KERNELS)
# that keeps only the CPU kernels MODEL uses.
#   bench/sdk_sizes.sh BUILD [MODEL] [SELECTIVE_BUILD_DIR]
# MODEL defaults to test_models/residual_mlp.tflite; the selective build is
# configured in SELECTIVE_BUILD_DIR (default BUILD-selective) with tests and
# benchmarks off, and only libgraft.so is built there (minutes on 2 cores).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: sdk_sizes.sh BUILD [MODEL] [SELECTIVE_BUILD_DIR]}
model=${2:-$root/test_models/residual_mlp.tflite}
selective=${3:-$build-selective}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

stripped() {  # prints the stripped size of $1 in bytes
  strip -o "$tmp/s" "$1"
  stat -c %s "$tmp/s"
}
row() {  # name file
  local full bytes
  full=$(stat -c %s "$2")
  bytes=$(stripped "$2")
  printf '%-44s %12s %12s\n' "$1" "$full" "$bytes"
}

# The model's builtin ops, as GRAFT_KERNELS wants them.
ops=$("$build/graft" inspect --json "$model" | python3 -c '
import json, sys
print(";".join(sorted({o["op"] for o in json.load(sys.stdin)["op_histogram"]
                       if not o["op"].startswith("CUSTOM")})))')

cmake -S "$root" -B "$selective" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGRAFT_BUILD_TESTS=OFF -DGRAFT_BUILD_BENCH=OFF "-DGRAFT_KERNELS=$ops" \
  >/dev/null
cmake --build "$selective" --target graft_app -j"$(nproc)" >/dev/null

printf '%-44s %12s %12s\n' "file" "bytes" "stripped"
row "libgraft.so (all kernels)" "$(readlink -f "$build/libgraft.so")"
row "bin/graft (all kernels)" "$build/graft"
row "libgraft.so (GRAFT_KERNELS of $(basename "$model"))" \
  "$(readlink -f "$selective/libgraft.so")"
echo "GRAFT_KERNELS=\"$ops\""
