#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds gpu-carry/dask (git-ignored) for the Python suite's dask and zarr
# tests and tests/gpu/bench-dask-gpus.py on the GPU machine, whose Python
# 3.12 has neither: Debian 12's pure-Python dask, distributed, zarr and the
# dependencies that machine lacks, with their package metadata, C
# extensions left out (tornado falls back to Python; numcodecs keeps its
# pure-Python codecs, so zarr's default compressor there is zlib, not
# Blosc). A few lines meet NumPy 2 there: np.round_, np.product,
# numpy.compat and numpy.core are gone.
# Run it there with DASK_DISTRIBUTED__DIAGNOSTICS__NVML=False: distributed
# 2022.12 calls .decode() on the str that today's pynvml returns.
#   usage (this machine, after apt-get install python3-distributed python3-zarr):
#     sh tests/gpu/make-dask-carry.sh
#   there: PYTHONPATH=<build>/python:gpu-carry/dask
set -eu
cd "$(dirname "$0")/../.."
src=/usr/lib/python3/dist-packages
out=gpu-carry/dask
rm -rf "$out"
mkdir -p "$out"
for m in dask distributed tornado zict tblib partd locket asciitree; do
  cp -r "$src/$m" "$src/$m"-*.egg-info "$out/"
done
for m in zarr numcodecs fasteners; do
  cp -r "$src/$m" "$src/$m"-*.dist-info "$out/"
done
cp -r "$src/heapdict.py" "$src"/HeapDict-*.egg-info "$out/"
find "$out" -name '*.so' -delete
find "$out" -name __pycache__ -prune -exec rm -rf {} +
rm -rf "$out"/dask/tests "$out"/distributed/tests "$out"/dask/*/tests "$out"/distributed/*/tests \
  "$out"/zarr/tests "$out"/numcodecs/tests
sed -i 's/@implements(np.round, np.round_)/@implements(np.round)/' "$out/dask/array/routines.py"
sed -i 's/^from numpy.compat import basestring$/basestring = str/' "$out/dask/array/einsumfuncs.py"
sed -i 's/np\.core\.numeric\.normalize_axis_/np.lib.array_utils.normalize_axis_/g; s/from numpy\.core\.numeric import normalize_axis_tuple/from numpy.lib.array_utils import normalize_axis_tuple/' \
  "$out/dask/array/numpy_compat.py" "$out/dask/array/overlap.py"
sed -i 's/np\.core\.multiarray\.LIST_PICKLE/getattr(getattr(np, "_core", None) or np.core, "multiarray").LIST_PICKLE/' \
  "$out/distributed/protocol/numpy.py"
# Without numcodecs' C extensions, Shuffle and Blosc are optional imports;
# NumPy 2 has no np.product.
python3 - "$out" <<'PY'
import sys

out = sys.argv[1]
patches = {
    "numcodecs/__init__.py": ("from numcodecs.shuffle import Shuffle\nregister_codec(Shuffle)",
                              "with suppress(ImportError):\n    from numcodecs.shuffle import Shuffle\n"
                              "    register_codec(Shuffle)"),
    "zarr/codecs.py": ("from numcodecs import get_codec, Blosc, Pickle,",
                       "from contextlib import suppress\nwith suppress(ImportError):\n"
                       "    from numcodecs import Blosc\nfrom numcodecs import get_codec, Pickle,"),
    "zarr/util.py": ("from numcodecs.blosc import cbuffer_sizes, cbuffer_metainfo",
                     "from contextlib import suppress\nwith suppress(ImportError):\n"
                     "    from numcodecs.blosc import cbuffer_sizes, cbuffer_metainfo"),
}
# zarr 2.13 calls np.product, which NumPy 2 removed.
text = open(f"{out}/zarr/util.py").read()
open(f"{out}/zarr/util.py", "w").write(text.replace("np.product(", "np.prod("))
for name, (old, new) in patches.items():
    path = f"{out}/{name}"
    text = open(path).read()
    if old not in text:
        sys.exit(f"{path}: the line to patch is gone")
    open(path, "w").write(text.replace(old, new, 1))
PY
du -sh "$out"
