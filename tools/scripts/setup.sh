#!/usr/bin/env bash
# Installs what Graft needs on a Debian machine: build tools and libraries from
# Debian's packages, the test oracle (ai-edge-litert, numpy) from PyPI.
# Idempotent and quiet when everything is already there.
set -euo pipefail

apt_packages=(
  cmake g++ make ninja-build lld binutils pkg-config python3
  libabsl-dev libflatbuffers-dev flatbuffers-compiler
  libgtest-dev libgmock-dev libbenchmark-dev
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev
  clang libclang-rt-dev  # tests/fuzz: libFuzzer (.ci/run's fuzz stage)
  chromium  # tests/cli/report_html_test.py renders graft run --report-html
)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# The reference interpreter and numpy are the correctness oracle for tests;
# ai-edge-litert also carries the real LiteRT vendor plugins, and openvino is
# what Intel's plugin and dispatch library link (libopenvino.so.2631).
python=${PYTHON:-python3}
pip_packages=("ai-edge-litert==2.3.0" "openvino==2026.3.1" "numpy")
if ! "$python" -c 'import ai_edge_litert.interpreter, numpy, openvino' >/dev/null 2>&1; then
  echo "setup: installing Python packages: ${pip_packages[*]}"
  "$python" -m pip install -q --disable-pip-version-check "${pip_packages[@]}" \
    || "$python" -m pip install -q --disable-pip-version-check --break-system-packages "${pip_packages[@]}"
fi
