#!/bin/sh
# SPDX-License-Identifier: MIT
# The Python module on a GPU machine: build with CUDA and the module, run its
# pytest suite with CUDA usable (every variant against the CPU, the fallback
# warning), then the figures of PERFORMANCE.md's "Python module" section.
# Logs go to $OUT (default build-gpu-py/out).   usage: python/benchmarks/gpu-run.sh
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-build-gpu-py/out}
build=${ES_BUILD:-build-gpu-py}
mkdir -p "$out"
export PATH=$PATH:/usr/local/cuda/bin
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
python3 -c 'import sys, sysconfig, numpy; print(sys.executable, sys.version.split()[0], "numpy", numpy.__version__, "headers", sysconfig.get_paths()["include"])'
if ! meson setup "$build" -Dgui=disabled -Dcuda=enabled -Dgpu_archs=90 -Dpython=enabled >"$out/setup.log" 2>&1; then
  tail -25 "$out/setup.log"
  exit 1
fi
grep -A4 "^  Entroscope" "$out/setup.log"
ninja -C "$build" >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
# The Python suite's dask and zarr tests, where their carry came along
# (tests/gpu/make-dask-carry.sh: that machine's Python has neither).
if [ -d gpu-carry/dask ]; then
  PYTHONPATH=$PWD/gpu-carry/dask${PYTHONPATH:+:$PYTHONPATH}
  export PYTHONPATH DASK_DISTRIBUTED__DIAGNOSTICS__NVML=False
fi
status=0
meson test -C "$build" --suite python --print-errorlogs >"$out/test.log" 2>&1 || status=$?
cp "$build/meson-logs/testlog.txt" "$out/testlog.txt"
grep -E "^(not ok|ok .*# SKIP)" "$build/meson-logs/testlog.txt" | head -30
python3 tests/tap-summary.py "$build/meson-logs/testlog.json" || status=1
export PYTHONPATH=$PWD/$build/python
python3 python/benchmarks/bench_module.py --cli "$build/app/entroscope-cli" --backend cuda --side 8192 --repeats 11 --calls 5000 2>&1 | tee "$out/bench-cuda.md"
python3 python/benchmarks/bench_module.py --cli "$build/app/entroscope-cli" --backend cpu --side 4096 --repeats 11 2>&1 | tee "$out/bench-cpu.md"
exit $status
