# SPDX-License-Identifier: MIT
"""``skimage.filters.rank.entropy`` on Entroscope's kernels.

    from entroscope.skimage.filters.rank import entropy
    h = entropy(image, disk(5))            # float64, in bits, as scikit-image's
    h = entropy(cupy_image, disk(5))       # a float32 CuPy array, as cuCIM's

The footprint, its centre and shifts, the bins, the borders and the mask
mean what they mean in scikit-image 0.19 to 0.26 (unchanged between them):
the footprint is padded with empty cells until its centre
(``shape // 2 + shift``) is its middle, which is
`entroscope.entropy(like="skimage")`'s footprint convention. Where the
versions differ, the drop-in does what 0.26 does and 0.19 allows: 1-D and
4-D images and footprint sequences are refused with 0.26's messages, the
shifts default to 0, and a boolean shift warns, as 0.26 does. Values match
scikit-image's to float32 precision: Entroscope's kernels compute in float32
(DESIGN.md section 1), not in scikit-image's float64 summation order.
"""

from __future__ import annotations

import functools
import numbers
import warnings

import numpy as np

import entroscope

from .._arrays import host_footprint, img_as_ubyte, namespace, renamed_keyword, user_stacklevel

__all__ = ["entropy"]

# scikit-image warns from this many histogram bins on (16-bit images).
_MANY_BINS = 2**10
# The shifts' names, in the order of an image's and a volume's axes.
_NAMES_2D = ("shift_y", "shift_x")
_NAMES_3D = ("shift_x", "shift_y", "shift_z")
# The largest side of a 3-D footprint (ES_SIDE_3D_MAX): masked calls use one.
_SIDE_3D_MAX = 63


