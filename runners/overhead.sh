#!/usr/bin/env bash
# Overhead of wakebench's timing and sampling, measured side by side: wakebench's pinned same-CPU
# pipe ping-pong between two processes against `taskset -c CPU perf bench sched pipe`, the tool
# scheduler developers already use. Both report the mean time of one round trip (perf bench's
# "usecs/op" is one write+read each way). Runs them alternately ROUNDS times and prints both
# medians and their ratio.
#   runners/overhead.sh [ROUNDS (default 5)] [LOOPS (default 100000)] [CPU (default 0)]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
wb=${WAKEBENCH:-$here/build/wakebench}
rounds=${1:-5}
loops=${2:-100000}
cpu=${3:-0}
command -v perf >/dev/null || { echo "overhead: perf not found (apt-get install linux-perf)" >&2; exit 2; }
[ -x "$wb" ] || { echo "overhead: $wb not built (runners/bootstrap.sh run builds it)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# wakebench pins the pair to the lowest allowed CPU for same-cpu: restrict it to $cpu.
sed "s/\"round_trips\": 100000/\"round_trips\": $loops/" "$here/configs/overhead.json" >"$tmp/overhead.json"

wb_us=()
perf_us=()
for ((i = 1; i <= rounds; i++)); do
  taskset -c "$cpu" "$wb" run --config "$tmp/overhead.json" --out "$tmp/r.json" 2>/dev/null >/dev/null
  # Google Benchmark's real_time of the case = mean round trip in microseconds.
  wb_us+=("$(awk -F': ' '/"real_time"/ {gsub(/,/, "", $2); print $2; exit}' "$tmp/r.json")")
  perf_us+=("$(taskset -c "$cpu" perf bench sched pipe -l "$loops" 2>/dev/null |
               awk '/usecs\/op/ {print $1; exit}')")
  echo "round $i: wakebench ${wb_us[-1]} us/round trip, perf bench ${perf_us[-1]} us/op" >&2
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
m_wb=$(median "${wb_us[@]}")
m_perf=$(median "${perf_us[@]}")
awk -v w="$m_wb" -v p="$m_perf" -v r="$rounds" -v l="$loops" -v c="$cpu" 'BEGIN {
  printf "same-CPU pipe round trip on CPU %s, %s rounds of %s loops:\n", c, r, l
  printf "  wakebench  pipe/processes/same-cpu  median of means %.3f us\n", w
  printf "  perf bench sched pipe               median of means %.3f us\n", p
  printf "  ratio wakebench / perf bench        %.3f (%+.1f%%)\n", w / p, (w / p - 1) * 100 }'
