# SPDX-License-Identifier: MIT
"""Entroscope's operations on dask arrays: images larger than one machine's
memory, chunk by chunk, on a dask.distributed cluster or any dask scheduler.

    import dask.array as da, entroscope.dask
    image = da.from_zarr("slide.zarr")                  # (H, W) uint8/uint16
    h = entroscope.dask.entropy(image, window=9)        # lazy float32, same chunks
    h.to_zarr("slide-entropy.zarr")
    volume = da.from_zarr("ct.zarr")                    # (planes, H, W)
    entroscope.dask.entropy(volume, ball=3).to_zarr("ct-entropy.zarr")

Arrays follow entroscope's convention (scikit-image's): 2-D is an image,
3-D a volume, and colour needs ``channel_axis`` (reduced to gray first).
Each chunk is computed with its halo from the neighbouring chunks
(``dask.array.map_overlap``): the depth is how far the job's window reaches
(``entroscope.extent_3d``: a 3-D window's half depth in z, and a rectangle's,
footprint's or box's half height and half width, a disk's or ball's radius),
and the boundary is ``'none'``, because at the image's own edges the kernels
apply the job's border rule themselves (entropy's clip, symmetric, mirror,
replicate or constant border; sharpen replicates the edge), so the result is
identical to one in-memory call on the whole image or volume. A 2-D window
on a volume works plane by plane and needs no halo in z. A mask is cut into
the same chunks with the same overlap. Equalization needs the histogram of
the whole image (of every plane of a volume): it runs as a reduction (one
histogram per chunk, summed, then ``entroscope.equalize_lut``), then a map
over the chunks. CLAHE's result hangs on a grid of tiles that each plane's
own size places, and a pixel blends the maps of the tiles around it: a plane
in one chunk is computed whole (on the engine's backend), and a plane whose
rows are split over chunks in two passes (the operation's tile passes, on
each worker's CPU): the chunks are made whole rows (the caller's row
chunking kept), each adds its rows to the tiles' histograms
(``tile_counts``, reflect-101 padding included), the histograms are summed,
and each chunk is blended from its rows and the sum (``tile_apply``), bit
for bit the whole-image call, for any chunking.

A worker computes with its own engine, made on its first chunk and kept for
the next ones (one per process, shared by its threads). On a host with several
GPUs, ``bind_workers_to_gpus(client)`` gives each worker one device.
"""

from __future__ import annotations

import functools

import numpy as np

import dask.array as da

import entroscope
from . import _entroscope

__all__ = ["bind_workers_to_gpus", "clahe", "entropy", "equalize", "gray", "quantize", "run", "sharpen"]

# ---- the engine of this process ----------------------------------------------------

_bound_device = None
_bound_engines: dict = {}


def _engine(backend):
    """The engine of this worker process: the shared default one, or, once
    bound to a GPU, one on that device alone. Kept between chunks."""
    if _bound_device is None or backend == "cpu":
        return entroscope.default_engine(backend)
    engine = _bound_engines.get(backend)
    if engine is None:
        engine = _bound_engines.setdefault(backend, entroscope.Engine(backend, devices=[_bound_device]))
    return engine


def _bind(device):
    global _bound_device
    for engine in _bound_engines.values():
        engine.close()
    _bound_engines.clear()
    _bound_device = device
    return device


def bind_workers_to_gpus(client, devices=None):
    """Binds each worker of a ``dask.distributed`` client to one CUDA device,
    round robin over `devices` (default: 0 .. number of GPUs - 1, from
    ``nvidia-smi -L`` on each worker's host). Returns {worker address: device}."""
    workers = sorted(client.scheduler_info()["workers"])
    if devices is None:
        counts = client.run(_gpu_count)
        devices = list(range(max(1, min(counts.values()) if counts else 1)))
    devices = list(devices)
    if not devices:
        raise ValueError("devices= lists no device")
    binding = {address: devices[i % len(devices)] for i, address in enumerate(workers)}
    for address, device in binding.items():
        client.run(_bind, device, workers=[address])
    return binding


def _gpu_count():
    import subprocess

    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in listed.splitlines() if line.startswith("GPU "))


# ---- chunks --------------------------------------------------------------------------


def _run_chunk(block, *mask, op, backend, params, depth, sample_range=None):
    if block.size == 0:  # dask's meta inference may call with an empty block
        return np.empty(block.shape, _result_dtype(op, block.dtype))
    if sample_range is not None:
        # minmax binning: the whole image's min and max, the same for every chunk.
        params = {**params, "binning": f"range:{int(sample_range[0])}:{int(sample_range[1])}"}
    if mask:
        params = {**params, "mask": mask[0]}
    # The array is gray by now (_check): a 3-D block is a volume, whatever its last side.
    return _engine(backend).run(op, block, depth=depth, channel_axis=None, **params)


