#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""3-D local entropy against scikit-image's rank.entropy, for PERFORMANCE.md:
the same uint8 volume, cube 3 and ball 3, exact bins (like="skimage": 256
bins on uint8), scikit-image on one thread and entroscope on the CPU.

    OMP_NUM_THREADS=2 PYTHONPATH=build/python python3 python/benchmarks/bench_volumes.py \\
        [--shape 64,128,128] [--repeats 3] [--skimage-limit 180]

scikit-image's rank filters are single-threaded C; entroscope runs on
OMP_NUM_THREADS threads. Both results are compared (max |difference|, bits)
so that the figures are for the same numbers. Where one scikit-image call
would take longer than --skimage-limit seconds (estimated from a slab of
planes), its time is extrapolated from that slab and marked so. Prints Markdown.
"""

import argparse
import os
import statistics
import time
import warnings

import numpy as np

# Before OpenMP starts: two threads unless told otherwise (the "2 cores").
os.environ.setdefault("OMP_NUM_THREADS", "2")

import entroscope  # noqa: E402
from skimage.filters import rank  # noqa: E402
from skimage.morphology import ball, cube  # noqa: E402


def best_of(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), result


def skimage_entropy(volume, footprint):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rank.entropy(volume, footprint)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="64,128,128", help="planes,rows,columns")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skimage-limit", type=float, default=180.0,
                        help="seconds one scikit-image call may take before it is extrapolated from a slab")
    args = parser.parse_args()
    shape = tuple(int(side) for side in args.shape.split(","))
    volume = np.random.default_rng(1).integers(0, 256, shape, dtype=np.uint8)
    voxels = volume.size

    print(f"{shape[0]}×{shape[1]}×{shape[2]} uint8, 256 bins (like=\"skimage\"); entroscope "
          f"{entroscope.cpu_threads()} CPU threads, scikit-image one thread\n")
    print("| footprint | scikit-image | entroscope | speed-up | max abs diff (bits) |")
    print("| --- | --- | --- | --- | --- |")
    for name, footprint, window in [("cube 3", cube(3), {"box": (3, 3, 3)}), ("ball 3", ball(3), {"ball": 3})]:
        half = footprint.shape[0] // 2
        ours, _, got = best_of(lambda: entroscope.entropy(volume, like="skimage", backend="cpu", **window),
                               args.repeats)
        # A slab of planes first: its time per voxel says whether the whole volume fits the limit.
        slab_planes = min(shape[0], 8 + 2 * half)
        slab = volume[:slab_planes]
        slab_time, _, _ = best_of(lambda: skimage_entropy(slab, footprint), 1)
        estimate = slab_time * voxels / slab.size
        if estimate <= args.skimage_limit:
            theirs, _, want = best_of(lambda: skimage_entropy(volume, footprint), 1 if estimate > 20 else args.repeats)
            diff = f"{np.abs(got - want).max():.1e}"
            theirs_text = f"{theirs:.2f} s"
        else:
            theirs = estimate
            inner = slice(half, slab_planes - half)  # the slab's planes whose windows lie inside it
            diff = f"{np.abs(got[:slab_planes][inner] - skimage_entropy(slab, footprint)[inner]).max():.1e} (slab)"
            theirs_text = f"≈{theirs:.0f} s (extrapolated from {slab_planes} planes)"
        print(f"| {name} | {theirs_text} ({voxels / theirs / 1e6:.2f} Mvox/s) | {ours * 1e3:.1f} ms "
              f"({voxels / ours / 1e6:.1f} Mvox/s) | {theirs / ours:.0f}× | {diff} |")


if __name__ == "__main__":
    main()
