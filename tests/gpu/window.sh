#!/bin/sh
# SPDX-License-Identifier: MIT
# Opens the window once on the GPU machine under Xvfb (cairo renderer) at
# 1600×1000 with the CUDA backend chosen, and takes a screenshot into
# $OUT/NAME.xwd: the overlay and the Timings card show the CUDA timings
# (README's gpu-window.png; `window.sh compare-gpu --compare data/camera.png`
# with ES_WINDOW_WAIT=25 its compare-gpu.png).
# Needs gpu-carry/window-bundle.tar.xz (tests/gpu/make-window-bundle.sh),
# carried with the call.
#   usage: tests/gpu/window.sh NAME [entroscope arguments, default data/camera.png]
set -eu
cd "$(dirname "$0")/../.."
name=${1:-window}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- data/camera.png
out=${OUT:-/tmp}
[ -d /tmp/bundle ] || tar xJf gpu-carry/window-bundle.tar.xz -C /tmp
b=/tmp/bundle
# Xvfb runs xkbcomp from the path it was built with.
[ -x /usr/bin/xkbcomp ] || cp "$b/bin/xkbcomp" /usr/bin/xkbcomp
export LD_LIBRARY_PATH="$b/lib"
if [ ! -e /tmp/.X11-unix/X7 ]; then
  "$b/bin/Xvfb" :7 -screen 0 1600x1000x24 -nolisten tcp -xkbdir "$b/share/xkb" >"$out/xvfb.log" 2>&1 &
  sleep 2
fi
# Settings of this run only: CUDA, whatever the automatic choice would make
# of a small image, and the window the size of the screen.
mkdir -p /tmp/es-window-settings/glib-2.0/settings
printf "[org/entroscope/Entroscope]\nbackend='cuda'\nwindow-width=1600\nwindow-height=1000\n" \
  >/tmp/es-window-settings/glib-2.0/settings/keyfile
export DISPLAY=:7 GSK_RENDERER=cairo GSETTINGS_BACKEND=keyfile XDG_CONFIG_HOME=/tmp/es-window-settings NO_AT_BRIDGE=1 GTK_A11Y=none \
  GSETTINGS_SCHEMA_DIR="$b/share/glib-2.0/schemas" XDG_DATA_DIRS="$b/share" FONTCONFIG_FILE="$b/etc/fonts.conf"
"$b/bin/entroscope" "$@" >"$out/$name.log" 2>&1 &
app=$!
sleep ${ES_WINDOW_WAIT:-10}
"$b/bin/xwd" -root -silent -out "$out/$name.xwd"
kill $app 2>/dev/null || true
tail -5 "$out/$name.log" || true
