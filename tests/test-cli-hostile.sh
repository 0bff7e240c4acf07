#!/bin/sh
# SPDX-License-Identifier: MIT
# Hostile use of entroscope-cli (TAP), issue 15: outputs that are inputs, special and long output
# names, endless and foreign inputs, the flat automatic range, signals, and a stdout that fails.
# Usage: test-cli-hostile.sh PATH-TO-entroscope-cli   (ES_SAMPLE, ES_TESTDATA from meson)

here=$(cd "$(dirname "$0")" && pwd)
. "$here/tap.sh"
tap_take_cli "$0" "$1"
SAMPLE=${ES_SAMPLE:-$here/../data/camera.png}

T=$(mktemp -d "${TMPDIR:-/tmp}/test-cli-hostile.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
pids=
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null; done; rm -rf "$T"' EXIT
trap 'exit 1' INT TERM
cd "$T" || exit 1


lines () {
  wc -l <"$1" | tr -d ' '
}

# Exactly one line on stderr, and it is $1 (a fixed string).
error_is () {
  [ "$(lines "$T/err.log")" = 1 ] && [ "$(cat "$T/err.log")" = "$1" ]
}

# One error line on stderr that holds $1 (a fixed string).
one_error_with () {
  [ "$(lines "$T/err.log")" = 1 ] && grep -q -F -e "$1" "$T/err.log"
}

is_png () {
  [ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ]
}

# Only the named files in a folder: no temporary file left behind.
only_files () {
  dir=$1
  shift
  [ "$(ls -A "$dir" | sort | tr '\n' ' ')" = "$(printf '%s\n' "$@" | sort | tr '\n' ' ')" ]
}

# The value of a PNG tEXt chunk, walking the chunks (so that no CRC byte is
# ever mistaken for text).
png_text () {
  od -An -v -tu1 "$2" | awk -v key="$1" '
    { for (i = 1; i <= NF; i++) b[n++] = $i }
    END {
      for (p = 8; p + 8 <= n; p += 12 + len) {
        len = b[p] * 16777216 + b[p + 1] * 65536 + b[p + 2] * 256 + b[p + 3]
        type = sprintf ("%c%c%c%c", b[p + 4], b[p + 5], b[p + 6], b[p + 7])
        if (type != "tEXt") continue
        k = ""; v = ""; q = p + 8; e = q + len
        for (; q < e && b[q] != 0; q++) k = k sprintf ("%c", b[q])
        for (q++; q < e; q++) v = v sprintf ("%c", b[q])
        if (k == key) { print v; exit }
      }
    }'
}

# P5 WIDTH HEIGHT filled with one gray, or with bytes of a file.
make_pgm () {
  printf 'P5 %d %d 255\n' "$2" "$3" >"$1"
  if [ -n "$4" ]; then
    head -c $(($2 * $3)) "$4" >>"$1"
  else
    head -c $(($2 * $3)) /dev/zero | tr '\0' '\200' >>"$1"
  fi
}

# Waits (up to 10 s) until process $1 has $2 open, or blocks opening a FIFO.
wait_blocked () {
  i=0
  while [ $i -lt 100 ]; do
    if ls -l "/proc/$1/fd" 2>/dev/null | grep -q -F "$2"; then return 0; fi
    if [ "$(cat "/proc/$1/wchan" 2>/dev/null)" = wait_for_partner ]; then return 0; fi
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}

# Waits (up to 10 s) for background process $1 and leaves its status in $rc;
# a process still running then is killed, and rc is 999. (Helpers run in the
# background are the processes themselves, never a wrapper such as timeout,
# so that this kill leaves no orphan holding a FIFO or the TAP pipe.)
wait_for () {
  i=0
  while kill -0 "$1" 2>/dev/null && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
  done
  if kill -0 "$1" 2>/dev/null; then
    kill -9 "$1" 2>/dev/null
    wait "$1" 2>/dev/null
    rc=999
  else
    wait "$1"
    rc=$?
  fi
}

# A sanitizer runtime needs terabytes of address space: no ulimit -v then.
sanitized=false
if ldd "$CLI" 2>/dev/null | grep -q -e asan -e ubsan; then sanitized=true; fi
root=false
[ "$(id -u)" = 0 ] && root=true

cp "$SAMPLE" x.png
make_pgm x.pgm 64 48 "$SAMPLE"
"$CLI" entropy -q x.png -o ref.png && "$CLI" entropy -q --format txt x.png -o ref.txt
check "reference outputs" eval 'is_png ref.png && [ -s ref.txt ]'

# ---- 1. an output that is also an input is refused before anything is written ----
mkdir b1 && cd b1 || exit 1
cp ../x.png ../x.pgm .
cli equalize x.pgm x-equalize.png -o ./
check "a batch whose first output would be created as its second input is refused, nothing written" \
  eval '[ "$rc" = 2 ] && one_error_with "x-equalize.png: is also the output of x.pgm; nothing was written" &&
        only_files . x.png x.pgm'
"$CLI" equalize -q x.pgm -o x-equalize.png
cp x-equalize.png ../x-equalize.orig
cli equalize x.pgm x-equalize.png -o ./
check "a batch whose output is an existing input is refused and the input is untouched" \
  eval '[ "$rc" = 2 ] && cmp -s x-equalize.png ../x-equalize.orig && only_files . x.png x.pgm x-equalize.png'
cli equalize x-equalize.png x.pgm -o .
check "the same in the other order" \
  eval '[ "$rc" = 2 ] && cmp -s x-equalize.png ../x-equalize.orig && only_files . x.png x.pgm x-equalize.png'
cli equalize ./x.pgm ../b1/x-equalize.png -o "$T/b1/"
check "the same through other spellings of the names" \
  eval '[ "$rc" = 2 ] && cmp -s x-equalize.png ../x-equalize.orig && only_files . x.png x.pgm x-equalize.png'
cli entropy x.png -o x.png
check "one input as its own output is refused and untouched" \
  eval '[ "$rc" = 2 ] && one_error_with "x.png: is also the output" && cmp -s x.png ../x.png'
ln x.png hard.png
cli entropy x.png -o hard.png
check "a hard link to the input as the output is refused" \
  eval '[ "$rc" = 2 ] && cmp -s x.png ../x.png && cmp -s hard.png ../x.png'
rm hard.png
ln -s x.png soft.png
cli entropy soft.png -o x.png
check "a symbolic link to the output as the input is refused" eval '[ "$rc" = 2 ] && cmp -s x.png ../x.png'
rm soft.png
"$CLI" entropy x.png -o - >>x.png 2>"$T/err.log"
rc=$?
check "-o - with stdout appended to the input is refused" eval '[ "$rc" = 2 ] && cmp -s x.png ../x.png'
mkdir out
cp x.png y.png
cli equalize x.pgm y.png -o out/
check "a batch into another folder still works" \
  eval '[ "$rc" = 0 ] && [ -f out/x-equalize.png ] && [ -f out/y-equalize.png ]'
cd "$T" || exit 1

# ---- 2. special output targets are written straight, never replaced ----
mkdir b2 && cd b2 || exit 1
mkfifo out.fifo
cat out.fifo >fifo-copy.png 2>/dev/null &
reader=$!
pids="$pids $reader"
cli entropy -q ../x.png -o out.fifo
wait_for "$reader"
check "-o FIFO writes into the FIFO, which stays a FIFO" \
  eval '[ "$rc" = 0 ] && [ -p out.fifo ] && cmp -s fifo-copy.png ../ref.png && only_files . out.fifo fifo-copy.png'
ln -s /proc/self/fd/1 to-stdout
"$CLI" entropy -q ../x.png -o to-stdout >via-link.png 2>"$T/err.log"
rc=$?
check "-o LINK to /proc/self/fd/1 writes into stdout; the link stays" \
  eval '[ "$rc" = 0 ] && [ -L to-stdout ] && cmp -s via-link.png ../ref.png'
# A program that renames over its target would replace /dev/stdout itself
# when run as root: then the test names stdout through /dev/fd/1, which no
# rename can reach (it lies in /proc).
stdout_name=/dev/stdout
$root && stdout_name=/dev/fd/1
"$CLI" entropy ../x.png -o $stdout_name 2>"$T/err.log" | cat >via-dev-stdout.png
check "-o $stdout_name into a pipe: the PNG alone, no \"wrote\" line inside it" cmp -s via-dev-stdout.png ../ref.png
"$CLI" entropy ../x.png -o - >dash.png 2>"$T/err.log"
rc=$?
check "-o - writes the PNG to stdout and nothing else" \
  eval '[ "$rc" = 0 ] && cmp -s dash.png ../ref.png && [ ! -s "$T/err.log" ]'
"$CLI" entropy --format txt ../x.png -o - >dash.txt 2>"$T/err.log"
check "-o - --format txt writes the text matrix to stdout" cmp -s dash.txt ../ref.txt
cli entropy ../x.png ../x.pgm -o -
check "several inputs with -o - is a usage error" [ "$rc" = 1 ]
# As root, device nodes of our own, so that a program that replaces them cannot harm /dev.
if $root; then
  null=$T/b2/null
  full=$T/b2/full
  mknod "$null" c 1 3 && mknod "$full" c 1 7
else
  null=/dev/null
  full=/dev/full
fi
if [ -c "$null" ]; then
  cli entropy ../x.png -o "$null"
  check "-o a null device succeeds and leaves it a device" eval '[ "$rc" = 0 ] && [ -c "$null" ]'
else
  skip "no null device" "-o a null device"
fi
if [ -c "$full" ]; then
  cli entropy ../x.png -o "$full"
  check "-o a full device exits 2 with one line saying so, and leaves it a device" \
    eval '[ "$rc" = 2 ] && one_error_with "No space left on device" && [ -c "$full" ]'
else
  skip "no full device" "-o a full device"
fi
cd "$T" || exit 1

# ---- 3. endless and huge inputs are refused from their first bytes, within the limit ----
mkdir b3 && cd b3 || exit 1
cli entropy /dev/zero -o z.png
check "/dev/zero is refused at once (${ms} ms) with exit 2" \
  eval '[ "$rc" = 2 ] && [ "$ms" -lt 2000 ] && one_error_with "/dev/zero: not an image this program reads"'
if ! $sanitized; then
  (ulimit -v 1000000; "$CLI" entropy /dev/zero -o z.png >"$T/out.log" 2>"$T/err.log")
  rc=$?
  check "/dev/zero under a 1 GB memory limit: exit 2 too, no allocation failure" \
    eval '[ "$rc" = 2 ] && one_error_with "not an image"'
else
  skip "a sanitizer runtime needs more address space than the limit" "/dev/zero under a memory limit"
fi
if truncate -s 3G zeros.bin 2>/dev/null; then
  cli entropy zeros.bin -o z.png
  check "a 3 GiB sparse file of zeros is refused at once (${ms} ms)" \
    eval '[ "$rc" = 2 ] && [ "$ms" -lt 2000 ] && one_error_with "zeros.bin: not an image this program reads"'
  rm -f zeros.bin
  printf '2 2\n0 1\n' >holey.txt && truncate -s 3G holey.txt
  cli entropy holey.txt -o z.png
  check "a text matrix in front of a 3 GiB hole fails at its first NUL (${ms} ms)" \
    eval '[ "$rc" = 2 ] && [ "$ms" -lt 2000 ] &&
          one_error_with "holey.txt: text matrix: line 3, column 1: expected a value, found '"'?'"'"'
  rm -f holey.txt
  printf 'P5 1 1 255\n' >big.pgm && truncate -s 5G big.pgm
  cli entropy big.pgm -o z.png
  check "a 5 GiB PGM is refused from its size, unread (${ms} ms)" \
    eval '[ "$rc" = 2 ] && [ "$ms" -lt 2000 ] && one_error_with "big.pgm: file is larger than 4 GiB"'
  rm -f big.pgm
else
  skip "no sparse files here" "huge sparse inputs"
fi
t0=$(date +%s%N)
{ echo "1 1"; yes 0; } 2>/dev/null | {
  if $sanitized; then "$CLI" entropy /dev/stdin -o z.png; else (ulimit -v 2000000; "$CLI" entropy /dev/stdin -o z.png); fi
} >"$T/out.log" 2>"$T/err.log"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
check "an endless text matrix on a pipe stops at its second row (${ms} ms)" \
  eval '[ "$rc" = 2 ] && [ "$ms" -lt 5000 ] && one_error_with "text matrix: line 3, column 1: more than 1 rows"'
for endless in "row:5 5\n:0 :/dev/stdin: text matrix: line 2, column 11: more than 5 values in the row" \
               "header line:5 5 :0 :/dev/stdin: text matrix: line 1, column 5: junk after"; do
  what=${endless%%:*}
  rest=${endless#*:}
  head=${rest%%:*}
  rest=${rest#*:}
  repeat=${rest%%:*}
  want=${rest#*:}
  t0=$(date +%s%N)
  { printf "$head"; yes "$repeat" | tr -d '\n'; } 2>/dev/null | {
    if $sanitized; then "$CLI" entropy /dev/stdin -o z.png; else (ulimit -v 2000000; "$CLI" entropy /dev/stdin -o z.png); fi
  } >"$T/out.log" 2>"$T/err.log"
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
  check "an endless $what on a pipe is refused at its first value too many (${ms} ms), naming the file" \
    eval '[ "$rc" = 2 ] && [ "$ms" -lt 5000 ] && one_error_with "entroscope-cli: $want"'
done
check "nothing was written for the refused inputs" eval '[ -z "$(ls -A)" ]'
cd "$T" || exit 1

# ---- 4. what is not ours is named, by its content ----
mkdir b4 && cd b4 || exit 1
: >empty.png
printf '\377\330\377\340\000\020JFIF\000\001\001\000\000\001\000\001\000\000' >photo.jpg
printf 'II*\000\010\000\000\000\016\000\000\001\003\000\001\000\000\000' >scan.tif
printf 'MM\000*\000\000\000\010\000\016\001\000\000\003\000\000\000\001' >scan-be.tiff
printf 'P6\n2 2\n255\n\001\002\003\004\005\006\007\010\011\012\013\014' >image.ppm
printf 'P1\n2 2\n0 1\n1 0\n' >bits.pbm
printf 'GIF89a\001\000\001\000\200\000\000\000\000\000\377\377\377' >anim.gif
printf 'BM\106\000\000\000\000\000\000\000\066\000\000\000\050\000\000\000\001\000\000\000\001\000\000\000\001\000\030\000' >pic.bmp
printf 'RIFF\044\000\000\000WEBPVP8 \030\000\000\000' >pic.webp
printf '\001\234\363\102\000\177\356\020\125\252\003\201\304\042\220\001\002' >random.png
printf 'Dear reader, this is a letter.\n' >notes.png
# Built with libtiff (ES_HAVE_TIFF from meson), TIFF is read, and these two
# headers without a directory get libtiff's verdict; built with
# libjpeg-turbo (ES_HAVE_JPEG), this JPEG that ends after its JFIF marker
# gets the decoder's.
formats="PNG, PGM"
[ "${ES_HAVE_TIFF:-0}" = 1 ] && formats="$formats, TIFF"
[ "${ES_HAVE_JPEG:-0}" = 1 ] && formats="$formats, JPEG"
formats="$formats, text matrix"
tiff_says="TIFF is not supported ($formats are)"
[ "${ES_HAVE_TIFF:-0}" = 1 ] && tiff_says="TIFF: not a readable TIFF file: Can not read TIFF directory"
jpeg_says="JPEG is not supported ($formats are)"
[ "${ES_HAVE_JPEG:-0}" = 1 ] && jpeg_says="JPEG: file is truncated"
for case in "empty.png:empty file" \
            "photo.jpg:$jpeg_says" \
            "scan.tif:$tiff_says" \
            "scan-be.tiff:$tiff_says" \
            "image.ppm:PPM (P6) is not supported ($formats are)" \
            "bits.pbm:PBM (P1) is not supported ($formats are)" \
            "anim.gif:GIF is not supported ($formats are)" \
            "pic.bmp:BMP is not supported ($formats are)" \
            "pic.webp:WebP is not supported ($formats are)" \
            "random.png:not an image this program reads ($formats)" \
            "notes.png:not an image this program reads ($formats)"; do
  file=${case%%:*}
  says=${case#*:}
  cli entropy "$file" -o out.png
  check "$file: exit 2 and \"$says\"" eval '[ "$rc" = 2 ] && error_is "entroscope-cli: $file: $says"'
done
printf '2 2\n0 1\n1 x\n' >junk.txt
cli entropy junk.txt -o out.png
check "what looks like a text matrix still gets text-matrix errors" \
  eval '[ "$rc" = 2 ] && one_error_with "junk.txt: text matrix: line 3, column 3"'
cd "$T" || exit 1

# ---- 5. --range auto on a constant image: flat, with no noise scale ----
mkdir b5 && cd b5 || exit 1
make_pgm const.pgm 64 48
cli entropy --range auto --raw16 const.pgm -o raw.png
check "raw16 of a constant image records ValueScale 0 ($(png_text ValueScale raw.png))" \
  eval '[ "$rc" = 0 ] && [ "$(png_text ValueScale raw.png)" = 0 ]'
cli entropy --range auto --colormap gray const.pgm -o gray.png
"$CLI" quantize -q --levels 256 --format txt gray.png -o gray.txt
check "its --range auto heatmap is one colour" \
  eval '[ "$rc" = 0 ] && [ "$(awk "NR > 1" gray.txt | tr " " "\n" | sort -u | wc -l)" = 1 ]'
cd "$T" || exit 1

# ---- 6. long names ----
mkdir b6 && cd b6 || exit 1
name255=$(printf '%0251d' 0 | tr 0 n).png
name256=$(printf '%0252d' 0 | tr 0 n).png
cli entropy -q ../x.png -o "$name255"
check "a 255-byte output name is written, no temporary file left" \
  eval '[ "$rc" = 0 ] && is_png "$name255" && only_files . "$name255"'
cli entropy -q ../x.png -o "$name256"
check "a 256-byte output name: exit 2, one line ending in the reason" \
  eval '[ "$rc" = 2 ] && [ "$(lines "$T/err.log")" = 1 ] && grep -q "File name too long$" "$T/err.log"'
deep=$(printf 'a-folder-that-is-not-there-%03d/' $(seq 100))
cli entropy "$deep/x.png" -o out.png
check "a 3 KB input path: one line under 1 KB that keeps the reason" \
  eval '[ "$rc" = 2 ] && [ "$(lines "$T/err.log")" = 1 ] && [ "$(wc -c <"$T/err.log")" -lt 1100 ] &&
        grep -q "x.png: No such file or directory$" "$T/err.log"'
cli entropy ../x.png -o "$deep/out.png"
check "a 3 KB output path: one line under 1 KB that keeps the reason" \
  eval '[ "$rc" = 2 ] && [ "$(lines "$T/err.log")" = 1 ] && [ "$(wc -c <"$T/err.log")" -lt 1100 ] &&
        grep -q "No such file or directory$" "$T/err.log"'
cd "$T" || exit 1

# ---- 7. SIGINT, SIGTERM and SIGHUP leave no debris ----
mkdir b7 && cd b7 || exit 1
"$CLI" entropy -q --colormap magma ../x.png -o kept.png && "$CLI" entropy -q --format txt --units bits ../x.png -o kept.txt
cp kept.png ../kept.png.orig && cp kept.txt ../kept.txt.orig
for sig in INT:2 TERM:15 HUP:1; do
  name=${sig%%:*}
  num=${sig#*:}
  status=$((128 + num))
  ES_CLI_TEST_INTERRUPT=1:0.3:$num cli entropy ../x.png -o kept.png
  check "SIG$name during the computation: exit $status, the old output and nothing else" \
    eval '[ "$rc" = $status ] && one_error_with "interrupted by SIG$name" &&
          cmp -s kept.png ../kept.png.orig && only_files . kept.png kept.txt'
  ES_INJECT_WRITE_SIGNAL=2:$num cli entropy ../x.png -o kept.png
  check "SIG$name while the PNG is written: exit $status, no temporary file" \
    eval '[ "$rc" = $status ] && one_error_with "interrupted by SIG$name" &&
          cmp -s kept.png ../kept.png.orig && only_files . kept.png kept.txt'
  ES_INJECT_WRITE_SIGNAL=3:$num cli entropy --format txt ../x.png -o kept.txt
  check "SIG$name while the text matrix is written: exit $status, no temporary file" \
    eval '[ "$rc" = $status ] && one_error_with "interrupted by SIG$name" &&
          cmp -s kept.txt ../kept.txt.orig && only_files . kept.png kept.txt'
done
# Real signals while blocked: reading a FIFO whose writer stalls, writing a
# FIFO that nobody reads.
mkfifo in.fifo
( printf '\211PNG\r\n\032\n'; exec sleep 30 ) >in.fifo 2>/dev/null &
writer=$!
pids="$pids $writer"
"$CLI" entropy in.fifo -o fifo-out.png >"$T/out.log" 2>"$T/err.log" &
pid=$!
pids="$pids $pid"
wait_blocked "$pid" in.fifo
kill -HUP "$pid"
wait_for "$pid"
kill "$writer" 2>/dev/null
check "SIGHUP while reading a stalled FIFO: exit 129 at once, one line" \
  eval '[ "$rc" = 129 ] && one_error_with "interrupted by SIGHUP" && [ ! -e fifo-out.png ]'
mkfifo stuck.fifo
( exec 3<stuck.fifo; exec sleep 30 ) >/dev/null 2>&1 &
reader=$!
pids="$pids $reader"
"$CLI" entropy ../x.png -o stuck.fifo >"$T/out.log" 2>"$T/err.log" &
pid=$!
pids="$pids $pid"
wait_blocked "$pid" stuck.fifo
sleep 0.3
kill -TERM "$pid"
wait_for "$pid"
kill "$reader" 2>/dev/null
check "SIGTERM while writing a FIFO that nobody reads: exit 143 at once, one line" \
  eval '[ "$rc" = 143 ] && one_error_with "interrupted by SIGTERM" && [ -p stuck.fifo ]'
rm -f in.fifo stuck.fifo
check "no temporary file after any of them" only_files . kept.png kept.txt
cd "$T" || exit 1

# ---- 8. a stdout that cannot be written is an error ----
if [ -w /dev/full ]; then
  for args in "--help" "--version" "info" "entropy --help" "bench --sizes 16 --repeats 1 --ops sharpen --backend cpu"; do
    "$CLI" $args >/dev/full 2>"$T/err.log"
    rc=$?
    check "$args with stdout on /dev/full: exit 2 and one line" \
      eval '[ "$rc" = 2 ] && error_is "entroscope-cli: stdout: No space left on device"'
  done
else
  skip "no /dev/full" "a stdout that cannot be written"
fi

# ---- 9. no file the command reads is an output, whatever its role ----
mkdir b9 && cd b9 || exit 1
cp ../x.png in.png
make_pgm f.png 3 3
"$CLI" entropy -q in.png -o roi.png && cp roi.png ../roi.orig
cli entropy --mask roi.png in.png -o roi.png
check "a mask that is also the output is refused, the mask untouched" \
  eval '[ "$rc" = 2 ] && one_error_with "roi.png: is the mask and also the output; nothing was written" &&
        cmp -s roi.png ../roi.orig && only_files . in.png f.png roi.png'
cp roi.png in-entropy.png
cli entropy --mask in-entropy.png in.png
check "a mask that is the default output's name is refused" \
  eval '[ "$rc" = 2 ] && one_error_with "in-entropy.png: is the mask and also the output" &&
        cmp -s in-entropy.png ../roi.orig'
rm in-entropy.png
ln -s roi.png link.png
cli entropy --mask ./link.png in.png -o ../b9/roi.png
check "the same through a symbolic link and other spellings" \
  eval '[ "$rc" = 2 ] && cmp -s roi.png ../roi.orig'
rm link.png
ln roi.png x-entropy.png
cli entropy --mask roi.png in.png ../x.png -o ./
check "a batch whose second default output is a hard link to the mask is refused, nothing written" \
  eval '[ "$rc" = 2 ] && one_error_with "roi.png: is the mask and also the output" &&
        cmp -s roi.png ../roi.orig && [ ! -e in-entropy.png ]'
rm x-entropy.png
cp f.png f.orig
cli entropy --footprint f.png in.png -o f.png
check "a footprint that is also the output is refused, the footprint untouched" \
  eval '[ "$rc" = 2 ] && one_error_with "f.png: is the footprint and also the output" && cmp -s f.png f.orig'
cd "$T" || exit 1

# ---- 10. a mask is in where its raw values are nonzero, whatever its format ----
mkdir b10 && cd b10 || exit 1
MASKS="python3 $here/mask-images.py"
make_pgm in.pgm 8 8 "$SAMPLE"
# The "nan" cells of an entropy text matrix: the pixels masked out.
masked_out () {
  "$CLI" entropy -q --mask "$1" --format txt in.pgm -o - 2>"$T/err.log" | grep -o nan | wc -l | tr -d ' '
}
$MASKS rgb.png 8 8 rgb8 0,0,1
check "an RGB mask is in where any channel is nonzero: (0, 0, 1) counts" eval '[ "$(masked_out rgb.png)" = 0 ]'
$MASKS rgb-half.png 8 8 rgb8 0,0,1 0,0,0
check "an RGB mask of (0, 0, 1) and (0, 0, 0) masks out half" eval '[ "$(masked_out rgb-half.png)" = 32 ]'
if [ "${ES_HAVE_TIFF:-0}" = 1 ]; then
  $MASKS ones.tif 8 8 f32 1
  check "a float TIFF mask of ones masks nothing out (no NaN everywhere)" eval '[ "$(masked_out ones.tif)" = 0 ]'
  $MASKS half.tif 8 8 f32 0.5 1
  check "a float TIFF mask of 0.5 and 1.0 is in everywhere" eval '[ "$(masked_out half.tif)" = 0 ]'
  $MASKS nan.tif 8 8 f32 nan 2.5 0 -1
  check "a float TIFF mask: NaN and 0 are out, 2.5 and -1 in" eval '[ "$(masked_out nan.tif)" = 32 ]'
  $MASKS signed.tif 8 8 i8 0 1 -1 0
  check "a signed TIFF mask is in where nonzero as stored, not once offset" eval '[ "$(masked_out signed.tif)" = 32 ]'
  $MASKS rgb.tif 8 8 rgb8 0,0,1 0,0,0
  check "an RGB TIFF mask is in where any channel is nonzero" eval '[ "$(masked_out rgb.tif)" = 32 ]'
else
  skip "this build reads no TIFF" "float, signed and RGB TIFF masks"
fi
for op in equalize sharpen quantize; do
  cli "$op" --mask rgb.png in.pgm -o "$op.png"
  check "$op --mask is a usage error, not a mask ignored" \
    eval '[ "$rc" = 1 ] && one_error_with "--mask belongs to the entropy definition; $op takes no mask" &&
          [ ! -e "$op.png" ]'
done
cd "$T" || exit 1

# ---- 11. exit statuses and messages name the file at fault ----
mkdir b11 && cd b11 || exit 1
make_pgm in.pgm 8 8 "$SAMPLE"
make_pgm big.pgm 9 8 "$SAMPLE"
make_pgm mask.pgm 8 8
cli entropy --mask mask.pgm big.pgm -o big.png
check "a mask of another size exits 2 and names the mask file" \
  eval '[ "$rc" = 2 ] && error_is "entroscope-cli: mask.pgm: the mask is 8×8, the input big.pgm 9×8: they must match" &&
        [ ! -e big.png ]'
mkdir out
cli entropy --mask mask.pgm big.pgm in.pgm -o out/
check "in a batch the other inputs still run, and the exit status says one failed" \
  eval '[ "$rc" = 2 ] && one_error_with "mask.pgm: the mask is 8×8, the input big.pgm 9×8" &&
        [ -s out/in-entropy.png ] && [ ! -e out/big-entropy.png ]'
make_pgm even.pgm 4 3
cli entropy --footprint even.pgm in.pgm -o fp.png
check "a footprint of even sides exits 2 and names the footprint file" \
  eval '[ "$rc" = 2 ] && error_is "entroscope-cli: footprint even.pgm: footprint height 3 is out of range: odd, 1..255" ||
        error_is "entroscope-cli: footprint even.pgm: footprint width 4 is out of range: odd, 1..255"'
make_pgm empty.pgm 3 3 /dev/zero
cli entropy --footprint empty.pgm in.pgm -o fp.png
check "a footprint with no cell in exits 2 and names the footprint file" \
  eval '[ "$rc" = 2 ] && one_error_with "footprint empty.pgm: the footprint has no cell in it"'
for name in out.TIF out.Tiff out.TXT out.Png; do
  cli entropy -q in.pgm -o "$name"
  case $name in
    *.T[Ii][Ff]*) want=49492a00 ;;
    *.TXT) want=3820380a ;;
    *) want=89504e47 ;;
  esac
  check "-o $name picks its format whatever the case of its suffix" \
    eval '[ "$rc" = 0 ] && [ "$(od -An -tx1 -N4 "$name" | tr -d " \n")" = "$want" ]'
done
for name in out.jpg out.JPEG out.pgm; do
  cli entropy -q in.pgm -o "$name"
  check "-o $name is refused, not written as PNG under that name" \
    eval '[ "$rc" = 1 ] && one_error_with "output is not supported; use .png, .tif or .txt" && [ ! -e "$name" ]'
done
cd "$T" || exit 1

tap_finish
