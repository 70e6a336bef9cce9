#!/usr/bin/env bash
# Builds a topology-lab guest kernel from Debian's linux-source-6.12 with one policy's patch
# (runners/lab/KERNELS.md) and prints the bzImage's absolute path; progress goes to stderr.
#   runners/lab/build-kernel.sh --policy POLICY (a policy of registry/registry.json)
#                               [--arch x86_64|arm64|ppc64le] [--lockdep] [--jobs N] [--nice N]
#   runners/lab/build-kernel.sh --gated [--arch ARCH] [--distro-config] [--jobs N] [--nice N]
#   runners/lab/build-kernel.sh --check-patches | --compare-gated
#   runners/lab/build-kernel.sh --patch FILE | --kernel-tree DIR [--arch ARCH] [--lockdep] ...
#                               (your patch or your 6.12 tree, with the decision event)
# Installs the build dependencies from Debian first (apt-get, only what is missing); the rest is
# runners/lab/kernelbuild.py (with kerneltree.py and kernelcompare.py beside it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../install-packages.sh"
pkgs=(linux-source-6.12 make gcc bc flex bison libelf-dev libssl-dev cpio patch xz-utils python3)
# A guest of another architecture than the host's is cross-compiled with Debian's gcc for it
# (kerneltree.py's make_env sets CROSS_COMPILE).
arch=x86_64 prev=
for a in "$@"; do
  [ "$prev" = --arch ] && arch=$a
  case $a in
    --arch=*) arch=${a#--arch=} ;;
    # Compiles kernel/sched/ with Debian's full config, from Debian's own package.
    --distro-config) pkgs+=(linux-config-6.12) ;;
  esac
  prev=$a
done
case "$arch" in
  x86_64) cross=gcc-x86-64-linux-gnu host=x86_64 ;;
  arm64) cross=gcc-aarch64-linux-gnu host=aarch64 ;;
  ppc64le) cross=gcc-powerpc64le-linux-gnu host=ppc64le ;;
  *) cross= host= ;;  # kernelbuild.py names the known ones
esac
[ -z "$cross" ] || [ "$(uname -m)" = "$host" ] || pkgs+=("$cross")
install_packages build-kernel "${pkgs[@]}"
exec python3 "$here/kernelbuild.py" "$@"
