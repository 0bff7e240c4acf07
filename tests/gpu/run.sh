#!/bin/sh
# SPDX-License-Identifier: MIT
# The GPU machine's run: build without GLib/GTK, run every test with CUDA
# required (every variant against the reference), compute-sanitizer over
# every variant (tests/gpu/sanitize.sh), then the benchmarks (2-D and
# volumes); their tables and the sanitizer's summary are printed last. Logs and CSV go to $OUT
# when it is set.
#   usage: tests/gpu/run.sh [bench sizes, default 1024,4096,8192]
set -eu
cd "$(dirname "$0")/../.."
out=${OUT:-build-gpu/out}
sizes=${1:-1024,4096,8192}
mkdir -p "$out"

# libtiff where its carry came along (tests/gpu/make-tiff-carry.sh), so
# that the TIFF readers build and their tests run.
if [ -d gpu-carry/tiff ]; then
  PKG_CONFIG_PATH=$PWD/gpu-carry/tiff/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  LD_LIBRARY_PATH=$PWD/gpu-carry/tiff/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PKG_CONFIG_PATH LD_LIBRARY_PATH
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader || true
[ -f build-gpu/build.ninja ] || meson setup build-gpu -Dgui=disabled -Dcuda=enabled -Dgpu_resource_usage=true >"$out/setup.log"
ninja -C build-gpu >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
grep -E "spill|Used [0-9]+ registers" "$out/build.log" | sort | uniq -c | sort -rn | head -5 || true

# The Python suite's dask and zarr tests, where their carry came along
# (tests/gpu/make-dask-carry.sh: that machine's Python has neither).
if [ -d gpu-carry/dask ]; then
  PYTHONPATH=$PWD/gpu-carry/dask${PYTHONPATH:+:$PYTHONPATH}
  export PYTHONPATH DASK_DISTRIBUTED__DIAGNOSTICS__NVML=False
fi
# scikit-image's own rank tests, where their carry came along
# (tests/gpu/make-skimage-tests-carry.sh: a wheel's scikit-image has none).
if [ -d gpu-carry/skimage-tests ]; then
  ES_SKIMAGE_RANK_TESTS=$PWD/gpu-carry/skimage-tests
  export ES_SKIMAGE_RANK_TESTS
fi
status=0
ES_TEST_REQUIRE_CUDA=1 meson test -C build-gpu --print-errorlogs >"$out/test.log" 2>&1 || status=$?
cp build-gpu/meson-logs/testlog.txt "$out/testlog.txt"
grep -E "^not ok" build-gpu/meson-logs/testlog.txt | head -20 || true
python3 tests/tap-summary.py build-gpu/meson-logs/testlog.json || status=1

# compute-sanitizer over every variant (memcheck, racecheck, initcheck,
# synccheck); its summary line `N clean, N dirty` is kept for the end.
tests/gpu/sanitize.sh build-gpu >"$out/sanitize.txt" 2>&1 || status=1

build-gpu/app/entroscope-cli info | tee "$out/info.txt" | head -8
build-gpu/app/entroscope-cli bench --sizes "$sizes" --csv "$out/bench.csv" >"$out/bench.txt" 2>&1 || status=$?
# Volumes: 512³ at cube 3, ball 2, 3 and 5 on both 3-D variants.
build-gpu/tests/bench-volumes 512 5 >"$out/bench-volumes.txt" 2>&1 || status=$?
cat "$out/bench.txt" "$out/bench-volumes.txt"
grep -A8 "^--- dirty" "$out/sanitize.txt" | head -40 || true
tail -1 "$out/sanitize.txt"
exit $status
