#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The PNG decoder's own unfiltering against the PNG specification (TAP).

Usage: test-png-unfilter.py PATH-TO-entroscope-cli   (run with Debian's /usr/bin/python3: numpy, Pillow)

Writes PNGs whose rows cycle through all five filter types, at widths from 1
to 69 (short rows, and rows that end inside a 16-byte vector), for gray,
gray+alpha, RGB and RGBA, 8 and 16 bits, in IDAT chunks of 97 bytes; filters
them here, straight from the specification. entroscope-cli reads each one
twice, whole (output to stdout) and row by row while it computes (a file
output, bands of 2 rows), and writes its 8-bit view (quantize, 256 levels)
as a TIFF that Pillow reads back: the first sample, or the BT.709 luma of
RGB in integers (DESIGN.md §1), of 16-bit samples the high byte.
"""

import os
import random
import struct
import subprocess
import sys
import tempfile
import zlib

try:
    import numpy as np
    from PIL import Image
except ImportError as missing:
    print(f"1..0 # SKIP {missing}")
    print("# 0 passed, 0 failed")
    sys.exit(0)


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def predictor(kind, a, b, c):
    if kind == 1:
        return a
    if kind == 2:
        return b
    if kind == 3:
        return (a + b) // 2
    if kind == 4:
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        return a if pa <= pb and pa <= pc else b if pb <= pc else c
    return 0


def write_png(path, image, filters):
    height, width = image.shape[:2]
    channels = 1 if image.ndim == 2 else image.shape[2]
    depth = 16 if image.dtype == np.uint16 else 8
    bpp = channels * depth // 8
    data = image.astype(">u2").tobytes() if depth == 16 else image.tobytes()
    row_bytes = width * bpp
    previous, rows = bytes(row_bytes), []
    for y in range(height):
        current, kind = data[y * row_bytes:(y + 1) * row_bytes], filters[y % len(filters)]
        out = bytearray(row_bytes)
        for i in range(row_bytes):
            a = current[i - bpp] if i >= bpp else 0
            c = previous[i - bpp] if i >= bpp else 0
            out[i] = (current[i] - predictor(kind, a, previous[i], c)) & 255
        rows.append(bytes([kind]) + bytes(out))
        previous = current
    stream = zlib.compress(b"".join(rows))
    colour = {1: 0, 2: 4, 3: 2, 4: 6}[channels]
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)))
        for i in range(0, len(stream), 97):
            f.write(chunk(b"IDAT", stream[i:i + 97]))
        f.write(chunk(b"IEND", b""))


def expected_view(image):
    channels = 1 if image.ndim == 2 else image.shape[2]
    if channels <= 2:
        gray = (image if channels == 1 else image[..., 0]).astype(np.int64)
    else:
        r, g, b = (image[..., i].astype(np.int64) for i in range(3))
        gray = (2126 * r + 7152 * g + 722 * b + 5000) // 10000
    return gray >> 8 if image.dtype == np.uint16 else gray


def main():
    cli = sys.argv[1]
    rng = np.random.default_rng(1)
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="es-test-png-unfilter-") as folder:
        source, output = os.path.join(folder, "in.png"), os.path.join(folder, "out.tif")
        env = dict(os.environ, ES_TEST_STREAM_BAND_ROWS="2")
        for trial in range(60):
            width, height = int(rng.integers(1, 70)), int(rng.integers(1, 12))
            channels, sixteen = [1, 1, 2, 3, 4][trial % 5], trial % 3 == 0
            top = 65536 if sixteen else 256
            shape = (height, width) if channels == 1 else (height, width, channels)
            image = rng.integers(0, top, size=shape)
            if trial % 4 == 1:  # smooth rows, as photographs have
                image = np.cumsum(image, axis=1) // 7 % top
            image = image.astype(np.uint16 if sixteen else np.uint8)
            filters = [0, 1, 2, 3, 4]
            random.Random(trial).shuffle(filters)
            write_png(source, image, filters)
            for way, target in (("whole", "-"), ("row by row", output)):
                done = subprocess.run([cli, "quantize", "-q", "--levels", "256", "--format", "tif", source, "-o", target],
                                      capture_output=True, env=env)
                data = done.stdout if target == "-" else open(target, "rb").read() if done.returncode == 0 else b""
                got = None
                if done.returncode == 0:
                    with open(os.path.join(folder, "view.tif"), "wb") as f:
                        f.write(data)
                    got = np.array(Image.open(os.path.join(folder, "view.tif"))).astype(np.int64)
                good = got is not None and np.array_equal(got, expected_view(image))
                passed, failed = passed + good, failed + (not good)
                print(f"{'ok' if good else 'not ok'} {passed + failed} - {width}x{height}, {channels} channel(s), "
                      f"{16 if sixteen else 8}-bit, filters {filters}, {way}")
    print(f"1..{passed + failed}")
    print(f"# {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
