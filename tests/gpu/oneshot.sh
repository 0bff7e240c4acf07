#!/bin/sh
# SPDX-License-Identifier: MIT
# Start-to-exit times of one-shot CLI runs (auto, cpu, cuda) on a gradient-and-noise
# image of 1², 1024² and 8192², after the CLI tests that cover the backend choice.
#   usage (GPU machine, repository root): tests/gpu/oneshot.sh
set -u
[ -f build-gpu/build.ninja ] || meson setup build-gpu -Dgui=disabled -Dpython=disabled -Dcuda=enabled -Dgpu_archs=90 >/dev/null
ninja -C build-gpu >/dev/null 2>&1 || { ninja -C build-gpu | tail -20; exit 1; }
ES_TEST_REQUIRE_CUDA=1 meson test -C build-gpu cli cli-hostile faults auto-backend png-write 2>&1 | grep -E "^ *[0-9]+/"
d=$(mktemp -d)
python3 - "$d" <<'PY'
import sys
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(11)
for n in (1, 1024, 8192):
    y, x = np.mgrid[0:n, 0:n]
    img = ((y * 255 // max(n - 1, 1) + x // 37 + rng.integers(0, 12, (n, n))) & 255).astype(np.uint8)
    open(f"{d}/in{n}.pgm", "wb").write(b"P5 %d %d 255\n" % (n, n) + img.tobytes())
PY
cli=build-gpu/app/entroscope-cli
for n in 1 1024 8192; do $cli equalize -q "$d/in$n.pgm" -o "$d/in$n.png"; done
printf "%-8s %-8s %8s %8s %8s\n" size op auto cpu cuda
for n in 1 1024 8192; do
  for op in entropy equalize; do
    line=""
    for b in auto cpu cuda; do
      best=999
      for r in 1 2 3; do
        t0=$(date +%s.%N); $cli $op -q --backend $b "$d/in$n.png" -o "$d/out.png"; t1=$(date +%s.%N)
        best=$(python3 -c "print(min($best, $t1 - $t0))")
      done
      line="$line $(printf %8.3f $best)"
    done
    printf "%-8s %-8s%s\n" "${n}²" $op "$line"
  done
done
