# SPDX-License-Identifier: MIT
"""Medians of timed calls, shared by the GPU machine's Python benchmarks (run from the repository root as
`python3 tests/gpu/<bench>.py`, which puts this folder on the path). Each times one warm-up call first."""

import statistics
import time


def median_ms(fn, repeats, sync=None):
    """Wall-clock median of `repeats` calls of fn, in ms; sync (e.g. a device synchronize) ends each call."""
    fn()
    if sync:
        sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        if sync:
            sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def cuda_event_median_ms(cp, fn, repeats):
    """Median of `repeats` calls of fn between two CUDA events on CuPy's current stream, in ms."""
    fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)
