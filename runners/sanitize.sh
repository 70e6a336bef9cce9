#!/usr/bin/env bash
# Builds wakebench and its tests with a sanitizer and runs them under ctest.
#   runners/sanitize.sh asan [ctest args]   ASan + UndefinedBehaviorSanitizer, every test
#   runners/sanitize.sh tsan [ctest args]   ThreadSanitizer, threads-mode tests only (see below)
# Compiler: Debian's clang-16 (the fuzz targets' compiler too), at -O0 -g1: it builds everything
# in about a third of the time GCC 12 takes at -O1 (about 145 s against 465 s on 2 vCPUs), and
# puts a second compiler's warnings and sanitizers on top of the GCC release build. Reports are symbolized with
# llvm-symbolizer-14 (Debian 12's default llvm, on the machine with clang-tidy).
# Build directory: $WB_BUILD_DIR, else build-asan / build-tsan beside the sources.
# Environment: WB_SANITIZE_JOBS (build and ctest jobs, default nproc), WB_SANITIZE_BUILD_ONLY=1
# (no ctest).
# The asan tree builds the libFuzzer targets of tests/fuzz too (-DWB_FUZZ_TARGETS=ON, about 16
# more files): runners/fuzz.sh runs them from there instead of a clang build of its own.
# Linked with lld: a sanitized wb_tests links in about 1.7 s against 9.6 s with ld.bfd.
# Linked -no-pie: a sanitized process spent a third of its start in the dynamic loader, relocating
# a position-independent binary of 150 MB (wb_tests 290 ms of CPU to start, 212 ms non-PIE), and
# every test is a process of its own (wb_tests once per test, wakebench many times in some).
# Prints the build and test times; exits non-zero on a build failure or any failing test (a
# sanitizer report makes its test fail: halt_on_error / -fno-sanitize-recover).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kind=${1:-}
shift || true
symbolizer=/usr/bin/llvm-symbolizer-14

case "$kind" in
  asan)
    flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
    # detect_leaks: LSan runs at exit of every process that returns from main (forked tasks leave
    # with _exit and are not checked, their memory is the parent's copy).
    asan="detect_leaks=1:halt_on_error=1:strict_string_checks=1"
    asan+=":detect_stack_use_after_return=1:check_initialization_order=1"
    asan+=":external_symbolizer_path=$symbolizer"
    export ASAN_OPTIONS="$asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
    ubsan="print_stacktrace=1:halt_on_error=1:external_symbolizer_path=$symbolizer"
    export UBSAN_OPTIONS="$ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
    # The qemu topology lab (label vm) boots a guest and tests no code of ours in this process; the
    # pure-Python suites (label python) run no code a sanitizer sees (the release tests run them).
    ctest_select=(-LE 'vm|python')
    ;;
  tsan)
    flags="-fsanitize=thread -fno-omit-frame-pointer"
    tsan="halt_on_error=1:second_deadlock_stack=1:external_symbolizer_path=$symbolizer"
    export TSAN_OPTIONS="$tsan${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
    # ThreadSanitizer models the threads of one process: it cannot see the ordering that a raw
    # futex or a pipe between two forked task processes gives. So under TSan only the threads
    # mode runs, selected by test name: every parametrized test names its mode ("/processes" at
    # the end for Modes/*, "_processes_" inside for Protocol), and RunCli.* (suites of both
    # modes) is left out; the end-to-end runs under TSan are Faults.*/threads, PlacementCli and
    # CompareCli. The lab tests boot qemu-system guests and test no thread of ours.
    # (ctest names of parametrized tests go on with "  # GetParam() = ...": "/processes " too.)
    ctest_select=(-LE 'vm|python' -E '(/processes( |$)|_processes_|RunCli\.|^Vm\.|^Lab)')
    # TSan's blind spot in one mechanism, checked by hand (suppressed by source file, which needs
    # the symbolizer: without it no frame has a file and the suppression matches nothing):
    # futex-swap hands the payload off through a seccomp user notification (the waker's trapped
    # syscall, then SECCOMP_IOCTL_NOTIF_RECV / NOTIF_SEND): the kernel orders it, TSan models no
    # such ioctl.
    tsan_supp=$(mktemp)
    trap 'rm -f "$tsan_supp"' EXIT
    printf 'race:benchmarks/futex_swap.cpp\n' >"$tsan_supp"
    # Readable by every user: a test runs wakebench as nobody (TraceRun.WithoutTracefs...).
    chmod 0644 "$tsan_supp"
    export TSAN_OPTIONS="suppressions=$tsan_supp:$TSAN_OPTIONS"
    ;;
  *)
    echo "usage: runners/sanitize.sh asan|tsan [extra ctest arguments]" >&2
    exit 2
    ;;
esac

build=${WB_BUILD_DIR:-$here/build-$kind}
jobs=${WB_SANITIZE_JOBS:-$(nproc)}

# What the build and the tests need (the README's test command installs the same), clang-16 with
# its sanitizer runtimes, and the symbolizer.
packages=(cmake clang-16 libclang-rt-16-dev llvm-14 lld make ninja-build pkg-config git
          libhwloc-dev hwloc libpfm4-dev libboost-dev nlohmann-json3-dev libssl-dev
          libbenchmark-dev libgtest-dev libgmock-dev libcli11-dev gnuplot-nox libbpf-dev bpftool)
# shellcheck source=runners/install-packages.sh
. "$here/runners/install-packages.sh"
install_packages sanitize "${packages[@]}"

t0=$(date +%s)
# Debug keeps assert() on; -O0 compiles in about a third of the time of -O1 and still runs every
# test in about a minute (the tests time nothing); -g1 is enough for file:line in reports.
targets=(wakebench wb_tests)
fuzz=OFF
if [ "$kind" = asan ]; then
  fuzz=ON
  targets+=(fuzz_config fuzz_cpulist fuzz_scenario fuzz_resultset)
fi
# Ninja for a new build folder, as runners/bootstrap.sh (one that exists keeps its generator).
generator=()
[ -f "$build/CMakeCache.txt" ] || generator=(-G Ninja)
cmake -S "$here" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++-16 \
  -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags -fuse-ld=lld -no-pie" -DWB_FUZZ_TARGETS=$fuzz >/dev/null
cmake --build "$build" -j"$jobs" --target "${targets[@]}"
t1=$(date +%s)
echo "sanitize $kind: build $((t1 - t0)) s" >&2
[ "${WB_SANITIZE_BUILD_ONLY:-0}" = 1 ] && exit 0

cd "$build"
rc=0
ctest --output-on-failure -j"$jobs" "${ctest_select[@]}" "$@" || rc=$?
t2=$(date +%s)
echo "sanitize $kind: tests $((t2 - t1)) s (exit $rc)" >&2
exit $rc
