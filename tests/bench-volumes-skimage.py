#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""scikit-image's 3-D rank.entropy on one thread, the peer of tests/bench-volumes-cpu (PERFORMANCE.md,
"CPU 3-D entropy"): cube 3 (np.ones((3, 3, 3))) and ball 3 (morphology.ball(3)) on a uniformly random
uint8 volume.

    /usr/bin/python3 tests/bench-volumes-skimage.py WxHxD [RUNS]

Prints the best and the median wall time of RUNS (default 3), and the least CPU time."""
import statistics
import sys
import time

import numpy as np
from skimage.filters.rank import entropy
from skimage.morphology import ball

width, height, depth = (int(side) for side in sys.argv[1].split("x"))
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
volume = np.random.default_rng(1).integers(0, 256, (depth, height, width), dtype=np.uint8)
for name, footprint in (("cube 3", np.ones((3, 3, 3), np.uint8)), ("ball 3", ball(3))):
    walls, cpus = [], []
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        entropy(volume, footprint)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    mvox = volume.size / 1e6
    print(f"{sys.argv[1]} {name}: best {min(walls) * 1e3:.0f} ms ({mvox / min(walls):.3f} Mvox/s), "
          f"median {statistics.median(walls) * 1e3:.0f} ms, CPU time best {min(cpus) * 1e3:.0f} ms", flush=True)
