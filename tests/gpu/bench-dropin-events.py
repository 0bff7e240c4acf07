#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the scikit-image drop-in's square 3 call spends its time over the engine's, between CUDA events.

Usage: PYTHONPATH=<build>/python python3 tests/gpu/bench-dropin-events.py

On an 8192² uint8 CuPy array, one call between two CUDA events (the median of 30), three rounds alternating in one
process: the engine's call (with host work spun before and after it, to show that only what precedes the kernels
counts), with a new result, with the drop-in's footprint event and check around it; the drop-in's forms; and the
drop-in with no footprint check patched in, which is wrong and only bounds what the check costs.
"""
import time

import cupy as cp
import numpy as np

import entroscope
from entroscope.skimage.filters.rank import entropy as dropin
from entroscope.skimage import _arrays
from medians import cuda_event_median_ms

engine = entroscope.default_engine()
image = cp.asarray(np.random.default_rng(2).integers(0, 256, (8192, 8192), dtype=np.uint8))
out = cp.empty(image.shape, cp.float32)
fp, hfp = cp.ones((3, 3), cp.uint8), np.ones((3, 3), bool)
padded = np.ones((3, 3), bool)


def spin(us):
    end = time.perf_counter() + us * 1e-6
    while time.perf_counter() < end:
        pass


def engine_with_check():
    cells, check = _arrays.host_footprint(fp)
    engine.entropy(image, like="skimage", footprint=padded, channel_axis=None, out=out)
    if check is not None:
        check()


def no_check(value):
    return _arrays.host_footprint(value)[0], None


cases = {
    "engine clip, out=": lambda: engine.entropy(image, like="skimage", footprint=padded, channel_axis=None, out=out),
    "engine clip, out=, 10 µs spin first": lambda: (spin(10), engine.entropy(image, like="skimage", footprint=padded,
                                                                           channel_axis=None, out=out)),
    "engine clip, out=, 10 µs spin after": lambda: (engine.entropy(image, like="skimage", footprint=padded,
                                                                  channel_axis=None, out=out), spin(10)),
    "engine clip, new result": lambda: engine.entropy(image, like="skimage", footprint=padded, channel_axis=None),
    "engine clip, out=, footprint event + check": engine_with_check,
    "drop-in, NumPy fp, out=": lambda: dropin(image, hfp, out=out),
    "drop-in, CuPy fp, out=": lambda: dropin(image, fp, out=out),
    "drop-in, CuPy fp, new": lambda: dropin(image, fp),
}
patched = {
    "drop-in, CuPy fp, new, no check (wrong, for the bound)": no_check,
}
rank_module = __import__("entroscope.skimage.filters.rank", fromlist=["host_footprint"])
original = rank_module.host_footprint
results = {name: [] for name in list(cases) + list(patched)}


dropin(image, fp)
for r in range(3):
    for name, fn in cases.items():
        results[name].append(cuda_event_median_ms(cp, fn, 30))
    for name, replacement in patched.items():
        rank_module.host_footprint = replacement
        try:
            results[name].append(cuda_event_median_ms(cp, lambda: dropin(image, fp), 30))
        finally:
            rank_module.host_footprint = original
print("| square 3, 8192² | rounds 1 / 2 / 3, ms |\n| --- | --- |")
for name, values in results.items():
    print(f"| {name} | " + " / ".join(f"{v:.3f}" for v in values) + " |")
