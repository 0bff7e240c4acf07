#!/bin/sh
# SPDX-License-Identifier: MIT
# End-to-end checks of entroscope-cli (TAP): outputs, formats, batches, errors and exit codes.
# Usage: test-cli.sh PATH-TO-entroscope-cli   (ES_SAMPLE, ES_TESTDATA from meson)

here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
tap_take_cli "$0" "$1"
TESTDATA=${ES_TESTDATA:-$here/data}
SAMPLE=${ES_SAMPLE:-$here/../data/camera.png}
IMAGES=$TESTDATA/images
CORRUPT=$TESTDATA/pngsuite/xc1n0g08.png

T=$(mktemp -d "${TMPDIR:-/tmp}/test-cli.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
cd "$T" || exit 1


lines () {
  wc -l <"$1" | tr -d ' '
}

# One error line on stderr that names $1.
one_error_line () {
  [ "$(lines "$T/err.log")" = 1 ] && grep -q "^entroscope-cli: .*$1" "$T/err.log"
}

is_png () {
  [ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] &&
    [ "$(od -An -c -j12 -N4 "$1" | tr -d ' \n')" = IHDR ]
}

# "WIDTH HEIGHT" from the IHDR chunk.
png_size () {
  od -An -tu1 -j16 -N8 "$1" |
    awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4, $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }'
}

# "DEPTH COLOURTYPE" from the IHDR chunk.
png_depth_type () {
  od -An -tu1 -j24 -N2 "$1" | awk '{ print $1, $2 }'
}

# A text matrix "W H"-shaped as given: first line "H W", then H rows of W
# values printed with 5 decimals in 0..MAX.
text_matrix_ok () {
  awk -v h="$2" -v w="$3" -v max="$4" '
    NR == 1 { if ($0 != h " " w) bad = 1; next }
    {
      if (NF != w) bad = 1
      for (i = 1; i <= NF; i++)
        if ($i !~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9]$/ || $i + 0 > max) bad = 1
      rows++
    }
    END { exit (bad || rows != h) }' "$1"
}

# Only the named files in a folder: no temporary file left behind.
only_files () {
  dir=$1
  shift
  [ "$(ls -A "$dir" | sort | tr '\n' ' ')" = "$(printf '%s\n' "$@" | sort | tr '\n' ' ')" ]
}

set -- $(png_size "$SAMPLE")
W=$1
H=$2
stem=$(basename "$SAMPLE" .png)

# -- entropy, defaults --
mkdir run && cd run || exit 1
cli entropy "$SAMPLE"
check "entropy with defaults exits 0 and says where it wrote" \
  [ "$rc" = 0 -a "$(cat "$T/out.log")" = "wrote $stem-entropy.png" -a ! -s "$T/err.log" ]
check "the default output is a PNG" is_png "$stem-entropy.png"
check "the entropy PNG is ${W}x$H like its input" [ "$(png_size "$stem-entropy.png")" = "$W $H" ]
check "the entropy PNG is an 8-bit palette PNG (the colormap's 256 colours)" \
  [ "$(png_depth_type "$stem-entropy.png")" = "8 3" ]
check "no temporary file is left next to the output" only_files . "$stem-entropy.png"

cli entropy --format txt "$SAMPLE"
check "--format txt writes a ${H}-row text matrix of %.5f values in 0..ln 16" \
  text_matrix_ok "$stem-entropy.txt" "$H" "$W" 2.77259
cli entropy "$SAMPLE" -o named.txt
check "an -o name ending in .txt implies the text matrix" text_matrix_ok named.txt "$H" "$W" 2.77259
cli entropy --units bits --format txt "$SAMPLE" -o bits.txt
check "--units bits gives values up to log2 16" text_matrix_ok bits.txt "$H" "$W" 4.00001

cli entropy --raw16 "$SAMPLE" -o raw.png
check "--raw16 writes a 16-bit gray PNG" [ "$rc" = 0 -a "$(png_depth_type raw.png)" = "16 0" ]
cli entropy --colorbar "$SAMPLE" -o bar.png
set -- $(png_size bar.png)
check "--colorbar widens the PNG" [ "$rc" = 0 -a "$1" -gt "$W" ]
cli quantize "$SAMPLE"
check "quantize writes a PNG of the input's size" [ "$rc" = 0 -a "$(png_size "$stem-quantize.png")" = "$W $H" ]
cli sharpen -q "$SAMPLE"
check "-q prints nothing" [ "$rc" = 0 -a ! -s "$T/out.log" -a -f "$stem-sharpen.png" ]
cli clahe --clip 2 --tiles 8x4 "$SAMPLE" -o clahe.png
check "clahe --clip --tiles writes a PNG of the input's size" [ "$rc" = 0 -a "$(png_size clahe.png)" = "$W $H" ]
cli clahe --tiles 8 "$SAMPLE"
check "clahe --tiles without rows is a usage error naming the form" eval '[ "$rc" = 1 ] && one_error_line "COLUMNSxROWS"'
cli clahe --tiles 8x65 "$SAMPLE"
check "clahe --tiles past 64 is a usage error naming tile-rows" eval '[ "$rc" = 1 ] && one_error_line "tile-rows"'

