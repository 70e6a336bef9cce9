#!/usr/bin/env bash
# Cross-builds wakebench for another architecture on a Debian 12 amd64 box and tests it under
# qemu-user:
#   runners/cross-build.sh aarch64|ppc64le [ctest args]
# 1. installs Debian's cross compiler, qemu-user-static and the architecture's -dev packages
#    through dpkg multiarch (idempotent; needs root or sudo the first time);
# 2. configures with cmake/toolchain-<arch>.cmake into $WB_BUILD_DIR (default build-cross-<arch>)
#    and builds wakebench and wb_tests;
# 3. runs the unit and end-to-end tests under qemu-<arch>-static (ctest; the toolchain file makes
#    qemu the CROSSCOMPILING_EMULATOR), then a short pinned ping-pong: `wakebench run` on a tiny
#    pipe suite, checking that the result set says ok.
# Environment: WB_CROSS_JOBS (build jobs, default nproc), WB_CROSS_PACKAGES_ONLY=1 (step 1 only),
# WB_CROSS_SKIP_TESTS=1 (steps 1 and 2 only), WB_CROSS_TARGETS (default "wakebench wb_tests"; the
# lab's arm64 guests need wakebench alone).
# Prints the time of each step.
#
# qemu-user translates the guest's syscalls to the host kernel, so the tests exercise the real
# scheduler of this machine; qemu-user 7.2 answers perf_event_open and seccomp with ENOSYS, so
# counters are reported unavailable and futex-swap is skipped.
#
# ppc64el: the mirror's bookworm-security index for ppc64el is inconsistent (apt-get update exits
# 100), while the main archive serves ppc64el. Limiting the bookworm-security stanza of
# /etc/apt/sources.list.d/debian.sources to `Architectures: amd64 arm64` makes apt-get update
# work; this script adds that line once (the security archive still serves amd64 and arm64).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
arch=${1:-}
shift || true
case "$arch" in
  aarch64) deb=arm64 triplet=aarch64-linux-gnu qemu=qemu-aarch64-static ;;
  ppc64le) deb=ppc64el triplet=powerpc64le-linux-gnu qemu=qemu-ppc64le-static ;;
  *)
    echo "usage: runners/cross-build.sh aarch64|ppc64le [extra ctest arguments]" >&2
    exit 2
    ;;
esac
build=${WB_BUILD_DIR:-$here/build-cross-$arch}
jobs=${WB_CROSS_JOBS:-$(nproc)}
sudo=()
[ "$(id -u)" -eq 0 ] || sudo=(sudo)

# Host packages: the cross compiler, qemu-user, and the arch-independent header-only -dev packages
# (nlohmann-json3-dev and libcli11-dev are Architecture: all; Boost's headers are the same on every
# architecture, so the host's libboost-dev serves the cross build).
host_packages=(cmake make pkg-config jq file "g++-$triplet" qemu-user-static libboost-dev
               nlohmann-json3-dev libcli11-dev)
# Target packages (Multi-Arch: same, co-installable with the amd64 ones of the same version).
target_packages=(libhwloc-dev libpfm4-dev libssl-dev libbenchmark-dev libgtest-dev libgmock-dev)
# ppc64el: Multi-Arch: same packages must have the amd64 version, and the amd64 libc6-dev chain
# (linux-libc-dev, libssl3 through libtirpc/krb5) comes from bookworm-security, whose ppc64el index
# is unusable here. So for ppc64le the -dev packages and their libraries are not installed but
# extracted (apt-get download + dpkg -x) into $build/sysroot; libc, libstdc++ and the dynamic
# loader are the cross compiler's own (/usr/powerpc64le-linux-gnu).
sysroot_packages=(libhwloc-dev libhwloc15 libnuma-dev libnuma1 libltdl-dev libltdl7 libudev1
                  libpfm4-dev libpfm4 libssl-dev libssl3 libbenchmark-dev libbenchmark1debian
                  libgtest-dev libgmock-dev)
sysroot=$build/sysroot

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

limit_security_architectures() {
  local f=/etc/apt/sources.list.d/debian.sources
  [ -f "$f" ] || return 0
  # Only the stanza whose Suites is bookworm-security, only if it has no Architectures line yet.
  awk -v RS= '
    /(^|\n)Suites:[ \t]*bookworm-security/ && !/(^|\n)Architectures:/ { changed = 1 }
    END { exit changed ? 0 : 1 }' "$f" || return 0
  echo "cross-build: limiting bookworm-security in $f to amd64 arm64" \
    "(its ppc64el index is broken)" >&2
  local tmp
  tmp=$(mktemp)
  awk -v RS= -v ORS='\n\n' '
    /(^|\n)Suites:[ \t]*bookworm-security/ && !/(^|\n)Architectures:/ {
      $0 = $0 "\nArchitectures: amd64 arm64" }
    { print }' "$f" >"$tmp"
  "${sudo[@]}" install -m 0644 "$tmp" "$f"
  rm -f "$tmp"
}

