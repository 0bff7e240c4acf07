#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Kernel times of the jobs that run the span-counts kernel (entropy-span-counts.cu), one build at a time.

Usage: PYTHONPATH=<build>/python python3 tests/gpu/bench-span-counts.py LABEL

On an 8192² uint8 CuPy array, the median of 15 `return_timing` kernel times a job, in ms, one table row, LABEL
first: `like="skimage"` at 256 bins over squares 5..31 and disks 5 and 15, clipped and symmetric borders; the
default definition (16 levels, clipped) on disks and a rectangle; masked jobs (a disk-shaped mask over 64 % of the
image). Run it against two builds in turn, alternating, to compare two kernels on one machine.
"""

import statistics
import sys

import cupy as cp
import numpy as np

import entroscope

SIDE = 8192


def disk(r):
    y, x = np.ogrid[-r:r + 1, -r:r + 1]
    return x * x + y * y <= r * r


def jobs():
    """(column name, keywords) of every job timed."""
    footprints = [(f"square {k}", np.ones((k, k), bool)) for k in (5, 9, 15, 31)]
    footprints += [(f"disk {r}", disk(r)) for r in (5, 15)]
    for name, footprint in footprints:
        for border in ("clip", "symmetric"):
            yield f"{name} {border}", dict(like="skimage", footprint=footprint, border=border, channel_axis=None)
    for r in (3, 5, 9, 15):
        yield f"disk={r}", dict(disk=r)
    yield "rect=(7, 15)", dict(rect=(7, 15))
    for r in (5, 15):
        yield f"disk={r} masked", dict(disk=r, mask=True)
    for name, footprint in (("square 5", np.ones((5, 5), bool)), ("disk 5", disk(5))):
        yield f"skimage {name} masked", dict(like="skimage", footprint=footprint, mask=True, channel_axis=None)


def main():
    label = sys.argv[1] if len(sys.argv) > 1 else "build"
    engine = entroscope.Engine("cuda")
    image = cp.asarray(np.random.default_rng(2).integers(0, 256, (SIDE, SIDE), dtype=np.uint8))
    y, x = np.ogrid[:SIDE, :SIDE]
    mask = cp.asarray((x - SIDE / 2) ** 2 + (y - SIDE / 2) ** 2 <= (0.45 * SIDE) ** 2)
    out = cp.empty(image.shape, cp.float32)
    names, times = [], []
    for name, keywords in jobs():
        if keywords.get("mask") is True:
            keywords["mask"] = mask
        engine.entropy(image, out=out, **keywords)
        times.append(statistics.median(engine.entropy(image, out=out, return_timing=True, **keywords)[1].kernel_ms
                                       for _ in range(15)))
        names.append(name)
    print("| build | " + " | ".join(names) + " |")
    print(f"| {label} | " + " | ".join(f"{t:.3f}" for t in times) + " |")


if __name__ == "__main__":
    main()
