#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The scikit-image drop-in's calls at squares 3 and 5 against the engine's and cuCIM's, one build at a time.

Usage: PYTHONPATH=<build>/python:<cucim src> python3 tests/gpu/bench-dropin-calls.py LABEL

On an 8192² uint8 CuPy array: the engine with cuCIM's borders into out=, the drop-in as a cuCIM user calls it
(a CuPy footprint, a new float32 array back) and into a float32 out=, each the median of 20 calls between two CUDA
events; "queued", 20 drop-in calls back to back and one wait, over 20 (the host's work then overlaps the kernels);
cuCIM's rank.entropy, the median of 8. One table row a footprint, LABEL first: run it against two builds in turn
to compare them in one session.
"""

import sys

import cupy as cp
import numpy as np
from cucim.skimage.filters.rank import entropy as cucim_entropy

import entroscope
from entroscope.skimage.filters.rank import entropy as dropin
from medians import cuda_event_median_ms


def main():
    label = sys.argv[1] if len(sys.argv) > 1 else "build"
    engine = entroscope.Engine("cuda")
    image = cp.asarray(np.random.default_rng(2).integers(0, 256, (8192, 8192), dtype=np.uint8))
    out = cp.empty(image.shape, cp.float32)
    for k in (3, 5):
        footprint, host_footprint = cp.ones((k, k), cp.uint8), np.ones((k, k), bool)
        t_engine = cuda_event_median_ms(cp, lambda: engine.entropy(image, like="skimage", border="symmetric",
                                                                   footprint=host_footprint, out=out), 20)
        t_dropin = cuda_event_median_ms(cp, lambda: dropin(image, footprint), 20)
        t_out = cuda_event_median_ms(cp, lambda: dropin(image, footprint, out=out), 20)
        t_cucim = cuda_event_median_ms(cp, lambda: cucim_entropy(image, footprint), 8)
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(20):
            dropin(image, footprint)
        stop.record()
        stop.synchronize()
        t_queued = cp.cuda.get_elapsed_time(start, stop) / 20
        print(f"| {label} | {k} | {t_engine:.3f} | {t_dropin:.3f} | {t_out:.3f} | {t_queued:.3f} | {t_cucim:.3f} "
              f"| {t_cucim / t_engine:.1f} | {t_cucim / t_dropin:.1f} |")


if __name__ == "__main__":
    print("| build | square | engine symmetric ms | drop-in ms | drop-in out=f32 ms | queued ms | cuCIM ms "
          "| × engine | × drop-in |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    main()
