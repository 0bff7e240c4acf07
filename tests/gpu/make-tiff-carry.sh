#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds gpu-carry/tiff (git-ignored) for the GPU machine, which has no
# libtiff or libdeflate: Debian 12's libtiff 4.5 and libdeflate 1.14 with
# the libraries libtiff loads, their headers, and pkg-config files that
# point at wherever the folder lies. tests/gpu/verify-metrics.py finds it by
# itself; for a build of your own there, first
#   export PKG_CONFIG_PATH=$PWD/gpu-carry/tiff/lib/pkgconfig LD_LIBRARY_PATH=$PWD/gpu-carry/tiff/lib
# and carry gpu-carry/tiff with the call.
#   usage (this machine): sh tests/gpu/make-tiff-carry.sh
set -eu
cd "$(dirname "$0")/../.."
out=$PWD/gpu-carry/tiff
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download libtiff6 libtiff-dev libdeflate0 libdeflate-dev libjbig0 liblerc4 \
  libjpeg62-turbo libwebp7 libzstd1 liblzma5 >/dev/null)
for deb in "$work"/*.deb; do dpkg -x "$deb" "$work/root"; done
rm -rf "$out"
mkdir -p "$out/lib/pkgconfig" "$out/include"
cp -a "$work"/root/usr/lib/x86_64-linux-gnu/*.so* "$work"/root/lib/x86_64-linux-gnu/*.so* "$out/lib/" 2>/dev/null || true
cp -a "$work"/root/usr/include/x86_64-linux-gnu/* "$work"/root/usr/include/*.h "$out/include/"
for pc in libtiff-4 libdeflate; do
  # Relative to the file, and no private requirements (a shared build needs none).
  sed -e 's|^prefix=.*|prefix=${pcfiledir}/../..|' -e 's|^libdir=.*|libdir=${prefix}/lib|' \
    -e 's|^includedir=.*|includedir=${prefix}/include|' -e '/^Requires.private/d' \
    "$work/root/usr/lib/x86_64-linux-gnu/pkgconfig/$pc.pc" >"$out/lib/pkgconfig/$pc.pc"
done
du -sh "$out"
