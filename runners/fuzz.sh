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
# Build directory: $WB_BUILD_DIR; else build-asan beside the sources when runners/sanitize.sh asan
# configured it with the fuzz targets (-DWB_FUZZ_TARGETS=ON: CI runs fuzz after asan, and this
# only builds what changed there, at its -O0); else build-fuzz, a clang build of tests/fuzz alone
# (RelWithDebInfo). Needs clang-16 and libclang-rt-16-dev (installed here when missing: root or
# sudo). WB_FUZZ_JOBS sets the build jobs and how many targets fuzz at once (default nproc; each
# target still gets SECONDS of its own).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(config cpulist scenario resultset)
src=$here/tests/fuzz
jobs=${WB_FUZZ_JOBS:-$(nproc)}
asan_tree() { grep -qs '^WB_FUZZ_TARGETS:BOOL=ON$' "$1/CMakeCache.txt"; }
if [ -n "${WB_BUILD_DIR:-}" ]; then
  build=$WB_BUILD_DIR
elif asan_tree "$here/build-asan"; then
  build=$here/build-asan
else
  build=$here/build-fuzz
fi

packages=(clang-16 libclang-rt-16-dev cmake make pkg-config libhwloc-dev libboost-dev
          nlohmann-json3-dev libssl-dev)
# shellcheck source=runners/install-packages.sh
. "$here/runners/install-packages.sh"
install_packages fuzz "${packages[@]}"

t0=$(date +%s)
if asan_tree "$build"; then
  bins=$build/tests/fuzz
else
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++-16 \
    >/dev/null
  bins=$build
fi
cmake --build "$build" -j"$jobs" --target "${targets[@]/#/fuzz_}"
t1=$(date +%s)
echo "fuzz: build $((t1 - t0)) s in $build" >&2

# A parser bug shows as a sanitizer report or an abort (tests/fuzz/fuzz_check.h); leaks count too.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

mkdir -p "$build/crash"
# One target: its verdict on stderr, its exit status 0 (clean) or 1.
fuzz_one() {
  local t=$1
  local bin=$bins/fuzz_$t seeds=$src/corpus/$t work=$build/corpus/$t
  mkdir -p "$work"
  local s0
  s0=$(date +%s)
  # Replay: every committed input once.
  if ! "$bin" -runs=0 -artifact_prefix="$build/crash/$t-replay-" "$seeds" \
       >"$build/$t.replay.log" 2>&1; then
    echo "fuzz $t: a committed corpus input fails:" >&2
    tail -n 40 "$build/$t.replay.log" >&2
    return 1
  fi
  # -max_len: suites, scenarios and result sets that matter are far smaller than 64 KiB; the
  # per-input timeout catches a parser that stalls (generous: "0-1048575" alone takes seconds
  # under ASan on a loaded box); rss_limit an input that makes it blow up.
  local dict=()
  [ -f "$src/$t.dict" ] && dict=(-dict="$src/$t.dict")
  if "$bin" "$work" "$seeds" "${dict[@]}" -max_total_time="$seconds" -max_len=65536 -timeout=25 \
       -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/crash/$t-" \
       >"$build/$t.log" 2>&1; then
    echo "fuzz $t: clean, $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$build/$t.log" |
      grep -o '[0-9]*$') runs in $(($(date +%s) - s0)) s, corpus $(ls "$work" | wc -l) inputs" >&2
  else
    echo "fuzz $t: FOUND A BUG (input in $build/crash/):" >&2
    grep -E 'ERROR|finding|SUMMARY|runtime error|Test unit written' "$build/$t.log" | head -n 20 >&2
    return 1
  fi
}

# $jobs targets at a time (one CPU each: libFuzzer runs one process, one thread); each target's
# verdict is printed in the order of the targets once all are done.
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  rm -f "$build/$t.status"
  (s=0; fuzz_one "$t" 2>"$build/$t.verdict" || s=$?; echo $s >"$build/$t.status") &
done
wait
rc=0
for t in "${targets[@]}"; do
  cat "$build/$t.verdict" >&2
  [ "$(cat "$build/$t.status" 2>/dev/null)" = 0 ] || rc=1
done
echo "fuzz: total $(($(date +%s) - t0)) s (exit $rc)" >&2
exit $rc
