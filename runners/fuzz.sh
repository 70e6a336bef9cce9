#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang-16 and runs each for a bounded time:
#   runners/fuzz.sh [SECONDS] [TARGET...]     default: 30 s each, every target
# Targets: config (suite parser and case expansion), cpulist (CPU lists), scenario (predictor
# scenarios and predictions), resultset (result-set loader).
# For each target it first replays tests/fuzz/corpus/<target>/ (the seeds and every input that
# once found a bug: a regression test), then fuzzes from it with the target's dictionary. New
# inputs go to $build/corpus/<target> (not committed); a crash leaves its input as
# $build/crash/<target>-crash-<sha1> and fails the script: keep it as a regression input by copying
# it into tests/fuzz/corpus/<target>/ once fixed.
# Build directory: $WB_BUILD_DIR, else build-fuzz beside the sources. Needs clang-16 and
# libclang-rt-16-dev (installed here when missing: root or sudo). WB_FUZZ_JOBS sets the build jobs
# (default nproc).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(config cpulist scenario resultset)
build=${WB_BUILD_DIR:-$here/build-fuzz}
src=$here/tests/fuzz

packages=(clang-16 libclang-rt-16-dev cmake make pkg-config libhwloc-dev libboost-dev
          nlohmann-json3-dev libssl-dev)
# shellcheck source=runners/install-packages.sh
. "$here/runners/install-packages.sh"
install_packages fuzz "${packages[@]}"

t0=$(date +%s)
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-16 \
  >/dev/null
cmake --build "$build" -j"${WB_FUZZ_JOBS:-$(nproc)}" --target "${targets[@]/#/fuzz_}"
t1=$(date +%s)
echo "fuzz: build $((t1 - t0)) s" >&2

# A parser bug shows as a sanitizer report or an abort (tests/fuzz/fuzz_check.h); leaks count too.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

rc=0
mkdir -p "$build/crash"
for t in "${targets[@]}"; do
  bin=$build/fuzz_$t
  seeds=$src/corpus/$t
  work=$build/corpus/$t
  mkdir -p "$work"
  s0=$(date +%s)
  # Replay: every committed input once.
  if ! "$bin" -runs=0 -artifact_prefix="$build/crash/$t-replay-" "$seeds" \
       >"$build/$t.replay.log" 2>&1; then
    echo "fuzz $t: a committed corpus input fails:" >&2
    tail -n 40 "$build/$t.replay.log" >&2
    rc=1
    continue
  fi
  # -max_len: suites, scenarios and result sets that matter are far smaller than 64 KiB; the
  # per-input timeout catches a parser that stalls (generous: "0-1048575" alone takes seconds
  # under ASan on a loaded box); rss_limit an input that makes it blow up.
  dict=()
  [ -f "$src/$t.dict" ] && dict=(-dict="$src/$t.dict")
  if "$bin" "$work" "$seeds" "${dict[@]}" -max_total_time="$seconds" -max_len=65536 -timeout=25 \
       -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/crash/$t-" \
       >"$build/$t.log" 2>&1; then
    s1=$(date +%s)
    echo "fuzz $t: clean, $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$build/$t.log" |
      grep -o '[0-9]*$') runs in $((s1 - s0)) s, corpus $(ls "$work" | wc -l) inputs" >&2
  else
    echo "fuzz $t: FOUND A BUG (input in $build/crash/):" >&2
    grep -E 'ERROR|finding|SUMMARY|runtime error|Test unit written' "$build/$t.log" | head -n 20 >&2
    rc=1
  fi
done
echo "fuzz: total $(($(date +%s) - t0)) s (exit $rc)" >&2
exit $rc
