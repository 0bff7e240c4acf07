# SPDX-License-Identifier: MIT
"""``skimage.exposure.equalize_hist`` and ``equalize_adapthist`` where
Entroscope gives scikit-image 0.19's result.

equalize_hist: integer images (uint8, uint16), for which scikit-image gives
each value its own bin and `nbins` plays no part: the result is the
cumulative histogram at each value, exactly. Floating-point images, which
scikit-image bins into `nbins` and interpolates, are refused.

equalize_adapthist: gray uint8 and uint16 images, through
``entroscope.clahe(like="skimage")`` (within 1e-6). Refused: colour
(scikit-image equalizes the V of HSV), volumes (scikit-image's contextual
regions are 3-D there, Entroscope's CLAHE works plane by plane) and
floating-point images.
"""

from __future__ import annotations

import numpy as np

import entroscope

from ._arrays import namespace

__all__ = ["equalize_adapthist", "equalize_hist"]


def _require_integer(image, function):
    if image.dtype not in (np.uint8, np.uint16):
        raise TypeError(f"{function}: {image.dtype} images are not taken (scikit-image converts or bins them in ways "
                        "Entroscope does not reproduce exactly); give uint8 or uint16, or use skimage.exposure")


def equalize_hist(image, nbins=256, mask=None):
    """Histogram equalization, scikit-image 0.19's ``exposure.equalize_hist``
    of a uint8 or uint16 image (any shape): float64 in 0..1, the fraction of
    the (masked) pixels at or below each pixel's value. `nbins` is accepted
    and, as in scikit-image for integer images, plays no part. mask: the
    pixels (nonzero) whose histogram is used; the whole image is mapped."""
    _require_integer(image, "equalize_hist")
    xp = namespace(image)
    counted = image if mask is None else image[xp.asarray(mask).astype(xp.bool_)]
    if counted.size == 0:
        raise ValueError("equalize_hist: the mask selects no pixel")
    low, high = int(counted.min()), int(counted.max())
    cdf = xp.cumsum(xp.bincount((counted.ravel() - low).astype(xp.int64), minlength=high - low + 1))
    cdf = cdf / float(cdf[-1])
    # np.interp at the integer bin centres: the cdf itself, cdf[0] below the
    # lowest counted value and cdf[-1] = 1 above the highest.
    return cdf[xp.clip(image.astype(xp.int64) - low, 0, high - low)]


def equalize_adapthist(image, kernel_size=None, clip_limit=0.01, nbins=256):
    """Contrast-limited adaptive histogram equalization, scikit-image 0.19's
    ``exposure.equalize_adapthist`` of a 2-D uint8 or uint16 image: float64
    in 0..1, within 1e-6 of scikit-image's (`entroscope.clahe` with
    like="skimage"). kernel_size: an int or (rows, columns), default 1/8 of
    each side."""
    _require_integer(image, "equalize_adapthist")
    if image.ndim != 2:
        raise ValueError(f"equalize_adapthist: an array of shape {image.shape} is not taken: scikit-image equalizes "
                         "colour in HSV and volumes with 3-D regions, Entroscope neither; give a 2-D gray image")
    result = entroscope.clahe(image, clip_limit, like="skimage", kernel_size=kernel_size, nbins=nbins,
                              channel_axis=None)
    return result.astype(namespace(image).float64)
