#!/bin/sh
# Builds app.cc against the installed Graft with pkg-config only, as an app
# outside the tree would, and runs it.
#   build_and_run.sh PREFIX WORK_DIR -- cxx_app arguments...
set -eu
prefix=$1
work=$2
shift 3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# No other pkg-config directory may answer for graft.
export PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig"
pkg-config --exists --print-errors graft
libdir=$(pkg-config --variable=libdir graft)
${CXX:-c++} -std=c++17 -Wall -Wextra -Werror "$here/app.cc" -o "$work/cxx_app" \
  $(pkg-config --cflags --libs graft) -Wl,-rpath,"$libdir"
exec "$work/cxx_app" "$@"
