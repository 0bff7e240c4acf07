#!/bin/sh
# SPDX-License-Identifier: MIT
# Packs the built window with its GTK runtime, Xvfb and fonts into
# gpu-carry/window-bundle.tar.xz (git-ignored), for tests/gpu/window.sh on a
# GPU machine that has no GTK. Run after building `build` with CUDA and GTK.
set -eu
cd "$(dirname "$0")/../.."
b=$(mktemp -d)/bundle
mkdir -p "$b/lib" "$b/bin" "$b/share/fonts" "$b/share/icons/Adwaita" "$b/share/glib-2.0/schemas" "$b/etc" gpu-carry
cp build/ui/entroscope /usr/bin/Xvfb /usr/bin/xkbcomp /usr/bin/xwd "$b/bin/"
# Every shared library they need except glibc's own, which the GPU machine has (newer).
for exe in "$b"/bin/*; do ldd "$exe"; done | awk '/=>/ { print $3 }' | sort -u \
  | grep -v -E '/(libc|libm|libpthread|libdl|librt)\.so|ld-linux' | xargs -I{} cp -L {} "$b/lib/"
cp -r /usr/share/X11/xkb "$b/share/"
cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf /usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf "$b/share/fonts/"
# Pre-rendered symbolic icons (PNG), so no SVG loader is needed.
cp /usr/share/icons/Adwaita/index.theme "$b/share/icons/Adwaita/"
(cd /usr/share/icons/Adwaita && find . -name '*-symbolic*' | grep -E '16x16|scalable' | tar cf - -T -) \
  | tar xf - -C "$b/share/icons/Adwaita"
cp build/resources/gschemas.compiled "$b/share/glib-2.0/schemas/"
cat > "$b/etc/fonts.conf" <<'XML'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "fonts.dtd">
<fontconfig><dir prefix="relative">../share/fonts</dir><cachedir>/tmp/es-fontcache</cachedir></fontconfig>
XML
tar cJf gpu-carry/window-bundle.tar.xz -C "$(dirname "$b")" bundle
rm -rf "$(dirname "$b")"
ls -l gpu-carry/window-bundle.tar.xz