# A 16-bit input's CLAHE result is 16-bit, and every export holds its own
# values: a 16-bit gray PNG (the gray map over the result's 0..65535), a
# 16-bit TIFF, --raw16 with ValueScale 1, the text matrix's integers.
G16=$TESTDATA/pngsuite/basn0g16.png
cli clahe --clip 2 --tiles 3x5 "$G16" -o clahe16.png
check "clahe of a 16-bit PNG writes a 16-bit gray PNG" [ "$rc" = 0 -a "$(png_depth_type clahe16.png)" = "16 0" ]
cli clahe --clip 2 --tiles 3x5 "$G16" -o clahe8.png --colorbar
check "clahe --colorbar of a 16-bit PNG is an 8-bit RGB picture" [ "$rc" = 0 -a "$(png_depth_type clahe8.png)" = "8 2" ]
cli clahe "$SAMPLE" -o clahe-camera.png
check "clahe of an 8-bit PNG writes an 8-bit gray PNG" [ "$rc" = 0 -a "$(png_depth_type clahe-camera.png)" = "8 0" ]
if /usr/bin/python3 -c "import numpy, cv2" 2>/dev/null; then
  /usr/bin/python3 - "$CLI" >clahe-cv2.log 2>&1 <<'PY'
import subprocess, sys
import cv2, numpy as np

cli = sys.argv[1]
rng = np.random.default_rng(23)
# Awkward sizes (the grid does not divide them): OpenCV's reflect-101 pad.
images = {
    "u16": (rng.integers(0, 4096, (67, 93)) * 13 + rng.integers(0, 13, (67, 93))).astype(np.uint16),
    "u8": rng.integers(0, 256, (41, 29), dtype=np.uint8),
}
bad = []
for name, image in images.items():
    cv2.imwrite(f"{name}.png", image)
    expected = cv2.createCLAHE(2.0, (4, 3)).apply(image)
    for out, extra in (("png", []), ("tif", []), ("txt", []), ("raw.png", ["--raw16"])):
        path = f"{name}-clahe.{out}"
        subprocess.run([cli, "clahe", "--clip", "2", "--tiles", "4x3", f"{name}.png", "-o", path, *extra], check=True,
                       capture_output=True)
        if out == "txt":
            got = np.loadtxt(path, skiprows=1, dtype=np.int64).reshape(image.shape)
        else:
            got = cv2.imread(path, cv2.IMREAD_UNCHANGED)
        raw16 = out == "raw.png" and image.dtype == np.uint8
        if raw16:  # 0..255 spread over 0..65535: each value times 257
            expected_here = expected.astype(np.uint16) * 257
        else:
            expected_here = expected
        if got is None or got.shape != image.shape or (out != "txt" and got.dtype != expected_here.dtype) \
                or not np.array_equal(got, expected_here):
            bad.append(f"{name} -> {path}")
print("different from cv2.createCLAHE(2, (4, 3)).apply():", ", ".join(bad) if bad else "none")
sys.exit(1 if bad else 0)
PY
  check "clahe's PNG, TIFF, text and --raw16 exports of 8- and 16-bit PNGs equal cv2.createCLAHE().apply()" \
    [ $? = 0 ]
else
  skip "/usr/bin/python3 cannot import numpy and cv2" "clahe's exports equal cv2.createCLAHE().apply()"
fi

# skimage's kernel_size and nbins, MATLAB's NBins: the options of their
# presets alone, checked against scikit-image itself.
cli clahe --kernel-size 64 "$SAMPLE" -o kernel.tif
check "clahe --kernel-size without --like skimage is a usage error naming the preset" \
  eval '[ "$rc" = 1 ] && one_error_line "kernel-size.*--like skimage"'
cli clahe --like matlab --kernel-size 64x32 "$SAMPLE" -o kernel.tif
check "clahe --like matlab --kernel-size is a usage error naming --tiles" \
  eval '[ "$rc" = 1 ] && one_error_line "kernel-size.*--tiles"'
cli clahe --nbins 128 "$SAMPLE" -o nbins.png
check "clahe --nbins without a preset is a usage error naming the presets" \
  eval '[ "$rc" = 1 ] && one_error_line "nbins.*--like skimage or --like matlab"'
cli clahe --like skimage --kernel-size 0x32 "$SAMPLE" -o kernel.tif
check "clahe --kernel-size 0x32 is a usage error naming the form" eval '[ "$rc" = 1 ] && one_error_line "K or HxW"'
cli clahe --like skimage --nbins 1 "$SAMPLE" -o kernel.tif
check "clahe --nbins 1 is a usage error naming the range" eval '[ "$rc" = 1 ] && one_error_line "2\.\.65536"'
cli clahe --like matlab --nbins 64 "$SAMPLE" -o nbins.png
check "clahe --like matlab --nbins writes the image" [ "$rc" = 0 -a "$(png_size nbins.png)" = "$W $H" ]
cli clahe -q --like skimage --kernel-size 64x32 --nbins 128 "$SAMPLE" -o kernel.tif
check "clahe --like skimage --kernel-size --nbins records them in the export" \
  eval '[ "$rc" = 0 ] && grep -aq "Definition=like skimage · kernel 64×32 · 128 bins" kernel.tif'
if /usr/bin/python3 -c "import numpy, skimage, PIL" 2>/dev/null; then
  /usr/bin/python3 - "$SAMPLE" kernel.tif >kernel.log 2>&1 <<'PY'
