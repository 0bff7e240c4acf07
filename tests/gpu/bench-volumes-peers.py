#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""3-D local entropy on the GPU against cuCIM's rank.entropy, in one process.

Usage: PYTHONPATH=<build>/python:<cucim src> python3 tests/gpu/bench-volumes-peers.py [--side N] [--repeats R]

For each footprint (cube 3, ball 2, ball 3, ball 5) and bin count: cuCIM's
`filters.rank.entropy` on a CuPy array (device in, device out, timed with CUDA
events around the call), and entroscope's `entropy` on the same volume (host
in, host out), whose `return_timing` separates the kernel from the transfers.
cuCIM reflects at the borders (scipy's "reflect", our `border="symmetric"`)
and counts every value its own bin, in bits: at 256 bins entroscope runs
`like="skimage", border="symmetric"`; at 16 bins `levels=16` (depth binning,
floor(v · 16 / 256)) against cuCIM on the samples >> 4, the same counts. The copy
floor is a device-to-device copy of the same bytes (u8 in, f32 out) timed in
the same process. Both results are compared (max |difference| in bits).
cuCIM is not installable on the GPU machine: its pure-Python source runs from
a checkout (DESIGN.md's performance method; PERFORMANCE.md has the command).
Prints a Markdown table last.
"""

import argparse
import statistics
import time

import numpy as np

import entroscope
from medians import cuda_event_median_ms, median_ms






def copy_floor_ms(cp, voxels, repeats):
    """A device copy that reads `voxels` bytes and writes 4 × `voxels` bytes."""
    src = cp.random.randint(1, 255, size=voxels, dtype=cp.uint8)
    dst = cp.empty(voxels, dtype=cp.float32)
    return cuda_event_median_ms(cp, lambda: dst.__setitem__(slice(None), src), repeats)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--side", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--peer-limit-ms", type=float, default=20000,
                        help="skip cuCIM where a single call took longer than this")
    args = parser.parse_args()

    try:
        import cupy as cp
        from cucim.skimage.filters import rank as cucim_rank
        from skimage.morphology import ball
    except ImportError as error:  # the table still gives Entroscope's figures
        print(f"peer not available: {error}")
        cp = cucim_rank = None
        from skimage.morphology import ball

    rng = np.random.default_rng(7)
    side = args.side
    volume = rng.integers(1, 256, size=(side, side, side), dtype=np.uint8)
    footprints = [("cube 3", np.ones((3, 3, 3), np.uint8), {"box": (3, 3, 3)}),
                  ("ball 2", ball(2).astype(np.uint8), {"ball": 2}),
                  ("ball 3", ball(3).astype(np.uint8), {"ball": 3}),
                  ("ball 5", ball(5).astype(np.uint8), {"ball": 5})]
    floor = copy_floor_ms(cp, volume.size, args.repeats) if cp is not None else float("nan")

    rows = []
    for bins in (16, 256):
        peer_data = volume >> 4 if bins == 16 else volume
        device_data = cp.asarray(peer_data) if cp is not None else None
        definition = ({"levels": 16, "units": "bits"} if bins == 16 else {"like": "skimage"})
        for name, fp, shape in footprints:
            timing = {}

            def ours():
                out, t = entroscope.entropy(volume, border="symmetric", return_timing=True, **definition,
                                            **shape)
                timing.update(kernel=t.kernel_ms, total=t.call_ms)
                return out

            ours_total = median_ms(ours, args.repeats)
            kernels = []
            for _ in range(args.repeats):
                ours()
                kernels.append(timing["kernel"])
            ours_kernel = statistics.median(kernels)

            peer_ms, diff = float("nan"), float("nan")
            if cucim_rank is not None:
                device_fp = cp.asarray(fp)
                t0 = time.perf_counter()
                peer = cucim_rank.entropy(device_data, device_fp)
                cp.cuda.Device().synchronize()
                once = (time.perf_counter() - t0) * 1e3
                if once < args.peer_limit_ms:
                    peer_ms = cuda_event_median_ms(cp, lambda: cucim_rank.entropy(device_data, device_fp),
                                             max(1, min(args.repeats, int(60000 / max(once, 1)))))
                else:
                    peer_ms = once
                ours_bits = ours()
                diff = float(np.nanmax(np.abs(cp.asnumpy(peer).astype(np.float64) - ours_bits)))
            rows.append((name, bins, ours_kernel, ours_total, floor, peer_ms, diff))

    print(f"\n{side}³ uint8, median of {args.repeats}; floor = device copy of u8 in + f32 out")
    print("| footprint | bins | entroscope kernel ms | × floor | entroscope host→host ms "
          "| cuCIM ms | cuCIM / entroscope kernel | max diff (bits) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, bins, kernel, total, fl, peer, diff in rows:
        print(f"| {name} | {bins} | {kernel:.2f} | {kernel / fl:.1f}× | {total:.1f} | {peer:.1f} "
              f"| {peer / kernel:.0f}× | {diff:.1e} |")
    print(f"copy floor: {floor:.3f} ms")


if __name__ == "__main__":
    main()
