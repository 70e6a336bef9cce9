#!/usr/bin/env bash
# The search goals of issues 38 and 55 as a benchmark
# (docs/cli.md#search-cases-that-tell-the-policies-apart): `wakebench search --work-ns 200000` on
# every topology in tests/fixtures/topologies, then on the two giants runners/giant-topologies.sh
# writes (a 384-PU Zen 5 and a 512-PU Granite Rapids, two sockets each), with its wall time and
# peak memory from /usr/bin/time -v, whether it reports itself complete (not cut), whether it meets
# issue 55's goal (complete, and <= 5 s and <= 200 MB on a fixture, <= 10 s and <= 500 MB on a
# giant), and whether its text (after the first line, which counts candidates and shapes) is the
# exhaustive search's where `--exhaustive` finishes within EXHAUSTIVE_S. A giant's search is cut
# at GIANT_S seconds (--max-seconds); its exhaustive search, which cannot finish, is not tried:
# instead `search --check-shapes 500` (untimed, after it) simulates 500 random candidates directly
# and checks each answers as its shape's first member ("500 random as their shapes"), unless the
# search was cut before any shape was simulated (the shapes were not found in time).
#   runners/searchbench.sh WAKEBENCH [EXHAUSTIVE_S (default 120; 0: skip)] [GIANT_S (default 120)]
# Prints one line per topology; exits 1 when a search fails, is cut, or differs from the
# exhaustive one or from its random candidates (a missed goal alone does not).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:?usage: runners/searchbench.sh WAKEBENCH [EXHAUSTIVE_S] [GIANT_S]}
limit=${2:-120}
giant_s=${3:-120}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$here/runners/giant-topologies.sh" "$tmp/giants"

# Runs `search` on $1 with the options $2 (one word or none) under the command $3... into
# $tmp/out; exit 0 or 1 (nothing discriminates) count as answered.
search() {
  local xml=$1 opt=$2
  shift 2
  local rc=0
  "$@" "$bin" search --topology "$xml" --work-ns 200000 ${opt:+"$opt"} >"$tmp/out" 2>"$tmp/err" ||
    rc=$?
  [ "$rc" -le 1 ]
}

status=0
printf '%-52s %7s %7s %-9s %-9s %s\n' topology wall_s rss_MB complete goal_met exhaustive
for xml in "$here"/tests/fixtures/topologies/*.xml "$tmp"/giants/*.xml; do
  name=$(basename "$xml" .xml)
  opt="" goal_s=5 goal_mb=200
  [[ $xml == "$tmp"/giants/* ]] && opt=--max-seconds=$giant_s goal_s=10 goal_mb=500
  if ! search "$xml" "$opt" /usr/bin/time -v -o "$tmp/time"; then
    printf '%-52s failed: %s\n' "$name" "$(tail -n 1 "$tmp/err")"
    status=1
    continue
  fi
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$tmp/time" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.1f", s }')
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$tmp/time")
  complete=yes
  grep -q INCOMPLETE "$tmp/out" && complete=no && status=1
  tail -n +2 "$tmp/out" >"$tmp/reduced"
  goal=no
  [ "$complete" = yes ] && awk -v w="$wall" -v s="$goal_s" 'BEGIN { exit !(w <= s) }' &&
    [ $((rss / 1024)) -le "$goal_mb" ] && goal=yes
  same="not run"
  if [ -n "$opt" ]; then
    same="exhaustive not tried"
    if ! grep -q "before any was simulated" "$tmp/out"; then
      if search "$xml" --check-shapes=500 timeout "$giant_s"; then
        same="500 random as their shapes"
      else
        same="RANDOM CHECK FAILED: $(tail -n 1 "$tmp/err")" status=1
      fi
    fi
  elif [ "$limit" -gt 0 ]; then
    if search "$xml" --exhaustive timeout "$limit"; then
      tail -n +2 "$tmp/out" >"$tmp/all"
      if cmp -s "$tmp/reduced" "$tmp/all"; then same="same cases"; else same=DIFFERENT status=1; fi
    else
      same="not finished in ${limit} s"
    fi
  fi
  printf '%-52s %7s %7d %-9s %-9s %s\n' "$name" "$wall" $((rss / 1024)) "$complete" "$goal" "$same"
done
exit "$status"