import sys
import numpy as np
from PIL import Image
from skimage import exposure

image = np.array(Image.open(sys.argv[1]))
got = np.array(Image.open(sys.argv[2]))
expected = exposure.equalize_adapthist(image, kernel_size=(64, 32), clip_limit=0.01, nbins=128)
difference = np.abs(got.astype(np.float64) - expected).max()
print("largest difference from equalize_adapthist:", difference)
sys.exit(0 if got.shape == expected.shape and difference <= 1e-6 else 1)
PY
  check "clahe --like skimage --kernel-size 64x32 --nbins 128 is equalize_adapthist's within 1e-6" [ $? = 0 ]
else
  skip "/usr/bin/python3 cannot import numpy, skimage and PIL" "clahe --like skimage equals equalize_adapthist"
fi

# -- calibration: an input's pixel size is recorded by its results --
cli entropy -q "$IMAGES/astronaut.png" -o calibrated.tif
cli entropy -q calibrated.tif -o calibrated-again.tif
cli entropy -q "$IMAGES/astronaut.png" -o calibrated.png
cli entropy -q "$IMAGES/brick.png" -o uncalibrated.tif
if /usr/bin/python3 -c "import PIL" 2>/dev/null; then
  # astronaut.png's pHYs is 11811 pixels a metre (300 dpi): 118.11 a centimetre.
  /usr/bin/python3 - calibrated.tif calibrated-again.tif calibrated.png uncalibrated.tif >calibration.log 2>&1 <<'PY'
import sys
from PIL import Image

def tags(path):
    tags = Image.open(path).tag_v2
    return tags.get(282), tags.get(296)

(tif_x, tif_unit), (again_x, again_unit), (plain_x, plain_unit) = (tags(p) for p in (sys.argv[1], sys.argv[2], sys.argv[4]))
png_dpi = Image.open(sys.argv[3]).info.get("dpi")
print(tif_x, tif_unit, again_x, again_unit, png_dpi, plain_x, plain_unit)
ok = tif_unit == 3 and abs(float(tif_x) - 118.11) < 1e-6 and again_unit == 3 and abs(float(again_x) - 118.11) < 1e-4
ok = ok and png_dpi is not None and abs(png_dpi[0] - 11811 * 0.0254) < 1e-3 and plain_x is None and plain_unit is None
sys.exit(0 if ok else 1)
PY
  check "a result TIFF and PNG of a 300 dpi PNG record its pixel size (resolution in cm, pHYs), and a TIFF passes it on" [ $? = 0 ]
else
  skip "/usr/bin/python3 cannot import PIL" "results record their input's pixel size"
fi

# -- determinism and backends --
for op in equalize sharpen entropy; do
  "$CLI" "$op" -q "$SAMPLE" -o a.png && "$CLI" "$op" -q "$SAMPLE" -o b.png
  check "$op: two runs are byte-identical" cmp -s a.png b.png
done
# u8 results are bit-identical on every backend; entropy only within 1e-5
# (DESIGN.md §1), so its printed values may differ in the last decimal.
for op in equalize sharpen; do
  "$CLI" "$op" -q --backend cpu "$SAMPLE" -o cpu.png && "$CLI" "$op" -q --backend auto "$SAMPLE" -o auto.png
  check "$op: --backend cpu and --backend auto give identical files" cmp -s cpu.png auto.png
done
"$CLI" entropy -q --backend cpu --format txt "$SAMPLE" -o cpu.txt &&
  "$CLI" entropy -q --backend auto --format txt "$SAMPLE" -o auto.txt
check "entropy text: --backend cpu and auto agree within 1e-5 (plus printing)" \
  awk 'NR == FNR { for (i = 1; i <= NF; i++) v[FNR, i] = $i; next }
       { for (i = 1; i <= NF; i++) { d = $i - v[FNR, i]; if (d < 0) d = -d; if (d > 1.5e-5) exit 1 } }
       END { if (FNR < 2) exit 1 }' cpu.txt auto.txt

cli entropy --backend cuda "$SAMPLE" -o cuda.png
if [ "$rc" = 0 ]; then
  check "--backend cuda works where CUDA is usable" is_png cuda.png
else
  check "--backend cuda without a usable device exits 3 with one line" \
    eval '[ "$rc" = 3 ] && [ "$(lines "$T/err.log")" = 1 ]'
fi

cli entropy --timings --backend cpu "$SAMPLE" -o timed.png
check "--timings prints kernel and wall ms on stderr" \
  eval 'grep -q "kernel .* ms" "$T/err.log" && grep -q "wall .* ms" "$T/err.log" && grep -q "Mpx/s" "$T/err.log"'
check "without --metrics the default output has no metrics" eval '! grep -q "B/px" "$T/err.log"'
cli entropy --metrics --backend cpu "$SAMPLE" -o metrics.png
check "--metrics prints a heading and a row of the CPU model: 1 B/px read, 4 written, no transfer" \
  eval 'grep -q "^metrics .*rd B/px .*wr B/px .*model MB .*ach GB/s .*%copy" "$T/err.log" \
        && grep -Eq "camera.png +1\.00 +4\.00 +[0-9.]+ +[0-9.]+ +[0-9]+ +- .* none " "$T/err.log"'
