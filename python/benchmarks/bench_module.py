#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python module's figures for PERFORMANCE.md: call overhead on a 1×1 image,
and a large entropy job from NumPy against entroscope-cli's compute time.

    PYTHONPATH=build/python python3 python/benchmarks/bench_module.py --cli build/app/entroscope-cli \\
        [--backend cpu|cuda|auto] [--side 4096] [--repeats 11]

Prints Markdown. The CLI is timed two ways: `entropy --timings` on the same
pixels written as a PGM (one process per run; its `wall` is es_run alone), and
`bench` (its own random image, its output buffer reused, page-locked on CUDA).
"""

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import entroscope


def per_call_us(fn, calls, batches=7):
    for _ in range(min(calls, 2000)):
        fn()
    results = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        results.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(results), min(results)


def bench_image(side):
    """Uniform 1..255, never zeros (DESIGN.md §6)."""
    rng = np.random.default_rng(0x5EED2024)
    return rng.integers(1, 256, (side, side), dtype=np.uint8)


def write_pgm(path, image):
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (image.shape[1], image.shape[0]))
        f.write(np.ascontiguousarray(image).tobytes())


def cli_timings(cli, backend, path, repeats, window, levels):
    walls, kernels = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeats):
            done = subprocess.run([cli, "entropy", "--timings", "-q", f"--backend={backend}", f"--window={window}",
                                   f"--levels={levels}", path, "-o", os.path.join(tmp, "out.png")],
                                  capture_output=True, text=True, check=True)
            m = re.search(r"kernel ([\d.]+) ms, download [\d.]+ ms, wall ([\d.]+) ms", done.stderr)
            kernels.append(float(m.group(1)))
            walls.append(float(m.group(2)))
    return statistics.median(walls), statistics.median(kernels)


def cli_bench(cli, backend, side, repeats, variant):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.csv")
        args = [cli, "bench", f"--backend={backend}", f"--sizes={side}", "--ops=entropy", f"--repeats={repeats}",
                f"--csv={path}"]
        if variant:
            args.append(f"--variant={variant}")
        subprocess.run(args, capture_output=True, text=True, check=True)
        rows = list(csv.DictReader(open(path)))
    row = [r for r in rows if r["op"] == "entropy"][0]
    return float(row["wall_ms"]), float(row["kernel_ms"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", help="entroscope-cli to compare with")
    parser.add_argument("--backend", default="cpu", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--side", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--calls", type=int, default=20000, help="calls per batch for the 1×1 overhead")
    args = parser.parse_args()

    engine = entroscope.Engine(args.backend)
    print(f"# entroscope {entroscope.__version__}, Python {sys.version.split()[0]}, NumPy {np.__version__}")
    print(f"# engine: {engine.description}; {os.cpu_count()} CPUs; OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', 'unset')}")
    print()

    # ---- call overhead on a 1×1 image ----
    one = np.zeros((1, 1), np.uint8)
    one_f = np.zeros((1, 1), np.float32)
    print("| 1×1 call | median µs | best µs | of which es_run (µs) |")
    print("| --- | ---: | ---: | ---: |")
    for name, fn in [
        ("Engine.entropy(a)", lambda: engine.entropy(one)),
        ("Engine.entropy(a, out=o)", lambda: engine.entropy(one, out=one_f)),
        ("Engine.equalize(a)", lambda: engine.equalize(one)),
        ("Engine.sharpen(a)", lambda: engine.sharpen(one)),
        ("Engine.quantize(a)", lambda: engine.quantize(one)),
        ("entroscope.entropy(a) (shared engine)", lambda: entroscope.entropy(one, backend=args.backend)),
    ]:
        median, best = per_call_us(fn, args.calls)
        op = name.split(".")[1].split("(")[0]
        walls = [getattr(engine, op)(one, return_timing=True)[1].wall_ms * 1e3 for _ in range(2000)]
        print(f"| `{name}` | {median:.1f} | {best:.1f} | {statistics.median(walls):.1f} |")
    print()

    # ---- a large entropy job ----
    side, repeats = args.side, args.repeats
    image = bench_image(side)
    out = engine.zeros((side, side), np.float32) if engine.backend == "cuda" else np.empty((side, side), np.float32)
    engine.entropy(image)  # warm-up
    calls, walls, kernels, calls_out = [], [], [], []
    for _ in range(repeats):
        start = time.perf_counter()
        _, timing = engine.entropy(image, return_timing=True)
        calls.append((time.perf_counter() - start) * 1e3)
        walls.append(timing.wall_ms)
        kernels.append(timing.kernel_ms)
        start = time.perf_counter()
        engine.entropy(image, out=out)
        calls_out.append((time.perf_counter() - start) * 1e3)
    lines = [("Python: `engine.entropy(a)`, new result array", statistics.median(calls)),
             ("Python: `engine.entropy(a, out=o)`", statistics.median(calls_out)),
             ("  of which es_run (Timing.wall_ms)", statistics.median(walls)),
             ("  of which kernels (Timing.kernel_ms)", statistics.median(kernels))]
    if engine.backend == "cuda":
        pinned = engine.zeros((side, side), np.uint8)
        pinned[...] = image
        engine.entropy(pinned, out=out)
        pinned_calls = []
        for _ in range(repeats):
            start = time.perf_counter()
            engine.entropy(pinned, out=out)
            pinned_calls.append((time.perf_counter() - start) * 1e3)
        lines.append(("Python: page-locked input and out= (`engine.zeros`)", statistics.median(pinned_calls)))
    reference = None
    if args.cli:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bench.pgm")
            write_pgm(path, image)
            cli_wall, cli_kernel = cli_timings(args.cli, args.backend, path, repeats, 5, 16)
        reference = cli_wall
        lines.append(("CLI: `entropy --timings` wall (es_run), same pixels", cli_wall))
        lines.append(("CLI: `entropy --timings` kernel", cli_kernel))
        variant = None
        if engine.backend == "cuda":
            variant = [v.id for v in entroscope.variants("entropy") if v.is_default][0]
        bench_wall, bench_kernel = cli_bench(args.cli, args.backend, side, repeats, variant)
        lines.append(("CLI: `bench` wall (its image; output reused)", bench_wall))
    print(f"| {side}² entropy, window 5, 16 levels, {engine.backend}, median of {repeats} | ms | × CLI wall |")
    print("| --- | ---: | ---: |")
    for name, ms in lines:
        ratio = f"{ms / reference:.2f}×" if reference else ""
        print(f"| {name} | {ms:.2f} | {ratio} |")


if __name__ == "__main__":
    main()
