#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds gpu-carry/dask (git-ignored) for tests/gpu/bench-dask-gpus.py on the
# GPU machine, whose Python 3.12 has no dask: Debian 12's pure-Python dask,
# distributed and the dependencies that machine lacks, with their package
# metadata, C extensions left out (tornado falls back to Python). Three
# lines meet NumPy 2 there: np.round_, numpy.compat and numpy.core are gone.
# Run it there with DASK_DISTRIBUTED__DIAGNOSTICS__NVML=False: distributed
# 2022.12 calls .decode() on the str that today's pynvml returns.
#   usage (this machine, after apt-get install python3-distributed): sh tests/gpu/make-dask-carry.sh
set -eu
cd "$(dirname "$0")/../.."
src=/usr/lib/python3/dist-packages
out=gpu-carry/dask
rm -rf "$out"
mkdir -p "$out"
for m in dask distributed tornado zict tblib partd locket; do
  cp -r "$src/$m" "$src/$m"-*.egg-info "$out/"
done
cp -r "$src/heapdict.py" "$src"/HeapDict-*.egg-info "$out/"
find "$out" -name '*.so' -delete
find "$out" -name __pycache__ -prune -exec rm -rf {} +
rm -rf "$out"/dask/tests "$out"/distributed/tests "$out"/dask/*/tests "$out"/distributed/*/tests
sed -i 's/@implements(np.round, np.round_)/@implements(np.round)/' "$out/dask/array/routines.py"
sed -i 's/^from numpy.compat import basestring$/basestring = str/' "$out/dask/array/einsumfuncs.py"
sed -i 's/np\.core\.numeric\.normalize_axis_/np.lib.array_utils.normalize_axis_/g; s/from numpy\.core\.numeric import normalize_axis_tuple/from numpy.lib.array_utils import normalize_axis_tuple/' \
  "$out/dask/array/numpy_compat.py" "$out/dask/array/overlap.py"
sed -i 's/np\.core\.multiarray\.LIST_PICKLE/getattr(getattr(np, "_core", None) or np.core, "multiarray").LIST_PICKLE/' \
  "$out/distributed/protocol/numpy.py"
du -sh "$out"