@functools.lru_cache(maxsize=64)
def _centred(samples, dtype, shape, shifts, names):
    """The footprint (its samples' bytes, dtype and shape; > 0 = in) padded
    with empty cells so that scikit-image's centre, ``shape // 2 + shift``
    on each axis, is its middle cell (odd sides), read-only; and whether
    that centre is a cell. Cached, by the samples as they are (comparing
    them first took a microsecond of every call): a call on a device array
    is a few hundred microseconds, and a loop calls with the same
    footprint."""
    cells = np.frombuffer(samples, dtype).reshape(shape) > 0
    centre = [side // 2 + int(shift) for side, shift in zip(shape, shifts)]
    for side, middle, name in zip(shape, centre, names):
        if not 0 <= middle < side:
            raise ValueError(f"half footprint + {name} must be between 0 and footprint: the centre "
                             f"{side // 2} + {middle - side // 2} lies outside a side of {side}")
    reach = [max(middle, side - 1 - middle) for side, middle in zip(shape, centre)]
    padded = np.zeros([2 * r + 1 for r in reach], bool)
    padded[tuple(slice(r - middle, r - middle + side) for r, middle, side in zip(reach, centre, shape))] = cells
    padded.flags.writeable = False
    return padded, bool(padded[tuple(reach)])


def _entropy_everywhere(xp, image, cells, counted):
    """Entropy at every pixel of the mask's cells in its window, masked-out
    pixels included, as scikit-image gives it (Entroscope's mask also keeps
    a masked-out pixel from having a value). The volume's planes are
    interleaved with empty ones whose pixels are all in the mask, and the
    footprint reaches from each empty plane into the image's planes only:
    one call computes every pixel's value on the empty planes."""
    volume = image if image.ndim == 3 else image[None]
    cells = cells if cells.ndim == 3 else cells[None]
    reach = cells.shape[0] // 2
    if 4 * reach + 3 > _SIDE_3D_MAX or max(cells.shape[1:]) > _SIDE_3D_MAX:
        raise ValueError(f"with a mask, a footprint has up to {_SIDE_3D_MAX} cells a side and "
                         f"{(_SIDE_3D_MAX - 3) // 4 * 2 + 1} planes, its centre in the middle; this one needs "
                         f"{cells.shape} (its shape about the centre)")
    planes = volume.shape[0]
    doubled = xp.zeros((2 * planes,) + volume.shape[1:], volume.dtype)
    doubled[0::2] = volume
    in_mask = xp.ones(doubled.shape, xp.bool_)
    in_mask[0::2] = counted.reshape(volume.shape) != 0
    # Footprint plane 2k reads the image's plane k - m from an empty plane, k = 0..2m.
    spread = np.zeros((4 * reach + 3,) + cells.shape[1:], np.uint8)
    spread[0:4 * reach + 1:2] = cells
    values = entroscope.entropy(doubled, like="skimage", footprint=spread, mask=in_mask, channel_axis=None)
    return values[1::2].reshape(image.shape)


def _is_footprint_sequence(footprint):
    """Whether `footprint` is scikit-image's decomposed form, a sequence of
    (footprint array, repeats) pairs (``morphology.disk(r,
    decomposition="sequence")``), which its rank filters refuse."""
    # A tuple or list first: an array's __array_interface__ builds a dict
    # at each look, 0.8 µs of every call here.
    return (isinstance(footprint, (tuple, list)) and len(footprint) > 0
            and all(isinstance(pair, (tuple, list)) and len(pair) == 2
                    and (hasattr(pair[0], "__array_interface__") or hasattr(pair[0], "__cuda_array_interface__"))
                    and isinstance(pair[1], numbers.Integral) for pair in footprint))


@renamed_keyword("selem", "footprint")
def entropy(image, footprint, out=None, mask=None, shift_x=0, shift_y=0, shift_z=0):
    """Local entropy in bits, scikit-image's ``filters.rank.entropy`` (0.19
    to 0.26).

    image: a 2-D (rows, columns) or 3-D (planes, rows, columns) array,
    uint8 or uint16 (other dtypes are converted by scikit-image's
    ``img_as_ubyte``, with its warning). footprint: an array of the image's
    dimensions, > 0 = in, any sides, even ones included; its centre is
    ``shape // 2`` plus the shifts: (shift_y, shift_x) on an image's rows
    and columns, and, as in scikit-image 0.19 and still in 0.26, (shift_x,
    shift_y, shift_z) on a volume's planes, rows and columns; a boolean
    shift warns and counts as 0 or 1, as in 0.26. mask: cells where it is nonzero
    (after ``img_as_ubyte`` for dtypes other than bool and uint8) are
    counted; every pixel, masked-out ones too, gets the entropy of its
    window's counted cells, 0 where it counts none. out: float32 or float64,
    of the image's shape (default: a new float64 array as scikit-image's,
    and for a device array a float32 one of its library, as cuCIM's);
    returned."""
    if isinstance(image, np.ma.MaskedArray):
        raise TypeError("a numpy.ma.MaskedArray image: scikit-image reads its data and drops its mask; pass "
                        "image.data to do the same, or mask=~numpy.ma.getmaskarray(image) to count only the unmasked")
    if image.ndim not in (2, 3):
        raise ValueError(f"`image` must have 2 or 3 dimensions, got {image.ndim}.")
    if image.dtype == np.bool_:
        raise ValueError("dtype cannot be bool.")
    if image.dtype not in (np.uint8, np.uint16):
        warnings.warn(f"Possible precision loss converting image of type {image.dtype} to uint8 as required by rank "
                      "filters. Convert manually using skimage.util.img_as_ubyte to silence this warning.",
                      stacklevel=user_stacklevel())
        image = img_as_ubyte(image, "an image")
    if _is_footprint_sequence(footprint):
        raise ValueError("footprint sequences are not currently supported by rank filters")
    if out is image:
        raise NotImplementedError("Cannot perform rank operation in place.")
    if out is not None and (out.shape != image.shape or out.dtype not in (np.float32, np.float64)):
        raise TypeError(f"out must be float32 or float64 of the image's shape {image.shape}, not {out.dtype} of "
                        f"{out.shape}")
    footprint_cells, changed_cells = host_footprint(footprint)
    try:
        if footprint_cells.ndim != image.ndim:
            raise ValueError("Image dimensions and neighborhood dimensions do not match")
        if image.dtype == np.uint16:
            # scikit-image's bins: one per value up to the maximum (at least 4).
            bins = int(max(3, int(image.max()))) + 1
            if bins > _MANY_BINS:
                warnings.warn(f"Bad rank filter performance is expected due to a large number of bins ({bins}), "
                              f"equivalent to an approximate bitdepth of {np.log2(bins):.1f}. (scikit-image's "
                              "warning, kept for drop-in compatibility)",
                              stacklevel=user_stacklevel())
        if mask is not None:
            if not hasattr(mask, "dtype"):
                mask = np.asarray(mask)
            if mask.dtype not in (np.bool_, np.uint8):
                mask = img_as_ubyte(mask, "a mask")
            if mask.shape != image.shape:
                raise ValueError(f"mask of shape {mask.shape} differs from the image's {image.shape}")
        if image.ndim == 2:
            given, names = (shift_y, shift_x), _NAMES_2D
        else:
            given, names = (shift_x, shift_y, shift_z), _NAMES_3D
        if not (type(shift_x) is int and type(shift_y) is int and type(shift_z) is int):  # noqa: E721 (bool is an int)
            for name, value in sorted(zip(names, given)):
                if isinstance(value, (bool, np.bool_)):
                    # scikit-image 0.26's warning (0.19 took booleans, its defaults, silently).
                    warnings.warn(f"Parameter `{name}` is boolean and will be interpreted as int. This is not "
                                  "officially supported, use int instead.", UserWarning, stacklevel=user_stacklevel())
            given = tuple(map(int, given))
        shifts = given
        values = _entropy_of(image, footprint_cells, shifts, names, out, mask)
    finally:
        # Also when the call failed, so that a changed footprint's cells are kept.
        changed = changed_cells() if changed_cells is not None else None
    if changed is not None:
        # The device footprint's cells changed since they were last read.
        values = _entropy_of(image, changed, shifts, names, out, mask)
    if out is None:
        # scikit-image's float64 on the host; on a device, cuCIM's float32
        # (of one piece: a mask's values are a view of a larger array).
        if isinstance(values, np.ndarray):
            return values.astype(np.float64)
        return values if values.flags.c_contiguous else values.copy()
    if values is not out:
        out[...] = values
    return out


def _entropy_of(image, footprint_cells, shifts, names, out, mask):
    """The values in float32, or in `out` where the kernels can write it."""
    if footprint_cells.dtype.hasobject:  # its bytes are pointers
        footprint_cells = footprint_cells > 0
    footprint_cells = np.ascontiguousarray(footprint_cells)
    cells, has_centre = _centred(footprint_cells.tobytes(), footprint_cells.dtype.str, footprint_cells.shape, shifts,
                                 names)
    xp = namespace(image)
    # A float32 out= of one piece is written by the kernels themselves.
    direct = out if out is not None and out.dtype == np.float32 and out.flags.c_contiguous else None
    if not (has_centre or cells.any()):
        values = xp.zeros(image.shape, xp.float32)
    elif mask is None:
        values = entroscope.default_engine().entropy(image, like="skimage", footprint=cells, channel_axis=None,
                                                     out=direct)
    else:
        values = _entropy_everywhere(xp, image, cells, mask)
    # A window that counts no cell has no value in Entroscope, 0 in
    # scikit-image. Only a mask, or a footprint without its centre cell,
    # makes one (the centre is always on the image).
    if mask is not None or not has_centre:
        values[xp.isnan(values)] = 0
    return values
