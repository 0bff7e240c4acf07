#!/bin/sh
# SPDX-License-Identifier: MIT
# cppcheck finds nothing at the warning and portability levels in the
# project's C: one TAP line a folder, its findings as comments. Skipped
# where cppcheck is not installed (./dev installs it).
#   usage: tests/test-cppcheck.sh SOURCE-ROOT
# Only .c files are given (headers are checked through them). The .cu files
# of compute/cuda are left out: cppcheck reads them as C++ without CUDA's
# qualifiers and <<< >>> launches, and would report its own parse errors
# rather than anything in the code.
set -u
root=$1
cd "$root" || { echo "Bail out! no source tree at $root"; exit 1; }
if ! command -v cppcheck >/dev/null 2>&1; then
  echo "1..0 # SKIP cppcheck is not installed"
  exit 0
fi
includes="-I compute -I compute/cpu -I app -I app/io -I app/cli -I ui"
# The configuration the build compiles (meson.build's defines): cppcheck
# checks that one rather than every combination of #ifdef, which takes
# many times as long.
defines="-DES_HAVE_TIFF -DES_HAVE_JPEG -DES_HAVE_LIBDEFLATE"
count=0
failed=0
for folder in compute app ui python/src; do
  # The libraries' configurations teach cppcheck their macros
  # (G_DEFINE_FINAL_TYPE, PyMODINIT_FUNC...), which it would else refuse.
  case $folder in
    ui) library="--library=gtk" ;;
    python/src) library="--library=python" ;;
    *) library="" ;;
  esac
  # shellcheck disable=SC2086 # the include, define and library options are words
  found=$(find "$folder" -name '*.c' | sort \
          | xargs cppcheck --enable=warning,portability --error-exitcode=1 --inline-suppr -q -j2 \
              --suppress=missingIncludeSystem --std=c11 $library $defines $includes \
              --template='{file}:{line}: {severity}: {message} [{id}]' 2>&1)
  count=$((count + 1))
  if [ -z "$found" ]; then
    echo "ok $count - cppcheck finds nothing in $folder/"
  else
    echo "not ok $count - cppcheck finds this in $folder/:"
    echo "$found" | sed 's/^/# /'
    failed=1
  fi
done
echo "1..$count"
exit $failed
