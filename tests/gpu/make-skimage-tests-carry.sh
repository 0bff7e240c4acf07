#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds gpu-carry/skimage-tests (git-ignored) for
# python/tests/test_skimage_rank_suite.py on the GPU machine, whose Python
# 3.12 has scikit-image 0.26 from its wheel: no test files, and no pooch to
# fetch their data. From scikit-image's git (no work tree needed), TAG's
# tests/skimage/filters/rank/test_rank.py and the data files it fetches,
# src/skimage/data/rank_filter_tests.npz and rank_filters_tests_3d.npz,
# written byte for byte (git show TAG:path > file).
# rank_filters_tests_3d.npz is not in scikit-image's git since 2020 (pooch
# downloads it from gitlab.com/scikit-image/data): where TAG lacks it, this
# says so and goes on; the suite then makes its entropy with the installed
# scikit-image (a copy put in DEST by hand is used instead, its sha256
# checked against scikit-image's registry).
#   usage: sh tests/gpu/make-skimage-tests-carry.sh [TAG (v0.26.0)] [DEST (gpu-carry/skimage-tests)]
#   SKIMAGE_GIT: scikit-image's git directory (default: this machine's mirror)
#   there: ES_SKIMAGE_RANK_TESTS=gpu-carry/skimage-tests python3 -m pytest python/tests/test_skimage_rank_suite.py
set -eu
cd "$(dirname "$0")/../.."
tag=${1:-v0.26.0}
dest=${2:-gpu-carry/skimage-tests}
git_dir=${SKIMAGE_GIT:-/work/.mirror/scikit-image+scikit-image/repo}
git -C "$git_dir" rev-parse --verify --quiet "$tag^{commit}" >/dev/null || {
  echo "$0: no $tag in $git_dir" >&2
  exit 1
}
mkdir -p "$dest"
for path in tests/skimage/filters/rank/test_rank.py src/skimage/data/rank_filter_tests.npz \
            src/skimage/data/rank_filters_tests_3d.npz; do
  name=$(basename "$path")
  if git -C "$git_dir" cat-file -e "$tag:$path" 2>/dev/null; then
    git -C "$git_dir" show "$tag:$path" > "$dest/$name.part"
    mv "$dest/$name.part" "$dest/$name"
    echo "$dest/$name <- $tag:$path ($(wc -c < "$dest/$name") bytes)"
  elif [ "$name" = test_rank.py ] || [ "$name" = rank_filter_tests.npz ]; then
    echo "$0: $tag has no $path" >&2
    exit 1
  else
    echo "$0: $tag has no $path (scikit-image fetches it from the internet); the suite makes its entropy with the installed scikit-image" >&2
  fi
done
