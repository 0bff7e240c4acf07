#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Local entropy of an OME-Zarr image or volume, written as an OME-Zarr
multiscale image, chunk by chunk with entroscope.dask.

    PYTHONPATH=build/python python3 examples/ome_zarr_entropy.py IN.zarr OUT.zarr [--window 9 | --disk 5 | --ball 2]
        [--levels 16] [--like skimage] [--border symmetric] [--units bits]
    PYTHONPATH=build/python python3 examples/ome_zarr_entropy.py --sample IN.zarr   # a small input to try it on

IN.zarr is an OME-Zarr image (NGFF 0.4): a group whose "multiscales"
attribute lists its resolution levels; its full-resolution level, 2-D
(y, x) or 3-D (z, y, x), uint8 or uint16, is read lazily in its own chunks.
OUT.zarr gets the entropy (float32) in the same chunks as level "0", and a
pyramid of 2× means in y and x down to one chunk, with "multiscales"
metadata as the NGFF 0.4 specification says: the input's axes, a scale and
translation per level (a mean of 2×2 pixels has its centre half a pixel
in), and under "metadata" the job that made the values.
(Debian: python3-dask, python3-zarr.)
"""

import argparse
import sys

import numpy as np

import dask.array as da
import zarr

import entroscope
import entroscope.dask as edask

NGFF_VERSION = "0.4"


def write_multiscale(path, levels, axes, scale, origin, name, downscaling, metadata):
    """An OME-Zarr group at path: the arrays of levels as "0", "1", ...
    (dask arrays, written chunk by chunk, '/' between chunk indices as NGFF
    0.4 asks) and its multiscales attribute. Level i is 2^i times coarser in
    y and x than level 0, whose pixel size along each axis is scale and
    whose first pixel's centre is at origin."""
    group = zarr.open_group(str(path), mode="w")
    datasets = []
    for i, level in enumerate(levels):
        target = group.create_dataset(str(i), shape=level.shape, chunks=level.chunksize, dtype=level.dtype,
                                      dimension_separator="/")
        level.to_zarr(target)
        factor = [2**i if axis["name"] in ("y", "x") else 1 for axis in axes]
        datasets.append({"path": str(i), "coordinateTransformations": [
            {"type": "scale", "scale": [s * f for s, f in zip(scale, factor)]},
            {"type": "translation", "translation": [o + s * (f - 1) / 2 for o, s, f in zip(origin, scale, factor)]},
        ]})
    group.attrs["multiscales"] = [{"version": NGFF_VERSION, "name": name, "axes": axes, "datasets": datasets,
                                   "type": downscaling, "metadata": metadata}]


def read_full_resolution(path):
    """(level 0 as a dask array, its axes, its pixel size and origin per axis, the image's name)."""
    group = zarr.open_group(str(path), mode="r")
    multiscales = group.attrs.get("multiscales")
    if not multiscales:
        raise SystemExit(f"{path}: not an OME-Zarr image (no multiscales attribute)")
    image = multiscales[0]
    axes = image["axes"]
    if len(axes) not in (2, 3) or any(axis.get("type") != "space" for axis in axes):
        names = ", ".join(axis["name"] for axis in axes)
        raise SystemExit(f"{path}: axes ({names}): a 2-D (y, x) or 3-D (z, y, x) image is needed; take one "
                         "time point and channel first")
    level = image["datasets"][0]
    transforms = level.get("coordinateTransformations", [])
    scale = next((t["scale"] for t in transforms if t["type"] == "scale"), [1.0] * len(axes))
    origin = next((t["translation"] for t in transforms if t["type"] == "translation"), [0.0] * len(axes))
    return da.from_zarr(group[level["path"]]), axes, scale, origin, image.get("name", "image")


def pyramid(values, chunk):
    """values, then 2× means in y and x (the last two axes) while a level
    is larger than one chunk, in values' chunks."""
    levels = [values]
    while min(levels[-1].shape[-2:]) >= 2 and max(levels[-1].shape[-2:]) > chunk:
        coarser = da.coarsen(np.mean, levels[-1], {values.ndim - 2: 2, values.ndim - 1: 2}, trim_excess=True)
        levels.append(coarser.astype(np.float32).rechunk(values.chunksize))
    return levels


def write_sample(path):
    """A small uint16 volume (z, y, x) with two levels, to run the example on."""
    rng = np.random.default_rng(7)
    z, y, x = np.mgrid[0:8, 0:300, 0:260]
    volume = (2000 + 1500 * np.sin(x / 17.0) * np.cos(y / 23.0) + rng.normal(0, 300, x.shape) * (z + 1) / 8)
    level0 = da.from_array(np.clip(volume, 0, 4095).astype(np.uint16), chunks=(4, 128, 128))
    axes = [{"name": "z", "type": "space", "unit": "micrometer"}, {"name": "y", "type": "space", "unit": "micrometer"},
            {"name": "x", "type": "space", "unit": "micrometer"}]
    means = da.coarsen(np.mean, level0, {1: 2, 2: 2}, trim_excess=True)
    levels = [level0, da.round(means).astype(np.uint16).rechunk((4, 128, 128))]
    write_multiscale(path, levels, axes, [2.0, 0.5, 0.5], [0.0, 0.0, 0.0], "sample", "mean",
                     {"method": "dask.array.coarsen(numpy.mean) of 2×2 pixels in y and x, rounded"})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", help="an OME-Zarr image (a zarr group)")
    parser.add_argument("output", nargs="?", help="where to write the entropy's OME-Zarr image")
    parser.add_argument("--sample", action="store_true", help="write a small sample image to INPUT and stop")
    parser.add_argument("--window", type=int)
    parser.add_argument("--levels", type=int)
    parser.add_argument("--disk", type=int, help="a 2-D disk of this radius (plane by plane on a volume)")
    parser.add_argument("--ball", type=int, help="a 3-D ball of this radius (volumes)")
    parser.add_argument("--like", choices=["matlab", "skimage", "fiji"])
    parser.add_argument("--border")
    parser.add_argument("--units", choices=["nats", "bits", "normalized"])
    args = parser.parse_args()
    if args.sample:
        write_sample(args.input)
        print(f"{args.input}: a sample OME-Zarr volume")
        return 0
    if args.output is None:
        parser.error("the output path is needed")

    array, axes, scale, origin, name = read_full_resolution(args.input)
    job = {key: value for key, value in vars(args).items()
           if key in ("window", "levels", "disk", "ball", "like", "border", "units") and value is not None}
    values = edask.entropy(array, **job)
    metadata = {"method": "dask.array.coarsen(numpy.mean) of 2×2 pixels in y and x",
                "entroscope": {"version": entroscope.__version__, "operation": "entropy", "source": str(args.input),
                               **job}}
    levels = pyramid(values, max(array.chunksize[-2:]))
    write_multiscale(args.output, levels, axes, scale, origin, f"{name} entropy", "mean", metadata)
    print(f"{args.output}: entropy of {name} {array.shape} {array.dtype} in chunks {array.chunksize}, "
          f"{len(levels)} levels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