def _result_dtype(op, dtype):
    """The dtype of op's result on samples of dtype (CLAHE keeps 16 bits)."""
    info = entroscope.ops()[op]
    return np.dtype(info["dtype_16"] if np.dtype(dtype).itemsize > 1 else info["dtype"])


def _gray_chunk(block, depth, channel_axis):
    return _entroscope.gray(block, depth=depth, channel_axis=channel_axis)


def _view(block, depth):
    # The 8-bit view that equalize works on (DESIGN.md §1):
    # round(v · 255 / maxval), halves up, maxval = 2^depth − 1.
    maxval = (1 << (depth or (8 if block.dtype == np.uint8 else 16))) - 1
    if maxval == 255:
        return block.astype(np.uint8, copy=False)
    return ((block.astype(np.uint32) * 510 + maxval) // (2 * maxval)).astype(np.uint8)


def _histogram_chunk(block, backend, depth):
    u8 = _view(block, depth)
    return np.bincount(u8.ravel(), minlength=256).astype(np.uint64).reshape((1,) * block.ndim + (256,))


def _equalize_chunk(block, lut, backend, depth):
    return lut[_view(block, depth)]


def _tile_counts_chunk(block, rows, *, op, height, params):
    """The first tile pass on a band of whole rows (of each plane of a volume
    block): its counts, as one row of a (bands, counts) array."""
    y0 = int(rows[0])
    if block.ndim == 2:
        return _entroscope.tile_counts(op, block, y0, height, **params)[None, :]
    return np.stack([_entroscope.tile_counts(op, plane, y0, height, **params) for plane in block])[:, None, :]


def _tile_apply_chunk(block, rows, counts, *, op, height, params):
    """The second tile pass: the band's result from its rows and the counts
    of the whole plane (of each plane of a volume block)."""
    y0 = int(rows[0])
    if block.ndim == 2:
        return _entroscope.tile_apply(op, block, y0, height, counts, **params)
    return np.stack([_entroscope.tile_apply(op, plane, y0, height, plane_counts, **params)
                     for plane, plane_counts in zip(block, counts)])


def _tile_passes(op, array, params, dtype):
    """An operation whose halo is a tile (CLAHE) over bands of whole rows,
    in two passes: the tiles' counts of every band, summed per plane, then
    every band from its rows and the sum."""
    height, width = array.shape[-2:]
    array = array.rechunk({array.ndim - 1: -1})
    rows = da.arange(height, chunks=(array.chunks[-2],))
    # The length of a plane's counts, from a state of the job on one row.
    n = len(_entroscope.tile_counts(op, np.zeros((1, width), array.dtype), 0, height, **params))
    passes = {"op": op, "height": height, "params": params}
    image, band, plane = ("pij", "i", "p") if array.ndim == 3 else ("ij", "i", "")
    counts = da.blockwise(functools.partial(_tile_counts_chunk, **passes), plane + "iz", array, image, rows, band,
                          new_axes={"z": n}, adjust_chunks={"i": 1}, concatenate=True, dtype=np.int32,
                          token=f"{op}-tile-counts", meta=np.empty((0,) * array.ndim, np.int32))
    total = counts.sum(axis=array.ndim - 2, dtype=np.int64)
    return da.blockwise(functools.partial(_tile_apply_chunk, **passes), image, array, image, rows, band, total,
                        plane + "z", concatenate=True, dtype=dtype, token=f"{op}-tile-apply",
                        meta=np.empty((0,) * array.ndim, dtype))


def _check(array, channel_axis=entroscope._NOT_GIVEN):
    """The gray image or volume that the operations read."""
    if not isinstance(array, da.Array):
        array = da.asarray(array)
    if array.dtype not in (np.uint8, np.uint16):
        raise TypeError(f"{array.dtype} input cannot be processed; gray uint8 or uint16 is needed")
    array = gray(array, channel_axis=channel_axis)
    if array.ndim not in (2, 3):
        raise ValueError("expected a 2-D image (rows, columns) or a 3-D volume (planes, rows, columns), with "
                         f"channel_axis for colour, not an array of shape {array.shape}")
    return array


def gray(array, *, depth=None, channel_axis=entroscope._NOT_GIVEN):
    """Colour along `channel_axis` (3 or 4 channels) reduced to gray as the
    CLI does it (BT.709 on the stored values), chunk by chunk; without
    channel_axis (or with None) a 2-D image or 3-D volume is returned as it
    is, and an (H, W, 3|4) array is refused as `entroscope.gray` refuses it:
    it could be a colour image or a volume."""
    if not isinstance(array, da.Array):
        array = da.asarray(array)
    if channel_axis is entroscope._NOT_GIVEN or channel_axis is None:
        if channel_axis is entroscope._NOT_GIVEN and array.ndim == 3 and array.shape[2] in (3, 4):
            raise ValueError(f"an array of shape {array.shape} is ambiguous: a 3-D array is a volume (planes, rows, "
                             "columns); pass channel_axis=-1 for a colour image (reduced to gray with BT.709), or "
                             f"channel_axis=None for a volume of {array.shape[0]} planes")
        return array
    if not -array.ndim <= channel_axis < array.ndim:
        raise ValueError(f"channel_axis={channel_axis} is out of range for an array of {array.ndim} dimensions")
    axis = channel_axis % array.ndim
    array = array.rechunk({axis: -1})
    return array.map_blocks(functools.partial(_gray_chunk, depth=depth, channel_axis=axis), drop_axis=axis,
                            dtype=array.dtype, meta=np.empty((0,) * (array.ndim - 1), array.dtype))


# entropy()'s definition keywords (DESIGN.md §1), passed through to every chunk.
_DEFINITION = ("rect", "disk", "footprint", "box", "ball", "border", "binning", "mask", "like")


def _mask_for(mask, array):
    """The mask as a dask array of the image's shape and chunks."""
    if not isinstance(mask, da.Array):
        mask = da.asarray(np.asarray(mask))
    if mask.shape != array.shape:
        raise ValueError(f"mask of shape {mask.shape} differs from the image's {array.shape}")
    return mask.rechunk(array.chunks)


def run(op, array, *, backend="auto", depth=None, channel_axis=entroscope._NOT_GIVEN, **params):
    """Any operation of the operation table by name on a dask array, with its
    parameters (``run("entropy", a, window=9, disk=4, border="symmetric")``,
    ``run("entropy", volume, ball=3)``): a lazy dask array with the input's
    chunks (uneven ones too), equal to ``entroscope.run(op, a.compute(), ...)``.

    Each chunk reads its neighbours' cells as far as the window reaches:
    ``entroscope.extent_3d`` gives the planes, rows and columns (a 3-D
    window's half depth; a rectangle's, footprint's or box's half height and
    half width, a disk's or ball's radius) for the same keywords. The border mode applies at the image's own edges only, where a
    chunk's edge is the image's; a mask (a dask or NumPy array of the image's
    shape) is cut into the same chunks with the same overlap; minmax binning
    takes the whole image's min and max first (one reduction)."""
    table = entroscope.ops()
    if op not in table:
        entroscope.variants(op)  # raises the module's ValueError naming the operations
    info = table[op]
    # Keywords spell the table's names with "_" for "-" (tile_columns).
    allowed = {name.replace("-", "_") for name in info["params"]} | {"variant"} | ({"units"} if info["units"] == "nats" else set())
    if op == "entropy":
        allowed |= set(_DEFINITION)
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise TypeError(f"{op}() got an unexpected keyword argument '{unknown[0]}'")
    params = {k: v for k, v in params.items() if v is not None}
    mask = params.pop("mask", None)
    array = _check(array, channel_axis)
    # The job is checked now, by the module's own parser, rather than later in a worker
    # (a whole-plane job by running it on one pixel: it reaches no neighbouring chunk).
    if info["whole_image"]:
        entroscope.run(op, np.zeros((1, 1), array.dtype), **{k: v for k, v in params.items() if k != "variant"})
        reach = (0, 0, 0)
    else:
        reach = entroscope.extent_3d(op, **{k: v for k, v in params.items() if k != "variant"})
    if op == "equalize":
        return equalize(array, backend=backend, depth=depth, variant=params.get("variant"))
    # The result comes back in these chunks, whatever the halo needed on the way
    # (map_overlap enlarges chunks thinner than the halo; a window past the array,
    # or CLAHE's whole planes, make an axis one chunk): the caller's chunking is
    # what to_zarr and the next step of a pipeline expect.
    chunks = array.chunks
    dtype = _result_dtype(op, array.dtype)
    job = {k: v for k, v in params.items() if k != "variant"}
    if info["whole_image"] and array.numblocks[-2] > 1 and _entroscope.tile_passes(op, **job):
        # A halo of tiles (CLAHE) over planes split into bands of rows.
        result = _tile_passes(op, array, job, dtype)
        return result if result.chunks == chunks else result.rechunk(chunks)
    if info["whole_image"]:
        # Tiles placed by the image's own size (CLAHE's presets, or a plane in
        # one band of rows): each plane in one chunk.
        array = array.rechunk({array.ndim - 2: -1, array.ndim - 1: -1})
    # The halo along each axis: planes (of a volume), rows, columns.
    halo = {}
    for axis, cells in enumerate(reach[3 - array.ndim:]):
        # A window that reaches past the whole array along an axis needs that axis in one chunk.
        if cells >= array.shape[axis] and array.numblocks[axis] > 1:
            array = array.rechunk({axis: -1})
        halo[axis] = cells if array.numblocks[axis] > 1 else 0
    arrays = [array] if mask is None else [array, _mask_for(mask, array)]
    extra = {}
    if params.get("binning") == "minmax":
        extra["sample_range"] = da.stack([array.min(), array.max()])
    chunk = functools.partial(_run_chunk, op=op, backend=backend, params=params, depth=depth)
    meta = np.empty((0,) * array.ndim, dtype)
    if not any(halo.values()):
        result = da.map_blocks(chunk, *arrays, dtype=dtype, meta=meta, **extra)
    else:
        result = da.map_overlap(chunk, *arrays, depth=halo, boundary="none", trim=True, dtype=dtype, meta=meta,
                                **extra)
    return result if result.chunks == chunks else result.rechunk(chunks)


def entropy(array, window=None, levels=None, *, backend="auto", variant=None, units=None, depth=None,
            channel_axis=entroscope._NOT_GIVEN, **definition):
    """Local entropy (float32) of a dask array, an image or a volume, as
    `entroscope.entropy`, with the same definition keywords (rect, disk,
    footprint, box, ball, border, binning, mask, like) and units ('nats',
    'bits', 'normalized'; None: nats or the preset's). window and levels
    default to 5 and 16, or to the preset's."""
    return run("entropy", array, window=window, levels=levels, backend=backend, variant=variant, units=units,
               depth=depth, channel_axis=channel_axis, **definition)


def sharpen(array, amount=1.0, *, backend="auto", variant=None, depth=None, channel_axis=entroscope._NOT_GIVEN):
    """Sharpening (uint8) of a dask array, as `entroscope.sharpen` (plane by
    plane on a volume); the halo is 1."""
    return run("sharpen", array, amount=amount, backend=backend, variant=variant, depth=depth,
               channel_axis=channel_axis)


def quantize(array, levels=16, *, backend="auto", variant=None, depth=None, channel_axis=entroscope._NOT_GIVEN):
    """Quantization levels (uint8) of a dask array, as `entroscope.quantize`."""
    return run("quantize", array, levels=levels, backend=backend, variant=variant, depth=depth,
               channel_axis=channel_axis)


def clahe(array, clip_limit=40.0, tile_grid=(8, 8), *, backend="auto", variant=None, depth=None,
          channel_axis=entroscope._NOT_GIVEN):
    """CLAHE of a dask array, as `entroscope.clahe` (uint8 or uint16, the
    input's), bit for bit the in-memory call for any chunking: a plane in one
    chunk is computed whole on the engine's backend; a plane split into bands
    of rows in two passes on the workers' CPUs, its tiles' histograms summed
    over the bands, then each band blended (the chunks become whole rows, and
    the result comes back in the input's chunks)."""
    columns, rows = tile_grid
    return run("clahe", array, clip=clip_limit, tile_columns=columns, tile_rows=rows, backend=backend,
               variant=variant, depth=depth, channel_axis=channel_axis)


def equalize(array, *, backend="auto", variant=None, depth=None, channel_axis=entroscope._NOT_GIVEN):
    """Histogram equalization (uint8) of a dask array, as `entroscope.equalize`
    (bit-identical to cv2.equalizeHist on the whole image; one histogram of
    every plane of a volume): the histogram of every chunk, summed, gives the
    LUT (``entroscope.equalize_lut``), which a second pass over the chunks
    applies."""
    array = _check(array, channel_axis)
    axes = tuple(range(array.ndim))
    hists = array.map_blocks(functools.partial(_histogram_chunk, backend=backend, depth=depth),
                             new_axis=array.ndim,
                             chunks=tuple((1,) * blocks for blocks in array.numblocks) + ((256,),),
                             dtype=np.uint64, meta=np.empty((0,) * (array.ndim + 1), np.uint64))
    hist = hists.sum(axis=axes, dtype=np.uint64)
    lut = hist.map_blocks(_entroscope.equalize_lut, dtype=np.uint8, meta=np.empty((0,), np.uint8))
    apply = functools.partial(_equalize_chunk, backend=backend, depth=depth)
    index = "ijl"[:array.ndim]
    return da.blockwise(apply, index, array, index, lut, "k", concatenate=True, dtype=np.uint8,
                        meta=np.empty((0,) * array.ndim, np.uint8))
