#!/bin/sh
# SPDX-License-Identifier: MIT
# compute-sanitizer over every CUDA kernel variant (issue 15): memcheck,
# racecheck, initcheck and synccheck × every variant of every operation,
# through the CLI on random images of awkward sizes (8- and 16-bit), entropy
# at windows and level counts that reach each of its kernels, and a banded
# run of every operation (of every CLAHE variant) under a tiny
# ES_GPU_MEMORY_BUDGET. Prints each dirty
# run with its first report, then `N clean, N dirty`; exits 1 if any is dirty.
#   usage: tests/gpu/sanitize.sh [build dir, default build-gpu] [parallel runs, default 6]
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
jobs=${2:-6}
cli=$PWD/$build/app/entroscope-cli
sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$sanitizer" ] || { echo "sanitize: no compute-sanitizer"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Random images, never zeros: odd widths end mid-vector (the row padding),
# a 1×1, a column, a row, a wide odd one (the issue's 1001 columns), 16-bit.
mkdir -p "$work/img"
python3 - "$work/img" <<'EOF'
import os, random, sys
random.seed(15)
def pgm(name, w, h, maxval):
    size = 2 if maxval > 255 else 1
    data = bytearray()
    for _ in range(w * h):
        data += random.randint(1, maxval).to_bytes(size, "big")
    with open(os.path.join(sys.argv[1], name), "wb") as f:
        f.write(b"P5\n%d %d\n%d\n" % (w, h, maxval) + bytes(data))
pgm("wide.pgm", 1001, 97, 255)
pgm("odd.pgm", 33, 17, 255)
pgm("one.pgm", 1, 1, 255)
pgm("column.pgm", 1, 45, 255)
pgm("row.pgm", 77, 2, 255)
pgm("deep16.pgm", 131, 67, 65535)
pgm("ten.pgm", 70, 9, 1023)
EOF

# "op variant" for every CUDA variant that `info` lists.
"$cli" info | awk '
  /^CUDA kernel variants/ { on = 1; next }
  on && /^  [a-z]+:$/ { op = substr($1, 1, length($1) - 1); next }
  on && /^  [ *] [a-z]/ { split(substr($0, 5), id, " "); print op, id[1] }' >"$work/variants"
[ -s "$work/variants" ] || { echo "sanitize: no CUDA variants listed"; exit 1; }

