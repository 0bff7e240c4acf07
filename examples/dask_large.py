#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Local entropy of an image larger than the memory of each worker, with
entroscope.dask on a dask.distributed cluster, zarr in and zarr out.

    PYTHONPATH=build/python python3 examples/dask_large.py [--side 16384] [--workers 2]
        [--memory 512MiB] [--chunk 2048] [--folder /tmp/entroscope-dask]

It writes a random side × side uint8 image into a zarr store (chunk × chunk
chunks), computes its 9×9 entropy chunk by chunk with the halo from the
neighbours into another zarr store (float32: 4 bytes a pixel, 1 GiB at
16384²) on a LocalCluster whose workers each get --memory, checks a few
tiles against one in-memory call, and prints the throughput beside that of
the module in this process on one tile-sized image.
(Debian: python3-dask, python3-distributed, python3-zarr.)
"""

import argparse
import os
import shutil
import sys
import time

import numpy as np

import dask.array as da
import distributed
import zarr

import entroscope
import entroscope.dask as edask


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=16384)
    parser.add_argument("--chunk", type=int, default=2048)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="threads per worker")
    parser.add_argument("--memory", default="512MiB", help="memory limit of each worker")
    parser.add_argument("--window", type=int, default=9)
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--folder", default="/tmp/entroscope-dask")
    args = parser.parse_args()

    side, chunk, window = args.side, args.chunk, args.window
    shutil.rmtree(args.folder, ignore_errors=True)
    os.makedirs(args.folder)
    source, target = os.path.join(args.folder, "image.zarr"), os.path.join(args.folder, "entropy.zarr")
    result_bytes = side * side * 4

    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=args.threads, processes=True,
                                  memory_limit=args.memory, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        limit = min(w["memory_limit"] for w in client.scheduler_info()["workers"].values())
        print(f"{args.workers} workers × {args.threads} thread(s), {limit / 2**20:.0f} MiB each; "
              f"the result alone is {result_bytes / 2**20:.0f} MiB")
        random = da.random.RandomState(1).randint(1, 256, (side, side), chunks=chunk, dtype=np.uint8)
        start = time.perf_counter()
        random.to_zarr(source)
        print(f"wrote a {side}×{side} uint8 image to {source} in {time.perf_counter() - start:.1f} s")

        image = da.from_zarr(source)
        start = time.perf_counter()
        edask.entropy(image, window, backend=args.backend).to_zarr(target)
        seconds = time.perf_counter() - start
        devices = client.run(lambda: entroscope.default_engine(args.backend).description)
        print(f"entropy {window}×{window}: {seconds:.2f} s, {side * side / seconds / 1e6:.0f} Mpx/s "
              f"on the cluster ({sorted(set(devices.values()))[0]})")

    # A few tiles against one in-memory call on the tile plus its halo.
    stored, values = zarr.open(source, mode="r"), zarr.open(target, mode="r")
    r = window // 2
    for y, x in [(0, 0), (side // 2 - 100, side // 3), (side - 300, side - 300)]:
        y0, x0 = max(0, y - r), max(0, x - r)
        tile = stored[y0:y + 300 + r, x0:x + 300 + r]
        want = entroscope.entropy(tile, window)[y - y0:y - y0 + 300, x - x0:x - x0 + 300]
        assert np.array_equal(values[y:y + 300, x:x + 300], want), (y, x)
    print("tiles checked against in-memory calls: identical")

    # The module alone, in this process, on one chunk-sized image at a time.
    tile = np.asarray(stored[:chunk, :chunk])
    engine = entroscope.default_engine(args.backend)
    engine.entropy(tile, window)
    start = time.perf_counter()
    repeats = 10
    for _ in range(repeats):
        engine.entropy(tile, window)
    seconds = (time.perf_counter() - start) / repeats
    print(f"module in one process ({engine.description}): {chunk * chunk / seconds / 1e6:.0f} Mpx/s "
          f"on {chunk}×{chunk}")
    shutil.rmtree(args.folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
