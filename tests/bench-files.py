#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""File to file: entroscope-cli against OpenCV and vips, start to exit, on photograph-like PNGs.

Run with /usr/bin/python3 (Debian's python3-opencv and python3-numpy):

    tests/bench-files.py --cli build/app/entroscope-cli [--sizes 4096,8192] [--repeats 3]
                         [--images ../shared/testdata/images] [--batch 200]

For each size it builds a gray photograph (the sample photographs tiled at
their own resolution, flipped from tile to tile so that no two neighbours are
equal), writes it as a PNG with OpenCV, and times, for each operation:
entroscope-cli to a colormapped PNG (each --compression), to --raw16 and (when
the build writes TIFF) to a float TIFF; OpenCV's imread + the same operation
(applyColorMap stands in for entropy, which OpenCV lacks) + imwrite at its
default and at compression 6; and the vips command (falsecolour, hist_equal,
sharpen). Every figure is the median wall time of --repeats runs of a whole
process, start to exit; OpenCV's is timed in one process (its start not
counted). --batch N times N PNGs of 1024² through one entroscope-cli call and
reports its files/s beside each stage's busy time from --timings.
--compressions and --opencv narrow a run (a GPU machine's time is short).
Prints Markdown tables.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

try:
    import cv2
except ImportError:  # the tables say so
    cv2 = None

OPS = ("entropy", "equalize", "sharpen")


def photograph(side, folder):
    """A side×side gray photograph tiled from the images in folder."""
    tiles = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".png"):
            image = cv2.imread(os.path.join(folder, name), cv2.IMREAD_GRAYSCALE)
            if image is not None and min(image.shape) >= 256:
                tiles.append(image)
    if not tiles:
        sys.exit(f"no photographs in {folder}")
    out = np.zeros((side, side), np.uint8)
    k = 0
    for y in range(0, side, 512):
        for x in range(0, side, 512):
            tile = tiles[k % len(tiles)]
            flip = (k // len(tiles)) % 4
            tile = tile[::-1] if flip & 1 else tile
            tile = tile[:, ::-1] if flip & 2 else tile
            h, w = min(512, side - y), min(512, side - x)
            tile = cv2.resize(tile, (512, 512), interpolation=cv2.INTER_AREA) if tile.shape != (512, 512) else tile
            out[y:y + h, x:x + w] = tile[:h, :w]
            k += 1
    return out


def wall(command, repeats):
    """Median seconds of running command start to exit (output discarded)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            return None, done.stderr.decode(errors="replace").strip()[:200]
    return statistics.median(times), ""


def opencv_run(op, source, target, level, repeats):
    """Median seconds of imread + op + imwrite in this process."""
    sharpen = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
    params = [] if level is None else [cv2.IMWRITE_PNG_COMPRESSION, level]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        image = cv2.imread(source, cv2.IMREAD_GRAYSCALE)
        if op == "entropy":
            out = cv2.applyColorMap(image, cv2.COLORMAP_VIRIDIS)
        elif op == "equalize":
            out = cv2.equalizeHist(image)
        else:
            out = cv2.filter2D(image, -1, sharpen)
        cv2.imwrite(target, out, params)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def size_mb(path):
    return os.path.getsize(path) / 1e6 if os.path.exists(path) else float("nan")


def fmt(seconds):
    return "—" if seconds is None else f"{seconds:.3f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--sizes", default="4096,8192")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--images", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared",
                                                         "testdata", "images"))
    parser.add_argument("--backends", default="auto",
                        help="backends for the default PNG and the TIFF rows (the first one for the others)")
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--compressions", default="fast,default,small",
                        help="PNG --compression settings to time (the default one on every backend)")
    parser.add_argument("--opencv", default="default,6",
                        help="OpenCV PNG levels to time ('default' or numbers), or 'none' to time neither OpenCV nor vips")
    parser.add_argument("--batch", type=int, default=0, help="also time N PNGs of 1024² in one call")
    parser.add_argument("--oneshot", default="", help="sides (1,1024,8192) of one-shot entropy runs, start to exit,"
                        " on every backend, with the stages of --timings")
    parser.add_argument("--work", default=None, help="folder for the files (default: a temporary one)")
    args = parser.parse_args()
    if cv2 is None:
        sys.exit("bench-files needs OpenCV (python3-opencv) to build its inputs")
    cli = os.path.abspath(args.cli)
    vips = shutil.which("vips")
    helptext = subprocess.run([cli, "--help"], capture_output=True, text=True).stdout
    has_tiff = re.search(r"\btif\b", helptext) is not None
    work = args.work or tempfile.mkdtemp(prefix="es-bench-files-")
    os.makedirs(work, exist_ok=True)
    ops = args.ops.split(",")
    backends = args.backends.split(",")
    print(f"entroscope-cli {cli}, backends {args.backends}; OpenCV {cv2.__version__} "
          f"({cv2.getNumThreads()} threads); vips: {vips or 'not installed'}; TIFF output: "
          f"{'yes' if has_tiff else 'not in this build'}; {os.cpu_count()} CPUs; "
          f"load {os.getloadavg()[0]:.2f}; medians of {args.repeats}, seconds start to exit\n")

    if args.oneshot:
        whole = photograph(max(int(s) for s in args.oneshot.split(",")), args.images)
        print("### One-shot entropy PNG → PNG, start to exit\n")
        print("| side | backend | seconds | backend used | es_run wall ms | upload + download ms | stages (s) |")
        print("| ---: | --- | ---: | --- | ---: | ---: | --- |")
        for side in [int(s) for s in args.oneshot.split(",")]:
            source = os.path.join(work, f"oneshot{side}.png")
            cv2.imwrite(source, whole[:side, :side])
            for backend in ("cpu", "cuda", "auto"):
                runs = []
                for _ in range(args.repeats):
                    start = time.perf_counter()
                    done = subprocess.run([cli, "entropy", "-q", "--timings", "--backend", backend, source, "-o",
                                           os.path.join(work, "oneshot-out.png")], capture_output=True, text=True)
                    runs.append((time.perf_counter() - start, done))
                seconds, done = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
                if done.returncode != 0:
                    print(f"| {side} | {backend} | — | {done.stderr.strip()[:80]} | | | |")
                    continue
                t = re.search(r"upload ([\d.]+) ms, kernel [\d.]+ ms, download ([\d.]+) ms, wall ([\d.]+) ms, "
                              r"backend (\w+)", done.stderr)
                stages = re.search(r"decode ([\d.]+) s, compute ([\d.]+) s, encode ([\d.]+) s", done.stderr)
                print(f"| {side} | {backend} | {seconds:.3f} | {t.group(4) if t else '?'} | "
                      f"{t.group(3) if t else '?'} | "
                      f"{float(t.group(1)) + float(t.group(2)) if t else 0:.1f} | "
                      f"{'decode %s, compute %s, encode %s' % stages.groups() if stages else '?'} |")
        print()

    for side in [int(s) for s in args.sizes.split(",") if s]:
        source = os.path.join(work, f"photo{side}.png")
        if not os.path.exists(source):
            cv2.imwrite(source, photograph(side, args.images))
        print(f"### {side}×{side} (input {size_mb(source):.1f} MB)\n")
        print("| operation | output | tool | seconds | output MB |")
        print("| --- | --- | --- | ---: | ---: |")
        for op in ops:
            rows = []
            for compression in args.compressions.split(","):
                for backend in backends if compression == "default" else backends[:1]:
                    target = os.path.join(work, f"out-{op}-{compression}.png")
                    t, why = wall([cli, op, "-q", "--backend", backend, "--compression", compression,
                                   source, "-o", target], args.repeats)
                    rows.append(("PNG", f"entroscope-cli --backend {backend} --compression {compression}", t,
                                 size_mb(target), why))
            target = os.path.join(work, f"out-{op}-raw16.png")
            t, why = wall([cli, op, "-q", "--backend", backends[0], "--raw16", source, "-o", target], args.repeats)
            rows.append(("raw16 PNG", f"entroscope-cli --backend {backends[0]} --raw16", t, size_mb(target), why))
            for backend in backends if has_tiff else []:
                target = os.path.join(work, f"out-{op}.tif")
                t, why = wall([cli, op, "-q", "--backend", backend, "--format", "tif", source, "-o", target],
                              args.repeats)
                rows.append(("TIFF", f"entroscope-cli --backend {backend} --format tif", t, size_mb(target), why))
            levels = [] if args.opencv == "none" else args.opencv.split(",")
            for level, label in ((None if l == "default" else int(l), l if l == "default" else f"compression {l}")
                                 for l in levels):
                target = os.path.join(work, f"cv-{op}.png")
                t = opencv_run(op, source, target, level, args.repeats)
                rows.append(("PNG", f"OpenCV {label}", t, size_mb(target), ""))
            if vips and args.opencv != "none":
                verb = {"entropy": ["falsecolour"], "equalize": ["hist_equal"], "sharpen": ["sharpen"]}[op]
                target = os.path.join(work, f"vips-{op}.png")
                t, why = wall([vips] + verb + [source, target], args.repeats)
                rows.append(("PNG", f"vips {verb[0]}", t, size_mb(target), why))
            for output, tool, t, mb, why in rows:
                note = f" ({why})" if why else ""
                print(f"| {op} | {output} | {tool}{note} | {fmt(t)} | {mb:.1f} |")
        print()

    if args.batch:
        folder = os.path.join(work, "batch")
        os.makedirs(os.path.join(folder, "out"), exist_ok=True)
        whole = photograph(4096, args.images)
        inputs = []
        for i in range(args.batch):
            path = os.path.join(folder, f"b{i:04d}.png")
            if not os.path.exists(path):
                y, x = (i * 1031) % 3072, (i * 2063) % 3072
                cv2.imwrite(path, whole[y:y + 1024, x:x + 1024])
            inputs.append(path)
        start = time.perf_counter()
        done = subprocess.run([cli, "entropy", "-q", "--timings", "--backend", backends[0]] + inputs
                              + ["-o", os.path.join(folder, "out") + "/"], capture_output=True, text=True)
        seconds = time.perf_counter() - start
        summary = [line for line in done.stderr.splitlines() if line.startswith("files:")]
        print(f"### Batch: {args.batch} PNGs of 1024², entropy → PNG, one call\n")
        print(f"{seconds:.3f} s start to exit, {args.batch / seconds:.1f} files/s (exit {done.returncode})  ")
        print(summary[0] if summary else "(no batch line)")
        match = re.search(r"decode ([\d.]+) s, compute ([\d.]+) s, encode ([\d.]+) s", summary[0] if summary else "")
        if match:
            slowest = max(float(v) for v in match.groups())
            print(f"\nslowest stage busy {slowest:.3f} s: {args.batch / slowest:.1f} files/s alone; "
                  f"the batch reaches {100 * slowest / seconds:.0f} % of it")
    if not args.work:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