cli bench --backend cpu --sizes 64 --ops sharpen --repeats 1 --metrics
check "bench --metrics adds the metrics columns beside each time" \
  eval 'grep -q "kernel ms .*rd B/px .*ach GB/s" "$T/out.log" && grep -Eq "^sharpen +64 .* 1\.00 +1\.00 " "$T/out.log"'
check "plain --metrics says nothing of hardware counters" eval '! grep -q "hardware" "$T/out.log"'
cli entropy --metrics=hw --backend cpu "$SAMPLE" -o metrics-hw.png
check "--metrics=hw on the CPU: the model's row, and one line that the counters are not available" \
  eval '[ "$rc" = 0 ] && grep -Eq "camera.png +1\.00 +4\.00 " "$T/err.log" \
        && [ "$(grep -c "hardware counters: not available: .*CPU.*; the model alone is shown" "$T/err.log")" = 1 ]'
cli bench --backend cpu --sizes 64,96 --ops sharpen --repeats 1 --metrics=hw
check "bench --metrics=hw on the CPU: every row, and the not-available line once" \
  eval '[ "$rc" = 0 ] && [ "$(grep -Ec "^sharpen +(64|96) " "$T/out.log")" = 2 ] \
        && [ "$(grep -c "hardware counters: not available" "$T/out.log")" = 1 ]'
cd "$T" || exit 1

# -- text matrix input --
printf '3 4\n0 1 2 3\n4 5 6 7\n15 15 0 0\n' >matrix.txt
cli entropy matrix.txt -o matrix-out.txt
check "a text matrix input gives a 3x4 entropy matrix" text_matrix_ok matrix-out.txt 3 4 2.77259
printf '2 2\n0 1\n2 16\n' >bad-matrix.txt
cli entropy bad-matrix.txt -o bad-out.txt
check "a text matrix value >= levels exits 2 with one line" \
  eval '[ "$rc" = 2 ] && one_error_line bad-matrix.txt && [ ! -e bad-out.txt ]'

# -- batch --
mkdir batch
cp "$IMAGES/brick.png" "$CORRUPT" .
cli equalize "$SAMPLE" "$(basename "$CORRUPT")" brick.png -o batch/
check "a batch with one corrupt input exits 2" [ "$rc" = 2 ]
check "the other inputs of the batch are written" \
  only_files batch "$stem-equalize.png" brick-equalize.png
check "the failure is one line naming the corrupt file" one_error_line "$(basename "$CORRUPT")"
check "each written output is reported" [ "$(grep -c '^wrote batch/' "$T/out.log")" = 2 ]
cli sharpen "$SAMPLE" brick.png -o batch
check "an existing folder without a trailing slash takes a batch" \
  eval '[ "$rc" = 0 ] && [ -f batch/brick-sharpen.png ]'
cli sharpen "$SAMPLE" brick.png -o single.png
check "several inputs with -o FILE is a usage error" eval '[ "$rc" = 1 ] && [ ! -e single.png ]'

# -- usage errors (in.png: a copy of the sample, so that the words split safely) --
cp "$SAMPLE" in.png
for args in "entropy --window 4 in.png" "entropy --window 257 in.png" "entropy --window 5x in.png" \
            "entropy --window 5.0 in.png" "entropy --levels 1 in.png" "entropy --levels 65537 in.png" \
            "sharpen --amount -1 in.png" "sharpen --amount 10.5 in.png" "sharpen --amount nan in.png" \
            "entropy --bogus in.png" "entropy -z in.png" "entropy" "frobnicate in.png" \
            "entropy --colormap nope in.png" "entropy --backend gpu in.png" "entropy --max-pixels -5 in.png" \
            "entropy --raw16 --format txt in.png" "entropy -o" "info --sizes 64" "bench --repeats 0" \
            "entropy --metrics=all in.png" "info --metrics=hw"; do
  cli $args
  check "usage error exits 1 with one line: $args" eval '[ "$rc" = 1 ] && [ "$(lines "$T/err.log")" = 1 ]'
done
cli
check "no command is a usage error" [ "$rc" = 1 ]
cli entropy --window 4 in.png
check "a parameter outside the table's range names the option and the range" \
  eval '[ "$rc" = 1 ] && one_error_line "--window=4: .*odd, 3\.\.255 (default 5)"'
cli quantize -q --window 7 --amount 2 in.png -o quantized.png
check "a valid parameter that the operation does not read is accepted" \
  eval '[ "$rc" = 0 ] && [ -f quantized.png ]'

# -- input and output errors --
cli entropy no-such-file.png
check "a missing input exits 2 with one line naming it" \
  eval '[ "$rc" = 2 ] && one_error_line no-such-file.png'
cli entropy "$CORRUPT" -o corrupt.png
check "a corrupt PNG exits 2 with one line" \
  eval '[ "$rc" = 2 ] && one_error_line "$(basename "$CORRUPT")" && [ ! -e corrupt.png ]'
cli entropy --max-pixels 1000 "$SAMPLE" -o big.png
check "--max-pixels refuses a larger image with exit 2" eval '[ "$rc" = 2 ] && [ ! -e big.png ]'
cli entropy "$SAMPLE" -o "$T/no-such-dir/out.png"
check "writing into a missing folder exits 2 with one line" \
  eval '[ "$rc" = 2 ] && [ "$(lines "$T/err.log")" = 1 ] && [ ! -e "$T/no-such-dir" ]'
