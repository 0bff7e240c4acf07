# SPDX-License-Identifier: MIT
"""Entroscope's operations on dask arrays: images larger than one machine's
memory, chunk by chunk, on a dask.distributed cluster or any dask scheduler.

    import dask.array as da, entroscope.dask
    image = da.from_zarr("slide.zarr")                  # (H, W) uint8/uint16, or (H, W, 3|4)
    h = entroscope.dask.entropy(image, window=9)        # lazy float32, same chunks
    h.to_zarr("slide-entropy.zarr")

Each chunk is computed with its halo from the neighbouring chunks
(``dask.array.map_overlap``): the depth is how far the job's window reaches
(``entroscope.extent``: a rectangle's or footprint's half height and half
width, a disk's radius), and the boundary is ``'none'``, because at the
image's own edges the kernels apply the job's border rule themselves
(entropy's clip, symmetric, mirror, replicate or constant border; sharpen
replicates the edge), so the result is identical to one in-memory call on
the whole image. A mask is cut into the same chunks with the same overlap.
Equalization needs the histogram of the whole image: it runs as a reduction
(one histogram per chunk, summed, then ``entroscope.equalize_lut``), then a
map over the chunks.

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

__all__ = ["bind_workers_to_gpus", "entropy", "equalize", "gray", "quantize", "run", "sharpen"]

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
        return np.empty(block.shape[:2], entroscope.ops()[op]["dtype"])
    if sample_range is not None:
        # minmax binning: the whole image's min and max, the same for every chunk.
        params = {**params, "binning": f"range:{int(sample_range[0])}:{int(sample_range[1])}"}
    if mask:
        params = {**params, "mask": mask[0]}
    return _engine(backend).run(op, block, depth=depth, **params)


def _gray_chunk(block, depth):
    return _entroscope.gray(block, depth=depth)


def _view(block, depth):
    # The 8-bit view that equalize works on (DESIGN.md §1):
    # round(v · 255 / maxval), halves up, maxval = 2^depth − 1.
    maxval = (1 << (depth or (8 if block.dtype == np.uint8 else 16))) - 1
    if maxval == 255:
        return block.astype(np.uint8, copy=False)
    return ((block.astype(np.uint32) * 510 + maxval) // (2 * maxval)).astype(np.uint8)


def _histogram_chunk(block, backend, depth):
    u8 = _view(block, depth)
    return np.bincount(u8.ravel(), minlength=256).astype(np.uint64).reshape(1, 1, 256)


def _equalize_chunk(block, lut, backend, depth):
    return lut[_view(block, depth)]


def _check(array):
    if not isinstance(array, da.Array):
        array = da.asarray(array)
    if array.dtype not in (np.uint8, np.uint16):
        raise TypeError(f"{array.dtype} input cannot be processed; gray uint8 or uint16 is needed")
    if array.ndim == 3 and array.shape[2] in (3, 4):
        return gray(array)
    if array.ndim != 2:
        raise ValueError("expected a 2-D gray image or an (H, W, 3) or (H, W, 4) colour image, not an array of "
                         f"shape {array.shape}")
    return array


def gray(array, *, depth=None):
    """Colour (H, W, 3|4) reduced to gray as the CLI does it (BT.709 on the
    stored values), chunk by chunk; a 2-D array is returned as it is."""
    if not isinstance(array, da.Array):
        array = da.asarray(array)
    if array.ndim == 2:
        return array
    array = array.rechunk({2: -1})
    return array.map_blocks(functools.partial(_gray_chunk, depth=depth), drop_axis=2, dtype=array.dtype,
                            meta=np.empty((0, 0), array.dtype))


# entropy()'s definition keywords (DESIGN.md §1), passed through to every chunk.
_DEFINITION = ("rect", "disk", "footprint", "border", "binning", "mask", "like")


def _mask_for(mask, array):
    """The mask as a dask array of the image's shape and chunks."""
    if not isinstance(mask, da.Array):
        mask = da.asarray(np.asarray(mask))
    if mask.shape != array.shape:
        raise ValueError(f"mask of shape {mask.shape} differs from the image's {array.shape}")
    return mask.rechunk(array.chunks)


