#!/usr/bin/env bash
# The README's two commands:
#   runners/bootstrap.sh run    install what is missing, build if needed, run the quick suite
#   runners/bootstrap.sh test   install what is missing, build if needed, run every test
# Idempotent: on a box where it already ran it only rebuilds what changed.
# Needs root (or sudo) the first time, to apt-get install Debian 12 packages.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${WB_BUILD_DIR:-$here/build}
what=${1:-}
shift || true

# Everything wakebench builds and tests with, from Debian 12 (bookworm).
packages=(
  cmake g++ make ninja-build pkg-config git
  libhwloc-dev hwloc libpfm4-dev libboost-dev nlohmann-json3-dev libssl-dev
  libbenchmark-dev libgtest-dev libgmock-dev libcli11-dev
  linux-perf gnuplot-nox python3-pytest
  clang-16 libbpf-dev bpftool  # the BPF decision recorder (cmake/WbBpf.cmake); clang-16 as sanitize.sh's
)

# shellcheck source=runners/install-packages.sh
. "$here/runners/install-packages.sh"

# A new build folder is configured for Ninja, which starts a target's files while the libraries it
# links are still compiling (Make waits for each of them whole; about 30 s of 2 CPUs left idle in
# the release build). A folder configured before keeps its generator.
generator=()
[ -f "$build/CMakeCache.txt" ] || generator=(-G Ninja)

# Build progress goes to stderr: `run` keeps stdout for the result set's path alone.
build_all() {
  cmake -S "$here" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j"$(nproc)" "$@" >&2
}

case "$what" in
  run)
    install_packages bootstrap "${packages[@]}"
    build_all --target wakebench
    cd "$here"
    exec "$build/wakebench" run --config configs/quick.json "$@"
    ;;
  test)
    install_packages bootstrap "${packages[@]}"
    build_all
    cd "$build"
    # The qemu topology lab test (label vm) boots a guest: run it with `ctest -L vm`.
    exec ctest --output-on-failure -j"$(nproc)" -LE vm "$@"
    ;;
  *)
    echo "usage: runners/bootstrap.sh run|test [extra arguments for wakebench run / ctest]" >&2
    exit 2
    ;;
esac
