#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Entroscope's rank kernel (square 3) against cuCIM's rank.entropy, rounds alternating in one process.

Usage: PYTHONPATH=<build>/python:<cucim src>:tests/gpu python3 tests/gpu/rank-vs-cucim.py [LABEL]

On an 8192² uint8 CuPy array, `like="skimage", border="symmetric"` (cuCIM
reflects at the borders) with square 3 and square 5 footprints: three
rounds, each the median of 20 calls of entroscope then of cuCIM between
CUDA events, device in and device out, so that a change of the machine's
state shows in both. Prints one Markdown row a round. Under Nsight
Compute, `-k regex:entropy_ranks -s 2 -c 1` profiles entroscope's square 3.
"""

import sys
import warnings

import numpy as np

import entroscope
from medians import cuda_event_median_ms


def main():
    import cupy as cp
    from cucim.skimage.filters.rank import entropy as cucim_entropy

    label = sys.argv[1] if len(sys.argv) > 1 else "this build"
    engine = entroscope.Engine("cuda")
    rng = np.random.default_rng(2)
    image = cp.asarray(rng.integers(0, 256, (8192, 8192), dtype=np.uint8))
    print(f"# {engine.description}")
    print("| build | footprint | round | entroscope ms | cuCIM ms | × | max diff, bits |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for side in (3, 5):
        footprint = cp.ones((side, side), cp.uint8)
        host_footprint = cp.asnumpy(footprint).astype(bool)
        out = cp.empty(image.shape, cp.float32)

        def ours():
            engine.entropy(image, like="skimage", border="symmetric", footprint=host_footprint, out=out)

        def theirs():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return cucim_entropy(image, footprint)

        ours()
        diff = float(cp.abs(out - theirs().astype(cp.float32)).max())
        for round_ in range(1, 4):
            t_ours = cuda_event_median_ms(cp, ours, 20)
            t_theirs = cuda_event_median_ms(cp, theirs, 20)
            print(f"| {label} | square {side} | {round_} | {t_ours:.3f} | {t_theirs:.2f} | "
                  f"{t_theirs / t_ours:.1f}× | {diff:.1e} |")


if __name__ == "__main__":
    main()
