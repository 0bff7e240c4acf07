# SPDX-License-Identifier: MIT
"""Entroscope's operations on dask arrays: images larger than one machine's
memory, chunk by chunk, on a dask.distributed cluster or any dask scheduler.

    import dask.array as da, entroscope.dask
    image = da.from_zarr("slide.zarr")                  # (H, W) uint8/uint16, or (H, W, 3|4)
    h = entroscope.dask.entropy(image, window=9)        # lazy float32, same chunks
    h.to_zarr("slide-entropy.zarr")

Each chunk is computed with its halo from the neighbouring chunks
(``dask.array.map_overlap``): the depth is the operation's halo from the
operation table (``entroscope.halo``), in both axes, and the boundary is
``'none'``, because at the image's own edges the kernels apply their border
rule themselves (entropy clips its window, sharpen replicates the edge), so
the result is identical to one in-memory call on the whole image.
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


def _run_chunk(block, op, backend, params, depth):
    if block.size == 0:  # dask's meta inference may call with an empty block
        return np.empty(block.shape[:2], entroscope.ops()[op]["dtype"])
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


def run(op, array, *, backend="auto", depth=None, **params):
    """Any operation of the operation table by name on a dask array, with its
    parameters (``run("entropy", a, window=9)``): a lazy dask array with the
    same chunks, equal to ``entroscope.run(op, a.compute(), ...)``."""
    table = entroscope.ops()
    if op not in table:
        entroscope.variants(op)  # raises the module's ValueError naming the operations
    info = table[op]
    allowed = set(info["params"]) | {"variant"} | ({"units"} if info["units"] == "nats" else set())
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise TypeError(f"{op}() got an unexpected keyword argument '{unknown[0]}'")
    params = {k: v for k, v in params.items() if v is not None or k != "variant"}
    # The parameters are checked now, by the table, rather than later in a worker.
    halo = entroscope.halo(op, **{k: v for k, v in params.items() if k in info["params"]})
    if params.get("units", "nats") not in ("nats", "bits"):
        raise ValueError(f"units={params['units']!r}: expected nats or bits")
    array = _check(array)
    if info["whole_image"]:
        if op != "equalize":
            raise NotImplementedError(f"{op} needs a statistic of the whole image that entroscope.dask does not know")
        return equalize(array, backend=backend, depth=depth, variant=params.get("variant"))
    dtype = np.dtype(info["dtype"])
    chunk = functools.partial(_run_chunk, op=op, backend=backend, params=params, depth=depth)
    meta = np.empty((0, 0), dtype)
    if halo == 0:
        return array.map_blocks(chunk, dtype=dtype, meta=meta)
    return array.map_overlap(chunk, depth={0: halo, 1: halo}, boundary="none", trim=True, dtype=dtype, meta=meta)


def entropy(array, window=5, levels=16, *, backend="auto", variant=None, units="nats", depth=None):
    """Local entropy (float32, nats or bits) of a dask array, as
    `entroscope.entropy`; the halo is window // 2."""
    return run("entropy", array, window=window, levels=levels, backend=backend, variant=variant, units=units,
               depth=depth)


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
