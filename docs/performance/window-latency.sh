#!/bin/sh
# SPDX-License-Identifier: MIT
# The window's latency after the engine, as docs/performance/window.md gives it: opens IMAGE in a
# 1600x1000 window under Xvfb (GSK_RENDERER=cairo unless set, ENTROSCOPE_DEBUG=timing), then raises the entropy
# window size twice with the side panel's + button (5 -> 7 -> 9), and prints for each run the time
# from the request to the new view shown less es_run (the opening, then the two recomputes) and the
# main-loop stalls over 50 ms that the timing log reports. Each time comes with its parts in brackets:
# (worker past es_run + wait for the frame + layout + paint), the rest being the response's handling and
# what follows the paint. Needs xvfb-run, xdotool and gsettings.
#   usage: docs/performance/window-latency.sh BUILD-DIR IMAGE [RUNS]   (default 3 runs)
set -u
build=$(cd "$1" && pwd)
image=$2
runs=${3:-3}
# The Window Size + button in a 1600x1000 window with the side panel at its default width.
plus_x=1553
plus_y=559

for run in $(seq "$runs"); do
  config=$(mktemp -d)
  log=$config/log
  export XDG_CONFIG_HOME=$config GSETTINGS_BACKEND=keyfile GSETTINGS_SCHEMA_DIR=$build/resources
  export GSK_RENDERER="${GSK_RENDERER:-cairo}" NO_AT_BRIDGE=1 ENTROSCOPE_DEBUG=timing
  gsettings set org.entroscope.Entroscope window-width 1600
  gsettings set org.entroscope.Entroscope window-height 1000
  load=$(cut -d' ' -f1 /proc/loadavg)
  xvfb-run -a -s "-screen 0 1600x1000x24" sh -c "
    '$build/ui/entroscope' '$image' > '$log' 2>&1 &
    app=\$!
    # Waits for the Nth view shown, then lets the histograms' jobs finish.
    shown () {
      for i in \$(seq 600); do [ \$(grep -c 'new view shown' '$log') -ge \$1 ] && break; sleep 0.1; done
      sleep 2
    }
    shown 1
    xdotool mousemove $plus_x $plus_y click 1; shown 2
    xdotool mousemove $plus_x $plus_y click 1; shown 3
    kill \$app; wait \$app
  " 2>/dev/null
  # Per change: after es_run, then its parts: the worker past es_run, the
  # wait for the frame's update, the frame's layout and its paint.
  after=$(sed -nE 's/.* ([0-9.]+) ms from request to the new view shown \(worker ([0-9.]+) ms, of which es_run ([0-9.]+) ms; then ([0-9.]+) ms to the frame, layout ([0-9.]+) ms, paint ([0-9.]+) ms.*/\1 \2 \3 \4 \5 \6/p' "$log" \
          | awk '{ printf "%.0f (%.0f+%.0f+%.0f+%.0f) ", $1 - $3, $2 - $3, $4, $5, $6 }')
  stalls=$(sed -nE 's/.*main loop stalled for ([0-9.]+) ms/\1/p' "$log" | awk '{ printf "%.0f ", $1 }')
  echo "run $run, load $load: after es_run (open, window 7, window 9) ${after:-none }ms; stalls ${stalls:-none}"
  rm -rf "$config"
done