cli equalize "$SAMPLE" "$IMAGES/brick.png" -o "$T/no-such-dir/"
check "a batch into a missing folder exits 2 with one line" \
  eval '[ "$rc" = 2 ] && [ "$(lines "$T/err.log")" = 1 ] && [ ! -e "$T/no-such-dir" ]'

mkdir ro
chmod 555 ro
if touch ro/probe 2>/dev/null; then
  rm -f ro/probe
  skip "running as root: a read-only folder is writable" "writing into a read-only folder exits 2"
else
  cli entropy "$SAMPLE" -o ro/out.png
  check "writing into a read-only folder exits 2 and leaves nothing there" \
    eval '[ "$rc" = 2 ] && [ -z "$(ls -A ro)" ]'
fi
chmod 755 ro

mkdir keep
"$CLI" entropy -q "$SAMPLE" -o keep/out.png
cp keep/out.png keep.orig
ES_INJECT_WRITE_FAILURE=1 "$CLI" entropy --colormap magma "$SAMPLE" -o keep/out.png >"$T/out.log" 2>"$T/err.log"
rc=$?
check "a failing write exits 2 with one line" eval '[ "$rc" = 2 ] && [ "$(lines "$T/err.log")" = 1 ]'
check "a failing write leaves the existing output untouched and no temporary file" \
  eval 'cmp -s keep/out.png keep.orig && only_files keep out.png'

# -- info, bench, help, version --
cli info
check "info exits 0 and mentions the CPU" eval '[ "$rc" = 0 ] && grep -q CPU "$T/out.log"'
check "info lists every operation" \
  eval 'grep -q entropy "$T/out.log" && grep -q equalize "$T/out.log" && grep -q sharpen "$T/out.log"'

# info for one job: which variants run it, which cannot and why, which run it slowly.
# The lines under one variant of info's listing (VARIANT).
variant_block () {
  awk -v id="$1" '$1 == id || ($1 == "*" && $2 == id) { f = 1; next } /^  [ *] [a-z]/ { f = 0 } f' "$T/out.log"
}
cli info entropy --disk 5 --border symmetric --levels 256
check "info takes an operation and the job's definition options" \
  eval '[ "$rc" = 0 ] && grep -q "^  entropy:" "$T/out.log" && ! grep -q "^  sharpen:" "$T/out.log"'
if grep -q "^Backends compiled:.*cuda" "$T/out.log"; then
  check "info names the job and the variant that runs it" \
    grep -q "This job (disk r=5 · symmetric · 256 bins · nats) runs on general by default" "$T/out.log"
  check "info says why fast cannot run a disk, and that general runs it" \
    eval 'variant_block fast | grep -q "Not for this job: computes a square window.*; general runs it\.$"'
  check "info lets general run every definition" \
    eval '[ -z "$(variant_block general | grep "Not for this job")" ]'
  cli info entropy --window 11
  check "info says that fast runs an 11x11 window on a slow path" \
    eval '[ "$rc" = 0 ] && variant_block fast | grep -q "Runs this job on a slow path: past 9×9 or 16 levels" &&
          ! grep "Not for this job" "$T/out.log" | grep -vq "computes 3-D windows only"'
  cli info entropy
  check "info flags no 2-D variant for the default job (the volume variants say why)" \
    eval '[ "$rc" = 0 ] && ! grep "Not for this job\|slow path" "$T/out.log" | grep -vq "computes 3-D windows only" &&
          grep -q "This job (5×5 · clip · 16 bins · nats) runs on fast by default" "$T/out.log"'
  if grep -q "^Backend in use: *cuda" "$T/out.log"; then
    check "info lists each variant's kernels with their registers, memory and occupancy" \
      eval 'variant_block fast | grep -q "(the lesson.s): [0-9]* registers, [0-9]* B shared, [0-9]* B local a thread, .*occupancy [0-9]*%" &&
            variant_block naive | grep -q "registers"'
  else
    check "info says in one line that kernel resources need a CUDA device" \
      eval '[ "$(grep -c "need a CUDA device" "$T/out.log")" = 1 ] && ! grep -q "B local a thread" "$T/out.log"'
  fi
else
  for what in "info names the job and the variant that runs it" "info says why fast cannot run a disk" \
              "info lets general run every definition" "info says that fast runs an 11x11 window on a slow path" \
              "info flags no 2-D variant for the default job (the volume variants say why)" \
              "info lists each variant's kernels, or says in one line that they need a CUDA device"; do
    skip "this build has no CUDA variants" "$what"
  done
fi
cli info entropy --mask no-such-mask.png
check "info reads --mask as a job would: a missing one exits 2 naming it" \
  eval '[ "$rc" = 2 ] && one_error_line no-such-mask.png'
cli info frobnicate
check "info takes only an operation's name as operand" eval '[ "$rc" = 1 ] && one_error_line frobnicate'

cli bench --sizes 64 --repeats 2 --csv bench.csv
check "bench exits 0" [ "$rc" = 0 ]
check "bench writes a CSV with a header row" \
  eval 'head -n 1 bench.csv | grep -q "^op,size,backend,variant,"'
