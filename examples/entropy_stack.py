#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The local entropy of a stack of images, plotted with matplotlib.

    PYTHONPATH=build/python python3 examples/entropy_stack.py [IMAGE...] [-o stack.png] [--window 9]

With no image given it takes the sample images of tests/data/images. Each
image is loaded as entroscope-cli loads it (colour becomes gray with BT.709
weights), stacked into one (N, H, W) array when the sizes agree, and its
entropy is computed on the shared engine (CUDA where usable). The figure
shows each image over its entropy map, with the mean entropy in the title;
without matplotlib (Debian: python3-matplotlib) the script prints the
numbers only.
"""

import argparse
import glob
import math
import os
import sys
import time

import numpy as np

import entroscope

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("images", nargs="*", help="PNG, PGM or text-matrix files")
    parser.add_argument("-o", "--output", default="entropy-stack.png", help="the figure to write")
    parser.add_argument("--window", type=int, default=9)
    parser.add_argument("--levels", type=int, default=16)
    args = parser.parse_args()

    paths = args.images or sorted(glob.glob(os.path.join(HERE, "..", "tests", "data", "images", "*.png")))
    if not paths:
        parser.error("no images given and none found in tests/data/images")
    images = [entroscope.load(p) for p in paths]
    print(entroscope.info()["device"])

    # One (N, H, W) stack when the sizes agree; a slice of it is a C-contiguous
    # 2-D image, which the engine reads in place.
    same = len({im.shape for im in images}) == 1 and len({im.dtype for im in images}) == 1
    stack = np.stack(images) if same else None
    start = time.perf_counter()
    maps = []
    for i, image in enumerate(images):
        source = stack[i] if stack is not None else image
        values, timing = entroscope.entropy(source, args.window, args.levels, depth=image.depth,
                                            return_timing=True)
        maps.append(values)
        name = os.path.basename(paths[i])
        print(f"{name:24} {image.shape[1]:5}×{image.shape[0]:<5} mean {values.mean():.3f} nats, "
              f"max {values.max():.3f}  ({timing.backend}, {timing.call_ms:.1f} ms)")
    print(f"{len(images)} images in {(time.perf_counter() - start) * 1e3:.1f} ms")

    try:
        import matplotlib
        if not os.environ.get("DISPLAY"):
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (python3-matplotlib): no figure")
        return 0

    top = math.log(min(args.levels, args.window * args.window))
    fig, axes = plt.subplots(2, len(images), figsize=(3 * len(images), 6.4), squeeze=False, constrained_layout=True)
    for i, (image, values) in enumerate(zip(images, maps)):
        axes[0, i].imshow(image, cmap="gray")
        axes[0, i].set_title(os.path.basename(paths[i]), fontsize=9)
        shown = axes[1, i].imshow(values, cmap="viridis", vmin=0, vmax=top)
        axes[1, i].set_title(f"mean {values.mean():.2f} nats", fontsize=9)
        for ax in axes[:, i]:
            ax.set_axis_off()
    fig.colorbar(shown, ax=axes[1, :].tolist(), shrink=0.8, label="entropy (nats)")
    fig.suptitle(f"Local entropy, {args.window}×{args.window} window, {args.levels} levels")
    fig.savefig(args.output, dpi=100)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
