#!/usr/bin/env bash
# wakebench's own cost, measured side by side against references, alternated ROUNDS times (medians):
#  - pinned same-CPU pipe, mean round trip: pipe/processes/same-cpu against
#    `taskset -c CPU perf bench sched pipe`, pipe/threads/same-cpu against `... -T` (threads);
#  - spin floor, one way: spin/threads/llc's minimum round trip / 2 on CPUs CPU and CPU2 against
#    tools/spin_floor (c2clat's definition: minimum over batches of 100 round trips / 100 / 2),
#    polling with the spin-wait hint as the spin mechanism does, and without it (c2clat); the
#    floor is the lower of the two. spin_floor --stamps adds the timer reads wakebench takes in
#    each round trip: what is left of the ratio once the per-round-trip timing is accounted for.
# wakebench runs with --events none (timing and sampling alone). On a shared machine state the
# load (printed) with the figures; FIFO=N runs every side under SCHED_FIFO priority N (chrt, needs
# root), out of reach of the other load's CFS tasks (both tools alike).
#   [FIFO=N] runners/overhead.sh [ROUNDS (default 9)] [LOOPS (default 100000)] [CPU (0)] [CPU2 (1)]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${WAKEBENCH_BUILD:-$here/build}
wb=$build/wakebench
floor=$build/spin_floor
rounds=${1:-9}
loops=${2:-100000}
cpu=${3:-0}
cpu2=${4:-1}
command -v perf >/dev/null || { echo "overhead: perf not found (apt-get install linux-perf)" >&2; exit 2; }
[ -x "$wb" ] && [ -x "$floor" ] || { echo "overhead: build $wb and $floor first (cmake --build build)" >&2; exit 2; }
fifo=()
[ -n "${FIFO:-}" ] && fifo=(chrt -f "$FIFO")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed "s/\"round_trips\": 100000/\"round_trips\": $loops/" "$here/configs/overhead.json" >"$tmp/overhead.json"

# One line per round: wakebench pipe processes, threads (us), spin floor (ns); perf bench pipe,
# -T (us); spin_floor with the hint, without, with the hint and the stamps (ns).
perf_us() { "${fifo[@]}" taskset -c "$cpu" perf bench sched pipe -l "$loops" "$@" 2>/dev/null | awk '/usecs\/op/ {print $1; exit}'; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)${FIFO:+, SCHED_FIFO $FIFO}" >&2
for ((i = 1; i <= rounds; i++)); do
  "${fifo[@]}" taskset -c "$cpu,$cpu2" "$wb" run --config "$tmp/overhead.json" --out "$tmp/r.json" --events none \
    >/dev/null 2>&1
  ours=$(python3 -c '
import json, sys
c = {x["name"]: x for x in json.load(open(sys.argv[1]))["cases"]}
print(c["pipe/processes/same-cpu"]["rtt_ns"]["mean"] / 1e3, c["pipe/threads/same-cpu"]["rtt_ns"]["mean"] / 1e3,
      c["spin/threads/llc"]["rtt_ns"]["min"] / 2)' "$tmp/r.json")
  ref=()
  for f in --pause "" "--pause --stamps"; do
    # shellcheck disable=SC2086 # $f: zero, one or two flags
    ref+=("$("${fifo[@]}" taskset -c "$cpu,$cpu2" "$floor" "$cpu" "$cpu2" 20000 $f | cut -d' ' -f1)")
  done
  line="$ours $(perf_us) $(perf_us -T) ${ref[*]}"
  echo "$line" >>"$tmp/rounds"
  echo "round $i: $line  (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
awk -v r="$rounds" -v l="$loops" -v c="$cpu" -v c2="$cpu2" '
function median(col,   n, i, j, t, a) {
  for (i = 1; i <= NR; i++) a[i] = v[i, col]
  for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
  return NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
}
{ for (k = 1; k <= 8; k++) v[NR, k] = $k; f = $6 < $7 ? $6 : $7; v[NR, 9] = f
  v[NR, 10] = $1 / $4; v[NR, 11] = $2 / $5; v[NR, 12] = $3 / f; v[NR, 13] = $3 / $8 }
END {
  printf "%s rounds, alternated; pipe: %s round trips on CPU %s; spin: CPUs %s,%s\n", r, l, c, c, c2
  printf "  pipe processes  wakebench %.3f us  perf bench    %.3f us  ratio %.3f (per-round median %.3f)\n", median(1), median(4), median(1) / median(4), median(10)
  printf "  pipe threads    wakebench %.3f us  perf bench -T %.3f us  ratio %.3f (per-round median %.3f)\n", median(2), median(5), median(2) / median(5), median(11)
  printf "  spin floor      wakebench %.2f ns  spin_floor    %.2f ns  ratio %.3f (per-round median %.3f)\n", median(3), median(9), median(3) / median(9), median(12)
  printf "                  spin_floor with the spin-wait hint %.2f ns, without %.2f ns\n", median(6), median(7)
  printf "                  with the hint and the stamps %.2f ns: ratio %.3f (per-round median %.3f)\n", median(8), median(3) / median(8), median(13) }' "$tmp/rounds"