# One row per default operation, and equalize once more on a low-contrast image.
cpu_rows=$(awk -F, 'NR > 1 && NF == 21 && $2 == 64 && $3 == "cpu" { n++ } END { print n + 0 }' bench.csv)
check "the CSV has a 21-field row for each operation and image on the CPU" [ "$cpu_rows" = 5 ]
check "the CSV ends with a column per parameter, empty where the operation reads none" \
  eval 'head -n 1 bench.csv | grep -q ",image,window,levels,amount,clip,tile-columns,tile-rows$" &&
        grep -q "^entropy,64,cpu,.*,random,5,16,,,,$" bench.csv && grep -q "^sharpen,64,cpu,.*,random,,,1,,,$" bench.csv'
check "bench prints a table on stdout" eval 'grep -q "^entropy  *64 " "$T/out.log"'
cli bench --sizes 16 --ops sharpen --repeats 1 --backend cpu --amount 0.5
check "bench's header gives the parameters that its operations read" \
  eval '[ "$rc" = 0 ] && head -n 1 "$T/out.log" | grep -q ", amount 0.5; " && ! head -n 1 "$T/out.log" | grep -q window'
# Lists of windows and levels: one row per combination of the parameters an operation reads.
cli bench --backend cpu --ops entropy,sharpen --sizes 32 --repeats 1 --windows 3,31 --levels=2,17,256 --csv lists.csv
check "bench --windows and --levels lists exit 0 and name every value in the header" \
  eval '[ "$rc" = 0 ] && [ ! -s "$T/err.log" ] && head -n 1 "$T/out.log" | grep -q "window 3/31, levels 2/17/256, amount 1"'
combos=$(awk -F, 'NR > 1 && $1 == "entropy" && $2 == 32 { print $16 "x" $17 }' lists.csv | tr '\n' ' ')
check "bench times entropy at each window and level count (${combos})" \
  [ "$combos" = "3x2 3x17 3x256 31x2 31x17 31x256 " ]
check "bench times sharpen, which reads neither, once" \
  eval '[ "$(awk -F, '"'"'NR > 1 && $1 == "sharpen"'"'"' lists.csv | wc -l | tr -d " ")" = 1 ]'
check "bench's table gives window and levels columns" \
  eval 'grep -q " window levels amount  *clip tile-columns tile-rows$" "$T/out.log" &&
        grep -q "^entropy .* 31 *256 *- *- *- *-$" "$T/out.log"'
cli bench --backend cpu --ops entropy --sizes 16 --repeats 1 --window 3,5,7
check "bench's --window also takes a list" \
  eval '[ "$rc" = 0 ] && [ "$(grep -c "^entropy " "$T/out.log")" = 3 ]'
cli bench --backend cpu --ops sharpen --sizes 16 --repeats 1 --devices 0
check "bench takes --devices, for multi-GPU figures (the CPU ignores it)" \
  eval '[ "$rc" = 0 ] && grep -q "^sharpen  *16 " "$T/out.log"'
cli bench --sizes 16 --windows 3,4
check "bench --windows with an even window is a usage error naming it" eval '[ "$rc" = 1 ] && one_error_line "window 4"'
cli bench --sizes 16 --levels 16,1
check "bench --levels with a level count out of range is a usage error" eval '[ "$rc" = 1 ] && one_error_line "levels"'
cli bench --sizes 16 --levels 16,16
check "bench --levels with a value listed twice is a usage error" eval '[ "$rc" = 1 ] && one_error_line "twice"'
cli bench --sizes 16 --windows 3,,5
check "bench --windows with an empty item is a usage error" eval '[ "$rc" = 1 ] && one_error_line "windows"'
cli entropy --windows 3,5 "$SAMPLE"
check "--windows applies to bench only" eval '[ "$rc" = 1 ] && one_error_line "windows"'
cli entropy --window 3,5 "$SAMPLE"
check "entropy takes one window, not a list" eval '[ "$rc" = 1 ] && one_error_line "window"'

# -- bench --image: es_compare_variants on one file, as the window's Compare Variants view --
cli bench --image "$SAMPLE" --ops entropy,sharpen --repeats 3 --backend cpu --csv image.csv
check "bench --image exits 0 and writes nothing on stderr" [ "$rc" = 0 -a ! -s "$T/err.log" ]
check "bench --image names the image and its size" eval 'grep -q "^# $stem.png: ${W}x$H, " "$T/out.log"'
# Each row: op backend variant repeats kernel wall floor xfloor window levels amount label; on
# the CPU one row per operation, its single implementation, with positive medians, kernel <=
# wall (each run's kernel time is part of its wall time), and no floor.
image_rows=$(awk '$1 == "entropy" || $1 == "sharpen" {
    if ($2 == "cpu" && $3 == "openmp" && $4 == 3 && $5 > 0 && $5 <= $6 && $7 == "-" && $8 == "-") n++
    else bad = 1
  } END { print bad ? -1 : n + 0 }' "$T/out.log")
check "bench --image --backend=cpu times each operation's CPU implementation (kernel <= wall)" \
  [ "$image_rows" = 2 ]
check "bench --image writes its CSV" \
  eval '[ "$(head -n 1 image.csv)" = "op,backend,variant,repeats,kernel_ms,wall_ms,floor_ms,floor_multiple,label,window,levels,amount,clip,tile-columns,tile-rows" ] &&
        [ "$(awk -F, '"'"'NR > 1 && $2 == "cpu" && $3 == "openmp" && $4 == 3 && $7 == "" { n++ } END { print n + 0 }'"'"' image.csv)" = 2 ]'
