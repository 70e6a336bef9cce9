#!/bin/bash
# Fetch qemu 10 from Debian's bookworm-backports into the lab cache, beside the host's qemu 7.2,
# without installing it: a private apt configuration (its own sources list, package lists and
# download cache under the lab cache) runs `apt-get update` and `apt-get download`, and
# `dpkg-deb -x` unpacks the packages. The host's apt sources and installed packages stay as they
# are (Debian installs one version of a package at a time: a system-wide qemu 10 would move every
# existing preset, whose sched domains were checked on 7.2, to another emulator at once).
# The libraries qemu 10 loads are bookworm's (its Depends name no backported library); the ones
# missing here are installed with apt-get from bookworm, the host's own sources.
#
# Usage: runners/lab/fetch-qemu.sh [CACHE_DIR]
#   CACHE_DIR defaults to $WB_LAB_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/wakebench-lab.
# Prints the root it unpacked into (CACHE_DIR/qemu/<version>): its usr/bin holds the
# qemu-system-* binaries and usr/share/qemu the firmware (SLOF, VOF, skiboot) they load with -L.
# wblab/qemubin.py finds it there for the presets that need qemu 10.
set -euo pipefail

# The packages: ppc (pseries SMT, powernv10 big-core), x86 (-smp modules=), arm (arm64 presets
# may run on either), and the two every qemu-system-* needs.
packages=(qemu-system-ppc qemu-system-x86 qemu-system-arm qemu-system-common qemu-system-data)
# The one major version the lab's presets were written for; the newest 10.* backports has is used.
major=10

cache=${1:-${WB_LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/wakebench-lab}}
apt_dir=$cache/qemu/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/parts"
cat >"$apt_dir/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm-backports main
EOF
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/parts"
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir" -o "Dir::Cache::archives=$apt_dir/archives"
  -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
apt-get "${apt_opts[@]}" -qq update >&2 ||
  { echo "fetch-qemu: apt-get update of bookworm-backports failed (see above)" >&2; exit 1; }

version=$(apt-cache "${apt_opts[@]}" madison qemu-system-ppc |
  awk -F'|' -v m="$major" '$3 ~ /bookworm-backports/ { gsub(/ /, "", $2); v = $2; sub(/^[0-9]+:/, "", v)
    if (index(v, m ".") == 1) { print $2; exit } }')
if [[ -z $version ]]; then
  echo "fetch-qemu: bookworm-backports has no qemu-system-ppc $major.x" >&2
  exit 1
fi
root=$cache/qemu/${version#*:}
if [[ -x $root/usr/bin/qemu-system-ppc64 && -r $root/version ]]; then
  echo "$root"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && apt-get "${apt_opts[@]}" -qq download "${packages[@]/%/=$version}" >&2)
missing=()
for deb in "$tmp"/*.deb; do
  dpkg-deb -x "$deb" "$tmp/root"
  # Depends: "a (>= 1), b | c, qemu-system-common (= ...)": the first alternative of each, no qemu.
  for dep in $(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/ //g'); do
    [[ $dep == qemu-* ]] && continue
    dpkg-query -W -f='${Status}' "$dep" 2>/dev/null | grep -q 'install ok installed' ||
      missing+=("$dep")
  done
done
if ((${#missing[@]})); then
  echo "fetch-qemu: installing qemu 10's libraries from bookworm: ${missing[*]}" >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
"$tmp/root/usr/bin/qemu-system-ppc64" --version | head -n1 >"$tmp/root/version"
mkdir -p "$cache/qemu"
rm -rf "$root"
mv "$tmp/root" "$root"
echo "$root"
