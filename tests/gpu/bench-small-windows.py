#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The 256-bin small-window paths of entropy on an 8192² uint8 CuPy array, and the default definition in nats and bits.

Usage: PYTHONPATH=<build>/python python3 tests/gpu/bench-small-windows.py LABEL

For each job, the median kernel time (return_timing's kernel_ms) and the
median call time between CUDA events (into out= on the device, as
bench-device-arrays.py times its cuCIM comparison, on the same random image),
each of 20 calls; one Markdown row a job, LABEL first, so that the rows of
two builds (before and after) can be set side by side.
"""

import statistics
import sys

import numpy as np

import entroscope
from medians import cuda_event_median_ms


def main():
    import cupy as cp

    label = sys.argv[1] if len(sys.argv) > 1 else "this build"
    engine = entroscope.Engine("cuda")
    rng = np.random.default_rng(2)
    image = cp.asarray(rng.integers(0, 256, (8192, 8192), dtype=np.uint8))
    out = cp.empty(image.shape, cp.float32)
    cases = [("default 5x5", {}), ("default 5x5 bits", {"units": "bits"})]
    for k in (3, 5, 9):
        for border in ("clip", "symmetric"):
            cases.append((f"skimage square {k} {border}",
                          {"like": "skimage", "border": border, "footprint": np.ones((k, k), bool)}))
    cases.append(("256 levels square 3 exact nats", {"window": 3, "levels": 256, "binning": "exact"}))
    print(f"# {engine.description}")
    print("| build | job | kernel ms | call ms |")
    print("| --- | --- | ---: | ---: |")
    for name, kwargs in cases:
        call = cuda_event_median_ms(cp, lambda: engine.entropy(image, out=out, **kwargs), 20)
        kernel = statistics.median(engine.entropy(image, out=out, return_timing=True, **kwargs)[1].kernel_ms
                                   for _ in range(20))
        print(f"| {label} | {name} | {kernel:.3f} | {call:.3f} |")


if __name__ == "__main__":
    main()
