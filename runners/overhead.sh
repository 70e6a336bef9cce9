#!/usr/bin/env bash
# Overhead of wakebench's timing and sampling, measured side by side: wakebench's pinned same-CPU
# pipe ping-pong between two processes against `taskset -c CPU perf bench sched pipe`, the tool
# scheduler developers already use. Both report the mean time of one round trip (perf bench's
# "usecs/op" is one write+read each way). Runs them alternately ROUNDS times and prints the
# medians and ratios: wakebench without counters (--events none: the timing and sampling alone)
# and with its default per-task counters (perf software events cost each context switch).
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
wb_none_us=()
perf_us=()
real_time() { awk -F': ' '/"real_time"/ {gsub(/,/, "", $2); print $2; exit}' "$1"; }
for ((i = 1; i <= rounds; i++)); do
  # Google Benchmark's real_time of the case = mean round trip in microseconds. Once with the
  # default per-task counters, once with none (--events none): the counters' own cost shows apart
  # from the timing and sampling.
  taskset -c "$cpu" "$wb" run --config "$tmp/overhead.json" --out "$tmp/r.json" 2>/dev/null >/dev/null
  wb_us+=("$(real_time "$tmp/r.json")")
  taskset -c "$cpu" "$wb" run --config "$tmp/overhead.json" --out "$tmp/n.json" --events none \
    2>/dev/null >/dev/null
  wb_none_us+=("$(real_time "$tmp/n.json")")
  perf_us+=("$(taskset -c "$cpu" perf bench sched pipe -l "$loops" 2>/dev/null |
               awk '/usecs\/op/ {print $1; exit}')")
  echo "round $i: wakebench ${wb_us[-1]} us/round trip (no counters ${wb_none_us[-1]}), perf bench ${perf_us[-1]} us/op" >&2
done

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
m_wb=$(median "${wb_us[@]}")
m_none=$(median "${wb_none_us[@]}")
m_perf=$(median "${perf_us[@]}")
awk -v w="$m_wb" -v n="$m_none" -v p="$m_perf" -v r="$rounds" -v l="$loops" -v c="$cpu" 'BEGIN {
  printf "same-CPU pipe round trip on CPU %s, %s rounds of %s loops:\n", c, r, l
  printf "  wakebench  pipe/processes/same-cpu, --events none  median of means %.3f us\n", n
  printf "  wakebench  pipe/processes/same-cpu, default events median of means %.3f us\n", w
  printf "  perf bench sched pipe                              median of means %.3f us\n", p
  printf "  ratio wakebench --events none / perf bench         %.3f (%+.1f%%)\n", n / p, (n / p - 1) * 100
  printf "  ratio wakebench default events / perf bench        %.3f (%+.1f%%)\n", w / p, (w / p - 1) * 100 }'
