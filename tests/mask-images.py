#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the small masks of test-cli-hostile.sh with the standard library alone: samples of the
kinds whose raw values a mask reader must keep (floats, signed integers, colour).

mask-images.py OUT.tif W H f32|i8 V...      one gray page of float32 or int8 samples
mask-images.py OUT.tif W H rgb8 R,G,B...    one RGB page, 8 bits a channel
mask-images.py OUT.png W H rgb8 R,G,B...    an 8-bit RGB PNG
The values are repeated, row after row, to fill W×H pixels.
"""
import struct
import sys
import zlib


def tiff(out, width, height, kind, pixels):
    spp, bits, fmt, photometric = {"f32": (1, 32, 3, 1), "i8": (1, 8, 2, 1), "rgb8": (3, 8, 1, 2)}[kind]
    pack = {"f32": "<f", "i8": "<b", "rgb8": "<BBB"}[kind]
    data = b"".join(struct.pack(pack, *p) for p in pixels)
    bits_offset = 8 + len(data)
    tags = [
        (256, 3, 1, width), (257, 3, 1, height),
        (258, 3, spp, bits if spp == 1 else bits_offset),
        (259, 3, 1, 1), (262, 3, 1, photometric), (273, 4, 1, 8), (277, 3, 1, spp),
        (278, 3, 1, height), (279, 4, 1, len(data)), (284, 3, 1, 1), (339, 3, spp, fmt),
    ]
    extra = struct.pack("<3H", bits, bits, bits) if spp == 3 else b""
    ifd_offset = bits_offset + len(extra)
    ifd = struct.pack("<H", len(tags))
    for tag, typ, count, value in tags:
        if typ == 3 and count == 1:
            ifd += struct.pack("<HHIHH", tag, typ, count, value, 0)
        elif typ == 3 and count == 3 and tag == 339:
            # SampleFormat of three samples does not fit in the entry: an unsigned RGB is the default.
            continue
        else:
            ifd += struct.pack("<HHII", tag, typ, count, value)
    count = (len(ifd) - 2) // 12
    ifd = struct.pack("<H", count) + ifd[2:] + struct.pack("<I", 0)
    with open(out, "wb") as f:
        f.write(b"II*\0" + struct.pack("<I", ifd_offset) + data + extra + ifd)


def png(out, width, height, pixels):
    raw = b"".join(b"\0" + b"".join(bytes(p) for p in pixels[y * width:(y + 1) * width]) for y in range(height))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    with open(out, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def main(argv):
    out, width, height, kind, values = argv[0], int(argv[1]), int(argv[2]), argv[3], argv[4:]
    parse = (lambda v: (float(v),)) if kind == "f32" else (lambda v: tuple(int(c) for c in v.split(",")))
    cycle = [parse(v) for v in values]
    pixels = [cycle[i % len(cycle)] for i in range(width * height)]
    if out.endswith(".png"):
        png(out, width, height, pixels)
    else:
        tiff(out, width, height, kind, pixels)


if __name__ == "__main__":
    main(sys.argv[1:])
