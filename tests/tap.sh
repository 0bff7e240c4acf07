# SPDX-License-Identifier: MIT
# TAP helpers shared by the shell tests (sourced): ok, check, skip, cli, and the closing plan.
# The sourcing script calls tap_take_cli, then sets T (its scratch folder).

count=0
failed=0

# tap_take_cli SCRIPT PATH: CLI becomes PATH made absolute, or the test bails out.
tap_take_cli () {
  CLI=$2
  if [ -z "$CLI" ] || [ ! -x "$CLI" ]; then
    echo "Bail out! usage: $1 PATH-TO-entroscope-cli"
    exit 1
  fi
  case $CLI in /*) ;; *) CLI=$(pwd)/$CLI ;; esac
}

# ok STATUS DESCRIPTION: one TAP line, passing when STATUS is 0.
ok () {
  count=$((count + 1))
  if [ "$1" -eq 0 ]; then
    echo "ok $count - $2"
  else
    echo "not ok $count - $2"
    failed=1
  fi
}

# check DESCRIPTION COMMAND...: one TAP line from a command's status.
check () {
  what=$1
  shift
  if "$@"; then ok 0 "$what"; else ok 1 "$what"; fi
}

# skip REASON DESCRIPTION
skip () {
  count=$((count + 1))
  echo "ok $count - $2 # SKIP $1"
}

# cli ARGS...: runs the CLI with stdout in out.log and stderr in err.log,
# leaving the exit status in $rc and the wall time in $ms (milliseconds).
cli () {
  t0=$(date +%s%N)
  "$CLI" "$@" >"$T/out.log" 2>"$T/err.log"
  rc=$?
  ms=$((($(date +%s%N) - t0) / 1000000))
}

# The plan last, and the status of the whole script.
tap_finish () {
  echo "1..$count"
  exit $failed
}
