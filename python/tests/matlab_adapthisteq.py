# SPDX-License-Identifier: MIT
"""MATLAB's adapthisteq in NumPy, transcribed from its documentation, not from
MATLAB (which is not here): the reference of entroscope's like='matlab' CLAHE.

MathWorks documents adapthisteq (https://www.mathworks.com/help/images/ref/adapthisteq.html)
as Zuiderveld's CLAHE ("Contrast Limited Adaptive Histogram Equalization",
Graphics Gems IV, 1994): the image is divided into 'NumTiles' tiles (default
[8 8], rows × columns); each tile's histogram of 'NBins' bins (default 256) is
clipped at 'ClipLimit' (default 0.01, a fraction in [0, 1]: higher is more
contrast) and shaped to the 'Distribution' ('uniform' by default); "the
neighboring tiles are then combined using bilinear interpolation to eliminate
artificially induced boundaries"; 'Range' 'full' (the default) maps to the full
range of the output class, which is the input's class. Where the documentation
leaves a step open, the choice here is Zuiderveld's, as written in his Graphics
Gems code, and says so in a comment. DESIGN.md §1 lists every step."""

import math

import numpy as np


def tile_side(side, tiles):
    """A tile's side: the image's share, one more when the grid does not divide
    it (the image is padded), one more again to make it even, so that a tile's
    centre falls between two pixels and the half tiles at the edges are whole."""
    t = side // tiles if side % tiles == 0 else side // tiles + 1
    return t if t % 2 == 0 else t + 1


def symmetric_index(i, n):
    """MATLAB's padarray 'symmetric' (d c b a | a b c d | d c b a), repeated for
    pads wider than the image."""
    period = 2 * n
    i %= period
    return i if i < n else period - 1 - i


def round_half_away(x):
    """MATLAB's round: halves away from zero (x ≥ 0 here)."""
    f = math.floor(x)
    return f + 1 if x - f >= 0.5 else f


def clip_histogram(hist, clip):
    """Zuiderveld's ClipHistogram: clip every bin, give each the mean
    increment (a bin above clip − increment only what fills it), then one
    count at a time to the bins below the limit, a stride of bins / excess
    apart, from each start in turn."""
    hist = hist.copy()
    bins = hist.size
    excess = int(np.maximum(hist - clip, 0).sum())
    increment = excess // bins
    upper = clip - increment
    for k in range(bins):
        if hist[k] > clip:
            hist[k] = clip
        elif hist[k] > upper:
            excess -= clip - hist[k]
            hist[k] = clip
        else:
            excess -= increment
            hist[k] += increment
    start = 0
    while excess != 0:
        step = max(bins // excess, 1)
        m = start
        while m < bins and excess != 0:
            if hist[m] < clip:
                hist[m] += 1
                excess -= 1
            m += step
        start = start + 1 if start + 1 < bins else 0
    return hist


def adapthisteq(image, num_tiles=(8, 8), clip_limit=0.01, nbins=256):
    """adapthisteq(I, 'NumTiles', num_tiles, 'ClipLimit', clip_limit, 'NBins',
    nbins) with 'Distribution' 'uniform' and 'Range' 'full', for uint8 and
    uint16 images; the result has the input's dtype."""
    image = np.asarray(image)
    maxval = float(np.iinfo(image.dtype).max)
    height, width = image.shape
    rows, columns = num_tiles
    th, tw = tile_side(height, rows), tile_side(width, columns)
    # The padding is split: half before, the rest after.
    pad_top, pad_left = (th * rows - height) // 2, (tw * columns - width) // 2
    ys = [symmetric_index(y - pad_top, height) for y in range(th * rows)]
    xs = [symmetric_index(x - pad_left, width) for x in range(tw * columns)]
    padded = image[np.ix_(ys, xs)]
    # Zuiderveld's MakeLut: bins of 1 + maxval // nbins values (uint8 at 256
    # bins: a bin a value).
    bins_of = padded.astype(np.int64) // (1 + int(maxval) // nbins)

    # ClipLimit runs from the smallest limit that holds a tile's pixels
    # (ceil(pixels / bins)) at 0 to the pixels themselves at 1.
    pixels = th * tw
    min_clip = -(-pixels // nbins)
    clip = min_clip + round_half_away(clip_limit * (pixels - min_clip))
    maps = np.empty((rows, columns, nbins))
    for ty in range(rows):
        for tx in range(columns):
            tile = bins_of[ty * th:(ty + 1) * th, tx * tw:(tx + 1) * tw]
            hist = clip_histogram(np.bincount(tile.ravel(), minlength=nbins), clip)
            # 'uniform': the scaled cumulative histogram, at most the top of the range.
            maps[ty, tx] = np.minimum(np.cumsum(hist) * (maxval / pixels), maxval)

    # Bilinear interpolation between the maps of the four nearest tile
    # centres: the image falls into (rows + 1) × (columns + 1) regions
    # between centres (half tiles at the edges, which see one or two tiles).
    # Zuiderveld's Interpolate weighs with integer distances from each side
    # of the region and divides by the region's pixels once.
    out = np.empty((th * rows, tw * columns))
    for ry in range(rows + 1):
        y0 = 0 if ry == 0 else th // 2 + (ry - 1) * th
        rh = th // 2 if ry in (0, rows) else th
        top, bottom = max(ry - 1, 0), min(ry, rows - 1)
        row_w = np.arange(rh, dtype=np.float64)[:, None]
        row_rev = rh - row_w
        for rx in range(columns + 1):
            x0 = 0 if rx == 0 else tw // 2 + (rx - 1) * tw
            rw = tw // 2 if rx in (0, columns) else tw
            left, right = max(rx - 1, 0), min(rx, columns - 1)
            col_w = np.arange(rw, dtype=np.float64)[None, :]
            col_rev = rw - col_w
            b = bins_of[y0:y0 + rh, x0:x0 + rw]
            ul, ur = maps[top, left][b], maps[top, right][b]
            bl, br = maps[bottom, left][b], maps[bottom, right][b]
            out[y0:y0 + rh, x0:x0 + rw] = (row_rev * (col_rev * ul + col_w * ur)
                                           + row_w * (col_rev * bl + col_w * br)) / (float(rh) * float(rw))
    out = out[pad_top:pad_top + height, pad_left:pad_left + width]
    # Into the input's class as MATLAB converts: round half away, saturate.
    rounded = np.floor(out) + (out - np.floor(out) >= 0.5)
    return np.clip(rounded, 0, maxval).astype(image.dtype)
