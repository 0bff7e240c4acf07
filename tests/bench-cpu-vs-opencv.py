#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""CPU backend beside OpenCV on the same image, in the same run (not part of the suite).

usage: tests/bench-cpu-vs-opencv.py [CLI] [SIZE]   (needs python3-opencv)
Times entroscope-cli bench --image (CPU backend, medians) and cv2.equalizeHist /
cv2.filter2D(BORDER_REPLICATE) / cv2.createCLAHE(2, (8, 8)).apply with as many
threads as the CLI uses.
"""
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time

import cv2
import numpy as np

cli = sys.argv[1] if len(sys.argv) > 1 else "build/app/entroscope-cli"
size = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
repeats = 11

with tempfile.TemporaryDirectory() as tmp:
    # A photograph tiled up to size x size: real structure, not noise.
    here = os.path.dirname(os.path.abspath(__file__))
    tile = cv2.imread(os.path.join(here, "..", "data", "camera.png"), cv2.IMREAD_GRAYSCALE)
    image = np.tile(tile, (size // tile.shape[0] + 1, size // tile.shape[1] + 1))[:size, :size].copy()
    path = os.path.join(tmp, "image.png")
    cv2.imwrite(path, image)
    table = os.path.join(tmp, "bench.csv")
    subprocess.run([cli, "bench", "--image", path, "--backend", "cpu", "--ops", "entropy,equalize,sharpen,clahe",
                    "--clip", "2", "--tiles", "8x8",
                    "--repeats", str(repeats), "--csv", table], check=True, stdout=subprocess.DEVNULL)
    ours = {row["op"]: float(row["kernel_ms"]) for row in csv.DictReader(open(table))}

threads = os.cpu_count()
cv2.setNumThreads(threads)
clahe = cv2.createCLAHE(2.0, (8, 8))
kernel = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)


def median_ms(function):
    function()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


theirs = {
    "equalize": median_ms(lambda: cv2.equalizeHist(image)),
    "sharpen": median_ms(lambda: cv2.filter2D(image, -1, kernel, borderType=cv2.BORDER_REPLICATE)),
    "clahe": median_ms(lambda: clahe.apply(image)),
}
print(f"# {size}x{size}, CPU backend vs OpenCV {cv2.__version__}, {threads} threads, medians of {repeats}")
print(f"{'op':<10}{'entroscope ms':>15}{'opencv ms':>12}{'ratio':>8}")
for op in ("entropy", "equalize", "sharpen", "clahe"):
    other = theirs.get(op)
    ratio = f"{ours[op] / other:7.2f}x" if other else "      -"
    print(f"{op:<10}{ours[op]:15.2f}{(f'{other:.2f}' if other else '-'):>12}{ratio:>8}")