install_missing() {
  local missing=() updated=0
  for p in "${host_packages[@]}"; do installed "$p" || missing+=("$p"); done
  if [ "$deb" = arm64 ]; then
    for p in "${target_packages[@]}"; do installed "$p:$deb" || missing+=("$p:$deb"); done
  fi
  local need_sysroot=0
  [ "$deb" = ppc64el ] && [ ! -e "$sysroot/.complete" ] && need_sysroot=1
  [ ${#missing[@]} -eq 0 ] && [ $need_sysroot = 0 ] && return 0
  if ! dpkg --print-foreign-architectures | grep -qx "$deb"; then
    "${sudo[@]}" dpkg --add-architecture "$deb"
  fi
  # Once ppc64el is a foreign architecture every apt-get update reads its indexes.
  if dpkg --print-foreign-architectures | grep -qx ppc64el; then limit_security_architectures; fi
  "${sudo[@]}" apt-get update -qq
  if [ ${#missing[@]} -gt 0 ]; then
    echo "cross-build: installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
  fi
  if [ $need_sysroot = 1 ]; then
    echo "cross-build: extracting ${sysroot_packages[*]} ($deb) into $sysroot" >&2
    rm -rf "$sysroot"
    mkdir -p "$sysroot/.debs"
    (cd "$sysroot/.debs" && apt-get download -q "${sysroot_packages[@]/%/:$deb}" 2>/dev/null)
    for d in "$sysroot"/.debs/*.deb; do dpkg -x "$d" "$sysroot"; done
    rm -rf "$sysroot/.debs"
    touch "$sysroot/.complete"
  fi
}

# End-to-end tests run the built wakebench through std::system(), so the kernel itself must know
# how to start a foreign binary: register qemu-user with binfmt_misc (qemu-user-static's rule, with
# the F flag the interpreter is opened now and works in any mount namespace).
register_binfmt() {
  local name=qemu-${arch}
  local conf=/usr/lib/binfmt.d/$name.conf
  local dir=/proc/sys/fs/binfmt_misc
  [ -e "$dir/register" ] || "${sudo[@]}" mount -t binfmt_misc binfmt_misc "$dir" 2>/dev/null || true
  if [ ! -e "$dir/register" ]; then
    echo "cross-build: binfmt_misc unavailable: the end-to-end tests will fail" >&2
    return 0
  fi
  [ -e "$dir/$name" ] && return 0
  # The conf names Debian's binfmt-P wrapper; F opens it at registration.
  "${sudo[@]}" sh -c "cat '$conf' >'$dir/register'"
}

t0=$(date +%s)
install_missing
register_binfmt
t1=$(date +%s)
echo "cross-build $arch: packages $((t1 - t0)) s" >&2
[ "${WB_CROSS_PACKAGES_ONLY:-0}" = 1 ] && exit 0

cross_args=()
if [ "$deb" = ppc64el ]; then
  cross_args=(-DWB_CROSS_SYSROOT="$sysroot")
  # For binaries started by the kernel through binfmt_misc (end-to-end tests, the ping-pong).
  export QEMU_LD_PREFIX=/usr/$triplet
fi
# -U: the linker flags come from the toolchain file's CMAKE_EXE_LINKER_FLAGS_INIT, which CMake
# only reads when the cache has none; dropping the entry makes a build directory configured by an
# older toolchain file pick up the current flags (ppc64le: DT_RPATH, not RUNPATH).
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -UCMAKE_EXE_LINKER_FLAGS \
  -DCMAKE_TOOLCHAIN_FILE="$here/cmake/toolchain-$arch.cmake" "${cross_args[@]}" >/dev/null
read -r -a targets <<<"${WB_CROSS_TARGETS:-wakebench wb_tests}"
cmake --build "$build" -j"$jobs" --target "${targets[@]}"
t2=$(date +%s)
echo "cross-build $arch: build $((t2 - t1)) s" >&2
file -b "$build/wakebench" 2>/dev/null | cut -d, -f1-2 >&2 || true
[ "${WB_CROSS_SKIP_TESTS:-0}" = 1 ] && exit 0

rc=0
# Every test runs but the topology lab (label vm: it boots a qemu-system guest, nothing of the
# target architecture). What qemu-user cannot do, the tests skip with the reason: counting with
# perf events (perf_event_open is ENOSYS; wakebench itself reports the counters unavailable, which
# the pinned ping-pong below exercises), seccomp's sync wakeups (futex-swap), and the attribution
# count of a traced case (the host kernel traces qemu-user's own helper threads as tasks of it).
echo "cross-build $arch: not run under qemu-user: label vm (qemu-system lab)" >&2
(cd "$build" && ctest --output-on-failure -j1 -LE vm "$@") || rc=$?
t3=$(date +%s)
echo "cross-build $arch: tests under $qemu $((t3 - t2)) s (exit $rc)" >&2

# A short pinned ping-pong on the first two allowed CPUs (same-cpu and llc on this machine), in
# both modes, through qemu.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/tiny.json" <<'EOF'
{ "schema_version": 1, "name": "cross-tiny",
  "defaults": { "round_trips": 200, "warmup": 20, "repetitions": 1, "timeout_s": 60 },
  "cases": [ { "mechanisms": ["pipe"], "modes": ["threads", "processes"],
               "placements": ["same-cpu", "llc"] } ] }
EOF
if /usr/bin/"$qemu" "$build/wakebench" run --config "$tmp/tiny.json" --out "$tmp/r.json" \
  2>"$tmp/err"; then
  # Every case ran; the only acceptable skip is a class this machine lacks (never same-cpu).
  jq -r '.cases[] | "  \(.name): \(.status) \(.reason // "")"' "$tmp/r.json" >&2
  jq -e '.complete and all(.cases[]; .status == "ok"
           or (.status == "skipped" and .placement != "same-cpu"))' "$tmp/r.json" >/dev/null || rc=1
else
  cat "$tmp/err" >&2
  rc=1
fi
t4=$(date +%s)
echo "cross-build $arch: pinned ping-pong $((t4 - t3)) s" >&2
exit $rc
