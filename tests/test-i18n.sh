#!/bin/sh
# SPDX-License-Identifier: MIT
# The translations: every marked string of the sources has a checked
# Simplified Chinese translation, po/entroscope.pot lists exactly the marked
# strings, and entroscope-cli speaks Chinese under LANGUAGE=zh_CN with the
# build tree's catalogs. A string marked without a translation fails here.
#   usage: tests/test-i18n.sh SOURCE-ROOT LOCALEDIR ENTROSCOPE-CLI
set -u
root=$1
localedir=$2
cli=$3
. "$(dirname "$0")/tap.sh"

# said STATUS DESCRIPTION DIAGNOSTICS: ok, with the diagnostics as TAP comments when it fails.
said () {
  ok "$1" "$2"
  [ "$1" -eq 0 ] || printf '%s\n' "$3" | sed 's/^/# /'
}

for tool in xgettext msgfmt msgcmp; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "1..0 # SKIP no $tool (gettext)"
    exit 0
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root" || { echo "Bail out! no source tree at $root"; exit 1; }

# Every source that marks a string is in POTFILES, else its strings escape
# the template and every check below.
unlisted=$(grep -rlE '(^|[^A-Za-z0-9_])N?_ \("|translatable="yes"' app compute ui --include='*.c' --include='*.h' \
             --include='*.cu' --include='*.ui' | sort | while read -r f; do grep -qx "$f" po/POTFILES || echo "$f"; done)
[ -z "$unlisted" ]
said $? "every source that marks strings is in po/POTFILES" "$unlisted"

# The strings marked in the sources now, as meson's entroscope-pot target
# extracts them (its keywords; .cu files are C to xgettext).
grep -v '^#' po/POTFILES | grep -v '\.cu$' > "$tmp/files"
grep '\.cu$' po/POTFILES > "$tmp/cuda-files"
xgettext --from-code=UTF-8 --keyword=_ --keyword=N_ --files-from="$tmp/files" -o "$tmp/fresh.pot" 2>"$tmp/xgettext.err" &&
  xgettext --from-code=UTF-8 --keyword=_ --keyword=N_ -L C -j --files-from="$tmp/cuda-files" -o "$tmp/fresh.pot" 2>>"$tmp/xgettext.err"
said $? "xgettext extracts the marked strings of po/POTFILES" "$(cat "$tmp/xgettext.err")"

# Both ways: the template holds every marked string and no string that is not marked any more.
msgcmp --use-untranslated po/entroscope.pot "$tmp/fresh.pot" >"$tmp/out" 2>&1 &&
  msgcmp --use-untranslated "$tmp/fresh.pot" po/entroscope.pot >>"$tmp/out" 2>&1
said $? "po/entroscope.pot is current (ninja -C build entroscope-pot)" "$(cat "$tmp/out")"

for po in po/*.po; do
  lang=$(basename "$po" .po)
  grep -qx "$lang" po/LINGUAS
  said $? "$lang is in po/LINGUAS" ""
  msgfmt --check --statistics -o /dev/null "$po" >"$tmp/stats" 2>&1
  status=$?
  grep -q 'untranslated\|fuzzy' "$tmp/stats" && status=1
  said $status "$po passes msgfmt --check, 0 untranslated and 0 fuzzy" "$(cat "$tmp/stats")"
  # Without fuzzy or untranslated entries, every marked string of the sources has its translation.
  msgcmp "$po" "$tmp/fresh.pot" >"$tmp/out" 2>&1
  said $? "$po translates every string marked in the sources (ninja -C build entroscope-update-po)" \
    "$(cat "$tmp/out")"
done

# The CLI in Chinese: C.UTF-8 is in every glibc, and LANGUAGE picks the catalog.
zh () {
  ENTROSCOPE_LOCALEDIR=$localedir LANGUAGE=zh_CN LANG=C.UTF-8 LC_ALL= "$cli" "$@"
}
zh --help >"$tmp/help" 2>&1
grep -q '^用法：' "$tmp/help" && grep -q '^输出选项：' "$tmp/help" && grep -q '局部熵' "$tmp/help" &&
  grep -q -- '--window=K' "$tmp/help"
said $? "--help under LANGUAGE=zh_CN is in Chinese, option names as they are" "$(head -3 "$tmp/help")"
zh --help | awk '{ if (length ($0) > 0) n++ } END { exit n < 100 }'
said $? "--help under LANGUAGE=zh_CN is complete" ""
zh entropy --colormap=bogus "$root/data/camera.png" >"$tmp/out" 2>&1
status=$?
[ $status -eq 1 ] && grep -q '^entroscope-cli: --colormap=bogus：未知色图（viridis、.*（参见 .entroscope-cli --help.）$' "$tmp/out"
said $? "a usage error under LANGUAGE=zh_CN is in Chinese, with exit status 1" "status $status: $(cat "$tmp/out")"
zh info >"$tmp/out" 2>&1
grep -q '^已编译的后端：' "$tmp/out"
said $? "info under LANGUAGE=zh_CN is in Chinese" "$(head -2 "$tmp/out")"
# Without a catalog for the language, the messages stay in English.
ENTROSCOPE_LOCALEDIR=$localedir LANGUAGE=xx LANG=C.UTF-8 LC_ALL= "$cli" entropy --colormap=bogus "$root/data/camera.png" >"$tmp/out" 2>&1
grep -q 'unknown colormap' "$tmp/out"
said $? "a language without a catalog gets English" "$(cat "$tmp/out")"
tap_finish
