#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes the JPEG seed corpus (tests/fuzz/corpus/jpeg): small files of every kind the decoder takes or refuses.

Usage: make-jpeg-corpus.py [FOLDER]   (Debian's /usr/bin/python3 with Pillow; cjpeg and jpegtran from
libjpeg-turbo-progs)

The images are camera.png and astronaut.png shrunk to 41×29 (odd sides, so
that MCUs are cut at the right and bottom edges); the orientation cases are
37×75, taller than two of the strips in which the decoder turns rows. Each file is a seed for
fuzz-jpeg and a case of test-jpeg.py, which knows from the name what to
expect: the decoders' output, the orientation, or the refusal.
"""

import io
import os
import subprocess
import sys
import tempfile

from PIL import Image

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
folder = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "fuzz", "corpus", "jpeg")
os.makedirs(folder, exist_ok=True)
SIZE = (41, 29)
gray = Image.open(os.path.join(root, "data", "images", "camera.png")).convert("L").resize(SIZE, Image.LANCZOS)
colour = Image.open(os.path.join(root, "data", "images", "astronaut.png")).convert("RGB").resize(SIZE, Image.LANCZOS)
TALL = (37, 75)
gray_tall = Image.open(os.path.join(root, "data", "images", "camera.png")).convert("L").resize(TALL, Image.LANCZOS)
colour_tall = colour.resize(TALL, Image.LANCZOS)


def write(name, data):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def pillow(image, **options):
    out = io.BytesIO()
    image.save(out, "JPEG", quality=85, **options)
    return out.getvalue()


def pnm(image):
    out = io.BytesIO()
    image.save(out, "PPM")
    return out.getvalue()


def tool(args, data):
    return subprocess.run(args, input=data, capture_output=True, check=True).stdout


def segments(data):
    """(offset, marker, length of the whole segment) of each marker segment before SOS."""
    pos = 2
    while pos + 4 <= len(data) and data[pos] == 0xFF:
        marker = data[pos + 1]
        length = 2 + (data[pos + 2] << 8 | data[pos + 3])
        yield pos, marker, length
        if marker == 0xDA:
            return
        pos += length


def without(data, marker):
    """The file without its segments of this marker (APP14: no Adobe marker)."""
    out = bytearray(data)
    for pos, m, length in reversed(list(segments(data))):
        if m == marker:
            del out[pos : pos + length]
    return bytes(out)


def patched(data, marker, offset, value):
    """The bytes of the first segment of this marker, from offset from its start, set to value (an int: one
    byte)."""
    for pos, m, _ in segments(data):
        if m == marker:
            out = bytearray(data)
            value = bytes([value]) if isinstance(value, int) else value
            out[pos + offset : pos + offset + len(value)] = value
            return bytes(out)
    raise ValueError(f"no marker 0x{marker:02x}")


def exif_orientation(value, big_endian=False):
    """An APP1 payload: EXIF with IFD0 holding only the orientation."""
    order = ">" if big_endian else "<"
    import struct

    tiff = (b"MM\0*" if big_endian else b"II*\0") + struct.pack(order + "I", 8)
    tiff += struct.pack(order + "H", 1) + struct.pack(order + "HHIHH", 0x0112, 3, 1, value, 0) + b"\0\0\0\0"
    return b"Exif\0\0" + tiff


def scan_pieces(data):
    """The header (up to the first DHT or SOS) and each scan with the DHT segments before it."""
    pos, header_end, start, pieces = 2, None, None, []
    while data[pos + 1] != 0xD9:
        marker, length = data[pos + 1], 2 + (data[pos + 2] << 8 | data[pos + 3])
        if marker in (0xC4, 0xDA):
            header_end = pos if header_end is None else header_end
            start = pos if start is None else start
        pos += length
        if marker == 0xDA:
            # The entropy-coded data ends at the first marker that is not a stuffed 0xFF or an RST.
            while not (data[pos] == 0xFF and data[pos + 1] != 0x00 and not 0xD0 <= data[pos + 1] <= 0xD7):
                pos += 1
            pieces.append(data[start:pos])
            start = None
    return data[:header_end], pieces


def many_scans(image):
    """A valid progressive gray JPEG of 505 scans: one DC scan, then each of the 63 AC coefficients alone, its
    top bits first (Al 7) and one refinement scan per lower bit. cjpeg takes at most 100 scans from a script,
    so six files of the same image (hence the same coefficients) each give the scans of 11 coefficients, each
    scan with its own Huffman tables, and they are joined after the first file's DC scan."""
    head, scans = None, []
    for first in range(1, 64, 11):
        script = ["0: 0-0, 0, 0;"]
        for k in range(first, min(first + 11, 64)):
            script.append(f"0: {k}-{k}, 0, 7;")
            script += [f"0: {k}-{k}, {al + 1}, {al};" for al in range(6, -1, -1)]
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
            f.write("\n".join(script) + "\n")
            f.flush()
            data = tool(["cjpeg", "-grayscale", "-quality", "85", "-scans", f.name], pnm(image))
        file_head, pieces = scan_pieces(data)
        if head is None:
            head, scans = file_head, pieces[:1]
        scans += pieces[1:]
    return head + b"".join(scans) + b"\xff\xd9"