def run(op, array, *, backend="auto", depth=None, **params):
    """Any operation of the operation table by name on a dask array, with its
    parameters (``run("entropy", a, window=9, disk=4, border="symmetric")``):
    a lazy dask array with the same chunks, equal to
    ``entroscope.run(op, a.compute(), ...)``.

    Each chunk reads its neighbours' cells as far as the window reaches:
    ``entroscope.extent`` gives the rows and columns (a rectangle's or a
    footprint's half height and half width, a disk's radius) for the same
    keywords. The border mode applies at the image's own edges only, where a
    chunk's edge is the image's; a mask (a dask or NumPy array of the image's
    shape) is cut into the same chunks with the same overlap; minmax binning
    takes the whole image's min and max first (one reduction)."""
    table = entroscope.ops()
    if op not in table:
        entroscope.variants(op)  # raises the module's ValueError naming the operations
    info = table[op]
    allowed = set(info["params"]) | {"variant"} | ({"units"} if info["units"] == "nats" else set())
    if op == "entropy":
        allowed |= set(_DEFINITION)
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise TypeError(f"{op}() got an unexpected keyword argument '{unknown[0]}'")
    params = {k: v for k, v in params.items() if v is not None}
    mask = params.pop("mask", None)
    # The job is checked now, by the module's own parser, rather than later in a worker.
    rows, cols = entroscope.extent(op, **{k: v for k, v in params.items() if k != "variant"})
    array = _check(array)
    if info["whole_image"]:
        if op != "equalize":
            raise NotImplementedError(f"{op} needs a statistic of the whole image that entroscope.dask does not know")
        return equalize(array, backend=backend, depth=depth, variant=params.get("variant"))
    # A window that reaches past the whole image along an axis needs that axis in one chunk.
    if rows >= array.shape[0] and array.numblocks[0] > 1:
        array = array.rechunk({0: -1})
    if cols >= array.shape[1] and array.numblocks[1] > 1:
        array = array.rechunk({1: -1})
    rows = rows if array.numblocks[0] > 1 else 0
    cols = cols if array.numblocks[1] > 1 else 0
    arrays = [array] if mask is None else [array, _mask_for(mask, array)]
    extra = {}
    if params.get("binning") == "minmax":
        extra["sample_range"] = da.stack([array.min(), array.max()])
    dtype = np.dtype(info["dtype"])
    chunk = functools.partial(_run_chunk, op=op, backend=backend, params=params, depth=depth)
    meta = np.empty((0, 0), dtype)
    if rows == 0 and cols == 0:
        return da.map_blocks(chunk, *arrays, dtype=dtype, meta=meta, **extra)
    return da.map_overlap(chunk, *arrays, depth={0: rows, 1: cols}, boundary="none", trim=True, dtype=dtype,
                          meta=meta, **extra)


def entropy(array, window=None, levels=None, *, backend="auto", variant=None, units=None, depth=None, **definition):
    """Local entropy (float32) of a dask array, as `entroscope.entropy`, with
    the same definition keywords (rect, disk, footprint, border, binning,
    mask, like) and units ('nats', 'bits', 'normalized'; None: nats or the
    preset's). window and levels default to 5 and 16, or to the preset's."""
    return run("entropy", array, window=window, levels=levels, backend=backend, variant=variant, units=units,
               depth=depth, **definition)


def sharpen(array, amount=1.0, *, backend="auto", variant=None, depth=None):
    """Sharpening (uint8) of a dask array, as `entroscope.sharpen`; the halo is 1."""
    return run("sharpen", array, amount=amount, backend=backend, variant=variant, depth=depth)


def quantize(array, levels=16, *, backend="auto", variant=None, depth=None):
    """Quantization levels (uint8) of a dask array, as `entroscope.quantize`."""
    return run("quantize", array, levels=levels, backend=backend, variant=variant, depth=depth)


def equalize(array, *, backend="auto", variant=None, depth=None):
    """Histogram equalization (uint8) of a dask array, as `entroscope.equalize`
    (bit-identical to cv2.equalizeHist on the whole image): the histogram of
    every chunk, summed, gives the LUT (``entroscope.equalize_lut``), which a
    second pass over the chunks applies."""
    array = _check(array)
    rows, cols = array.numblocks
    hists = array.map_blocks(functools.partial(_histogram_chunk, backend=backend, depth=depth), new_axis=2,
                             chunks=((1,) * rows, (1,) * cols, (256,)), dtype=np.uint64,
                             meta=np.empty((0, 0, 0), np.uint64))
    hist = hists.sum(axis=(0, 1), dtype=np.uint64)
    lut = hist.map_blocks(_entroscope.equalize_lut, dtype=np.uint8, meta=np.empty((0,), np.uint8))
    apply = functools.partial(_equalize_chunk, backend=backend, depth=depth)
    return da.blockwise(apply, "ij", array, "ij", lut, "k", concatenate=True, dtype=np.uint8,
                        meta=np.empty((0, 0), np.uint8))