cli bench --image "$SAMPLE" --ops entropy --backend cpu --repeats 1 --windows 3,9 --levels 16,64 --csv image-lists.csv
check "bench --image times every window and level count" \
  eval '[ "$rc" = 0 ] && [ "$(awk -F, '"'"'NR > 1 { print $10 "x" $11 }'"'"' image-lists.csv | tr "\n" " ")" = "3x16 3x64 9x16 9x64 " ]'
# The entropy definition times the variants of that job, as Compare Variants does.
cli bench --image "$SAMPLE" --ops entropy --backend cpu --repeats 1 --disk 3 --border symmetric --binning exact
check "bench --image takes the entropy definition and names it" \
  eval '[ "$rc" = 0 ] && grep -q "^# entropy definition: disk r=3 · symmetric · exact bins · nats$" "$T/out.log" &&
        grep -q "^entropy " "$T/out.log"'
cli bench --image "$SAMPLE" --ops entropy --backend cpu --repeats 1 --mask "$SAMPLE"
check "bench --image reads a mask as a job does" \
  eval '[ "$rc" = 0 ] && grep -q "^# entropy definition: 5×5 · clip · 16 bins · nats · masked$" "$T/out.log"'
cli bench --ops entropy --sizes 64 --disk 3
check "bench without --image refuses a definition (exit 1)" \
  eval '[ "$rc" = 1 ] && one_error_line "bench takes the entropy definition (--disk, --border, --like…) only with --image=FILE"'
cli bench --image "$SAMPLE" --ops equalize --repeats 2
# With CUDA in use the rows are the variants and the floor is measured.
check "bench --image with the default backend gives equalize rows" \
  eval '[ "$rc" = 0 ] && grep -q "^equalize " "$T/out.log"'
cli bench --image "$SAMPLE" --sizes 64
check "bench --image with --sizes is a usage error" eval '[ "$rc" = 1 ] && one_error_line "sizes"'
cli bench --image "$SAMPLE" --variant nope
check "bench --image with one --variant is a usage error" eval '[ "$rc" = 1 ] && one_error_line "variant"'
cli bench --image "$CORRUPT"
check "bench --image of a corrupt file exits 2 naming it" \
  eval '[ "$rc" = 2 ] && one_error_line "$(basename "$CORRUPT")"'
cli bench --image "$SAMPLE" --max-pixels 100
check "bench --image honours --max-pixels" eval '[ "$rc" = 2 ] && one_error_line "limit"'
cli bench "$SAMPLE"
check "bench with an operand points to --image" eval '[ "$rc" = 1 ] && one_error_line "--image"'

# ---- TIFF: written in every build, read with libtiff (ES_HAVE_TIFF from meson) ----
TIFFS=$here/fuzz/corpus/tiff
is_tiff () {
  [ "$(od -An -tx1 -N4 "$1" | tr -d ' \n')" = 49492a00 ]
}
cli entropy "$SAMPLE" -o values.tif
check "-o NAME.tif writes a TIFF" eval '[ "$rc" = 0 ] && is_tiff values.tif'
mkdir tifdir
cli equalize --format tiff "$SAMPLE" -o tifdir/
check "--format tiff names the output STEM-equalize.tif" eval '[ "$rc" = 0 ] && is_tiff tifdir/camera-equalize.tif'
cli entropy --raw16 "$SAMPLE" -o raw.tif
check "--raw16 with a .tif output is a usage error" eval '[ "$rc" = 1 ] && one_error_line "TIFF"'
if [ "${ES_HAVE_TIFF:-0}" = 1 ]; then
  "$CLI" equalize -q --colormap gray "$SAMPLE" -o eq.png
  "$CLI" quantize -q --levels 256 --format txt eq.png -o eq-png.txt
  "$CLI" quantize -q --levels 256 --format txt tifdir/camera-equalize.tif -o eq-tif.txt
  check "an 8-bit TIFF holds the same pixels as the gray PNG" cmp -s eq-png.txt eq-tif.txt
  cli equalize --format tif "$TIFFS/stack3.tif" -o stack-eq.tif
  check "a 3-page TIFF is processed into a 3-page TIFF" \
    eval '[ "$rc" = 0 ] && grep -q "wrote stack-eq.tif (3 pages)" "$T/out.log" && is_tiff stack-eq.tif'
  cli quantize --levels 256 stack-eq.tif -o stack-q.tif
  check "the stack that was written reads back as 3 pages" \
    eval '[ "$rc" = 0 ] && grep -q "(3 pages)" "$T/out.log"'
  cat "$TIFFS/stack3.tif" | "$CLI" equalize --format tif /dev/stdin -o stack-pipe.tif >"$T/out.log" 2>&1; rc=$?
  check "a stack read from a pipe is read once and processed whole" \
    eval '[ "$rc" = 0 ] && grep -q "(3 pages)" "$T/out.log" && cmp -s stack-eq.tif stack-pipe.tif'
  cli entropy "$TIFFS/stack3.tif" -o stack.png
  check "a stack to PNG is refused, naming TIFF (exit 2)" \
    eval '[ "$rc" = 2 ] && one_error_line "stack of 3 pages" && [ ! -e stack.png ]'
  cli entropy "$TIFFS/float32.tif" -o float.tif
  check "float input with NaN and inf: written, with a note that counts each" \
    eval '[ "$rc" = 0 ] && one_error_line "note: 1 NaN sample (no value), 1 infinite sample"'
  cli entropy "$TIFFS/huge-pixels.tif" -o huge.tif
  check "a TIFF over the pixel budget is refused (exit 2)" eval '[ "$rc" = 2 ] && one_error_line "limit" && [ ! -e huge.tif ]'
