# SPDX-License-Identifier: MIT
"""Entroscope's image kernels on NumPy arrays: local entropy, histogram
equalization, sharpening and quantization, computed by CUDA where a usable
NVIDIA GPU is present and by OpenMP on the CPU everywhere else, with the
exact definitions of entroscope-cli (DESIGN.md section 1).

    >>> import numpy as np, entroscope
    >>> image = np.random.default_rng(1).integers(0, 256, (480, 640), dtype=np.uint8)
    >>> entroscope.entropy(image, window=5).dtype
    dtype('float32')

As in scikit-image, a 2-D array is an image (rows, columns) and a 3-D array
a volume (planes, rows, columns); colour needs ``channel_axis=-1`` (it is
then reduced to gray with BT.709 weights, as the CLI reduces a colour PNG).
An (H, W, 3) or (H, W, 4) array without channel_axis is refused: it could
be either, so the call must say which (``channel_axis=None`` for a volume).

The module-level functions share one engine per backend, created on first
use and safe to call from several threads (one job at a time per engine,
with the GIL released while it computes). `Engine` makes a private one, for
example one per thread or per GPU.
"""

# The module's own imports are private (dir(entroscope) is the API), and no
# `from __future__ import annotations`, whose name would be public too.
import os as _os
import threading as _threading

import numpy as _np

from . import _device, _entroscope
from ._entroscope import (
    Cancelled,
    Engine,
    Timing,
    Variant,
    cpu_threads,
    cuda_compiled,
    equalize_lut,
    extent,
    extent_3d,
    get_max_pixels,
    gray,
    halo,
    ops,
    params,
    set_max_pixels,
    variants,
)

__version__ = _entroscope.__version__

__all__ = [
    "Cancelled",
    "Engine",
    "Image",
    "Timing",
    "Variant",
    "clahe",
    "cpu_threads",
    "cuda_compiled",
    "default_engine",
    "entropy",
    "equalize",
    "equalize_lut",
    "extent",
    "extent_3d",
    "get_max_pixels",
    "gray",
    "halo",
    "info",
    "load",
    "ops",
    "params",
    "quantize",
    "run",
    "save",
    "set_max_pixels",
    "sharpen",
    "variants",
]


class Image(_np.ndarray):
    """A gray image as `load` returns it: a NumPy array (uint8 or uint16)
    that also records how to read its samples.

    depth   significant bits of a sample (a PGM with maxval 4095 is uint16
            with depth 12; a 4-bit gray PNG is uint8 with depth 4); None
            means all the dtype's bits.
    levels  nonzero when the samples already are quantization levels
            0..levels-1 (a text matrix): quantization is then skipped.
    pixel_size  (width, height, depth, unit) of a pixel as the file states
            it (TIFF resolution, ImageJ or OME metadata, PNG pHYs), in
            its unit ("µm", "mm", "cm", "in"…); depth, a volume's plane
            spacing, None when unknown; None when uncalibrated.
    value_map  (offset, step) when the samples stand for other values:
            a float TIFF's value is offset + sample × step, a signed
            integer's offset + sample; None when the samples are the values.
    nan_samples  how many of a float TIFF's samples were NaN: with any,
            sample 0 stands for NaN (values() gives NaN there, entropy
            counts those pixels in no window and gives them NaN, as a
            mask's), and the finite values lie in 1..65535.

    The operations read depth and levels, so that `entropy(load(path))` is
    what `entroscope-cli entropy path` computes. Views and slices keep them
    all.
    """

    depth: "int | None"
    levels: int
    pixel_size: "tuple | None"
    value_map: "tuple | None"
    nan_samples: int

    def __new__(cls, array, depth=None, levels=0, pixel_size=None, value_map=None, nan_samples=0):
        obj = _np.asarray(array).view(cls)
        obj.depth = depth
        obj.levels = levels
        obj.pixel_size = pixel_size
        obj.value_map = value_map
        obj.nan_samples = nan_samples
        return obj

    def __array_finalize__(self, obj):
        self.depth = getattr(obj, "depth", None)
        self.levels = getattr(obj, "levels", 0)
        self.pixel_size = getattr(obj, "pixel_size", None)
        self.value_map = getattr(obj, "value_map", None)
        self.nan_samples = getattr(obj, "nan_samples", 0)

    def values(self):
        """The values the samples stand for, as float64 (a float TIFF's
        own values, NaN where they were NaN, a signed TIFF's integers); the
        samples themselves when value_map is None."""
        if self.value_map is None:
            return _np.asarray(self, dtype=_np.float64)
        offset, step = self.value_map
        samples = _np.asarray(self)
        values = offset + samples.astype(_np.float64) * step
        if self.nan_samples:
            values[samples == 0] = _np.nan
        return values

    def __reduce__(self):
        constructor, args, state = super().__reduce__()
        return constructor, args, (state, self.depth, self.levels, self.pixel_size, self.value_map, self.nan_samples)

    def __setstate__(self, state):
        base, self.depth, self.levels = state[:3]
        self.pixel_size, self.value_map = state[3:5] if len(state) > 3 else (None, None)
        self.nan_samples = state[5] if len(state) > 5 else 0
        super().__setstate__(base)


