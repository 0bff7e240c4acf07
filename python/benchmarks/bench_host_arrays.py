#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Host arrays against the PCIe transfer floor, for PERFORMANCE.md: each 2-D entropy
definition on an 8192² uint8 image, host to host, from a NumPy array (pageable) and
from page-locked arrays (`Engine.zeros`, result into `out=` of the same kind).

    PYTHONPATH=build-gpu/python python3 python/benchmarks/bench_host_arrays.py \\
        --cli build-gpu/app/entroscope-cli [--side 8192] [--repeats 11]

The floor is `entroscope-cli bench`'s transfer floor (es_engine_floor: a
page-locked upload of the image and a download of the float result, CUDA
events). Each definition runs two ways: as the engine chooses (the variant
left to it: large host images go in bands whose transfers overlap the
kernels) and with the same variant named (one piece: upload, kernels,
download in turn). Presets in bits also run in nats, which leaves out the
host's bits pass over the result. Prints Markdown; times are medians of the
whole Python call.
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import entroscope

CASES = [
    ("default 5×5, 16 levels", {}),
    ("256 bins (5×5)", {"levels": 256}),
    ("skimage square 3", {"like": "skimage", "footprint": np.ones((3, 3), bool)}),
    ("skimage square 5", {"like": "skimage", "footprint": np.ones((5, 5), bool)}),
    ("skimage square 9", {"like": "skimage", "footprint": np.ones((9, 9), bool)}),
    ("skimage square 15", {"like": "skimage", "footprint": np.ones((15, 15), bool)}),
    ("skimage square 31", {"like": "skimage", "footprint": np.ones((31, 31), bool)}),
    ("skimage disk 5", {"like": "skimage", "disk": 5}),
    ("skimage disk 15", {"like": "skimage", "disk": 15}),
    ("matlab (9×9, 256 bins, symmetric)", {"like": "matlab"}),
]


def transfer_floor(cli, side, repeats):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.csv")
        subprocess.run([cli, "bench", "--backend=cuda", f"--sizes={side}", "--ops=entropy", "--variant=fast",
                        f"--repeats={repeats}", f"--csv={path}"], capture_output=True, text=True, check=True)
        rows = [r for r in csv.DictReader(open(path)) if r["op"] == "entropy"]
    return float(rows[0]["transfer_floor_ms"])


def median_call(fn, repeats):
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True, help="entroscope-cli, for the transfer floor")
    parser.add_argument("--side", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=11)
    args = parser.parse_args()

    side, repeats = args.side, args.repeats
    engine = entroscope.Engine("cuda")
    rng = np.random.default_rng(0x5EED2024)
    image = rng.integers(1, 256, (side, side), dtype=np.uint8)  # never zeros (DESIGN.md §6)
    pinned = engine.zeros((side, side), np.uint8)
    pinned[...] = image
    pinned_out = engine.zeros((side, side), np.float32)
    floor = transfer_floor(args.cli, side, repeats)

    print(f"# {engine.description}; Python {sys.version.split()[0]}, NumPy {np.__version__}, "
          f"{os.cpu_count()} CPUs; {side}², medians of {repeats}")
    print(f"# transfer floor (es_engine_floor, u8 up, f32 down): {floor:.3f} ms")
    print()
    print("| definition | variant | NumPy ms (× floor) | NumPy in, page-locked out= ms (× floor) "
          "| page-locked ms (× floor) | in nats: NumPy / page-locked ms "
          "| one piece (variant named): NumPy / page-locked ms | kernels ms (one piece) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, keywords in CASES:
        _, timing = engine.entropy(image, return_timing=True, **keywords)
        variant = timing.variant
        named = dict(keywords, variant=variant)
        _, one_piece = engine.entropy(pinned, out=pinned_out, return_timing=True, **named)
        numpy_ms = median_call(lambda: engine.entropy(image, **keywords), repeats)
        numpy_pinned_out = median_call(lambda: engine.entropy(image, out=pinned_out, **keywords), repeats)
        pinned_ms = median_call(lambda: engine.entropy(pinned, out=pinned_out, **keywords), repeats)
        if "like" in keywords:
            nats = dict(keywords, units="nats")
            numpy_nats = median_call(lambda: engine.entropy(image, **nats), repeats)
            pinned_nats = median_call(lambda: engine.entropy(pinned, out=pinned_out, **nats), repeats)
            nats_text = f"{numpy_nats:.2f} ({numpy_nats / floor:.2f}×) / {pinned_nats:.2f} ({pinned_nats / floor:.2f}×)"
        else:
            nats_text = "(nats already)"
        numpy_one = median_call(lambda: engine.entropy(image, **named), repeats)
        for how, kw in (("overlapped", keywords), ("one piece", named)):
            result, t = engine.entropy(image, return_timing=True, **kw)
            print(f"# {name}, NumPy, {how}, result's base {type(result.base).__name__}: upload {t.upload_ms:.2f}, "
                  f"kernels {t.kernel_ms:.2f}, download {t.download_ms:.2f}, es_run {t.wall_ms:.2f}, "
                  f"call {t.call_ms:.2f} ms, host memory {t.metrics.get('host_memory')}", file=sys.stderr)
        pinned_one = median_call(lambda: engine.entropy(pinned, out=pinned_out, **named), repeats)
        print(f"| {name} | `{variant}` | {numpy_ms:.2f} ({numpy_ms / floor:.2f}×) | "
              f"{numpy_pinned_out:.2f} ({numpy_pinned_out / floor:.2f}×) | "
              f"{pinned_ms:.2f} ({pinned_ms / floor:.2f}×) | {nats_text} | "
              f"{numpy_one:.2f} / {pinned_one:.2f} | {one_piece.kernel_ms:.2f} |", flush=True)


if __name__ == "__main__":
    main()
