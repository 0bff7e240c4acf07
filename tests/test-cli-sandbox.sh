#!/bin/sh
# SPDX-License-Identifier: MIT
# entroscope-cli --sandbox (app/io/es-sandbox.c): outputs byte for byte those of in-process decoding,
# the same messages for damaged files, and a decoder that crashes, hangs, opens a file or eats memory
# (the helper's test hook ES_TEST_DECODER_FAULT) ends as a clean error naming the file and the cause.
# Usage: test-cli-sandbox.sh PATH-TO-entroscope-cli   (ES_TESTDATA from meson)

here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
tap_take_cli "$0" "$1"
TESTDATA=${ES_TESTDATA:-$here/data}
CAMERA=$TESTDATA/images/camera.png

T=$(mktemp -d "${TMPDIR:-/tmp}/test-cli-sandbox.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
trap 'rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
cd "$T" || exit 1

cli entropy --sandbox -q "$CAMERA" -o probe.png
if [ "$rc" != 0 ] && grep -q "cannot decode in a sandbox" "$T/err.log"; then
  skip "$(cat "$T/err.log")" "entroscope-cli --sandbox"
  tap_finish
fi

# same_both_ways NAME INPUT OP ARGS...: the same output, status and messages with and without --sandbox.
same_both_ways () {
  name=$1 input=$2 op=$3
  shift 3
  "$CLI" "$op" -q "$@" "$input" -o "here-$name" 2>here.err
  here_rc=$?
  "$CLI" "$op" -q --sandbox "$@" "$input" -o "there-$name" 2>there.err
  there_rc=$?
  [ $here_rc = $there_rc ] && cmp -s here.err there.err \
    && { [ $here_rc != 0 ] || cmp -s "here-$name" "there-$name"; }
}

check "entropy of camera.png" same_both_ways e.png "$CAMERA" entropy
check "16-bit PNG (PngSuite basn0g16)" same_both_ways e16.png "$TESTDATA/pngsuite/basn0g16.png" entropy
check "colour PNG with alpha (PngSuite basn6a16)" same_both_ways a.png "$TESTDATA/pngsuite/basn6a16.png" equalize
check "damaged PNG (PngSuite xcrn0g04): the same message" \
  same_both_ways x.png "$TESTDATA/pngsuite/xcrn0g04.png" entropy
"$CLI" entropy -q --format tif "$CAMERA" -o float.tif 2>/dev/null
check "a float TIFF (the CLI's own entropy values)" same_both_ways f.png float.tif entropy
printf '3 4\n0 1 2 3\n4 5 6 7\n1 1 1 1\n' >m.txt
check "text matrix" same_both_ways m.png m.txt entropy --levels 8
printf '2 2\n0 1\n9 1\n' >over.txt
check "text matrix over its levels: the same message" same_both_ways o.png over.txt entropy --levels 8
# Masks and footprints are read in the sandbox too (the faults below show that they are).
"$CLI" quantize -q --levels 2 "$CAMERA" -o mask.png 2>/dev/null
printf '3 3\n0 1 0\n1 1 1\n0 1 0\n' >cross.txt
check "a mask and a footprint" same_both_ways mf.png "$CAMERA" entropy --mask mask.png --footprint cross.txt
check "a float TIFF as a mask" same_both_ways ff.png "$CAMERA" entropy --mask float.tif

if python3 "$here/volume-tiff.py" vol.tif 4 12 13; then
  check "a multi-page TIFF as a volume (3-D job)" same_both_ways v.tif vol.tif entropy --ball 1
  check "a multi-page TIFF as a volume's mask" same_both_ways vm.tif vol.tif entropy --ball 1 --mask vol.tif
  # Stacks page by page: pages in batches, a helper each (es_sandbox_decode_stack).
  check "a stack page by page" same_both_ways s.tif vol.tif entropy --rect 3x5
  python3 "$here/volume-tiff.py" mixed.tif 3 40 50 --bits 16 --page-size 2:21:31 --page-bits 3:8
  check "a stack of pages of two sizes and depths" same_both_ways mixed-out.tif mixed.tif entropy --rect 3x5
  python3 "$here/volume-tiff.py" many.tif 4200 1 2
  check "a stack of 4200 pages (two batches)" same_both_ways many-out.tif many.tif quantize --levels 4
  check "a stack from a pipe, read again for its batches" eval \
    'cat many.tif | "$CLI" quantize -q --sandbox --levels 4 /dev/stdin -o piped.tif && cmp -s piped.tif there-many-out.tif'
  stack_crash () {
    ES_TEST_DECODER_FAULT=crash "$CLI" entropy -q --sandbox --rect 3x5 vol.tif -o crashed.tif 2>"$T/err.log"
    [ $? = 2 ] && grep -q "vol.tif: the decoder crashed (SIGSEGV" "$T/err.log" && [ ! -e crashed.tif ]
  }
  check "a stack whose decoder crashes: exit 2, the cause named" stack_crash
else
  skip "no python3" "multi-page TIFF"
fi

# fault NAME EXIT MESSAGE: the hook's fault gives exit EXIT and "entroscope-cli: camera.png-path: MESSAGE...".
# The time limit is 0.5 s for the hang; the others keep theirs (10 s).
fault () {
  timeout_ms=0
  [ "$1" = hang ] && timeout_ms=500
  ES_TEST_DECODER_FAULT=$1 ES_TEST_SANDBOX_TIMEOUT_MS=$timeout_ms "$CLI" entropy --sandbox --max-pixels 1000000 \
    "$CAMERA" -o fault.png >/dev/null 2>"$T/err.log"
  status=$?
  [ $status = "$2" ] && grep -q "^entroscope-cli: $CAMERA: $3" "$T/err.log" && [ ! -e fault.png ]
}
check "a decoder that crashes: exit 2, the signal named" fault crash 2 "the decoder crashed (SIGSEGV"
check "a decoder that hangs: exit 2 after the time limit" fault hang 2 "the decoder took longer than its time limit of 0.5 s"
check "a decoder that opens /etc/passwd is killed by the filter" fault open 2 "the sandbox stopped the decoder"
# A sanitizer build's helper goes without the address-space limit (its shadow needs terabytes).
if ldd "$CLI" 2>/dev/null | grep -q -e asan -e ubsan; then
  skip "sanitizer build" "a decoder that eats memory meets its address-space limit"
else
  check "a decoder that eats memory meets its address-space limit" fault memory 3 "cannot allocate more than"
fi
# mask_fault OPTION FILE FAULT MESSAGE: a mask or footprint whose decoder crashes or hangs: exit 2, the file named.
mask_fault () {
  ES_TEST_DECODER_FAULT=$3 ES_TEST_SANDBOX_TIMEOUT_MS=500 "$CLI" entropy --sandbox "$1" "$2" "$CAMERA" -o fault.png \
    >/dev/null 2>"$T/err.log"
  status=$?
  [ $status = 2 ] && grep -q "^entroscope-cli: ${1#--} $2: $4" "$T/err.log" && [ ! -e fault.png ]
}
check "a mask whose decoder crashes: exit 2, the mask named" mask_fault --mask mask.png crash "the decoder crashed (SIGSEGV"
check "a mask whose decoder hangs: exit 2, the mask named" \
  mask_fault --mask mask.png hang "the decoder took longer than its time limit of 0.5 s"
check "a footprint whose decoder crashes: exit 2, the footprint named" \
  mask_fault --footprint cross.txt crash "the decoder crashed (SIGSEGV"
# SIGTERM while the decoder hangs: the child is stopped, and the CLI ends at once as interrupted.
ES_TEST_DECODER_FAULT=hang "$CLI" entropy -q --sandbox "$CAMERA" -o term.png 2>/dev/null &
pid=$!
sleep 0.5
t0=$(date +%s%N)
kill -TERM $pid
wait $pid
status=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "SIGTERM during a sandboxed decode ends the CLI in ${ms} ms (exit $status)" \
  eval '[ $status = 143 ] && [ $ms -lt 1000 ] && [ ! -e term.png ]'
check "without --sandbox the hook does nothing (decoding stays in-process)" \
  eval 'ES_TEST_DECODER_FAULT=crash "$CLI" entropy -q "$CAMERA" -o inproc.png'
check "--sandbox is in --help" eval '"$CLI" --help | grep -q -- "--sandbox"'

tap_finish
