#!/usr/bin/env bash
# The search goal of issue 38 as a benchmark
# (docs/cli.md#search-cases-that-tell-the-policies-apart): `wakebench search --work-ns 200000` on
# every topology in tests/fixtures/topologies, with its wall time and peak memory from
# /usr/bin/time -v, whether it reports itself complete (not cut), and whether its text (after the
# first line, which counts candidates and shapes) is the exhaustive search's where `--exhaustive`
# finishes within EXHAUSTIVE_S.
#   runners/searchbench.sh WAKEBENCH [EXHAUSTIVE_S (default 120; 0: skip)]
# Prints one line per topology; exits 1 when a search fails, is cut, or differs from the
# exhaustive one.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${1:?usage: runners/searchbench.sh WAKEBENCH [EXHAUSTIVE_S]}
limit=${2:-120}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

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
printf '%-52s %7s %7s %-9s %s\n' topology wall_s rss_MB complete exhaustive
for xml in "$here"/tests/fixtures/topologies/*.xml; do
  name=$(basename "$xml" .xml)
  if ! search "$xml" "" /usr/bin/time -v -o "$tmp/time"; then
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
  same="not run"
  if [ "$limit" -gt 0 ]; then
    if search "$xml" --exhaustive timeout "$limit"; then
      tail -n +2 "$tmp/out" >"$tmp/all"
      if cmp -s "$tmp/reduced" "$tmp/all"; then same="same cases"; else same=DIFFERENT status=1; fi
    else
      same="not finished in ${limit} s"
    fi
  fi
  printf '%-52s %7s %7d %-9s %s\n' "$name" "$wall" $((rss / 1024)) "$complete" "$same"
done
exit "$status"