_entroscope._register_image_type(Image)
_entroscope._register_device_allocator(_device.empty_like_device)

# ---- the shared engines -------------------------------------------------------

_engines: dict = {}
_engines_lock = _threading.Lock()
_abandoned: list = []


def default_engine(backend: str = "auto") -> "Engine":
    """The engine that the module-level functions use for `backend`
    ('auto', 'cpu' or 'cuda'), created on first use. Thread-safe."""
    engine = _engines.get(backend)
    if engine is None:
        with _engines_lock:
            engine = _engines.get(backend)
            if engine is None:
                engine = Engine(backend)
                _engines[backend] = engine
    return engine


def _after_fork_in_child():
    # A forked child cannot use its parent's CUDA context, nor free it
    # safely: its engines are dropped without being closed and new ones are
    # made on first use.
    _abandoned.extend(_engines.values())
    _engines.clear()


if hasattr(_os, "register_at_fork"):
    _os.register_at_fork(after_in_child=_after_fork_in_child)

# ---- the operations -----------------------------------------------------------


class _NotGiven:
    """channel_axis's default: a 2-D array is an image, a 3-D array a
    volume, and an (H, W, 3|4) array is refused as ambiguous."""

    def __repr__(self):
        return "<not given>"


_NOT_GIVEN = _NotGiven()


def _channels(channel_axis):
    """channel_axis as a keyword for the engine: absent when not given,
    which is not the same as None (no channels: a volume)."""
    return {} if channel_axis is _NOT_GIVEN else {"channel_axis": channel_axis}


def _unmasked(image, channel_axis, definition):
    """A numpy.ma image's data, and its mask as entropy's mask= (masked
    pixels count in no window and get no value): the two say the same."""
    if definition.get("mask") is not None:
        raise TypeError("a numpy.ma.MaskedArray image and mask= both mask the image: give one of them")
    if channel_axis is not _NOT_GIVEN and channel_axis is not None:
        raise TypeError("a colour numpy.ma.MaskedArray: reduce it to gray (entroscope.gray) and pass mask= for the "
                        "pixels to leave out")
    return image.data, {**definition, "mask": ~_np.ma.getmaskarray(image)}


def entropy(image, window=None, levels=None, *, backend="auto", variant=None, units=None, depth=None, out=None,
            return_timing=False, channel_axis=_NOT_GIVEN, **definition):
    """Local entropy of the bins in a window centred on each pixel: float32,
    in nats (units='bits' for bits, 'normalized' for H / ln(min(B, n));
    None: nats, or bits with a like= preset).

    By default a window × window square clipped to the image, on the levels
    floor(v · levels / 2^depth). The definition's keywords (DESIGN.md §1):
    rect=(h, w), disk=r or footprint=array (nonzero = in) for a 2-D window;
    box=(d, h, w), ball=r or a 3-D footprint=array (planes, rows, columns)
    for a 3-D one; border='clip'|'symmetric'|'mirror'|'replicate'|'constant:V';
    binning='depth'|'range:LO:HI'|'minmax'|'exact'|'byte'; mask=array
    (nonzero and not NaN = counted, of the image's shape: 3-D for a volume; NaN where a
    pixel is masked or its window counts nothing); like='matlab'|'skimage'|
    'fiji' for a peer's definition. On a volume (a 3-D array) a 3-D window
    counts the neighbouring planes' cells and a 2-D window works plane by
    plane. ``entropy(img, like='skimage', footprint=fp)`` equals
    ``skimage.filters.rank.entropy(img, fp)`` inside the mask, for images
    and volumes. window and levels default to 5 and 16, or to the preset's;
    window= and a shape keyword together are a TypeError. A numpy.ma image's
    mask is honoured: its masked pixels count in no window and get NaN.
    channel_axis=-1 reads colour (reduced to gray with BT.709)."""
    given = {name: value for name, value in (("window", window), ("levels", levels)) if value is not None}
    if isinstance(image, _np.ma.MaskedArray):
        image, definition = _unmasked(image, channel_axis, definition)
    return default_engine(backend).entropy(image, variant=variant, units=units, depth=depth, out=out,
                                           return_timing=return_timing, **_channels(channel_axis), **given,
                                           **definition)


