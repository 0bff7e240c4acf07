#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Entropy definitions on the CPU against scikit-image's rank.entropy, in one run.

Usage: PYTHONPATH=<build>/python /usr/bin/python3 tests/bench-definitions.py [--size N] [--repeats R]

For each definition: the best and the median time of entroscope.entropy (CPU
backend, OMP_NUM_THREADS threads) and of skimage.filters.rank.entropy with
the same footprint (one thread, as it runs), on the same random image, and
the speed-up of the best times (on a shared machine the best is the time
without another program's work; the medians are given beside). Both
results are compared (1e-5) where scikit-image can compute the definition
(clip, exact bins); for the others (borders scikit-image does not have) its
time for the same window with clip stands in. Prints a Markdown table.
"""

import argparse
import os
import statistics
import time
import warnings

import numpy as np

import entroscope
from skimage.filters import rank
from skimage.morphology import disk

warnings.simplefilter("ignore")  # scikit-image's "Bad rank filter performance" for many bins


def timings_ms(fn, repeats):
    """(best, median) of `repeats` runs after a warm-up."""
    fn()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return min(times), statistics.median(times)


def footprint_of(kw):
    if "disk" in kw:
        return disk(kw["disk"])
    if "rect" in kw:
        return np.ones(kw["rect"], np.uint8)
    if "footprint" in kw:
        return kw["footprint"]
    return np.ones((kw.get("window", 5),) * 2, np.uint8)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    n = args.size
    u8 = rng.integers(0, 256, (n, n), dtype=np.uint8)
    u12 = rng.integers(0, 4096, (n // 2, n // 2), dtype=np.uint16)
    u16 = rng.integers(0, 65536, (n // 4, n // 4), dtype=np.uint16)
    ring = (rng.integers(0, 3, (9, 9)) > 0).astype(np.uint8)
    ring[4, 4] = 1
    mask = rng.integers(0, 8, (n, n)) > 0
    cases = [
        ("u8", u8, dict(window=5)),
        ("u8", u8, dict(window=9)),
        ("u8", u8, dict(window=31)),
        ("u8", u8, dict(disk=3)),
        ("u8", u8, dict(disk=5)),
        ("u8", u8, dict(disk=15)),
        ("u8", u8, dict(rect=(3, 15))),
        ("u8", u8, dict(footprint=ring)),
        ("u8", u8, dict(window=5, border="symmetric")),
        ("u8", u8, dict(window=5, border="mirror")),
        ("u8", u8, dict(window=5, border="replicate")),
        ("u8", u8, dict(window=5, border="constant:0")),
        ("u8", u8, dict(disk=5, mask=mask)),
        ("u8", u8, dict(window=5, units="normalized")),
        ("u8 matlab", u8, dict(like="matlab")),
        ("u8 fiji", u8, dict(like="fiji")),
        ("u16 12-bit", u12, dict(window=5)),
        ("u16 12-bit", u12, dict(disk=5)),
        ("u16 16-bit", u16, dict(disk=2)),
        ("u16 16-bit", u16, dict(window=5)),
    ]
    print(f"# {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; entroscope CPU threads "
          f"{entroscope.cpu_threads()}; best / median of {args.repeats}")
    print("| image | definition | entroscope ms | scikit-image ms | speed-up (best) | max diff |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    engine = entroscope.Engine("cpu")
    for name, image, kw in cases:
        kw = dict(kw)
        like = kw.pop("like", None)
        ours_kw = dict(kw, like=like or "skimage")
        if like == "fiji":
            fp = disk(3)
        elif like == "matlab":
            fp = np.ones((9, 9), np.uint8)
        else:
            fp = footprint_of(kw)
        skm_mask = kw.get("mask")
        ours = engine.entropy(image, **ours_kw)
        ours_ms = timings_ms(lambda: engine.entropy(image, **ours_kw), args.repeats)
        theirs = rank.entropy(image, fp, mask=None if skm_mask is None else skm_mask.astype(np.uint8))
        theirs_ms = timings_ms(lambda: rank.entropy(image, fp, mask=None if skm_mask is None else
                                                    skm_mask.astype(np.uint8)), args.repeats)
        comparable = like is None and "border" not in kw and kw.get("units") != "normalized"
        if comparable:
            inside = np.ones(image.shape, bool) if skm_mask is None else skm_mask
            diff = f"{np.abs(ours[inside] - theirs[inside]).max():.1e}"
        else:
            diff = "n/a"
        label = " ".join(f"{k}={v if k not in ('mask', 'footprint') else 'array'}" for k, v in kw.items())
        if like:
            label = f"like={like} " + label
        print(f"| {name} {image.shape[1]}² | {label} | {ours_ms[0]:.1f} / {ours_ms[1]:.1f} | "
              f"{theirs_ms[0]:.0f} / {theirs_ms[1]:.0f} | {theirs_ms[0] / ours_ms[0]:.0f}× | {diff} |", flush=True)


if __name__ == "__main__":
    main()
