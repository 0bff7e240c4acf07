#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Calls on CuPy arrays: what a call costs beyond its kernels, and entroscope against cuCIM's rank.entropy.

Usage: PYTHONPATH=<build>/python:<cucim src> python3 tests/gpu/bench-device-arrays.py [--side N] [--repeats R]

Part 1, the call's overhead: for each definition, the wall time of a call
on a CuPy array (into out=, then a device synchronize, as a pipeline waits
for it) less that same call's kernel time (return_timing's kernel_ms), the
median over the calls: what the call adds (argument parsing, the stream
wait, launches and events, and here the Timing it returns, for which the
call waits for its kernels). Each call against its own kernels, so that the
kernels' drift from run to run (±1 % of 3 ms is ±30 µs) stays out of the
difference. Beside it, the plain call, ordered on CuPy's stream without
waiting, against the timed call's kernel just before it. Target: kernel +
50 µs.

Part 2, against cuCIM: `filters.rank.entropy` on the same CuPy array with the
same footprint (square 3, 5, 9, 15, 31; disk 5, 15), each timed with CUDA
events around the call, device in and device out. The engine runs
`like="skimage", border="symmetric"` (cuCIM reflects at the borders, and
counts every value of uint8 its own bin, in bits), and the two results are
compared; the drop-in `entroscope.skimage.filters.rank.entropy` runs as a
cuCIM user calls it (a CuPy footprint, no out=: a float32 CuPy array back,
as cuCIM's), and into a float64 out= (scikit-image's dtype). cuCIM runs
from a source checkout (PERFORMANCE.md says how). Markdown tables last.
"""

import argparse
import statistics

import numpy as np

import entroscope
import time

from medians import cuda_event_median_ms


def overhead_table(cp, engine, side, repeats):
    rng = np.random.default_rng(1)
    image = cp.asarray(rng.integers(0, 256, (side, side), dtype=np.uint8))
    rows = []
    cases = [
        ("entropy 5×5 (default)", "entropy", {}),
        ("entropy 9×9, 256 bins", "entropy", {"window": 9, "levels": 256}),
        ("entropy like=skimage square 3", "entropy", {"like": "skimage", "footprint": np.ones((3, 3), bool)}),
        ("entropy like=skimage disk 15", "entropy", {"like": "skimage", "disk": 15}),
        ("entropy like=matlab", "entropy", {"like": "matlab"}),
        ("equalize", "equalize", {}),
        ("sharpen", "sharpen", {}),
        ("clahe 8×8", "clahe", {}),
    ]
    sync = cp.cuda.Device().synchronize
    for label, op, kwargs in cases:
        out = engine.run(op, image, **kwargs)
        kernels, walls, ordered = [], [], []
        for _ in range(repeats):
            start = time.perf_counter()
            timing = engine.run(op, image, out=out, return_timing=True, **kwargs)[1]
            sync()
            walls.append((time.perf_counter() - start) * 1e3)
            kernels.append(timing.kernel_ms)
            # The call as a pipeline makes it: no Timing, so ordered on CuPy's stream, not waited for.
            start = time.perf_counter()
            engine.run(op, image, out=out, **kwargs)
            sync()
            ordered.append((time.perf_counter() - start) * 1e3)
        extra = statistics.median(w - k for w, k in zip(walls, kernels)) * 1e3
        ordered_extra = statistics.median(o - k for o, k in zip(ordered, kernels)) * 1e3
        rows.append((label, statistics.median(kernels), statistics.median(walls), extra, statistics.median(ordered),
                     ordered_extra))
    print(f"\n### A call on a CuPy array, {side}², median of {repeats}\n")
    print("Timed: return_timing=True, which waits for the kernels; ordered: the plain call, ordered on CuPy's "
          "stream. Each call then a device synchronize; − kernel: against the timed call's kernel beside it.\n")
    print("| definition | kernel ms | timed call ms | − kernel µs | ordered call ms | − kernel µs |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, kernel, wall, extra, ordered_wall, ordered_extra in rows:
        print(f"| {label} | {kernel:.3f} | {wall:.3f} | {extra:.0f} | {ordered_wall:.3f} | {ordered_extra:.0f} |")


def cucim_table(cp, engine, side, repeats):
    try:
        from cucim.skimage.filters.rank import entropy as cucim_entropy
        from cucim.skimage.morphology import disk
    except ImportError as error:
        print(f"\ncuCIM is not importable ({error}): its comparison is skipped")
        return
    from entroscope.skimage.filters.rank import entropy as dropin_entropy
    rng = np.random.default_rng(2)
    image = cp.asarray(rng.integers(0, 256, (side, side), dtype=np.uint8))
    footprints = [(f"square {k}", cp.ones((k, k), cp.uint8)) for k in (3, 5, 9, 15, 31)]
    footprints += [(f"disk {r}", disk(r)) for r in (5, 15)]
    rows = []
    for label, footprint in footprints:
        host_fp = cp.asnumpy(footprint).astype(bool)
        out = cp.empty(image.shape, cp.float32)

        def ours():
            engine.entropy(image, like="skimage", border="symmetric", footprint=host_fp, out=out)

        theirs_result = cucim_entropy(image, footprint)
        ours()
        diff = float(cp.abs(out - theirs_result.astype(cp.float32)).max())
        t_ours = cuda_event_median_ms(cp, ours, repeats)
        # The drop-in as a cuCIM user calls it, and into scikit-image's float64.
        out64 = cp.empty(image.shape, cp.float64)
        t_dropin = cuda_event_median_ms(cp, lambda: dropin_entropy(image, footprint), repeats)
        t_dropin64 = cuda_event_median_ms(cp, lambda: dropin_entropy(image, footprint, out=out64), repeats)
        t_theirs = cuda_event_median_ms(cp, lambda: cucim_entropy(image, footprint), max(3, repeats // 4))
        rows.append((label, t_ours, t_dropin, t_dropin64, t_theirs, diff))
    print(f"\n### rank.entropy on a CuPy array, {side}² uint8: entroscope against cuCIM\n")
    print("Engine: `engine.entropy(like=\"skimage\", border=\"symmetric\", out=float32)`, cuCIM's borders; "
          "drop-in: `entroscope.skimage.filters.rank.entropy(image, footprint)`, scikit-image's borders, returning "
          "float32 as cuCIM does, and into a float64 out=; cuCIM: its default call (float32). "
          "|diff|: engine against cuCIM, bits.\n")
    print("| footprint | engine ms | drop-in ms | drop-in f64 ms | cuCIM ms | × engine | × drop-in "
          "| × drop-in f64 | max |diff| |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, ours_ms, d32, d64, theirs_ms, diff in rows:
        print(f"| {label} | {ours_ms:.3f} | {d32:.3f} | {d64:.3f} | {theirs_ms:.2f} | {theirs_ms / ours_ms:.1f}× "
              f"| {theirs_ms / d32:.1f}× | {theirs_ms / d64:.1f}× | {diff:.1e} |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--side", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    import cupy as cp

    engine = entroscope.Engine("cuda")
    print(f"# {engine.description}")
    overhead_table(cp, engine, args.side, args.repeats)
    cucim_table(cp, engine, args.side, args.repeats)


if __name__ == "__main__":
    main()
