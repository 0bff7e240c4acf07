#!/bin/sh
# SPDX-License-Identifier: MIT
# A short GPU check while tuning kernels: build for sm_90 only, run every
# variant against the reference (test-compute), bench the given sizes, and
# keep the SASS and an ncu profile of the default entropy and sharpen kernels.
#   usage: tests/gpu/kernels.sh [bench sizes, default 8192] [ncu: 1 to profile]
set -eu
cd "$(dirname "$0")/../.."
out=${OUT:-build-gpu/out}
sizes=${1:-8192}
mkdir -p "$out"

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
[ -f build-gpu/build.ninja ] || meson setup build-gpu -Dgui=disabled -Dcuda=enabled -Dgpu_archs=90 \
  -Dgpu_resource_usage=true >"$out/setup.log"
ninja -C build-gpu tests/test-compute app/entroscope-cli >"$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
grep -B1 -E "spill stores, [1-9]" "$out/build.log" | head -6 || true

for f in entropy-pairs sharpen; do
  cuobjdump -sass build-gpu/compute/cuda/$f.o >"$out/$f.sass" 2>&1 || true
done
for f in entropy-pairs:entropy_pairs_kernelILi5Eh sharpen:sharpen_fast_kernelIh; do
  awk -v fn="${f#*:}" '$0 ~ "Function : " { on = index($0, fn) > 0; next }
    on && /\/\*[0-9a-f]+\*\// { n++; if (/LDS/) lds++; if (/SHFL/) shfl++; if (/WARPSYNC/) sync++;
      if (/LDL|STL/) local++; if (/I2F|F2I|FRND/) cvt++; if (/MOV/) mov++ }
    END { printf "%s SASS: %d instructions, %d LDS, %d SHFL, %d WARPSYNC, %d MOV, %d local, %d conversions\n",
          fn, n, lds, shfl, sync, mov, local, cvt }' "$out/${f%%:*}.sass"
done

status=0
ES_TEST_REQUIRE_CUDA=1 build-gpu/tests/test-compute >"$out/compute.tap" 2>&1 || status=$?
grep -E "^not ok" "$out/compute.tap" | head -10 || true
echo "test-compute: exit $status, $(grep -c '^ok' "$out/compute.tap") ok, $(grep -c '^not ok' "$out/compute.tap") not ok"

if [ "${2:-0}" = 1 ]; then
  ncu --clock-control none -k regex:"entropy_fast|sharpen_fast" -c 3 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy --section WarpStateStats \
    --section MemoryWorkloadAnalysis \
    build-gpu/app/entroscope-cli bench --sizes 8192 --ops entropy,sharpen --variant fast --repeats 1 \
    --backend cuda >"$out/ncu.txt" 2>&1 || true
  grep -E "entropy_fast|sharpen_fast|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Issue Slots Busy|Achieved Occupancy|Registers Per|Stall|L1/TEX Hit|Executed Ipc A" "$out/ncu.txt" | head -40 || true
fi

build-gpu/app/entroscope-cli bench --sizes "$sizes" --csv "$out/bench.csv" >"$out/bench.txt" 2>&1 || status=$?
grep -v " cpu " "$out/bench.txt" | cut -c1-200
exit $status
