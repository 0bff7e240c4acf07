#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes tests/clahe-presets-expected.h: small images and what CLAHE's peers
make of them, for test-clahe-presets.c, which checks the CPU's like=skimage
and like=matlab presets in C (where no Python runs, as on the GPU machines).

skimage: scikit-image's exposure.equalize_adapthist (0.19.3 is what wrote the
committed header); matlab: python/tests/matlab_adapthisteq.py, the NumPy
transcription of adapthisteq's documentation (MATLAB itself is not here).
Run it again only when a definition in DESIGN.md §1 changes:

    /usr/bin/python3 tests/clahe-presets-expected.py > tests/clahe-presets-expected.h
    clang-format -i tests/clahe-presets-expected.h
"""

import os
import sys

import numpy as np
import skimage
from skimage import exposure

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "tests"))
from matlab_adapthisteq import adapthisteq  # noqa: E402


def contrasty(rng, shape, dtype):
    """Random samples with a dark upper half and a brighter band, so that the
    tiles' histograms differ and the blend between them matters."""
    top = np.iinfo(dtype).max
    image = rng.integers(0, top + 1, shape).astype(np.int64)
    image[: shape[0] // 2] //= 3
    image[:, shape[1] // 3: shape[1] // 2] = np.minimum(image[:, shape[1] // 3: shape[1] // 2] + top // 4, top)
    return image.astype(dtype)


# (name, peer, dtype, shape, clip, (tile columns, tile rows), kernel (rows, columns) or None, nbins).
# Sizes that neither the grids nor the kernels divide; the skimage kernel
# None is the one Entroscope derives from the grid (side // tiles), which
# at 8 × 8 is equalize_adapthist's default.
CASES = [
    ("skimage_u8_defaults", "skimage", np.uint8, (37, 23), 0.01, (8, 8), None, 256),
    ("skimage_u8_kernel", "skimage", np.uint8, (37, 23), 0.05, (8, 8), (5, 7), 64),
    ("skimage_u16_grid", "skimage", np.uint16, (19, 31), 0.02, (3, 2), None, 300),
    ("skimage_u8_constant", "skimage", np.uint8, (9, 11), 0.01, (8, 8), None, 256),
    ("matlab_u8_defaults", "matlab", np.uint8, (37, 23), 0.01, (8, 8), None, 256),
    ("matlab_u16_grid", "matlab", np.uint16, (19, 31), 0.02, (4, 3), None, 100),
    ("matlab_u8_unclipped", "matlab", np.uint8, (13, 29), 0.0, (2, 5), None, 256),
]


def expected(peer, image, clip, tiles, kernel, nbins):
    columns, rows = tiles
    if peer == "matlab":
        return adapthisteq(image, (rows, columns), clip, nbins)
    if kernel is None:
        kernel = (max(image.shape[0] // rows, 1), max(image.shape[1] // columns, 1))
    return exposure.equalize_adapthist(image, kernel_size=kernel, clip_limit=clip, nbins=nbins)


def c_array(values, ctype, form):
    items = [form % v for v in values.ravel()]
    lines = [", ".join(items[i: i + 12]) for i in range(0, len(items), 12)]
    return "(const %s[]){\n    %s,\n  }" % (ctype, ",\n    ".join(lines))


def main():
    rng = np.random.default_rng(20260423)
    print("/* SPDX-License-Identifier: MIT */")
    print("/* CLAHE's presets on small images and their peers' results, written by tests/clahe-presets-expected.py")
    print(" * (scikit-image %s, python/tests/matlab_adapthisteq.py, NumPy %s): do not edit. */"
          % (skimage.__version__, np.__version__))
    print("#pragma once\n")
    print('#include "es-ops.h"\n')
    print("typedef struct {")
    print("  const char *name;")
    print("  EsClaheKind kind;")
    print("  int depth, width, height;")
    print("  double clip;")
    print("  int tile_columns, tile_rows;")
    print("  int kernel_height, kernel_width; /* 0: from the grid */")
    print("  int bins;")
    print("  const uint16_t *input;")
    print("  const double *expected; /* skimage's float64 (F32 output), or MATLAB's integers */")
    print("} ClahePresetCase;\n")
    print("static const ClahePresetCase clahe_preset_cases[] = {")
    for name, peer, dtype, shape, clip, tiles, kernel, nbins in CASES:
        if name.endswith("constant"):
            image = np.full(shape, 77, dtype)
        else:
            image = contrasty(rng, shape, dtype)
        result = np.asarray(expected(peer, image, clip, tiles, kernel, nbins), dtype=np.float64)
        kind = "ES_CLAHE_SKIMAGE" if peer == "skimage" else "ES_CLAHE_MATLAB"
        kh, kw = kernel if kernel else (0, 0)
        print("  {")
        print('    "%s", %s, %d, %d, %d, %r, %d, %d, %d, %d, %d,'
              % (name, kind, 8 * image.itemsize, shape[1], shape[0], clip, tiles[0], tiles[1], kh, kw, nbins))
        print("    %s," % c_array(image, "uint16_t", "%d"))
        print("    %s," % c_array(result, "double", "%.17g"))
        print("  },")
    print("};")


if __name__ == "__main__":
    main()
