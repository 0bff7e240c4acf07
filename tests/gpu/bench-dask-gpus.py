#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""entroscope.dask on a dask.distributed LocalCluster with one worker per GPU
(each bound with `bind_workers_to_gpus`), against one worker on one GPU.

    PYTHONPATH=build-gpu/python python3 tests/gpu/bench-dask-gpus.py [--side 32768] [--chunk 4096]

First the results: a chunked image computed on the cluster equals one call of
the module on the whole image in this process, bit for bit (default 5×5 and
skimage's disk 5). Then the throughput: the entropy of a side² uint8 image,
made on the workers block by block, summed there so that only numbers come
back, medians of --repeats. The cluster has --threads threads however many workers share them, so
that the GPUs, not the threads, make the difference. Prints a Markdown
table; needs two GPUs.
"""

import argparse
import statistics
import sys
import time

import numpy as np

import dask.array as da
import distributed

import entroscope
import entroscope.dask as edask


def _block(block_id=None, chunk=0):
    """A random block, the same for the same block id wherever it is made."""
    seed = 1 + block_id[0] * 7919 + block_id[1]
    data = np.random.default_rng(seed).bytes(chunk * chunk)
    return np.frombuffer(data, np.uint8).reshape(chunk, chunk) | 1  # never zeros (DESIGN.md §6)


def image(side, chunk):
    n = side // chunk
    return da.map_blocks(_block, chunk=chunk, dtype=np.uint8, chunks=((chunk,) * n, (chunk,) * n))


def cluster(workers, threads):
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=threads, processes=True,
                                    dashboard_address=None, memory_limit=0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=32768)
    parser.add_argument("--chunk", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=8, help="threads of the cluster, shared by its workers")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    small = image(3 * 2048, 2048)
    whole = small.compute()
    rows = []
    failed = False
    for workers in (1, 2):
        with cluster(workers, args.threads // workers) as c, distributed.Client(c) as client:
            binding = edask.bind_workers_to_gpus(client, devices=list(range(workers)))
            for name, keywords in (("default 5×5", {}), ("skimage disk 5", {"like": "skimage", "disk": 5})):
                got = edask.entropy(small, backend="cuda", **keywords).compute()
                want = entroscope.entropy(whole, backend="cuda", **keywords)
                same = np.array_equal(got, want)
                print(f"# {workers} worker(s) on GPUs {sorted(binding.values())}: {name} on 3×3 chunks of 2048² "
                      f"equals one CUDA call: {same} (largest difference {np.abs(got - want).max():.3g})", flush=True)
                failed = failed or not same
            big = image(args.side, args.chunk)
            total = edask.entropy(big, backend="cuda").sum()
            total.compute()  # warm-up: every worker's engine opened
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                value = float(total.compute())
                times.append(time.perf_counter() - start)
            seconds = statistics.median(times)
            rows.append((workers, seconds, args.side ** 2 / seconds / 1e6, value))
    one = rows[0][2]
    print(f"\n{args.side}² uint8 in {args.chunk}² chunks, default 5×5 entropy summed on the workers, "
          f"{args.threads} threads over the workers, medians of {args.repeats}:\n")
    print("| workers (one a GPU) | s | Mpx/s | × one GPU | sum |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for workers, seconds, rate, value in rows:
        print(f"| {workers} | {seconds:.3f} | {rate:.0f} | {rate / one:.2f}× | {value:.6g} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
