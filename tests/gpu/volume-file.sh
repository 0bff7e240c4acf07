#!/bin/sh
# SPDX-License-Identifier: MIT
# The GPU machine's file-to-file run for volumes: a SIDE³ uint8 multi-page TIFF
# (tifffile, one page a plane) to a float TIFF through `entroscope-cli entropy
# --ball R`, against the floor of reading the input's bytes and writing the
# output's (fsync'd, as the CLI's atomic output is). Best of 3 of each.
#   usage: tests/gpu/volume-file.sh CLI [SIDE [RADIUS]]
set -eu
cli=$1
side=${2:-512}
radius=${3:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$dir/vol.tif" "$side" <<'PY'
import sys
import numpy as np
import tifffile
side = int(sys.argv[2])
volume = np.random.default_rng(1).integers(1, 256, (side, side, side), dtype=np.uint8)
tifffile.imwrite(sys.argv[1], volume)
PY
best () {  # best wall time in seconds of 3 runs of "$@"
  python3 - "$@" <<'PY'
import subprocess, sys, time
times = []
for _ in range(3):
    t = time.perf_counter()
    subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
    times.append(time.perf_counter() - t)
print(f"{min(times):.3f}")
PY
}
floor=$(best python3 -c "
import os, sys
data = open('$dir/vol.tif', 'rb').read()
out = bytes(4 * $side ** 3)
with open('$dir/floor.bin', 'wb') as f:
    f.write(out); f.flush(); os.fsync(f.fileno())
")
for compression in fast default; do
  t=$(best "$cli" entropy --ball "$radius" --compression $compression "$dir/vol.tif" -o "$dir/out.tif")
  echo "| ${side}³ u8 TIFF → float TIFF, ball $radius, --compression $compression | $t s | floor $floor s | $(python3 -c "print(f'{$t / $floor:.2f}')")× |"
done