# One line a run: tool, name, environment, op, variant, options. Entropy at
# the issue's window 7 and where the other kernels run: the pair counters
# (k ≤ 9, L ≤ 16), column histograms (L ≤ 16, k ≥ 11) and shared counts (L > 16).
for tool in memcheck racecheck initcheck synccheck; do
  while read -r op variant; do
    if [ "$op" = entropy ]; then
      # The fast kernel's family reaches all three of its kernels; the
      # teaching variants and general have one kernel each.
      case $variant in
        fast|streams-overlap|pageable-transfers|per-call-alloc) sets="7:16 9:16 3:2 11:8 15:256" ;;
        volume|volume-tile) sets="" ;;  # 3-D windows only: below
        *) sets="7:16 5:64" ;;
      esac
      for kl in $sets; do
        k=${kl%:*} l=${kl#*:}
        echo "$tool $op-$variant-k$k-L$l - $op $variant --window=$k --levels=$l"
      done
    elif [ "$op" = clahe ]; then
      # A grid that divides no image side (every tile reflects), and one
      # with more tiles than the small images have pixels.
      echo "$tool $op-$variant-3x2 - $op $variant --clip=2 --tiles=3x2"
      echo "$tool $op-$variant-64x64 - $op $variant --clip=0 --tiles=64x64"
      # In bands through the tile passes: the budget holds the tiles'
      # counts and maps and a few bands of the wide image (8-bit, 8×8), or
      # of the 16-bit one (65536 bins under a 1×2 grid).
      echo "$tool $op-$variant-banded ES_GPU_MEMORY_BUDGET=300000 $op $variant --clip=2 --tiles=8x8"
      echo "$tool $op-$variant-banded16 ES_GPU_MEMORY_BUDGET=800000 $op $variant --clip=2 --tiles=1x2"
    else
      echo "$tool $op-$variant - $op $variant --levels=16"
    fi
  done <"$work/variants"
  for op in quantize entropy equalize sharpen; do
    echo "$tool $op-banded ES_GPU_MEMORY_BUDGET=300000 $op default --window=9"
  done
  # Definitions: border modes on the fast kernels' padded frames, shapes and
  # bins on the general kernel (sorted small windows, shared and global
  # counts), and in bands.
  echo "$tool entropy-fast-symmetric - entropy fast --window=7 --border=symmetric"
  echo "$tool entropy-fast-mirror-bins - entropy fast --window=11 --levels=8 --border=mirror"
  echo "$tool entropy-fast-constant-counts - entropy fast --window=15 --levels=64 --border=constant:9"
  echo "$tool entropy-general-disk-exact - entropy general --disk=4 --binning=exact"
  echo "$tool entropy-general-small-exact - entropy general --window=5 --binning=exact --border=mirror"
  echo "$tool entropy-general-rect-range - entropy general --rect=3x9 --border=replicate --binning=range:10:200 --levels=300 --units=normalized"
  echo "$tool entropy-general-banded ES_GPU_MEMORY_BUDGET=300000 entropy default --disk=3 --border=symmetric"
  # The rank kernel (3×3 squares of 8-bit samples that are their own bins)
  # and the default definition in bits (the fast kernels store bits).
  echo "$tool entropy-general-ranks - entropy general --window=3 --binning=exact --border=symmetric"
  echo "$tool entropy-fast-bits - entropy fast --window=5 --units=bits"
  # 3-D windows on the images as one-plane volumes: counts in registers
  # (ball 3, 16 bins, slid by groups of runs; a 3×1×3 box by moves), in
  # shared memory (256 bins: ball 2 by groups, a 3×5×7 box by moves), in
  # global memory (exact 16-bit bins), the tile with its halo, and a mask
  # of the border's void.
  echo "$tool entropy-volume-registers - entropy volume --ball=3"
  echo "$tool entropy-volume-register-moves - entropy volume --box=3x1x3"
  echo "$tool entropy-volume-shared-groups - entropy volume --ball=2 --levels=256"
  echo "$tool entropy-volume-shared - entropy volume --box=3x5x7 --levels=256 --border=symmetric"
  echo "$tool entropy-volume-global - entropy volume --ball=1 --binning=exact"
  echo "$tool entropy-volume-tile - entropy volume-tile --ball=2 --levels=64 --border=mirror"
done >"$work/runs"

# One run: dirty when the sanitizer reports anything or the CLI fails.
cat >"$work/one.sh" <<'EOF'
#!/bin/sh
work=$1 sanitizer=$2 cli=$3 tool=$4 name=$5 env=$6 op=$7 variant=$8
shift 8
log="$work/logs/$tool-$name.log"
dir="$work/out/$tool-$name"
mkdir -p "$dir"
set -- "$@" --backend=cuda -q -o "$dir/"
[ "$variant" = default ] || set -- "$@" --variant="$variant"
[ "$env" = - ] || export "$env"
"$sanitizer" --tool "$tool" --error-exitcode 99 --print-limit 5 "$cli" "$op" "$@" "$work"/img/*.pgm >"$log" 2>&1
rc=$?
if [ $rc -ne 0 ] || grep -qE "(ERROR|RACECHECK) SUMMARY: [1-9]" "$log"; then
  echo "dirty $tool $name (exit $rc)"
else
  echo "clean $tool $name"
fi
rm -rf "$dir"
EOF
mkdir -p "$work/logs" "$work/out"
xargs -P "$jobs" -L 1 sh "$work/one.sh" "$work" "$sanitizer" "$cli" <"$work/runs" >"$work/results"

if [ -n "${OUT:-}" ]; then
  tar -C "$work" -czf "$OUT/sanitize-logs.tar.gz" logs results
fi
grep '^dirty' "$work/results" | sort | head -20 | while read -r _ tool name _; do
  echo "--- dirty: $tool $name"
  grep -m 6 -E "^=========  *(Invalid|Uninitialized|Race|Barrier|Error|Warning|  at |by thread)|SUMMARY: [1-9]|entroscope-cli:" \
    "$work/logs/$tool-$name.log" || tail -5 "$work/logs/$tool-$name.log"
done
echo "sanitize: $(grep -c '^clean' "$work/results" || true) clean, $(grep -c '^dirty' "$work/results" || true) dirty"
! grep -q '^dirty' "$work/results"
