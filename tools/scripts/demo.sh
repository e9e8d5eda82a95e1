#!/usr/bin/env bash
# The main job: set up, build, apply the example vendor's compiler plugin to a
# bundled model, and run the compiled model through the dispatch runtime next
# to the original on Graft's CPU kernels.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
"$root/tools/scripts/setup.sh"
"$root/tools/scripts/build.sh" "$build" >/dev/null
graft="$build/graft"
model="$root/test_models/residual_mlp.tflite"
out="$build/demo/residual_mlp.compiled.tflite"
mkdir -p "$build/demo"

echo "== graft apply: the example vendor's plugin on $(basename "$model")"
"$graft" apply "$model" -o "$out" \
  --plugin "$build/vendors/example/libgraft_compiler_plugin_example.so"
echo
echo "== graft inspect: the compiled model"
"$graft" inspect "$out" | sed -n '/^subgraph 0/,/^$/p'
echo "== graft run: the original, on Graft's CPU kernels"
"$graft" run "$model" --seed 1 --iterations 20
echo
echo "== graft run: the compiled model, through the example dispatch library"
"$graft" run "$out" --seed 1 --iterations 20 --dispatch-dir "$build/vendors/example"
