#!/bin/sh
# SPDX-License-Identifier: MIT
# Every C and header file is as clang-format (the repository's
# .clang-format) writes it: one TAP line a folder, naming the files that
# are not. Skipped where clang-format is not installed (./dev installs it).
#   usage: tests/test-format.sh SOURCE-ROOT
set -u
root=$1
cd "$root" || { echo "Bail out! no source tree at $root"; exit 1; }
if ! command -v clang-format >/dev/null 2>&1; then
  echo "1..0 # SKIP clang-format is not installed"
  exit 0
fi
count=0
failed=0
for folder in compute app ui python/src tests; do
  # One clang-format for the whole folder (a process a file took 20 s):
  # its complaints start with the file's name.
  bad=$(find "$folder" -path tests/fuzz/corpus -prune -o \( -name '*.c' -o -name '*.h' \) -print \
        | sort | xargs clang-format --dry-run --Werror 2>&1 >/dev/null \
        | sed -n 's/^\([^:]*\.[ch]\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)
  count=$((count + 1))
  if [ -z "$bad" ]; then
    echo "ok $count - $folder/ is formatted as .clang-format says"
  else
    echo "not ok $count - $folder/ has files clang-format would change (clang-format -i them):"
    echo "$bad" | sed 's/^/# /'
    failed=1
  fi
done
echo "1..$count"
exit $failed
