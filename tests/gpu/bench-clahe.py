#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CLAHE on the GPU: every CUDA variant against OpenCV bit for bit, then the
speed of each against the copy floor, OpenCV and cuCIM, in one process.

Usage: PYTHONPATH=<build>/python[:<cucim src>] python3 tests/gpu/bench-clahe.py CLI [--side N] [--repeats R]

1. Every variant (`--variant`, CUDA backend) on random 8- and 16-bit images
   from 1×1 to 4099×2053, grids 1×1 to 64×64 and clip limits 0, 0.01, 2, 40
   and random, against `cv2.createCLAHE(clip, grid).apply` and the CPU
   backend: every result must be equal.
2. At N² (8192 by default), 8-bit, clip 2, 8×8 tiles: each variant's kernel
   time from `return_timing` (median of R), the copy floor of the same bytes
   and the pinned transfer floor (`entroscope-cli bench`'s figures, printed
   by CLI), host to host on page-locked (`Engine.zeros`) and NumPy arrays,
   OpenCV's apply on every core, and, when cuCIM's source is on the path,
   cuCIM's `exposure.equalize_adapthist` on a CuPy array (its own
   definition: `like="skimage"` is the equal one; timed as a peer only).
Prints a Markdown table last.
"""

import argparse
import statistics
import subprocess
import sys

import numpy as np

import entroscope
from medians import median_ms

VARIANTS = ("global-atomics", "shared-chunks", "tile-block", "fast")




def check_variants(cv2, rng):
    """Returns (cases, failures)."""
    cuda, cpu = entroscope.Engine("cuda"), entroscope.Engine("cpu")
    sizes = [(1, 1), (1, 37), (29, 1), (2, 3), (7, 64), (64, 7), (4099, 2053), (2053, 4099), (8192, 8192)]
    sizes += [tuple(int(v) for v in rng.integers(1, 1500, 2)) for _ in range(24)]
    cases = failures = 0
    for i, (h, w) in enumerate(sizes):
        dtype = np.uint16 if i % 3 == 2 else np.uint8
        top = 65536 if dtype == np.uint16 else 256
        image = rng.integers(0, top, (h, w)).astype(dtype)
        if i % 2:
            image = (image // 97 * 97).astype(dtype)  # few values: clipping and redistribution matter
        most = 16 if dtype == np.uint16 else 64
        grids = [(8, 8), (int(rng.integers(1, most + 1)), int(rng.integers(1, most + 1)))]
        if i < 3:
            grids.append((most, most))
        for grid in grids:
            clip = [0.0, 2.0, 40.0, 0.01, float(rng.uniform(0, 300))][cases % 5]
            expected = cv2.createCLAHE(clip, grid).apply(image)
            on_cpu = cpu.clahe(image, clip, grid[0], grid[1])
            results = {"cpu": on_cpu}
            for variant in VARIANTS:
                results[variant] = cuda.clahe(image, clip, grid[0], grid[1], variant=variant)
            for name, got in results.items():
                cases += 1
                if got.dtype != expected.dtype or not np.array_equal(got, expected):
                    failures += 1
                    bad = np.argwhere(got != expected)
                    print(f"DIFFERS {name} {h}x{w} {dtype.__name__} clip={clip} grid={grid}: "
                          f"{len(bad)} pixels, first {bad[:1].tolist()}", flush=True)
    return cases, failures


def print_floors(cli, side):
    """Prints the CLI's benchmark of CLAHE at side², which gives the copy and
    transfer floors (ms) of side² bytes in and out beside each variant."""
    print(subprocess.run([cli, "bench", "--backend", "cuda", "--ops", "clahe", "--sizes", str(side), "--repeats", "5"],
                         capture_output=True, text=True, check=True).stdout)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cli")
    parser.add_argument("--side", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    import cv2

    rng = np.random.default_rng(2053)
    print(f"OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads; {entroscope.Engine('cuda').description}")
    cases, failures = check_variants(cv2, rng)
    print(f"bit-identity against cv2.createCLAHE().apply: {cases - failures} equal, {failures} differ", flush=True)

    print_floors(args.cli, args.side)
    side, repeats = args.side, args.repeats
    image = rng.integers(0, 256, (side, side)).astype(np.uint8)
    engine = entroscope.Engine("cuda")
    pinned = engine.zeros((side, side), np.uint8)
    pinned[...] = image
    pinned_out = engine.zeros((side, side), np.uint8)
    rows = []
    for variant in VARIANTS:
        kernel = []
        for _ in range(repeats):
            _, timing = engine.clahe(pinned, 2.0, 8, 8, variant=variant, out=pinned_out, return_timing=True)
            kernel.append(timing.kernel_ms)
        numpy_ms = median_ms(lambda: engine.clahe(image, 2.0, 8, 8, variant=variant), repeats)
        pinned_ms = median_ms(lambda: engine.clahe(pinned, 2.0, 8, 8, variant=variant, out=pinned_out), repeats)
        rows.append((variant, statistics.median(kernel), pinned_ms, numpy_ms))
    clahe = cv2.createCLAHE(2.0, (8, 8))
    opencv_ms = median_ms(lambda: clahe.apply(image), repeats)
    cucim_ms = None
    try:
        import cupy as cp
        from cucim.skimage import exposure

        device = cp.asarray(image)
        exposure.equalize_adapthist(device, kernel_size=side // 8, clip_limit=0.01)
        cp.cuda.Device().synchronize()
        times = []
        for _ in range(max(3, repeats // 4)):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            exposure.equalize_adapthist(device, kernel_size=side // 8, clip_limit=0.01)
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop))
        cucim_ms = statistics.median(times)
    except ImportError as e:
        print(f"cuCIM not timed: {e}")

    print(f"\n### CLAHE, {side}², 8-bit, clip 2, 8×8 tiles, median of {repeats}\n")
    print("| variant | kernel ms | host→host page-locked ms | host→host NumPy ms |")
    print("| --- | ---: | ---: | ---: |")
    for variant, kernel_ms, pinned_ms, numpy_ms in rows:
        print(f"| `{variant}` | {kernel_ms:.3f} | {pinned_ms:.2f} | {numpy_ms:.2f} |")
    print(f"\nOpenCV {cv2.__version__} apply ({cv2.getNumThreads()} threads): {opencv_ms:.2f} ms")
    if cucim_ms is not None:
        print(f"cuCIM equalize_adapthist (device array, kernel_size {side // 8}, clip 0.01): {cucim_ms:.2f} ms")
    print("(floors: see the CLI bench above)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
