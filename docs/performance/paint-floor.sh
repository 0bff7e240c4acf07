#!/bin/sh
# SPDX-License-Identifier: MIT
# The floor of a frame's paint under Xvfb, as docs/performance/window.md gives it: builds paint-floor.c
# and runs it RUNS times at 1600x1000 with GTK's cairo renderer (GSK_RENDERER=cairo, the one Xvfb
# offers), damaging the whole window (margin 0) and all of it but a strip of one pixel (margin 1).
# Needs gcc, pkg-config, GTK 4's headers and xvfb-run.
#   usage: docs/performance/paint-floor.sh [RUNS]   (default 3 runs)
set -eu
runs=${1:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
gcc -O2 -o "$dir/paint-floor" "$(dirname "$0")/paint-floor.c" $(pkg-config --cflags --libs gtk4)
export GSK_RENDERER=cairo NO_AT_BRIDGE=1
for run in $(seq "$runs"); do
  for margin in 0 1; do
    echo "run $run, load $(cut -d' ' -f1 /proc/loadavg): $(xvfb-run -a -s '-screen 0 1600x1000x24' "$dir/paint-floor" "$margin" 2>/dev/null)"
  done
done
