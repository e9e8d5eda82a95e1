#!/usr/bin/env bash
# Regenerates test_models/generated/: the models (TensorFlow Lite converter,
# seeded random weights) and their reference outputs (ai-edge-litert's
# reference kernels). Run on demand, not in CI:
#
#   test_models/generate/generate.sh [generate.py options, e.g. --only NAME...]
#
# Makes the virtualenv .venv-gen at the repository root (gitignored) with the
# pinned requirements.txt when it is missing. TensorFlow stays out of the
# system python, whose numpy and ai-edge-litert are the tests' oracle and
# compute the reference outputs here.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/.venv-gen"
out="$root/test_models/generated"
python="${PYTHON:-python3}"

if [[ ! -x "$venv/bin/python" ]]; then
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip
fi
# A no-op when the pins are already installed.
"$venv/bin/pip" install --quiet -r "$here/requirements.txt"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$venv/bin/python" "$here/generate.py" "$out" --manifest "$work/manifest.json" \
  --table "$work/table.md" "$@"

# Reference outputs from the system python (the test oracle).
"$python" "$root/tests/reference/run_reference.py" --manifest "$work/manifest.json"
"$python" - "$work/manifest.json" <<'EOF'
import json, os, sys
bad = []
for e in json.load(open(sys.argv[1])):
  status = json.load(open(os.path.join(e["out_dir"], "status.json")))
  if not status["ok"]:
    bad.append(f'{e["model"]}: {status["error"]}')
  elif "resolver" in status:  # run_reference.py's documented stand-ins.
    print(f'{e["model"]}: reference from the {status["resolver"]} resolver')
if bad:
  sys.exit("the reference interpreter failed:\n  " + "\n  ".join(bad))
EOF
for dir in "$out"/*/; do
  if compgen -G "$dir*/input_*.npy" > /dev/null; then
    "$python" "$here/reference_signatures.py" "${dir%/}.tflite" "$dir"
  fi
done

echo "README rows (test_models/README.md):"
cat "$work/table.md"
du -sh "$out"
