# SPDX-License-Identifier: MIT
"""Slow, obviously correct NumPy references of DESIGN.md §1, in float64 for
entropy and in float32 with round-half-even where the definition says so."""

import numpy as np


def quantize(image, levels=16, depth=None):
    depth = depth or image.dtype.itemsize * 8
    return ((image.astype(np.int64) * levels) >> depth).astype(np.uint8)


def _box_counts(mask, r):
    """Sum of mask over the (2r+1)² window clipped to the image."""
    h, w = mask.shape
    s = np.zeros((h + 1, w + 1), np.int64)
    s[1:, 1:] = np.cumsum(np.cumsum(mask, 0), 1)
    y = np.arange(h)
    x = np.arange(w)
    y0, y1 = np.clip(y - r, 0, h), np.clip(y + r + 1, 0, h)
    x0, x1 = np.clip(x - r, 0, w), np.clip(x + r + 1, 0, w)
    return s[y1][:, x1] - s[y0][:, x1] - s[y1][:, x0] + s[y0][:, x0]


def entropy(image, window=5, levels=16, depth=None, quantized=False):
    q = image.astype(np.int64) if quantized else quantize(image, levels, depth).astype(np.int64)
    r = window // 2
    n = _box_counts(np.ones(q.shape, np.int64), r).astype(np.float64)
    h = np.zeros(q.shape, np.float64)
    for level in np.unique(q):
        c = _box_counts(q == level, r).astype(np.float64)
        p = np.divide(c, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            h -= np.where(c > 0, p * np.log(np.where(c > 0, p, 1.0)), 0.0)
    return h


def to_u8(image, depth=None, maxval=None):
    """The 8-bit view: round(v · 255 / maxval), halves up; maxval = 2^depth − 1."""
    depth = depth or image.dtype.itemsize * 8
    maxval = maxval or (1 << depth) - 1
    v = image.astype(np.int64)
    return ((v * 510 + maxval) // (2 * maxval)).astype(np.uint8)


def equalize(image, depth=None):
    g = to_u8(image, depth)
    hist = np.bincount(g.ravel(), minlength=256).astype(np.int64)
    n = g.size
    i0 = int(np.nonzero(hist)[0][0])
    if hist[i0] == n:
        return g.copy()
    scale = np.float32(255.0) / np.float32(n - hist[i0])
    cdf = np.cumsum(hist)
    lut = np.rint((cdf - hist[i0]).astype(np.float32) * scale)
    lut = np.clip(lut, 0, 255).astype(np.uint8)
    lut[i0] = 0
    return lut[g]


def sharpen(image, amount=1.0, depth=None):
    g = to_u8(image, depth).astype(np.int32)
    p = np.pad(g, 1, mode="edge")
    lap = 4 * g - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]
    product = np.float32(amount) * lap.astype(np.float32)
    value = g.astype(np.float32) + product
    return np.clip(np.rint(value), 0, 255).astype(np.uint8)


def luma(rgb):
    """BT.709 on stored values, rounded half away from zero (app/io/es-png-read.c)."""
    c = rgb.astype(np.float64)
    v = 0.2126 * c[..., 0] + 0.7152 * c[..., 1] + 0.0722 * c[..., 2]
    f = np.floor(v)
    r = np.where(v - f >= 0.5, f + 1, f)
    top = 255 if rgb.dtype == np.uint8 else 65535
    return np.minimum(r, top).astype(rgb.dtype)
