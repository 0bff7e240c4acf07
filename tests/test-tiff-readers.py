#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Other readers read the TIFFs entroscope-cli writes, at every --compression (TAP).

Usage: test-tiff-readers.py PATH-TO-entroscope-cli IMAGE   (Debian's /usr/bin/python3: numpy; OpenCV,
Pillow and tifffile where installed)

The image is tiled 3×2 first (with Pillow, where installed), so that the
files have several strips. For entropy (32-bit floats) and equalize (8-bit), writes one TIFF per
--compression: fast stores the samples uncompressed, which this script reads
straight from the file as the reference; default and small deflate the
strips (integers with the horizontal predictor). Every reader must give the
reference, bit for bit, from every file.
"""

import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError as missing:
    print(f"1..0 # SKIP {missing}")
    print("# 0 passed, 0 failed")
    sys.exit(0)

readers = {}
try:
    import cv2

    readers["OpenCV"] = lambda path: cv2.imread(path, cv2.IMREAD_UNCHANGED)
except ImportError:
    pass
try:
    from PIL import Image

    def pillow(path):
        with Image.open(path) as image:
            image.load()
            return np.asarray(image)

    readers["Pillow"] = pillow
except ImportError:
    pass
try:
    import tifffile

    readers["tifffile"] = tifffile.imread
except ImportError:
    pass

cli, image = sys.argv[1], sys.argv[2]
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok {passed + failed} - {what}")
    else:
        failed += 1
        print(f"not ok {passed + failed} - {what}")


def tag_values(data):
    """The first IFD's tags of a little-endian classic TIFF, as {tag: first value}."""
    assert data[:4] == b"II*\0"
    ifd = struct.unpack_from("<I", data, 4)[0]
    count = struct.unpack_from("<H", data, ifd)[0]
    tags = {}
    for i in range(count):
        tag, kind, n, value = struct.unpack_from("<HHII", data, ifd + 2 + 12 * i)
        tags[tag] = value & 0xFFFF if kind == 3 else value
    return tags


def plain_samples(data, dtype):
    """The samples of an uncompressed single-page TIFF: its strips lie one after another."""
    tags = tag_values(data)
    width, height, offsets, strips = tags[256], tags[257], tags[273], 1
    if tags[279] != width * height * dtype.itemsize:  # several strips: 273 points at the offsets
        offsets = struct.unpack_from("<I", data, offsets)[0]
    return np.frombuffer(data, dtype, width * height, offsets).reshape(height, width), tags


print(f"# readers: {', '.join(readers) or 'none'}")
with tempfile.TemporaryDirectory(prefix="es-test-tiff-readers-") as folder:
    if "Pillow" in readers:
        with Image.open(image) as source:
            gray = np.asarray(source.convert("L"))
        image = f"{folder}/tiled.png"
        Image.fromarray(np.tile(gray, (2, 3))).save(image)
    for operation, dtype in (("entropy", np.dtype("<f4")), ("equalize", np.dtype("u1"))):
        reference = None
        for compression in ("fast", "default", "small"):
            path = f"{folder}/{operation}-{compression}.tif"
            run = subprocess.run([cli, operation, "-q", "--compression", compression, image, "-o", path],
                                 capture_output=True, text=True)
            check(run.returncode == 0, f"{operation} --compression {compression} writes {path.split('/')[-1]}"
                  + (f": {run.stderr.strip()}" if run.returncode else ""))
            if run.returncode:
                continue
            data = open(path, "rb").read()
            tags = tag_values(data)
            expected = 1 if compression == "fast" else 8
            check(tags[259] == expected and tags.get(317, 1) == (2 if compression != "fast" and dtype.kind == "u" else 1),
                  f"{operation} --compression {compression}: Compression {tags[259]}, Predictor {tags.get(317, 1)}")
            if compression == "fast":
                reference, _ = plain_samples(data, dtype)
                check(reference.size > 0 and np.isfinite(reference.astype(np.float64)).all(),
                      f"{operation}: {reference.shape[1]}×{reference.shape[0]} uncompressed samples as reference")
            for name, read in readers.items():
                got = read(path)
                same = reference is not None and got is not None and got.dtype == reference.dtype \
                    and np.array_equal(got, reference)
                check(same, f"{name} reads {operation} --compression {compression} bit for bit")

    # A calibrated stack (an ImageJ TIFF of 0.65 µm pixels, planes 2.5 µm
    # apart) through a 3-D job: tifffile reads its voxel back from the
    # result, as Fiji does (ImageJ's description, a resolution in cm).
    if "tifffile" in readers:
        stack = f"{folder}/stack.tif"
        planes = (np.arange(4 * 20 * 30) * 7919 % 251).astype(np.uint8).reshape(4, 20, 30)
        tifffile.imwrite(stack, planes, imagej=True, resolution=(1 / 0.65, 1 / 0.65),
                         metadata={"spacing": 2.5, "unit": "um", "axes": "ZYX"})
        path = f"{folder}/stack-entropy.tif"
        run = subprocess.run([cli, "entropy", "-q", "--box", "3x3x3", stack, "-o", path], capture_output=True, text=True)
        ok = run.returncode == 0
        if ok:
            with tifffile.TiffFile(path) as written:
                meta = written.imagej_metadata or {}
                x_resolution = written.pages[0].tags["XResolution"].value
                unit = written.pages[0].tags["ResolutionUnit"].value
                ok = (len(written.pages) == 4 and meta.get("unit") == "um" and meta.get("spacing") == 2.5
                      and meta.get("slices") == 4 and unit == 3
                      and abs(1e4 * x_resolution[1] / x_resolution[0] - 0.65) < 1e-6)
        check(ok, "tifffile reads a 3-D result's voxel, 0.65 µm pixels 2.5 µm apart, from its ImageJ description"
              + (f": {run.stderr.strip()}" if run.returncode else ""))

print(f"1..{passed + failed}")
print(f"# {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
