#!/bin/sh
# SPDX-License-Identifier: MIT
# entroscope-cli on volumes (TAP): multi-page TIFFs and OME-TIFFs read whole for 3-D windows, written as a
# multi-page TIFF or a PNG per plane, the refusals, and the values against scikit-image's 3-D rank.entropy
# where /usr/bin/python3 has it.
# Usage: test-cli-volumes.sh PATH-TO-entroscope-cli

here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
tap_take_cli "$0" "$1"
MAKE="python3 $here/volume-tiff.py"

T=$(mktemp -d "${TMPDIR:-/tmp}/test-cli-volumes.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
cd "$T" || exit 1

# One error line on stderr that names $1.
one_error_line () {
  [ "$(wc -l <"$T/err.log" | tr -d ' ')" = 1 ] && grep -q "^entroscope-cli: .*$1" "$T/err.log"
}

if ! $MAKE probe.tif 1 1 1 || ! "$CLI" quantize -q probe.tif -o probe.txt 2>/dev/null; then
  skip "this build reads no TIFF (or no python3)" "volumes"
  tap_finish
fi

$MAKE vol.tif 7 20 23
$MAKE vol16.tif 5 9 11 --bits 16 --levels 1000

cli entropy --like skimage --ball 2 vol.tif -o ball.tif
check "--ball reads a multi-page TIFF as a volume and writes one page per plane" \
  eval '[ "$rc" = 0 ] && grep -q "^wrote ball.tif (7 planes)$" "$T/out.log"'
cli entropy --like skimage --box 3x3x5 vol.tif -o box.tif
check "--box DxHxW runs on the volume" eval '[ "$rc" = 0 ] && grep -q "(7 planes)" "$T/out.log"'
check "the TIFF records the 3-D definition" grep -q "Definition=ball r=2 · clip · exact bins · bits" ball.tif
cli entropy --rect 3x5 vol.tif -o stack.tif
check "with a 2-D window a multi-page TIFF is still a stack, page by page" \
  eval '[ "$rc" = 0 ] && grep -q "^wrote stack.tif (7 pages)$" "$T/out.log"'
cli entropy --ball 1 vol16.tif -o vol16-out.tif
check "a 16-bit volume is read as its samples" eval '[ "$rc" = 0 ] && grep -q "(5 planes)" "$T/out.log"'

# One PNG heatmap per plane into a folder.
mkdir planes
cli entropy --ball 1 vol.tif -o planes/
check "-o DIR/ writes one PNG heatmap per plane, NAME-z0000.png on" \
  eval '[ "$rc" = 0 ] && [ "$(ls planes | wc -l)" = 7 ] && [ -s planes/vol-entropy-z0000.png ] &&
        [ -s planes/vol-entropy-z0006.png ] && grep -q "vol-entropy-z0006.png (7 planes)" "$T/out.log"'
check "each plane's PNG is a PNG" \
  eval '[ "$(od -An -tx1 -N8 planes/vol-entropy-z0003.png | tr -d " \n")" = 89504e470d0a1a0a ]'
cli entropy --ball 1 --colorbar vol.tif -o one.png
check "-o NAME.png writes NAME-z0000.png ... beside it" \
  eval '[ "$rc" = 0 ] && [ -s one-z0000.png ] && [ -s one-z0006.png ] && [ ! -e one.png ]'

# Refusals: each says what is wrong in one line and writes nothing.
cli entropy --ball 1 --max-pixels 1000 vol.tif -o big.tif
check "a volume over the pixel budget is refused with its numbers before decoding" \
  eval '[ "$rc" != 0 ] && one_error_line "volume 23×20×7 is 3220 voxels, .* over the memory limit of 1000 pixels" &&
        [ ! -e big.tif ]'
$MAKE mixed.tif 4 8 8 --page-size 3:8:9
cli entropy --ball 1 mixed.tif -o mixed-out.tif
check "pages of different sizes are refused naming the page" \
  eval '[ "$rc" != 0 ] && one_error_line "page 3 is 9×8, page 1 8×8: the pages of a volume must agree in size" &&
        [ ! -e mixed-out.tif ]'
$MAKE depths.tif 4 8 8 --page-bits 2:16
cli entropy --ball 1 depths.tif -o depths-out.tif
check "pages of different formats are refused naming the page" \
  eval '[ "$rc" != 0 ] && one_error_line "page 2 holds 16-bit samples, page 1 8-bit" && [ ! -e depths-out.tif ]'
# A page that passes the header checks but cannot be decoded (3-bit
# samples), in the middle: the whole job fails before anything is kept.
$MAKE undecodable.tif 5 8 8 --page-bits 3:3
cli entropy --rect 3x3 undecodable.tif -o undecodable-stack.tif
check "a stack whose middle page cannot be decoded exits 2 naming the file and page, and leaves no file" \
  eval '[ "$rc" = 2 ] && one_error_line "undecodable.tif: page 3: TIFF: " && [ -z "$(ls -A | grep undecodable-)" ]'
cli entropy --ball 1 undecodable.tif -o undecodable-volume.tif
check "so does a volume with that page" \
  eval '[ "$rc" = 2 ] && one_error_line "undecodable.tif: page 3: TIFF: " && [ -z "$(ls -A | grep undecodable-)" ]'
cli entropy --ball 1 vol.tif -o vol.txt
check "a volume is not written as a text matrix" \
  eval '[ "$rc" != 0 ] && one_error_line "a volume of 7 planes is not written as a text matrix" && [ ! -e vol.txt ]'
for bad in 2x3x3 3x3 3x3x65 0x1x1 3x3x3x3; do
  cli entropy --box "$bad" vol.tif -o bad.tif
  check "--box $bad is a usage error (exit 1)" eval '[ "$rc" = 1 ] && one_error_line "--box=$bad: expected DxHxW, odd sides 1..63"'
done
cli entropy --ball 32 vol.tif -o bad.tif
check "--ball past 31 is a usage error (exit 1)" eval '[ "$rc" = 1 ] && one_error_line "--ball=32: expected a radius in 0..31"'
$MAKE mask-small.tif 7 20 22 --ones
cli bench --image vol.tif --repeats 1 --ops entropy
check "bench --image on a multi-page TIFF says it times the first page" \
  eval '[ "$rc" = 0 ] && grep -q "^# vol.tif: page 1 of 7, " "$T/out.log"'
cli bench --image vol.tif --repeats 1 --ops entropy --ball 1
check "bench --image with a 3-D window times the whole volume" \
  eval '[ "$rc" = 0 ] && grep -q "^# vol.tif: 7 planes of " "$T/out.log" &&
        grep -q "^# entropy definition: ball r=1 · clip · 16 bins · nats$" "$T/out.log"'

cli entropy --ball 2 --window 7 vol.tif -o bad.tif
check "two shape options are a usage error naming both (exit 1)" \
  eval '[ "$rc" = 1 ] && one_error_line "--window=7: the window'"'"'s shape is already given by --ball=2" && [ ! -e bad.tif ]'
cli entropy --ball 1 --ball 2 vol.tif -o twice.tif
check "the same shape option twice takes the last" eval '[ "$rc" = 0 ] && grep -q "Definition=ball r=2" twice.tif'

cli entropy --ball 1 --mask mask-small.tif vol.tif -o masked.tif
check "a mask of another size is refused naming the mask file (exit 2)" \
  eval '[ "$rc" = 2 ] && one_error_line "mask-small.tif: the mask is 22×20×7, the input vol.tif 23×20×7: they must match" &&
        [ ! -e masked.tif ]'
$MAKE mask.tif 7 20 23 --levels 2
cli entropy --ball 1 --mask mask.tif vol.tif -o masked.tif
check "a multi-page mask of the volume's size masks it" eval '[ "$rc" = 0 ] && [ -s masked.tif ]'
cp mask.tif mask-z0003.png
cli entropy --ball 1 --mask mask-z0003.png vol.tif -o mask.png
check "a plane file that is the mask is refused before any plane is written" \
  eval '[ "$rc" = 2 ] && one_error_line "mask-z0003.png (plane 3) is the mask mask-z0003.png; nothing was written" &&
        cmp -s mask.tif mask-z0003.png && [ ! -e mask-z0000.png ]'
cli entropy --rect 3x3 --channel 1 vol.tif -o bad.tif
check "--channel without a 3-D window is a usage error" \
  eval '[ "$rc" = 1 ] && one_error_line "--channel chooses the planes of a volume"'
cli entropy --ball 1 --channel 1 vol.tif -o bad.tif
check "--channel of a TIFF that is not OME is refused" \
  eval '[ "$rc" != 0 ] && one_error_line "not an OME-TIFF: it has no channel 1" && [ ! -e bad.tif ]'

# OME-TIFF: Z=4, C=2, T=3 in XYZCT order; plane (z, c, t) holds (x + 3y + 5z + 7c + 11t) mod 8.
$MAKE ome.tif 4 6 7 --ome 2:3
cli entropy --ball 1 ome.tif -o ome-00.tif
check "an OME-TIFF is read as its SizeZ planes (channel 0, time 0)" \
  eval '[ "$rc" = 0 ] && grep -q "(4 planes)" "$T/out.log"'
cli entropy --ball 1 --channel 2 ome.tif -o bad.tif
check "an OME channel out of range is refused with the range" \
  eval '[ "$rc" != 0 ] && one_error_line "OME-TIFF: no channel 2 (it has 2: 0..1)"'
cli entropy --ball 1 --time 3 ome.tif -o bad.tif
check "an OME time point out of range is refused with the range" \
  eval '[ "$rc" != 0 ] && one_error_line "OME-TIFF: no time point 3 (it has 3: 0..2)"'

# A 3-D footprint from a multi-page TIFF, and the job as info describes it.
$MAKE cube.tif 3 3 3 --ones
cli entropy --like skimage --footprint cube.tif vol.tif -o cube-fp.tif
check "--footprint takes a multi-page TIFF as a 3-D footprint" eval '[ "$rc" = 0 ] && grep -q "(7 planes)" "$T/out.log"'
$MAKE even.tif 2 3 3 --ones
cli entropy --footprint even.tif vol.tif -o bad.tif
check "a 3-D footprint of even depth is refused naming its file (exit 2)" \
  eval '[ "$rc" = 2 ] && one_error_line "footprint even.tif: footprint depth 2 is out of range"'
cli info entropy --ball 3
check "info describes a 3-D job" \
  eval '[ "$rc" = 0 ] && grep -q "This job (ball r=3 · clip · 16 bins · nats)" "$T/out.log" &&
        grep -q "Its window is 3-D (123 cells)" "$T/out.log"'
cli equalize --volume vol.tif -o eq.tif
check "--volume gives equalize the whole volume" eval '[ "$rc" = 0 ] && grep -q "(7 planes)" "$T/out.log"'

# The values, against scikit-image's 3-D rank.entropy (like=skimage: clip, exact bins, bits).
if /usr/bin/python3 -c "import numpy, tifffile, skimage" 2>/dev/null; then
  cli entropy --like skimage --box 3x3x3 vol.tif -o cube.tif
  cli entropy --like skimage --ball 1 --channel 1 --time 2 ome.tif -o ome-12.tif
  /usr/bin/python3 - >compare.log 2>&1 <<'PY'
import numpy as np, tifffile
from skimage.filters.rank import entropy
from skimage.morphology import ball, cube
vol = tifffile.imread("vol.tif")
ome = tifffile.imread("ome.tif").reshape(3, 2, 4, 6, 7)
worst = 0.0
for out, image, footprint in (("ball.tif", vol, ball(2)), ("box.tif", vol, np.ones((3, 3, 5), np.uint8)),
                              ("cube.tif", vol, cube(3)), ("cube-fp.tif", vol, cube(3)),
                              ("ome-12.tif", ome[2, 1], ball(1))):
    got = tifffile.imread(out).astype(np.float64)
    want = entropy(image, footprint).astype(np.float64)
    assert got.shape == want.shape, (out, got.shape, want.shape)
    worst = max(worst, float(np.abs(got - want).max()))
print(worst)
assert worst < 1e-5
PY
  compared=$?
  check "ball, box, cube, a 3-D footprint and an OME plane set equal skimage's 3-D rank.entropy (max diff $(tail -1 compare.log))" \
    [ "$compared" = 0 ]
else
  skip "no numpy, tifffile and skimage for /usr/bin/python3" "the values against skimage's 3-D rank.entropy"
fi

tap_finish
