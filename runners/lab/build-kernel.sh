#!/usr/bin/env bash
# Builds a topology-lab guest kernel from Debian's linux-source-6.12 with one policy's patch
# (runners/lab/KERNELS.md) and prints the bzImage's absolute path; progress goes to stderr.
#   runners/lab/build-kernel.sh --policy POLICY (a policy of registry/registry.json)
#                               [--lockdep] [--jobs N] [--nice N]
#   runners/lab/build-kernel.sh --gated [--distro-config] [--jobs N] [--nice N]
#   runners/lab/build-kernel.sh --check-patches | --compare-gated
# Installs the build dependencies from Debian first (apt-get, only what is missing); the rest is
# runners/lab/kernelbuild.py.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../install-packages.sh"
pkgs=(linux-source-6.12 make gcc bc flex bison libelf-dev libssl-dev cpio patch xz-utils python3)
# The guest is x86_64: other hosts cross-compile (kernelbuild.py sets CROSS_COMPILE).
[ "$(uname -m)" = x86_64 ] || pkgs+=(gcc-x86-64-linux-gnu)
# --distro-config compiles kernel/sched/ with Debian's full config, from Debian's own package.
for a in "$@"; do [ "$a" = --distro-config ] && pkgs+=(linux-config-6.12); done
install_packages build-kernel "${pkgs[@]}"
exec python3 "$here/kernelbuild.py" "$@"