else
  skip "built without libtiff" "TIFF inputs"
fi

# Entropy definitions (DESIGN.md §1): masks give NaN, presets and shapes are
# recorded, bad values are usage errors.
printf 'P2 4 3 255\n0 10 20 30\n40 50 60 70\n80 90 100 110\n' >def-in.pgm
printf 'P2 4 3 1\n1 1 0 1\n1 1 1 1\n0 1 1 1\n' >def-mask.pgm
cli entropy -q --mask def-mask.pgm --window 3 def-in.pgm -o def-masked.txt
check "--mask: masked pixels are nan in a text matrix, the others numbers" \
  eval '[ "$rc" = 0 ] && [ "$(tr " " "\n" <def-masked.txt | grep -c "^nan$")" = 2 ] &&
        [ "$(tr " " "\n" <def-masked.txt | grep -c "^[0-9]\.[0-9]*$")" = 10 ]'
printf 'P2 3 3 1\n1 1 1\n1 1 1\n1 1 1\n' >def-small-mask.pgm
cli entropy -q --mask def-small-mask.pgm def-in.pgm -o def-bad.txt
check "--mask of another size is refused with one line naming the mask" \
  eval '[ "$rc" != 0 ] && one_error_line "mask" && [ ! -e def-bad.txt ]'
cli bench --image def-in.pgm --ops entropy --backend cpu --repeats 1 --mask def-small-mask.pgm
check "bench --image with a mask of another size exits 2 naming the mask, before any row" \
  eval '[ "$rc" = 2 ] && one_error_line "def-small-mask.pgm: the mask is 3×3, the input def-in.pgm 4×3: they must match" &&
        [ ! -s "$T/out.log" ]'
cli entropy -q --like matlab "$SAMPLE" -o def-matlab.tif
check "--like matlab records its definition in the export" \
  eval '[ "$rc" = 0 ] && grep -aq "Definition=9×9 · symmetric · 256 bins of 8-bit values · bits" def-matlab.tif'
cli entropy -q --disk 2 --border mirror --binning exact --units normalized def-in.pgm -o def-disk.txt
check "--disk, --border, --binning and --units normalized run; values within 0..1" \
  eval '[ "$rc" = 0 ] && text_matrix_ok def-disk.txt 3 4 1'
for args in "--border wrap" "--border constant:x" "--binning range:9:3" "--rect 4x3" "--disk 128" "--like octave"; do
  cli entropy $args def-in.pgm
  check "usage error exits 1 with one line: entropy $args" eval '[ "$rc" = 1 ] && one_error_line "--"'
done

# The 8-bit view (issue 15 item 9): round(v * 255 / maxval), full scale -> 255.
printf 'P2 3 1 1000\n0 500 1000\n' >view-1000.pgm
printf 'P2 4 1 15\n0 7 8 15\n' >view-15.pgm
printf 'P2 2 1 65535\n128 65535\n' >view-16.pgm
cli sharpen -q --amount 0 view-1000.pgm -o view-1000.txt
check "8-bit view of a PGM with maxval 1000: 0 500 1000 -> 0 128 255" \
  eval '[ "$rc" = 0 ] && [ "$(tail -1 view-1000.txt)" = "0 128 255" ]'
cli sharpen -q --amount 0 view-15.pgm -o view-15.txt
check "8-bit view of 4-bit samples: 0 7 8 15 -> 0 119 136 255" \
  eval '[ "$rc" = 0 ] && [ "$(tail -1 view-15.txt)" = "0 119 136 255" ]'
cli sharpen -q --amount 0 view-16.pgm -o view-16.txt
check "8-bit view of 16-bit samples: 128 65535 -> 0 255 (im2uint8)" \
  eval '[ "$rc" = 0 ] && [ "$(tail -1 view-16.txt)" = "0 255" ]'

cli --help
check "--help exits 0" eval '[ "$rc" = 0 ] && [ ! -s "$T/err.log" ]'
missing=
for option in -o --output -q --quiet --window --levels --amount --colormap --raw16 --format --range \
              --rect --disk --footprint --border --binning --mask --like --box --ball --volume --channel --time \
              --units --colorbar --backend --variant --timings --max-pixels --sizes --windows --ops --repeats \
              --csv --image --help --version info bench quantize entropy equalize sharpen "Exit status" \
              Examples; do
  grep -q -e "$option" "$T/out.log" || missing="$missing $option"
done
check "--help mentions every option, the exit status and examples${missing:+ (missing:$missing)}" [ -z "$missing" ]
cp "$T/out.log" help.txt
cli -h
check "-h prints the same help" cmp -s help.txt "$T/out.log"
cli help
check "'help' prints the same help" cmp -s help.txt "$T/out.log"
cli --version
check "--version exits 0 and names the program" \
  eval '[ "$rc" = 0 ] && grep -q "^entroscope-cli [0-9]" "$T/out.log"'

tap_finish
