#!/usr/bin/env bash
# The decision recorder's cost, side by side (docs/cli.md#recorder-cost):
# configs/recorder-cost.json run ROUNDS times in each of three ways, alternated and rotated round
# by round (none, --trace-wakeups, --trace-decisions; then wakeups, decisions, none; ...), so
# drift over the session falls on all three alike. Then `wakebench compare` with the run as the
# unit (runs as a level): per case the change of the median RTT against no tracing with its 95 %
# interval (on the pinned cases, where placement cannot move, that is the recorder's cost), and
# where the kernel-placed cases' wakees ran, with the total variation from the untraced runs'
# shares (compare --format mail's block): a recorder that moves the wakee shows there.
# Needs root (BPF and tracefs).
#   runners/recorder-cost.sh [ROUNDS (default 5)] [OUT (default a new folder under /tmp)]
# Every set stays in OUT/none, OUT/wakeups and OUT/decisions (--trace-decisions' side files about
# 60 MB a run on a 2-vCPU VM).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
wb=${WAKEBENCH_BUILD:-$here/build}/wakebench
rounds=${1:-5}
out=${2:-$(mktemp -d /tmp/recorder-cost.XXXXXX)}
[ -x "$wb" ] || { echo "recorder-cost: build $wb first (cmake --build build)" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]?$ ]] || { echo "recorder-cost: ROUNDS: 1-99, not '$rounds'" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "recorder-cost: needs root (BPF and tracefs)" >&2; exit 2; }
mkdir -p "$out/none" "$out/wakeups" "$out/decisions"
ways=(none wakeups decisions)
flags() {
  case $1 in
    wakeups) echo --trace-wakeups ;;
    decisions) echo --trace-decisions ;;
  esac
}
echo "recorder-cost: $rounds rounds into $out; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((i = 0; i < rounds; i++)); do
  for ((k = 0; k < 3; k++)); do
    way=${ways[(i + k) % 3]}
    # shellcheck disable=SC2046 # flags: zero or one word
    "$wb" run --config "$here/configs/recorder-cost.json" --events none $(flags "$way") \
      --out "$out/$way/r$i.json" >"$out/$way/r$i.log" 2>&1 ||
      { echo "recorder-cost: round $i, $way failed: $out/$way/r$i.log" >&2; exit 1; }
    echo "round $((i + 1))/$rounds: $way done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$wb" compare "$out/none" -- "$out/wakeups" -- "$out/decisions"
for way in wakeups decisions; do
  "$wb" compare "$out/none" -- "$out/$way" --format mail | sed -n '/^where the wakee ran/,/^$/p'
done
