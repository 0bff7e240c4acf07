#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the multi-page TIFFs of test-cli-volumes.sh with the standard library alone, so that the test
needs neither numpy nor tifffile: uncompressed gray pages, one strip each, deterministic samples.

volume-tiff.py OUT D H W [--levels L] [--bits 8|16] [--page-size K:H:W] [--page-bits K:BITS]
               [--ones] [--ome C:T]
  --levels L      samples are a fixed pseudo-random sequence modulo L (default 8)
  --page-size     page K (from 1) is H×W instead (a mismatched stack)
  --page-bits     page K has BITS bits per sample instead
  --ones          every sample 1 (a full footprint or mask)
  --ome C:T       D·C·T pages in XYZCT order with OME-XML in the first page's ImageDescription;
                  the sample of plane (z, c, t) at (y, x) is (x + 3y + 5z + 7c + 11t) mod L
"""
import struct
import sys


def sample(seed):
    # A 32-bit LCG: the same sequence on every machine.
    return (seed * 1103515245 + 12345) & 0x7fffffff


def main(argv):
    out, depth, height, width = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    levels, bits, sizes, page_bits, ones, ome = 8, 8, {}, {}, False, None
    i = 4
    while i < len(argv):
        opt = argv[i]
        if opt == "--ones":
            ones = True
            i += 1
            continue
        value = argv[i + 1]
        i += 2
        if opt == "--levels":
            levels = int(value)
        elif opt == "--bits":
            bits = int(value)
        elif opt == "--page-size":
            k, h, w = map(int, value.split(":"))
            sizes[k] = (h, w)
        elif opt == "--page-bits":
            k, b = map(int, value.split(":"))
            page_bits[k] = b
        elif opt == "--ome":
            ome = tuple(map(int, value.split(":")))
    pages = []
    description = None
    if ome is not None:
        channels, times = ome
        for t in range(times):
            for c in range(channels):
                for z in range(depth):
                    pages.append((height, width, bits,
                                  [(x + 3 * y + 5 * z + 7 * c + 11 * t) % levels
                                   for y in range(height) for x in range(width)]))
        description = ('<?xml version="1.0" encoding="UTF-8"?><OME xmlns="http://www.openmicroscopy.org/'
                       'Schemas/OME/2016-06"><Image ID="Image:0"><Pixels ID="Pixels:0" DimensionOrder="XYZCT" '
                       'Type="uint%d" SizeX="%d" SizeY="%d" SizeZ="%d" SizeC="%d" SizeT="%d">'
                       '<TiffData IFD="0" PlaneCount="%d"/></Pixels></Image></OME>'
                       % (bits, width, height, depth, channels, times, depth * channels * times))
    else:
        seed = 1
        for k in range(1, depth + 1):
            h, w = sizes.get(k, (height, width))
            values = []
            for _ in range(h * w):
                seed = sample(seed)
                values.append(1 if ones else (seed >> 16) % levels)
            pages.append((h, w, page_bits.get(k, bits), values))
    write(out, pages, description)


def write(out, pages, description):
    data = bytearray(b"II*\0\0\0\0\0")
    previous_link = 4
    for index, (h, w, bits, values) in enumerate(pages):
        pixels = bytes(values) if bits == 8 else struct.pack("<%dH" % len(values), *values)
        pixel_offset = len(data)
        data += pixels
        if len(data) % 2:
            data += b"\0"
        text_offset = None
        text = None
        if index == 0 and description is not None:
            text = description.encode() + b"\0"
            text_offset = len(data)
            data += text
            if len(data) % 2:
                data += b"\0"
        tags = [(256, 4, 1, w), (257, 4, 1, h), (258, 3, 1, bits), (259, 3, 1, 1), (262, 3, 1, 1)]
        if text is not None:
            tags.append((270, 2, len(text), text_offset))
        tags += [(273, 4, 1, pixel_offset), (277, 3, 1, 1), (278, 4, 1, h), (279, 4, 1, len(pixels))]
        ifd = len(data)
        struct.pack_into("<I", data, previous_link, ifd)
        data += struct.pack("<H", len(tags))
        for tag, kind, count, value in tags:
            if kind == 3:
                data += struct.pack("<HHIHH", tag, kind, count, value, 0)
            else:
                data += struct.pack("<HHII", tag, kind, count, value)
        previous_link = len(data)
        data += b"\0\0\0\0"
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main(sys.argv[1:])