def equalize(image, *, backend="auto", variant=None, depth=None, out=None, return_timing=False,
             channel_axis=_NOT_GIVEN):
    """Histogram equalization to uint8, bit-identical to ``cv2.equalizeHist``
    (other depths are reduced to 8 bits first: round(v · 255 / maxval)).
    A volume is equalized with one histogram of all its planes."""
    return default_engine(backend).equalize(image, variant=variant, depth=depth, out=out,
                                            return_timing=return_timing, **_channels(channel_axis))


def sharpen(image, amount=1.0, *, backend="auto", variant=None, depth=None, out=None, return_timing=False,
            channel_axis=_NOT_GIVEN):
    """``c + amount · (4c − N − S − E − W)`` to uint8 with replicated borders;
    at amount 1 bit-identical to ``cv2.filter2D(image, -1, [[0,-1,0],[-1,5,-1],[0,-1,0]],
    borderType=cv2.BORDER_REPLICATE)``. A volume is sharpened plane by plane."""
    return default_engine(backend).sharpen(image, amount, variant=variant, depth=depth, out=out,
                                           return_timing=return_timing, **_channels(channel_axis))


def clahe(image, clip_limit=None, tile_grid=None, *, like=None, kernel_size=None, nbins=None, backend="auto",
          variant=None, depth=None, out=None, return_timing=False, channel_axis=_NOT_GIVEN):
    """Contrast-limited adaptive histogram equalization, bit-identical to
    ``cv2.createCLAHE(clip_limit, tile_grid).apply(image)``: tile_grid is
    (columns, rows), as OpenCV's tileGridSize (default (8, 8)); clip_limit
    (default 40) 0 clips nothing. uint8 gives uint8 (256 bins), uint16 gives
    uint16 (65536 bins). A volume is equalized plane by plane.

    like='skimage' is ``skimage.exposure.equalize_adapthist(image,
    kernel_size, clip_limit, nbins)`` (within 1e-6, float32 in 0..1):
    clip_limit is its fraction (default 0.01), kernel_size its pixels (an int
    or (rows, columns); default max(side // 8, 1), which is tile_grid's
    max(side // tiles, 1)), nbins its bins (default 256). like='matlab' is
    ``adapthisteq(image, 'NumTiles', [rows columns], 'ClipLimit', clip_limit,
    'NBins', nbins)`` as MathWorks documents it (default [8 8], 0.01, 256),
    in the input's dtype. These two run on the CPU."""
    given = {"like": like, "kernel_size": kernel_size, "nbins": nbins}
    if clip_limit is not None:
        given["clip"] = clip_limit
    if tile_grid is not None:
        given["tile_columns"], given["tile_rows"] = tile_grid
    return default_engine(backend).clahe(image, variant=variant, depth=depth, out=out, return_timing=return_timing,
                                         **_channels(channel_axis), **{k: v for k, v in given.items() if v is not None})


def quantize(image, levels=16, *, backend="auto", variant=None, depth=None, out=None, return_timing=False,
             channel_axis=_NOT_GIVEN):
    """The quantization levels ``floor(v · levels / 2^depth)`` as uint8
    (of every sample of a volume, plane by plane)."""
    return default_engine(backend).quantize(image, levels, variant=variant, depth=depth, out=out,
                                            return_timing=return_timing, **_channels(channel_axis))


def run(op, image, *args, backend="auto", **kwargs):
    """Any operation of the operation table by name (see `ops()`), with its
    own arguments: ``run("entropy", image, window=9)``, on an image or a
    volume (``run("entropy", volume, ball=3)``)."""
    return default_engine(backend).run(op, image, *args, **kwargs)


# ---- files --------------------------------------------------------------------