gray_jpeg = pillow(gray)
colour_jpeg = pillow(colour)
write("gray.jpg", gray_jpeg)
write("gray-progressive.jpg", pillow(gray, progressive=True))
write("gray-arithmetic.jpg", tool(["jpegtran", "-arithmetic"], gray_jpeg))
write("gray-restart.jpg", tool(["cjpeg", "-grayscale", "-restart", "2B", "-quality", "85"], pnm(gray)))
write("colour-420.jpg", colour_jpeg)
write("colour-444-progressive.jpg", pillow(colour, subsampling=0, progressive=True))
write("colour-arithmetic-progressive.jpg", tool(["jpegtran", "-arithmetic", "-progressive"], colour_jpeg))
write("colour-restart.jpg", tool(["cjpeg", "-restart", "1", "-quality", "85"], pnm(colour)))
write("rgb.jpg", tool(["cjpeg", "-rgb", "-quality", "85"], pnm(colour)))
# CMYK: Pillow writes Photoshop's inverted samples with an Adobe marker;
# without the marker the samples are read as plain inks; YCCK is the same
# file's first three components read as YCC (Adobe transform 2).
cmyk = pillow(colour.convert("CMYK"))
write("cmyk-adobe.jpg", cmyk)
write("cmyk-plain.jpg", without(cmyk, 0xEE))
write("ycck-adobe.jpg", patched(cmyk, 0xEE, 15, 2))
for value in range(1, 9):
    write(f"orientation-{value}.jpg", pillow(gray_tall, exif=exif_orientation(value)))
write("orientation-6-big-endian.jpg", pillow(gray_tall, exif=exif_orientation(6, big_endian=True)))
write("orientation-7-colour.jpg", pillow(colour_tall, exif=exif_orientation(7)))
# Refused: 505 scans (over the limit of 500), a progressive frame of 60000×60000 (over the pixel budget, before
# libjpeg allocates its coefficients), SOF says 12 bits, the file ends early, the entropy-coded data is damaged.
write("refused-over-budget.jpg", patched(pillow(gray, progressive=True), 0xC2, 5, b"\xea\x60\xea\x60"))
write("refused-too-many-scans.jpg", many_scans(gray))
write("refused-12-bit.jpg", patched(gray_jpeg, 0xC0, 4, 12))
write("refused-truncated.jpg", colour_jpeg[: len(colour_jpeg) // 2])
write("refused-no-eoi.jpg", colour_jpeg[:-2])
damaged = bytearray(colour_jpeg)
sos = [pos + length for pos, m, length in segments(colour_jpeg) if m == 0xDA][0]
damaged[sos + 40 : sos + 48] = b"\xff\x00" * 4
write("refused-corrupt.jpg", bytes(damaged))
