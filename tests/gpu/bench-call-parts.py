#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host microseconds of each part of a drop-in call on CuPy arrays.

Usage: PYTHONPATH=<build>/python python3 tests/gpu/bench-call-parts.py

Calls on a 64² image, whose kernels are shorter than the host's work, so that a call's time is the host's: the
best of three sets of 3000 (the stream drained every 100) for the allocation, the footprint's check, the engine's
call and the drop-in's forms; then the same calls at 8192², where the kernels set the pace.
"""

import time

import cupy as cp
import numpy as np

import entroscope
from entroscope import _device
from entroscope.skimage import _arrays
from entroscope.skimage.filters.rank import entropy as dropin


def per_call_us(fn, n):
    for _ in range(200):
        fn()
    cp.cuda.Device().synchronize()
    best = []
    for _ in range(3):
        start = time.perf_counter()
        for i in range(n):
            fn()
            if i % 100 == 99:
                cp.cuda.Device().synchronize()
        cp.cuda.Device().synchronize()
        best.append((time.perf_counter() - start) / n * 1e6)
    return min(best)


def main():
    rng = np.random.default_rng(1)
    engine = entroscope.default_engine()
    footprint, host_footprint = cp.ones((3, 3), cp.uint8), np.ones((3, 3), bool)
    _arrays.host_footprint(footprint)  # read once: later calls take the speculative path
    for side, n in ((64, 3000), (8192, 300)):
        image = cp.asarray(rng.integers(0, 256, (side, side), dtype=np.uint8))
        out = cp.empty(image.shape, cp.float32)
        parts = []
        if side == 64:
            parts += [
                ("cupy.empty float32", lambda: cp.empty(image.shape, cp.float32)),
                ("the extension's allocator", lambda: _device.empty_like_device(image, (1, side, side), "float32", 2)),
                ("the footprint's event and check", lambda: _arrays.host_footprint(footprint)[1]()),
            ]
        parts += [
            ("engine.entropy into out=, NumPy footprint",
             lambda: engine.entropy(image, like="skimage", footprint=host_footprint, channel_axis=None, out=out)),
            ("engine.entropy, a new result",
             lambda: engine.entropy(image, like="skimage", footprint=host_footprint, channel_axis=None)),
            ("drop-in, NumPy footprint, out=", lambda: dropin(image, host_footprint, out=out)),
            ("drop-in, CuPy footprint, out=", lambda: dropin(image, footprint, out=out)),
            ("drop-in, CuPy footprint, a new result", lambda: dropin(image, footprint)),
        ]
        print(f"\n| {side}²: part | µs a call |\n| --- | ---: |")
        for label, fn in parts:
            print(f"| {label} | {per_call_us(fn, n):.1f} |")


if __name__ == "__main__":
    main()
