#!/bin/sh
# SPDX-License-Identifier: MIT
# entroscope-cli computing and encoding a PNG band by band while it decodes (app/es-stream.c): the
# files are byte for byte those of a whole run (output to stdout, which never streams), for every
# streamable job and export; a file damaged after its first rows gives the whole run's message and
# no output at all. Usage: test-cli-stream.sh PATH-TO-entroscope-cli   (ES_TESTDATA from meson)

here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
tap_take_cli "$0" "$1"
TESTDATA=${ES_TESTDATA:-$here/data}
SUITE=$TESTDATA/pngsuite

T=$(mktemp -d "${TMPDIR:-/tmp}/test-cli-stream.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
cd "$T" || exit 1
mkdir out

# Small bands, so that even PngSuite's 32×32 images go in many; zlib inflating as it reads, which is
# when the CLI streams (with libdeflate it decodes first).
export ES_TEST_STREAM_BAND_ROWS=3 ES_TEST_PNG_ZLIB=1

# same_as_whole NAME INPUT OP ARGS...: the streamed file equals the whole run's, and the run streamed.
same_as_whole () {
  name=$1 input=$2 op=$3
  shift 3
  "$CLI" "$op" --timings -q "$@" "$input" -o "out/$name" 2>"$T/stream.log"
  status=$?
  "$CLI" "$op" -q "$@" "$input" -o - >"$T/whole" 2>/dev/null
  [ $status -eq 0 ] && grep -q "overlapped, band by band" "$T/stream.log" && cmp -s "out/$name" "$T/whole"
}

IMAGE=$TESTDATA/images/astronaut.png
check "entropy, default definition" same_as_whole e.png "$IMAGE" entropy

check "entropy, window 31 (halo 15 over bands of 3 rows)" same_as_whole e31.png "$IMAGE" entropy --window 31
check "entropy, 256 levels, bits" same_as_whole e256.png "$IMAGE" entropy --levels 256 --units bits
check "entropy, disk of radius 4, symmetric border" \
  same_as_whole disk.png "$IMAGE" entropy --disk 4 --border symmetric
check "entropy, rectangle 3x9, constant border" \
  same_as_whole rect.png "$IMAGE" entropy --rect 3x9 --border constant:7
check "entropy with the colorbar" same_as_whole bar.png "$IMAGE" entropy --colorbar
check "entropy to raw16" same_as_whole raw.png "$IMAGE" entropy --raw16
check "entropy to float TIFF" same_as_whole e.tif "$IMAGE" entropy --format tif
check "sharpen" same_as_whole s.png "$IMAGE" sharpen --amount 2
check "sharpen to TIFF" same_as_whole s.tif "$IMAGE" sharpen --format tif

# CLAHE's halo is a tile: on the CPU its tile passes stream (the tiles'
# histograms as rows arrive, then the bands blended); 16-bit and a grid
# finer than the bands too. Its presets, and CUDA, take the image whole.
check "clahe on the CPU" same_as_whole c.png "$IMAGE" clahe --backend cpu --clip 2 --tiles 7x5
check "clahe on the CPU to TIFF, 64x64 tiles" \
  same_as_whole c.tif "$IMAGE" clahe --backend cpu --tiles 64x64 --format tif
check "clahe of a 16-bit PNG on the CPU" same_as_whole c16.png "$SUITE/basn0g16.png" clahe --backend cpu --clip 3
"$CLI" clahe --backend cpu --like skimage -q --timings "$IMAGE" -o out/sk.tif 2>"$T/sk.log"
check "clahe --like skimage (a range over the whole result) does not stream" \
  sh -c "! grep -q 'band by band' '$T/sk.log'"

# Every layout the row-by-row decoder takes, at 32×32.
for f in basn0g08 basn0g16 basn2c08 basn2c16 basn4a08 basn4a16 basn6a08 basn6a16 f01n0g08 f02n0g08 f03n0g08 f04n0g08; do
  check "entropy of $f.png" same_as_whole "$f.png" "$SUITE/$f.png" entropy --window 7
done

# A job that needs the whole image, and a layout decoded by libpng, run whole and give the same file.
"$CLI" equalize -q --timings "$IMAGE" -o out/eq.png 2>"$T/eq.log"
check "equalize (a whole-image histogram) does not stream" sh -c "! grep -q 'band by band' '$T/eq.log'"
"$CLI" entropy -q --range auto --timings "$IMAGE" -o out/auto.png 2>"$T/auto.log"
check "the auto range (the result's own min..max) does not stream" sh -c "! grep -q 'band by band' '$T/auto.log'"

# damaged NAME: the file's damage shows only after its first rows have gone to compute and encode. Same message and status as a whole
# run, and nothing written: no output, no temporary file.
damaged () {
  "$CLI" entropy -q "$1" -o "out/$2" 2>"$T/stream.err"
  status=$?
  "$CLI" entropy -q "$1" -o - >/dev/null 2>"$T/whole.err"
  whole=$?
  [ $status -ne 0 ] && [ $status -eq $whole ] && cmp -s "$T/stream.err" "$T/whole.err" &&
    [ ! -e "out/$2" ] && [ -z "$(ls -A out | grep -v '\.png$\|\.tif$')" ] &&
    [ "$(ls out | wc -l)" -eq "$3" ]
}
size=$(wc -c <"$IMAGE")
before=$(ls out | wc -l)
cp "$IMAGE" end-crc.png
printf '\377' | dd of=end-crc.png bs=1 seek=$((size - 1)) conv=notrunc 2>/dev/null
check "a bad CRC in IEND: no output" damaged end-crc.png end-crc.png "$before"
head -c $((size * 3 / 4)) "$IMAGE" >truncated.png
check "a file cut at 3/4: no output" damaged truncated.png truncated.png "$before"
cp "$IMAGE" mid-crc.png
printf '\000\000' | dd of=mid-crc.png bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
check "damage half way through the image data: no output" damaged mid-crc.png mid-crc.png "$before"

tap_finish
