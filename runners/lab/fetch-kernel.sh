#!/bin/bash
# Fetch Debian's stock kernel image (the dependency of linux-image-amd64) for the topology lab
# without installing it on the host: `apt-get download` + `dpkg-deb -x` into the lab cache.
# Installing linux-image-amd64 would also work (the lab looks in /boot first), but it pulls in
# initramfs-tools, udev and systemd on minimal hosts and touches the host's boot setup.
#
# Usage: runners/lab/fetch-kernel.sh [CACHE_DIR]
#   CACHE_DIR defaults to $WB_LAB_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/wakebench-lab.
# Prints the path of the vmlinuz it left in CACHE_DIR/kernel/boot/.
set -euo pipefail

cache=${1:-${WB_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wakebench-lab}}
mkdir -p "$cache/kernel"

# linux-image-amd64 is a metapackage; its Depends names the versioned image package.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
      sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n1)
if [[ -z $pkg ]]; then
  echo "fetch-kernel: apt-cache knows no linux-image-amd64 (run apt-get update?)" >&2
  exit 1
fi
ver=${pkg#linux-image-}
if [[ -r $cache/kernel/boot/vmlinuz-$ver ]]; then
  echo "$cache/kernel/boot/vmlinuz-$ver"
  exit 0
fi

tmp=$(mktemp -d)
chmod 755 "$tmp"  # lets apt (as root) hand the download to its sandbox user _apt
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get download "$pkg" >&2)
dpkg-deb --fsys-tarfile "$tmp"/"$pkg"_*.deb | tar -x -C "$tmp" ./boot
mkdir -p "$cache/kernel/boot"
# Only the image and its config are needed: the lab's guest uses built-in drivers only (8250
# serial, initramfs), no modules.
cp "$tmp/boot/vmlinuz-$ver" "$tmp/boot/config-$ver" "$cache/kernel/boot/"
echo "$cache/kernel/boot/vmlinuz-$ver"
