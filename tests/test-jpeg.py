#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""JPEG in: entroscope-cli reads every file of the JPEG corpus as libjpeg does, upright, or refuses it (TAP).

Usage: test-jpeg.py PATH-TO-entroscope-cli CORPUS-FOLDER   (Debian's /usr/bin/python3: numpy, Pillow; djpeg
from libjpeg-turbo-progs)

Each file is read with `quantize --levels 256 --format tif`, which gives the
loaded 8-bit samples unchanged, in process and with --sandbox (the window's
way), and compared sample for sample with a reference from the name:
  gray*          djpeg's PGM (libjpeg's own decode), and Pillow's;
  colour*, rgb*  Pillow's RGB, then the BT.709 luma of DESIGN.md §1;
  cmyk*, ycck*   the inks, then R = (255 − K)(255 − C) / 255 truncated as libtiff turns CMYK, then the luma;
                 Pillow reads every CMYK file as Adobe's inverted samples, so without an Adobe marker
                 its values are inverted back to the stored inks;
  orientation-*  Pillow's image turned by ImageOps.exif_transpose, then as above;
  refused-*      a refusal that names the file and the cause.
Then the same files from a pipe (/dev/stdin), and the pixel budget (--max-pixels) refusing a JPEG.
"""

import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from PIL import Image, ImageOps
except ImportError as missing:
    print(f"1..0 # SKIP {missing}")
    print("# 0 passed, 0 failed")
    sys.exit(0)

cli, corpus = sys.argv[1], sys.argv[2]
passed = failed = 0
# Refusals: the cause each names.
causes = {
    "refused-too-many-scans.jpg": "JPEG: more than 500 scans",
    "refused-over-budget.jpg": "JPEG: image size 60000×60000 is over the limit of 1073741824 pixels",
    "refused-12-bit.jpg": "JPEG: 12-bit samples are not supported",
    "refused-truncated.jpg": "JPEG: file is truncated",
    "refused-no-eoi.jpg": "JPEG: file is truncated",
    "refused-corrupt.jpg": "JPEG: Corrupt JPEG data: bad Huffman code",
}


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok {passed + failed} - {what}")
    else:
        failed += 1
        print(f"not ok {passed + failed} - {what}")


def luma(rgb):
    """es_luma: round(0.2126 R + 0.7152 G + 0.0722 B), half away from zero, in double, in this order."""
    r, g, b = (rgb[..., c].astype(np.float64) for c in range(3))
    return np.floor(0.2126 * r + 0.7152 * g + 0.0722 * b + 0.5).astype(np.uint8)


def pgm(data):
    """The samples of a binary PGM (djpeg's output: no comments)."""
    fields = data.split(maxsplit=4)
    width, height = int(fields[1]), int(fields[2])
    return np.frombuffer(fields[4][: width * height], np.uint8).reshape(height, width)


def reference(path, name):
    with Image.open(path) as image:
        image.load()
        # Turned first: the gray of each pixel does not depend on where it is.
        if name.startswith("orientation-"):
            image = ImageOps.exif_transpose(image)
        if image.mode == "L":
            return np.asarray(image)
        if image.mode == "CMYK":
            ink = np.asarray(image).astype(np.uint32)
            if "adobe" not in image.info:
                ink = 255 - ink
            rgb = (255 - ink[..., 3:4]) * (255 - ink[..., :3]) // 255
            return luma(rgb)
        return luma(np.asarray(image.convert("RGB")))


def decode(path, folder, sandbox):
    target = os.path.join(folder, "out.tif")
    args = [cli, "quantize", "-q", "--levels", "256", "--format", "tif", path, "-o", target]
    done = subprocess.run(args + (["--sandbox"] if sandbox else []), capture_output=True, text=True)
    if done.returncode != 0:
        return None, done.stderr.strip()
    with Image.open(target) as image:
        return np.asarray(image), ""


with tempfile.TemporaryDirectory() as folder:
    for name in sorted(os.listdir(corpus)):
        path = os.path.join(corpus, name)
        results = [decode(path, folder, sandbox) for sandbox in (False, True)]
        if "cannot decode in a sandbox" in results[1][1]:
            print(f"# {name}: no sandbox here ({results[1][1]})")
            results = results[:1]
        if name.startswith("refused-"):
            for (got, message), way in zip(results, ("in process", "sandboxed")):
                check(got is None and message.startswith(f"entroscope-cli: {path}: {causes[name]}"),
                      f"{name} refused {way}: {message}")
            continue
        want = reference(path, name)
        for (got, message), way in zip(results, ("in process", "sandboxed")):
            same = got is not None and got.shape == want.shape and np.array_equal(got, want)
            check(same, f"{name} {way} is the reference{'' if got is not None else ': ' + message}")
        if name.startswith("gray"):
            if shutil.which("djpeg") is None:
                check(False, f"{name} against djpeg: djpeg not found (libjpeg-turbo-progs)")
                continue
            djpeg = subprocess.run(["djpeg", "-pnm", path], capture_output=True)
            got = results[0][0]
            check(djpeg.returncode == 0 and got is not None and np.array_equal(got, pgm(djpeg.stdout)),
                  f"{name} is djpeg's decode, bit for bit")

# From a pipe: no size to trust, read in pieces as it comes.
for name in ("colour-arithmetic-progressive.jpg", "orientation-7.jpg", "refused-truncated.jpg"):
    path = os.path.join(corpus, name)
    with open(path, "rb") as f, tempfile.TemporaryDirectory() as folder:
        target = os.path.join(folder, "out.tif")
        done = subprocess.run([cli, "quantize", "-q", "--levels", "256", "--format", "tif", "/dev/stdin", "-o",
                               target], stdin=f, capture_output=True, text=True)
        if name.startswith("refused-"):
            check(done.returncode != 0 and causes[name] in done.stderr,
                  f"{name} from a pipe refused: {done.stderr.strip()}")
        else:
            got = None
            if done.returncode == 0:
                with Image.open(target) as image:
                    got = np.asarray(image)
            check(got is not None and np.array_equal(got, reference(path, name)),
                  f"{name} from a pipe is the reference")

# The 505 scans are a valid progression (djpeg decodes them with every
# warning fatal): the refusal is the scan limit's alone.
djpeg = subprocess.run(["djpeg", "-strict", "-maxscans", "1000", os.path.join(corpus, "refused-too-many-scans.jpg")],
                       capture_output=True) if shutil.which("djpeg") else None
check(djpeg is not None and djpeg.returncode == 0, "djpeg -strict decodes the 505 scans the limit refuses")

# The pixel budget refuses before decoding: 41×29 is 1189 pixels.
done = subprocess.run([cli, "quantize", "-q", "--max-pixels", "1188", os.path.join(corpus, "gray.jpg"), "-o",
                       "/dev/null"], capture_output=True, text=True)
check(done.returncode != 0 and "JPEG: image size 41×29 is over the limit of 1188 pixels" in done.stderr,
      f"--max-pixels 1188 refuses a 41×29 JPEG: {done.stderr.strip()}")

# The corpus must not lose a case unnoticed: all eight orientations.
check(all(os.path.exists(os.path.join(corpus, f"orientation-{o}.jpg")) for o in range(1, 9)),
      "the corpus holds all eight EXIF orientations")
print(f"1..{passed + failed}")
print(f"# {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