def load(path, *, levels=16, page=None, channel=None, time=None) -> "Image":
    """Reads a PNG (every colour type and bit depth; colour becomes gray
    with BT.709 weights on the stored values), a PGM (P2/P5), a TIFF, a
    JPEG (turned upright by its EXIF orientation) or a text matrix, with
    entroscope-cli's decoders, limits and messages; the Image's pixel_size
    and value_map say what the file says of its pixels and values.
    `levels` is what a text matrix's values must stay below.

    A multi-page TIFF is a volume: a 3-D Image (planes, rows, columns), a
    page a plane, whose pages must agree in size and format, as
    ``entroscope-cli --volume`` reads it; an OME-TIFF gives the Z planes of
    `channel` at `time` (0 and 0 by default). `page` reads one page alone
    as a 2-D Image (0 is the first). Raises OSError (FileNotFoundError,
    ...) or ValueError ("path: reason")."""
    array, depth, matrix_levels, pixel_size, value_map, nan_samples = _entroscope.load(
        path, levels=levels, page=page, channel=channel, time=time)
    return Image(array, depth, matrix_levels, pixel_size, value_map, nan_samples)


def save(path, array, *, op=None, format=None, colormap=None, range="absolute", colorbar=False, compression=None,
         pixel_size=None, **job):
    """Writes a result as entroscope-cli does: a colormapped PNG (format
    'png', the default: the map's 256 colours as a palette, or 8-bit RGB
    with a colorbar, NaN pixels or a definition that can leave pixels
    without a value), a raw 16-bit PNG with tEXt metadata ('raw16'), a text
    matrix ('txt', the default for a .txt path) or a TIFF of the values as
    they are ('tif', the default for a .tif or .tiff path), atomically.
    A 3-D array (planes, rows, columns) is a volume's result: it is written
    as one multi-page TIFF, a page a plane (BigTIFF past 4 GiB), as
    ``entroscope-cli`` writes a volume's.

    `op` says which operation made `array` (a float32 array is entropy's).
    Describe the job that made it with the keywords of ``run(op, ...)``:
    the operation's parameters by the parameter table's names (`params()`,
    ``_`` for ``-``: window, levels, amount, clip, tile_columns,
    tile_rows...), and for entropy the definition's rect, disk, footprint,
    box, ball, border, binning, mask and like, parsed exactly as `entropy`
    parses them (`halo` and `extent` take the same). They set the absolute
    colour range (ln(min(B, n)) depends on the shape and binning), the
    recorded metadata (the "Definition" line, CLAHE's clip and tiles) and
    whether pixels may have no value, so the file is byte for byte what
    ``entroscope-cli OP <the same options>`` writes: a uint16 CLAHE result
    is a 16-bit PNG of its own values, as cv2.imwrite writes it.
    `units` names the units the values are in: 'nats', 'bits' or
    'normalized' (None: nats, or the like= preset's). `compression` is
    entroscope-cli's --compression: 'fast', 'default' or 'small' for PNG
    and TIFF (None: 'default'), for this call only. `pixel_size` is the
    input's ``Image.pixel_size``, (width, height, depth or None, unit),
    which a PNG records as pHYs and a TIFF as its resolution in
    centimetres, as the CLI records its input's. Raises OSError,
    ValueError or TypeError."""
    _entroscope.save(path, array, op=op, format=format, colormap=colormap, range=range, colorbar=colorbar,
                     compression=compression, pixel_size=pixel_size, **job)


# ---- what is there ------------------------------------------------------------


def info(backend="auto") -> dict:
    """What entroscope-cli info says, as a dict: the version, the backends
    compiled and in use, the device, why CUDA is (not) used, the CPU threads
    and the kernel variants of each operation."""
    engine = default_engine(backend)
    in_use = engine.backend
    reason = engine.cuda_reason
    if in_use == "cuda":
        why = "requested with backend='cuda'" if backend == "cuda" else "a usable CUDA device was found"
    elif backend == "cpu":
        why = "requested with backend='cpu'"
    elif reason:
        why = reason
    else:
        why = "CUDA is not usable" if cuda_compiled() else "this build has no CUDA backend"
    return {
        "version": __version__,
        "backends_compiled": ["cpu"] + (["cuda"] if cuda_compiled() else []),
        "backend": in_use,
        "why": why,
        "device": engine.description,
        "cuda_reason": reason,
        "cpu_threads": cpu_threads(),
        "variants": {name: [v.id for v in variants(name)] for name in ops()},
    }
