#!/bin/sh
# SPDX-License-Identifier: MIT
# The AppStream metadata as software centres read it: appstreamcli validate
# --pedantic, offline (the screenshots' URLs are not fetched), with no
# error, warning or pedantic remark beyond the uppercase letters of the
# application's ID (which the ID keeps); the description names what the
# application reads and does; each screenshot is a file of docs/ under the
# homepage; the symbolic icon is there.
#   usage: tests/test-metainfo.sh APPSTREAMCLI METAINFO
set -u
. "$(dirname "$0")/tap.sh"
appstreamcli=$1
metainfo=$2
root=$(cd "$(dirname "$0")/.." && pwd)

report=$("$appstreamcli" validate --no-net --pedantic --no-color "$metainfo" 2>&1)
status=$?
ok $status "appstreamcli validate --pedantic passes"
remarks=$(printf '%s\n' "$report" | grep -E '^[EWP]: ' | grep -v 'cid-contains-uppercase-letter')
if [ -z "$remarks" ]; then
  ok 0 "no error, warning or pedantic remark"
else
  ok 1 "no error, warning or pedantic remark"
  printf '%s\n' "$remarks" | sed 's/^/# /'
fi

description=$(sed -n '/<description>/,/<\/description>/p' "$metainfo" | head -40)
for word in TIFF JPEG PNG volume 'inspection tools'; do
  printf '%s\n' "$description" | grep -qi "$word"
  ok $? "the description names $word"
done

homepage=$(sed -n 's|.*<url type="homepage">\(.*\)</url>.*|\1|p' "$metainfo")
check "a homepage" test -n "$homepage"
check "a developer with an ID" grep -q '<developer id="[^"]' "$metainfo"
check "a content rating" grep -q '<content_rating type="oars-1.1"' "$metainfo"
shots=$(sed -n 's|.*<image>\(.*\)</image>.*|\1|p' "$metainfo")
check "screenshots" test -n "$shots"
for shot in $shots; do
  relative=${shot#"$homepage"}
  check "$relative is in the tree, under the homepage" test "$relative" != "$shot" -a -f "$root/$relative"
done
check "a symbolic icon" test -f "$root/resources/icons/org.entroscope.Entroscope-symbolic.svg"
tap_finish
