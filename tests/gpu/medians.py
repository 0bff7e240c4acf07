# SPDX-License-Identifier: MIT
"""Medians of timed calls, shared by the GPU machine's Python benchmarks (run from the repository root as
`python3 tests/gpu/<bench>.py`, which puts this folder on the path). Each makes warm-up calls first: 10, as
`cupyx.profiler.benchmark` does, or as many as one second holds. A call's first repeats set up what later ones
reuse (pinned staging, a reading stream, Python's specialised bytecode): on an H200, the drop-in's square 3 call
took 1.1, 0.29 and 0.23 ms in its first three timed calls after one warm-up, and 0.21–0.22 from the fifth on."""

import statistics
import time

WARMUP_CALLS = 10
WARMUP_SECONDS = 1.0


def warm_up(fn, sync=None):
    """Calls fn WARMUP_CALLS times, or until WARMUP_SECONDS have passed."""
    end = time.perf_counter() + WARMUP_SECONDS
    for _ in range(WARMUP_CALLS):
        fn()
        if sync:
            sync()
        if time.perf_counter() > end:
            break


def median_ms(fn, repeats, sync=None):
    """Wall-clock median of `repeats` calls of fn, in ms; sync (e.g. a device synchronize) ends each call."""
    warm_up(fn, sync)
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
    warm_up(fn, cp.cuda.Device().synchronize)
    times = []
    for _ in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return statistics.median(times)
